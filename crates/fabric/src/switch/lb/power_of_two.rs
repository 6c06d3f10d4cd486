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
    /// Swaps switch `s`'s state with `other`'s.
    pub fn swap_switch(&mut self, other: &mut PowerOfTwo, s: usize) {
        std::mem::swap(&mut self.rngs[s], &mut other.rngs[s]);
    }

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

#[cfg(test)]
mod tests {
    use super::super::sight::ports_holding;
    use super::*;

    /// Of two hops, the less queued always; of four, never the most
    /// queued (it loses to whichever other is drawn beside it), and the
    /// empty one whenever it is drawn (half the time: 2 of 4 choices).
    /// Queues of another class than the packet's are not read.
    #[test]
    fn the_shorter_of_two_random_queues() {
        let h = Hdr::of(3, 1048, true);
        let mut b = PowerOfTwo::new(5, 1);
        let (ports, queues) = ports_holding(&[9_000, 1_000], 3);
        let sight = Sight::new(&ports, &queues, 0);
        for _ in 0..100 {
            assert_eq!(b.pick(0, &h, &[0, 1], sight), 1);
        }
        let (ports, queues) = ports_holding(&[4_000, 9_000, 0, 4_000], 3);
        let sight = Sight::new(&ports, &queues, 0);
        let mut count = [0u32; 4];
        for _ in 0..4000 {
            count[b.pick(0, &h, &[0, 1, 2, 3], sight) as usize] += 1;
        }
        assert_eq!(count[1], 0, "{count:?}");
        assert!(count[2].abs_diff(2000) < 200, "{count:?}");
        // The same bytes in class 1: for a class-3 packet every queue is
        // empty, and the first drawn (uniform) wins.
        let (ports, queues) = ports_holding(&[0, 9_000], 1);
        let sight = Sight::new(&ports, &queues, 0);
        let ones = (0..1000)
            .filter(|_| b.pick(0, &h, &[0, 1], sight) == 1)
            .count();
        assert!(ones.abs_diff(500) < 100, "{ones}");
    }
}
