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
        const CAP: usize = (DrillParams::MAX_D + DrillParams::MAX_M) as usize;
        let class = hdr.class();
        let n = hops.len();
        let (d, m) = (self.d, self.m);
        let rng = &mut self.rngs[s as usize];
        let memory = &mut self.memory[s as usize * m..(s as usize + 1) * m];
        // Candidates with their loads: the remembered first (they win
        // ties), then the draws.
        let mut cand = [(0u64, 0u32); CAP];
        let mut k = 0;
        for &p in memory.iter() {
            if p != NONE && hops.contains(&p) {
                cand[k] = (sight.queued(p, class), p);
                k += 1;
            }
        }
        if d >= n {
            // Every hop, from a random one on.
            let start = rng.below(n as u64) as usize;
            for t in 0..n {
                let p = hops[(start + t) % n];
                cand[k] = (sight.queued(p, class), p);
                k += 1;
            }
        } else {
            let mut drawn = [0usize; DrillParams::MAX_D as usize];
            for c in 0..d {
                let i = loop {
                    let i = rng.below(n as u64) as usize;
                    if !drawn[..c].contains(&i) {
                        break i;
                    }
                };
                drawn[c] = i;
                cand[k] = (sight.queued(hops[i], class), hops[i]);
                k += 1;
            }
        }
        let cand = &cand[..k];
        let best = least(cand, &[]).expect("at least one draw");
        // The new memory: the m least loaded candidates, distinct.
        for slot in 0..m {
            let (kept, rest) = memory.split_at_mut(slot);
            rest[0] = least(cand, kept).unwrap_or(NONE);
        }
        best
    }
}

/// The port of the least loaded candidate not in `skip` (the earliest of
/// equals).
#[inline(always)]
fn least(cand: &[(u64, u32)], skip: &[u32]) -> Option<u32> {
    let mut best: Option<(u64, u32)> = None;
    for &(load, p) in cand {
        if !skip.contains(&p) && best.is_none_or(|b| load < b.0) {
            best = Some((load, p));
        }
    }
    best.map(|b| b.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_takes_the_earliest_of_equals_and_skips() {
        let c = [(5, 1), (3, 2), (3, 3), (9, 4)];
        assert_eq!(least(&c, &[]), Some(2));
        assert_eq!(least(&c, &[2]), Some(3));
        assert_eq!(least(&c, &[1, 2, 3, 4]), None);
    }
}
