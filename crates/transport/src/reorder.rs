//! Reordering as the receiving NIC sees it, before any ordering layer:
//! the out-of-order-degree histogram of a NIC ([`OodHistogram`], in
//! `NicStats::ood`) and the per-QP counters ([`QpReorder`]: packets that
//! arrived above the next expected PSN, the largest degree, and the
//! duplicates of data already received, i.e. retransmissions that were not
//! needed because the original arrived).
//!
//! Plain data: it imports nothing from the crate, so that the API types
//! (`crate::api`) can hold it. The engines record into it at the compare
//! they already make between a data packet's PSN and the expected one
//! (`crate::rc::Ctx::{in_order, out_of_order, duplicate}`).

/// What one QP's receiving side saw (requests at the responder, READ
/// responses at the requester), counted by its engine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QpReorder {
    /// New data packets whose PSN was above the next expected one.
    pub ooo_packets: u64,
    /// The largest out-of-order degree (PSN minus the expected PSN).
    pub ood_max: u64,
    /// Data packets that duplicated data already received (a PSN below
    /// the expected one, or already held out of order): retransmissions
    /// of packets that were not lost. Under a lossless fabric these are
    /// the retransmissions reordering triggered (a go-back-N rewind or a
    /// selective repeat for a packet that was only late); a premature
    /// timeout or a lost ACK also produce them.
    pub duplicates: u64,
}

impl QpReorder {
    /// A new data packet arrived `degree` PSNs above the expected one
    /// (recorded in the NIC's histogram `ood` too).
    #[inline]
    pub fn out_of_order(&mut self, ood: &mut OodHistogram, degree: u64) {
        self.ooo_packets += 1;
        self.ood_max = self.ood_max.max(degree);
        ood.record(degree);
    }
}

/// Distribution of the out-of-order degree (a new data packet's PSN minus
/// the receiver's next expected PSN on arrival; 0 in order): exact below 32, then half-octave
/// buckets up to 8191, then one overflow bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OodHistogram {
    pub buckets: [u64; OodHistogram::BUCKETS],
}

impl Default for OodHistogram {
    fn default() -> Self {
        OodHistogram {
            buckets: [0; OodHistogram::BUCKETS],
        }
    }
}

impl OodHistogram {
    pub const BUCKETS: usize = 49;

    /// A new data packet arrived at the expected PSN (degree 0).
    #[inline(always)]
    pub fn in_order(&mut self) {
        self.buckets[0] += 1;
    }

    fn index(v: u64) -> usize {
        if v < 32 {
            return v as usize;
        }
        let b = 63 - v.leading_zeros() as usize; // 5..
        let half = ((v >> (b - 1)) & 1) as usize;
        (32 + (b - 5) * 2 + half).min(Self::BUCKETS - 1)
    }

    /// The largest value bucket `i` holds (u64::MAX for the overflow one).
    pub fn upper(i: usize) -> u64 {
        if i < 32 {
            return i as u64;
        }
        if i == Self::BUCKETS - 1 {
            return u64::MAX;
        }
        let b = 5 + (i - 32) / 2;
        let half = ((i - 32) % 2) as u64;
        (1u64 << b) + half * (1 << (b - 1)) + (1 << (b - 1)) - 1
    }

    pub fn record(&mut self, v: u64) {
        self.buckets[Self::index(v)] += 1;
    }

    pub fn merge(&mut self, o: &OodHistogram) {
        for (a, b) in self.buckets.iter_mut().zip(o.buckets.iter()) {
            *a += b;
        }
    }

    pub fn count(&self) -> u64 {
        self.buckets.iter().sum()
    }

    /// Upper bound of the bucket holding the q-quantile (0 if empty).
    pub fn quantile(&self, q: f64) -> u64 {
        let n = self.count();
        if n == 0 {
            return 0;
        }
        let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
        let mut seen = 0;
        for (i, &c) in self.buckets.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Self::upper(i);
            }
        }
        u64::MAX
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ood_buckets_are_exact_then_half_octaves() {
        for v in [0u64, 1, 31, 32, 47, 48, 63, 64, 95, 96, 8191, 8192, 1 << 40] {
            let i = OodHistogram::index(v);
            assert!(v <= OodHistogram::upper(i), "{v} in bucket {i}");
            assert!(
                i == 0 || v > OodHistogram::upper(i - 1),
                "{v} in bucket {i}"
            );
        }
        assert_eq!(OodHistogram::upper(32), 47);
        assert_eq!(OodHistogram::upper(33), 63);
        let mut h = OodHistogram::default();
        for v in 0..1000 {
            h.record(v % 10);
        }
        h.record(5000);
        assert_eq!(h.quantile(0.5), 5, "rank 501 of 1001");
        assert_eq!(h.quantile(0.999), 9);
        assert_eq!(h.quantile(1.0), 6143);
    }
}
