//! Simulated time: an integer count of picoseconds.
//!
//! Integer time keeps the event order exact and machine independent; 2^64 ps
//! is about 213 days, far beyond any run.

/// Picoseconds since the start of the run.
pub type Time = u64;

pub const PS: Time = 1;
pub const NS: Time = 1_000;
pub const US: Time = 1_000_000;
pub const MS: Time = 1_000_000_000;
pub const SEC: Time = 1_000_000_000_000;

/// The longest simulated time an input may name: 2^62 ps (53 days),
/// leaving room for sums of two times and a window beyond them (a
/// scenario's times, an ns-3 file's delays and starts).
pub const MAX_TIME: Time = 1 << 62;

/// The fastest link an input may name (10 Tb/s): faster rates make one
/// byte shorter than a picosecond.
pub const MAX_RATE_BPS: u64 = 10_000_000_000_000;

/// The slowest rate an input may name (1 kb/s): slower rates make one
/// frame's serialisation longer than any run.
pub const MIN_RATE_BPS: u64 = 1_000;

/// Time to serialise `bytes` on a link of `bps` bits per second, rounded up
/// to the next picosecond so that a link never runs faster than its rate.
#[inline]
pub fn serialization(bytes: u64, bps: u64) -> Time {
    debug_assert!(bps > 0);
    let bits = bytes as u128 * 8 * SEC as u128;
    bits.div_ceil(bps as u128) as Time
}

/// Picoseconds per byte at `bps` when that is a whole number below 2^32
/// (every standard rate), else 0. With it, [`serialization_at`] multiplies
/// where [`serialization`] divides 128-bit integers, on the time of every
/// frame.
pub fn ps_per_byte(bps: u64) -> u32 {
    let per_byte = 8 * SEC;
    if per_byte.is_multiple_of(bps) {
        u32::try_from(per_byte / bps).unwrap_or(0)
    } else {
        0
    }
}

/// `serialization(bytes, bps)`, given `ps_per_byte(bps)`.
#[inline(always)]
pub fn serialization_at(bytes: u64, bps: u64, ps_per_byte: u32) -> Time {
    if ps_per_byte != 0 {
        bytes * ps_per_byte as Time
    } else {
        serialization(bytes, bps)
    }
}

/// Converts picoseconds to (fractional) nanoseconds for reports.
#[inline]
pub fn to_ns_f64(t: Time) -> f64 {
    t as f64 / NS as f64
}

/// Converts seconds (as written in scenario and ns-3 files) to picoseconds,
/// rounding to the nearest picosecond.
pub fn from_secs_f64(s: f64) -> Time {
    (s * SEC as f64).round() as Time
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The multiplication agrees with the division wherever it is used, and
    /// is not used where a byte is no whole number of picoseconds or too
    /// many for a u32.
    #[test]
    fn serialization_at_agrees_with_serialization() {
        for bps in [
            100_000_000_000,
            25_000_000_000,
            1_000_000_000,
            3,
            1,
            7_000_000_001,
        ] {
            let ps = ps_per_byte(bps);
            for bytes in [0, 1, 60, 1048, 9000] {
                assert_eq!(
                    serialization_at(bytes, bps, ps),
                    serialization(bytes, bps),
                    "{bytes} bytes at {bps} b/s"
                );
            }
        }
        assert_eq!(ps_per_byte(100_000_000_000), 80);
        assert_eq!(ps_per_byte(3), 0, "8e12 / 3 is not whole");
        assert_eq!(ps_per_byte(1), 0, "8e12 ps per byte does not fit a u32");
    }

    #[test]
    fn serialization_rounds_up() {
        // 1000 bytes at 100 Gb/s is exactly 80 ns.
        assert_eq!(serialization(1000, 100_000_000_000), 80 * NS);
        // 1 byte at 3 b/s is 2.666.. s: rounded up.
        assert_eq!(serialization(1, 3), 2_666_666_666_667);
    }

    #[test]
    fn seconds_round_trip() {
        assert_eq!(from_secs_f64(2.000001492), 2 * SEC + 1_492 * NS);
    }
}
