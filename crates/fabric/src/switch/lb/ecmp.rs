//! ECMP: a hash of the packet's RoCEv2 5-tuple (addresses, UDP source
//! port, destination port 4791, UDP) with a seed per switch picks one of
//! the equal-cost hops, so a flow keeps one path. Touches only its seeds.

use crate::hash::mix64;
use crate::net::arena::Hdr;
use engine::rng::stream_seed;
use engine::StreamKind;

pub(crate) struct Ecmp {
    /// Each switch's hash seed, by switch index.
    seeds: Vec<u64>,
}

impl Ecmp {
    pub fn new(seed: u64, switches: u32) -> Ecmp {
        Ecmp {
            seeds: (0..switches)
                .map(|s| stream_seed(seed, StreamKind::Ecmp, s as u64))
                .collect(),
        }
    }

    #[inline(always)]
    pub fn pick(&self, s: u32, hdr: &Hdr, hops: &[u32]) -> u32 {
        let n = hops.len();
        // The RoCEv2 5-tuple: addresses, UDP source port, 4791, UDP.
        let key = (hdr.flow as u64) << 32 | (hdr.dst ^ (4791 << 16 | 17)) as u64;
        let h = mix64(key ^ self.seeds[s as usize]);
        // A fat tree's fan-out is a power of two: a mask gives the
        // same choice as the (slow, 64-bit) division.
        let i = if n.is_power_of_two() {
            h & (n as u64 - 1)
        } else {
            h % n as u64
        };
        hops[i as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr(src: u32, sport: u32, dst: u32) -> Hdr {
        let mut h = Hdr::of(3, 1048, true);
        h.flow = sport << 16 | src;
        h.dst = dst;
        h
    }

    /// A flow's packets all take one hop; distinct flows spread over every
    /// hop about evenly, with a fan-out that is a power of two (the mask)
    /// and one that is not (the division).
    #[test]
    fn a_flow_keeps_its_hop_and_flows_spread() {
        let e = Ecmp::new(7, 2);
        for hops in [&[10, 11, 12, 13][..], &[20, 21, 22][..]] {
            let mut count = vec![0u32; hops.len()];
            for f in 0..3000 {
                let h = hdr(f % 16, f, 99);
                let first = e.pick(0, &h, hops);
                for _ in 0..5 {
                    assert_eq!(e.pick(0, &h, hops), first, "flow {f} moved");
                }
                count[hops.iter().position(|&p| p == first).unwrap()] += 1;
            }
            let even = 3000 / hops.len() as u32;
            for (i, &c) in count.iter().enumerate() {
                assert!(c.abs_diff(even) < even / 5, "hop {i}: {c} of 3000 flows");
            }
        }
    }

    /// Each switch hashes with a seed of its own (else a flow would take
    /// the same index at every tier, polarising the fabric), and the run's
    /// seed changes them all.
    #[test]
    fn switches_and_seeds_hash_differently() {
        let hops = [0, 1, 2, 3, 4, 5, 6, 7];
        let (a, b) = (Ecmp::new(7, 2), Ecmp::new(8, 1));
        let flows: Vec<Hdr> = (0..64).map(|f| hdr(1, f, 2)).collect();
        let differ = |x: &Ecmp, s: u32, y: &Ecmp, t: u32| {
            flows
                .iter()
                .filter(|h| x.pick(s, h, &hops) != y.pick(t, h, &hops))
                .count()
        };
        assert!(differ(&a, 0, &a, 1) > 32, "switches 0 and 1 agree");
        assert!(differ(&a, 0, &b, 0) > 32, "seeds 7 and 8 agree");
        assert_eq!(differ(&a, 1, &Ecmp::new(7, 2), 1), 0, "not deterministic");
    }
}
