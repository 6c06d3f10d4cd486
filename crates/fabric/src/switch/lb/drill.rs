//! DRILL (Ghorbani et al., CoNEXT'17), per packet: the least loaded of `d`
//! next hops drawn at random (distinct) and the `m` best of the switch's
//! previous decision (its memory, kept per switch), by the bytes waiting in
//! the egress queue of the packet's class (for data packets, the data
//! class; control packets compare the control queues, nearly always empty,
//! and so keep to the remembered hop). A tie goes to the remembered hop,
//! then to the earlier draw. A remembered port that is not among this
//! packet's next hops (another destination's set, a failed link) is
//! passed over. Touches only its random streams and memory; reads the
//! queues through its `Sight`.

use super::sight::Sight;
use crate::net::arena::Hdr;
use engine::{Rng, StreamKind};

/// DRILL's parameters (`[switch.drill]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DrillParams {
    /// Next hops drawn at random per packet, 1..=[`DrillParams::MAX_D`]
    /// (all of them when there are no more).
    pub d: u32,
    /// Best hops remembered per switch, 0..=[`DrillParams::MAX_M`].
    pub m: u32,
}

impl DrillParams {
    /// DRILL(2, 1), as its paper and the ConWeave artifact run it.
    pub const DEFAULT: DrillParams = DrillParams { d: 2, m: 1 };
    pub const MAX_D: u32 = 16;
    pub const MAX_M: u32 = 8;
}

/// An empty memory slot.
const NONE: u32 = u32::MAX;

pub(crate) struct Drill {
    d: usize,
    m: usize,
    /// Each switch's random stream, by switch index.
    rngs: Vec<Rng>,
    /// Each switch's `m` remembered ports, best first, side by side.
    memory: Vec<u32>,
}

impl Drill {
    /// Swaps switch `s`'s state with `other`'s.
    pub fn swap_switch(&mut self, other: &mut Drill, s: usize) {
        std::mem::swap(&mut self.rngs[s], &mut other.rngs[s]);
        let m = self.m;
        self.memory[s * m..(s + 1) * m].swap_with_slice(&mut other.memory[s * m..(s + 1) * m]);
    }

    /// Parameters out of range are clamped into it (the scenario refuses
    /// them before).
    pub fn new(p: DrillParams, seed: u64, switches: u32) -> Drill {
        let d = p.d.clamp(1, DrillParams::MAX_D) as usize;
        let m = p.m.min(DrillParams::MAX_M) as usize;
        Drill {
            d,
            m,
            rngs: (0..switches as u64)
                .map(|s| Rng::new(seed, StreamKind::LoadBalance, s))
                .collect(),
            memory: vec![NONE; switches as usize * m],
        }
    }

    #[inline(always)]
    pub fn pick(&mut self, s: u32, hdr: &Hdr, hops: &[u32], sight: Sight) -> u32 {
        let class = hdr.class();
        let (d, m) = (self.d, self.m);
        let rng = &mut self.rngs[s as usize];
        let memory = &mut self.memory[s as usize * m..(s as usize + 1) * m];
        if m <= 1 {
            // The common DRILL(d, 1): only the best matters.
            let mut best = (0, NONE);
            candidates(memory, hops, d, rng, |p| {
                let load = sight.queued(p, class);
                if best.1 == NONE || load < best.0 {
                    best = (load, p);
                }
            });
            if let Some(c) = memory.first_mut() {
                *c = best.1;
            }
            best.1
        } else {
            let mut best = Best::new(m);
            candidates(memory, hops, d, rng, |p| {
                best.offer(sight.queued(p, class), p)
            });
            for (slot, c) in memory.iter_mut().enumerate() {
                *c = best.port(slot).unwrap_or(NONE);
            }
            best.port(0).expect("at least one draw")
        }
    }
}

/// Offers each candidate of a pick to `offer`, in order: the remembered
/// ports still among `hops` (they win ties), then `d` distinct hops drawn
/// at random (every hop, from a random one on, if there are no more).
#[inline(always)]
fn candidates(memory: &[u32], hops: &[u32], d: usize, rng: &mut Rng, mut offer: impl FnMut(u32)) {
    for &p in memory {
        if p != NONE && hops.contains(&p) {
            offer(p);
        }
    }
    let n = hops.len();
    if d >= n {
        let start = rng.below(n as u64) as usize;
        for t in 0..n {
            offer(hops[(start + t) % n]);
        }
    } else {
        // Here n > d, and hops are at most 256 (`Hdr::MAX_PORTS`).
        let mut drawn = [0u16; DrillParams::MAX_D as usize];
        for c in 0..d {
            let i = loop {
                let i = rng.below(n as u64) as u16;
                if drawn[..c].iter().all(|&j| j != i) {
                    break i;
                }
            };
            drawn[c] = i;
            offer(hops[i as usize]);
        }
    }
}

