//! Segmentation shared by every reliable-connection engine: how many
//! packets a message takes, each packet's payload and byte offset, and the
//! response payloads of READs and atomics. Pure functions; uses only
//! `crate::packet`.

use crate::packet::{Verb, ATOMIC_BYTES};

/// Number of packets of a message of `len` bytes (a 0-byte message is one
/// packet); None if it does not fit the 32-bit PSN space.
#[inline]
pub(crate) fn npkts(len: u64, mtu: u32) -> Option<u32> {
    u32::try_from(len.div_ceil(mtu as u64).max(1)).ok()
}

/// Payload of the packet with index `idx` of a message of `len` bytes.
#[inline]
pub(crate) fn payload_of(len: u64, mtu: u32, idx: u32) -> u32 {
    let off = idx as u64 * mtu as u64;
    len.saturating_sub(off).min(mtu as u64) as u32
}

/// Byte offset of the packet with index `idx` in its message.
#[inline]
pub(crate) fn offset_of(mtu: u32, idx: u32) -> u64 {
    idx as u64 * mtu as u64
}

/// Packets of a message of `verb` and `len` bytes (atomics: one, whatever
/// the MTU); None if it does not fit the PSN space.
#[inline]
pub(crate) fn wqe_npkts(verb: Verb, len: u64, mtu: u32) -> Option<u32> {
    if verb.is_atomic() {
        Some(1)
    } else {
        npkts(len, mtu)
    }
}

/// Response payload of the packet with index `idx` of a READ of `len`
/// bytes or of an atomic.
#[inline]
pub(crate) fn response_payload(verb: Verb, len: u64, mtu: u32, idx: u32) -> u32 {
    if verb.is_atomic() {
        ATOMIC_BYTES
    } else {
        payload_of(len, mtu, idx)
    }
}
