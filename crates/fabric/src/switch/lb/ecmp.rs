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
