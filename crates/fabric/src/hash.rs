//! The 64-bit bit mixer (SplitMix64's finaliser) shared by the tie order
//! of events (`net/event.rs`) and ECMP's hash (`switch/lb/ecmp.rs`).
//! Touches nothing.

/// A bijection of `u64` that spreads every input bit over the output.
#[inline]
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