/// The `keep` least loaded candidates offered, ascending, each port once;
/// of equal loads, the earlier offered first.
struct Best {
    top: [(u64, u32); DrillParams::MAX_M as usize],
    len: usize,
    keep: usize,
}

impl Best {
    #[inline(always)]
    fn new(keep: usize) -> Best {
        Best {
            top: [(0, NONE); DrillParams::MAX_M as usize],
            len: 0,
            keep,
        }
    }

    /// Offers a candidate. A port offered again (remembered and drawn)
    /// brings the same load, so it would go after its first offer: it is
    /// dropped then.
    #[inline(always)]
    fn offer(&mut self, load: u64, port: u32) {
        let top = &self.top[..self.len];
        let at = top.iter().position(|&(l, _)| l > load).unwrap_or(top.len());
        if at >= self.keep || top[..at].iter().any(|&(_, p)| p == port) {
            return;
        }
        self.len = (self.len + 1).min(self.keep);
        for k in (at + 1..self.len).rev() {
            self.top[k] = self.top[k - 1];
        }
        self.top[at] = (load, port);
    }

    #[inline(always)]
    fn port(&self, i: usize) -> Option<u32> {
        (i < self.len).then(|| self.top[i].1)
    }
}

#[cfg(test)]
mod tests {
    use super::super::sight::ports_holding;
    use super::*;

    /// DRILL(d, 1) with one short queue among long ones: once drawn, the
    /// short queue is remembered and kept (it wins against any draw);
    /// with d covering every hop, the shortest at once.
    #[test]
    fn finds_the_shorter_queue_and_keeps_it() {
        let h = Hdr::of(3, 1048, true);
        let hops = [0, 1, 2, 3, 4, 5, 6, 7];
        let mut loads = [5_000; 8];
        loads[6] = 100;
        let (ports, queues) = ports_holding(&loads, 3);
        let sight = Sight::new(&ports, &queues, 0);
        let mut b = Drill::new(DrillParams { d: 1, m: 1 }, 3, 1);
        let found = (0..200).position(|_| b.pick(0, &h, &hops, sight) == 6);
        assert!(found.is_some(), "never drew the short queue in 200 packets");
        for _ in 0..100 {
            assert_eq!(b.pick(0, &h, &hops, sight), 6);
        }
        let mut all = Drill::new(DrillParams { d: 8, m: 1 }, 3, 1);
        assert_eq!(all.pick(0, &h, &hops, sight), 6);
        // DRILL(1, 2) remembers the best two: when the best's queue grows,
        // the second takes over, though the one draw is of a long queue.
        let mut two = Drill::new(DrillParams { d: 1, m: 2 }, 3, 1);
        loads[2] = 200;
        let (ports, queues) = ports_holding(&loads, 3);
        for _ in 0..500 {
            let _ = two.pick(0, &h, &hops, Sight::new(&ports, &queues, 0));
        }
        assert_eq!(two.pick(0, &h, &hops, Sight::new(&ports, &queues, 0)), 6);
        loads[6] = 9_000;
        let (ports, queues) = ports_holding(&loads, 3);
        assert_eq!(two.pick(0, &h, &hops, Sight::new(&ports, &queues, 0)), 2);
    }

    fn best_of(keep: usize, offers: &[(u64, u32)]) -> Vec<u32> {
        let mut b = Best::new(keep);
        for &(l, p) in offers {
            b.offer(l, p);
        }
        (0..keep).map_while(|i| b.port(i)).collect()
    }

    #[test]
    fn best_keeps_the_least_loaded_earliest_first_each_port_once() {
        let c = [(5, 1), (3, 2), (3, 3), (9, 4)];
        assert_eq!(best_of(1, &c), [2]);
        assert_eq!(best_of(2, &c), [2, 3]);
        assert_eq!(best_of(8, &c), [2, 3, 1, 4]);
        // A port offered twice (remembered and drawn) counts once.
        assert_eq!(best_of(3, &[(4, 7), (2, 8), (4, 7), (1, 9)]), [9, 8, 7]);
        assert_eq!(best_of(2, &[(4, 7), (4, 7), (4, 6)]), [7, 6]);
    }
}
