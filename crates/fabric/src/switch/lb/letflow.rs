//! LetFlow (Vanini et al., NSDI'17), at every switch with two next hops or
//! more: per flowlet (`flowlet.rs`: a flow's packets split by an idle gap
//! longer than `gap`), a next hop drawn at random. Touches only its
//! flowlet tables and random streams.

use super::flowlet::{self, Flowlets};
use crate::net::arena::Hdr;
use engine::time::US;
use engine::{Rng, StreamKind, Time};

/// LetFlow's parameters (`[switch.letflow]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LetflowParams {
    /// The idle gap that ends a flowlet (a longer gap starts a new one).
    pub gap: Time,
    /// Flowlet table entries per switch,
    /// [`LetflowParams::MIN_TABLE`]..=[`LetflowParams::MAX_TABLE`].
    pub table: u32,
}

impl LetflowParams {
    /// A 100 us gap (LetFlow's paper and the ConWeave artifact) and 4096
    /// entries per switch.
    pub const DEFAULT: LetflowParams = LetflowParams {
        gap: 100 * US,
        table: 4096,
    };
    pub const MIN_TABLE: u32 = flowlet::MIN_TABLE;
    pub const MAX_TABLE: u32 = flowlet::MAX_TABLE;
}

pub(crate) struct Letflow {
    flowlets: Flowlets,
    /// Each switch's random stream, by switch index.
    rngs: Vec<Rng>,
}

impl Letflow {
    /// Swaps switch `s`'s state with `other`'s.
    pub fn swap_switch(&mut self, other: &mut Letflow, s: usize) {
        std::mem::swap(&mut self.rngs[s], &mut other.rngs[s]);
        self.flowlets.swap_switch(&mut other.flowlets, s);
    }

    pub fn new(p: LetflowParams, seed: u64, switches: u32) -> Letflow {
        Letflow {
            flowlets: Flowlets::new(p.gap, p.table, switches),
            rngs: (0..switches as u64)
                .map(|s| Rng::new(seed, StreamKind::LoadBalance, s))
                .collect(),
        }
    }

    #[inline(always)]
    pub fn pick(&mut self, s: u32, hdr: &Hdr, hops: &[u32], now: Time) -> u32 {
        let rng = &mut self.rngs[s as usize];
        self.flowlets.port(s, hdr, hops, now, || {
            hops[rng.below(hops.len() as u64) as usize]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flow keeps its hop while its gaps stay within `gap`; after longer
    /// ones its flowlets land on random hops.
    #[test]
    fn flowlets_draw_random_hops() {
        let p = LetflowParams {
            gap: 10 * US,
            table: 4,
        };
        let mut lf = Letflow::new(p, 1, 1);
        let hops: Vec<u32> = (100..164).collect();
        let mut h = Hdr::of(3, 1048, true);
        h.flow = 7 << 16 | 1;
        h.dst = 2;
        let first = lf.pick(0, &h, &hops, 1);
        for i in 1..1000 {
            assert_eq!(lf.pick(0, &h, &hops, 1 + i * 10 * US), first);
        }
        // After gaps longer than 10 us, new draws: among 64 hops, twenty
        // in a row cannot all repeat the first.
        let mut t = 1 + 1000 * 10 * US;
        let moved = (0..20).any(|_| {
            t += 10 * US + 1;
            lf.pick(0, &h, &hops, t) != first
        });
        assert!(moved);
    }
}
