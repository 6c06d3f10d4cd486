//! CONGA's discounting rate estimator (DRE), one per switch fabric port: a
//! register X that each packet sent adds its bytes to and that loses a
//! fraction alpha of its value every period, so that X tracks the port's
//! rate times tau = period / alpha; its congestion metric is X / (rate x
//! tau) quantised to `bits` bits (0 idle .. 2^bits - 1 at or above line
//! rate). The decay is lazy: a register keeps its value and the period it
//! is as of, and catches up on the periods elapsed when next read or
//! added to, so no periodic event runs. The register and its decay are
//! integers (32-bit fixed point); the metric is one floating-point
//! multiplication and division, which IEEE arithmetic rounds the same way
//! everywhere. Plain data: touches nothing else.

use engine::Time;

/// alpha is given in millionths.
pub const ALPHA_UNIT: u64 = 1_000_000;

/// How every register of a fabric decays and is quantised.
#[derive(Clone, Copy, Debug)]
pub struct DreRule {
    period: Time,
    /// 1 - alpha as a 32-bit binary fraction.
    keep_q32: u64,
    /// 8 x alpha x 2^bits / period, in bits per byte per second: X times
    /// this over the rate is the metric.
    scale: f64,
    max_metric: u8,
}

impl DreRule {
    /// Out-of-range values are clamped (the scenario refuses them before).
    pub fn new(period: Time, alpha_ppm: u32, bits: u32) -> DreRule {
        let alpha = (alpha_ppm as u64).clamp(1, ALPHA_UNIT);
        let (period, bits) = (period.max(1), bits.clamp(1, 8));
        DreRule {
            period,
            keep_q32: ((ALPHA_UNIT - alpha) << 32) / ALPHA_UNIT,
            // X x 8 / (rate x period / alpha) x 2^bits, with the period in
            // ps and alpha in millionths: the integer product is exact, so
            // round figures give round metrics.
            scale: ((8 * alpha) << bits) as f64 * (1e12 / ALPHA_UNIT as f64) / period as f64,
            max_metric: ((1u32 << bits) - 1) as u8,
        }
    }

    /// The metric of `x` bytes at a port of `rate_bps`: floor(X / (rate x
    /// tau) x 2^bits), at most 2^bits - 1.
    pub fn metric(&self, x: u64, rate_bps: u64) -> u8 {
        let m = x as f64 * self.scale / rate_bps as f64;
        // `as` saturates (and takes NaN to 0).
        (m as u64).min(self.max_metric as u64) as u8
    }

    /// (1 - alpha)^n as a 32-bit binary fraction (by squaring: a port idle
    /// for a long time costs a few multiplications, not one per period).
    fn keep_for(&self, mut n: u64) -> u64 {
        let (mut r, mut b) = (1u64 << 32, self.keep_q32);
        while n > 0 && r > 0 {
            if n & 1 == 1 {
                r = ((r as u128 * b as u128) >> 32) as u64;
            }
            b = ((b as u128 * b as u128) >> 32) as u64;
            n >>= 1;
        }
        r
    }
}

/// One port's register.
#[derive(Clone, Copy, Debug, Default)]
pub struct Dre {
    /// Bytes, as of the period that ends at `until` (periods are aligned
    /// on multiples of the rule's period from time 0; a new register's is
    /// 0, and its first touch decays nothing but 0).
    x: u64,
    until: Time,
}

impl Dre {
    /// The register at `now`, its elapsed periods' decay applied (a
    /// comparison within the period, a division once per period).
    pub fn value(&mut self, rule: &DreRule, now: Time) -> u64 {
        if now >= self.until {
            let ended = (now - self.until) / rule.period + 1;
            let keep = rule.keep_for(ended);
            self.x = ((self.x as u128 * keep as u128) >> 32) as u64;
            self.until += ended * rule.period;
        }
        self.x
    }

    /// Counts `bytes` sent at `now`; the register's new value.
    pub fn add(&mut self, rule: &DreRule, now: Time, bytes: u32) -> u64 {
        self.x = self.value(rule, now) + bytes as u64;
        self.x
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::time::US;

    /// ConWeave's CONGA: 50 us periods, alpha 0.2, 3 bits.
    fn rule() -> DreRule {
        DreRule::new(50 * US, 200_000, 3)
    }

    #[test]
    fn the_register_loses_alpha_of_its_value_every_period() {
        let r = rule();
        let mut d = Dre::default();
        assert_eq!(d.add(&r, 10 * US, 10_000), 10_000);
        // Within the period: no decay.
        assert_eq!(d.add(&r, 49 * US, 1_000), 11_000);
        // One period boundary: x 0.8 (one unit of rounding at most).
        let v = d.value(&r, 50 * US);
        assert!((8_799..=8_800).contains(&v), "{v}");
        // Three more at once: x 0.8^3 = 0.512.
        let w = d.value(&r, 200 * US);
        assert!(w.abs_diff(v * 512 / 1000) <= 2, "{v} {w}");
        // Reading again at the same time changes nothing; long idle: 0.
        assert_eq!(d.value(&r, 200 * US), w);
        assert_eq!(d.value(&r, 1_000_000 * US), 0);
    }

    #[test]
    fn the_metric_is_the_rate_over_line_rate_in_eighths() {
        let r = rule();
        let gbps100 = 100_000_000_000;
        // tau = 50 us / 0.2 = 250 us; at 100 Gb/s that is 3 125 000 bytes.
        let full = 3_125_000;
        assert_eq!(r.metric(0, gbps100), 0);
        assert_eq!(r.metric(full / 8 - 1, gbps100), 0);
        assert_eq!(r.metric(full / 8, gbps100), 1);
        assert_eq!(r.metric(full / 2, gbps100), 4);
        assert_eq!(r.metric(full - 1, gbps100), 7);
        // At or above line rate: the top of the scale.
        assert_eq!(r.metric(full * 5, gbps100), 7);
        // The same bytes on a port four times slower weigh four times more.
        assert_eq!(r.metric(full / 8, gbps100 / 4), 4);
        // Two bits: quarters.
        assert_eq!(
            DreRule::new(50 * US, 200_000, 2).metric(full / 2, gbps100),
            2
        );
    }

    /// A port sending steadily at a fraction of its rate settles at that
    /// fraction of tau's bytes (X's fixed point is rate x tau).
    #[test]
    fn a_steady_rate_settles_at_its_metric() {
        let r = rule();
        let gbps100 = 100_000_000_000u64;
        let mut d = Dre::default();
        // 1000-byte packets at 60% of 100 Gb/s: one every 133.3 ns.
        let gap = 1000 * 8 * 1_000_000_000_000 / (gbps100 * 6 / 10);
        let mut t = 0;
        let mut x = 0;
        while t < 5_000 * US {
            x = d.add(&r, t, 1000);
            t += gap;
        }
        // Just before a period's decay X is 60% of tau's bytes, just after
        // 48%: the fourth or the fifth eighth.
        let m = r.metric(x, gbps100);
        assert!((3..=4).contains(&m), "{m}");
    }
}
