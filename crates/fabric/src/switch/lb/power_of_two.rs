//! Power of two choices, per packet: two distinct next hops drawn at
//! random, the one whose egress queue of the packet's class holds fewer
//! bytes wins (a tie goes to the first drawn, itself random). No memory:
//! DRILL (`drill.rs`) with d = 2 and m = 0. Touches only its random
//! streams; reads the queues through its `Sight`.

use super::sight::Sight;
use crate::net::arena::Hdr;
use engine::{Rng, StreamKind};

pub(crate) struct PowerOfTwo {
    /// Each switch's random stream, by switch index.
    rngs: Vec<Rng>,
}

impl PowerOfTwo {
    pub fn new(seed: u64, switches: u32) -> PowerOfTwo {
        PowerOfTwo {
            rngs: (0..switches as u64)
                .map(|s| Rng::new(seed, StreamKind::LoadBalance, s))
                .collect(),
        }
    }

    #[inline(always)]
    pub fn pick(&mut self, s: u32, hdr: &Hdr, hops: &[u32], sight: Sight) -> u32 {
        let n = hops.len() as u64;
        let rng = &mut self.rngs[s as usize];
        let i = rng.below(n);
        // A second index among the other n - 1.
        let j = rng.below(n - 1);
        let j = j + (j >= i) as u64;
        let (a, b) = (hops[i as usize], hops[j as usize]);
        let class = hdr.class();
        if sight.queued(b, class) < sight.queued(a, class) {
            b
        } else {
            a
        }
    }
}
