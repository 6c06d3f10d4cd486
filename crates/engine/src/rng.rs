//! Seeded random streams, one per component.
//!
//! Each stream is a Xoshiro256++ generator seeded from (master seed, stream
//! kind, entity id), so adding a flow or a switch never shifts the draws of
//! any other component.

use rand_xoshiro::rand_core::{Rng as _, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// What a random stream belongs to; part of the stream's seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum StreamKind {
    /// Loss draws of one link direction.
    LinkLoss = 1,
    /// ECN marking draws of one switch port.
    Ecn = 2,
    /// Traffic generation of one traffic class.
    Workload = 3,
    /// Per-host transport choices (e.g. UDP source ports).
    Host = 4,
    /// Per-switch ECMP hash seed.
    Ecmp = 5,
    /// Per-switch random choices of a load balancer (DRILL's and
    /// power-of-two's samples, LetFlow's flowlet paths).
    LoadBalance = 6,
    /// Recurring random link failures: the links of each interval.
    Failures = 7,
    /// DIBS deflection: the port a refused packet goes out, per switch.
    Deflection = 8,
    /// Reordering of one link direction (`[[faults]] action = "reorder"`):
    /// which packets are delayed, and by how much.
    Reorder = 9,
    /// The real datapath's impairment layer (loss, reordering,
    /// duplication of received datagrams), per endpoint.
    Impair = 10,
    /// RCM's congestion flow recognition: which packets through one
    /// switch output are sampled into its CAM.
    Cfr = 11,
}

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The 64-bit seed of the stream (master, kind, id).
pub fn stream_seed(master: u64, kind: StreamKind, id: u64) -> u64 {
    splitmix64(splitmix64(splitmix64(master) ^ kind as u64) ^ id)
}

/// A reproducible random stream.
#[derive(Clone, Debug)]
pub struct Rng(Xoshiro256PlusPlus);

impl Rng {
    pub fn new(master: u64, kind: StreamKind, id: u64) -> Self {
        Rng(Xoshiro256PlusPlus::seed_from_u64(stream_seed(
            master, kind, id,
        )))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in [0, 1) with 53 bits of precision.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    #[inline]
    pub fn bernoulli(&mut self, p: f64) -> bool {
        p > 0.0 && self.uniform() < p
    }

    /// Uniform integer in [0, n) (Lemire's multiply-shift; bias < 2^-64 * n).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Exponential with the given mean.
    #[inline]
    pub fn exponential(&mut self, mean: f64) -> f64 {
        // 1 - U is in (0, 1], so the log is finite.
        -mean * (1.0 - self.uniform()).ln()
    }

    /// Fisher-Yates shuffle.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_independent_and_reproducible() {
        let mut a = Rng::new(1, StreamKind::LinkLoss, 7);
        let mut b = Rng::new(1, StreamKind::LinkLoss, 7);
        let mut c = Rng::new(1, StreamKind::LinkLoss, 8);
        let mut d = Rng::new(2, StreamKind::LinkLoss, 7);
        let xa: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        let xc: Vec<u64> = (0..4).map(|_| c.next_u64()).collect();
        let xd: Vec<u64> = (0..4).map(|_| d.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
        assert_ne!(xa, xd);
    }

    #[test]
    fn uniform_and_exponential_moments() {
        let mut r = Rng::new(3, StreamKind::Workload, 0);
        let n = 200_000;
        let mean_u: f64 = (0..n).map(|_| r.uniform()).sum::<f64>() / n as f64;
        assert!((mean_u - 0.5).abs() < 0.005, "{mean_u}");
        let mean_e: f64 = (0..n).map(|_| r.exponential(3.0)).sum::<f64>() / n as f64;
        assert!((mean_e - 3.0).abs() < 0.05, "{mean_e}");
        let mut hits = [0u32; 5];
        for _ in 0..n {
            hits[r.below(5) as usize] += 1;
        }
        for h in hits {
            assert!((h as f64 / n as f64 - 0.2).abs() < 0.01);
        }
    }
}
