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

/// Time to serialise `bytes` on a link of `bps` bits per second, rounded up
/// to the next picosecond so that a link never runs faster than its rate.
#[inline]
pub fn serialization(bytes: u64, bps: u64) -> Time {
    debug_assert!(bps > 0);
    let bits = bytes as u128 * 8 * SEC as u128;
    bits.div_ceil(bps as u128) as Time
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
