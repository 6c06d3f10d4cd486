//! LetFlow (Vanini et al., NSDI'17), at every switch with two next hops or
//! more: a flow's packets that follow each other within `gap` form a
//! flowlet and keep one next hop; a packet that comes after a longer gap
//! (or the first of a flow) starts a new flowlet on a next hop drawn at
//! random. A flow is the packet's exact identity, `hdr.flow` (source host
//! and UDP source port) with `hdr.dst`.
//!
//! Each switch keeps a flowlet table of bounded size, allocated at its
//! first use: `table` entries (rounded up to a power of two, at least
//! [`WAYS`]), in sets of [`WAYS`] chosen by a hash of the flow. An entry
//! idle for longer than `gap` has aged out (its flow's next packet starts
//! a new flowlet anyway) and is the first to be reused; when every way of
//! a set is still active, the least recently seen flow loses its entry,
//! and its next packet starts a new flowlet early. The table's memory is
//! thus `table` x 24 bytes per switch that balances, whatever the number
//! of flows. Touches only its tables and random streams.

use crate::hash::mix64;
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
    pub const MIN_TABLE: u32 = WAYS as u32;
    pub const MAX_TABLE: u32 = 1 << 16;
}

/// Entries per set of a flowlet table.
pub const WAYS: usize = 4;

/// Marks a used entry's key: `hdr.dst` is a host id, below 2^16, so bit 31
/// is free, and no flow's key is 0 (an empty entry's).
const LIVE: u64 = 1 << 31;

#[derive(Clone, Copy, Default)]
struct Entry {
    /// `flow << 32 | dst | LIVE`; 0: empty.
    key: u64,
    /// When the flow's latest packet passed.
    last: Time,
    /// The flowlet's egress port.
    port: u32,
}

pub(crate) struct Letflow {
    gap: Time,
    /// Sets per table, minus one (a power of two, minus one).
    set_mask: usize,
    /// Each switch's random stream, by switch index.
    rngs: Vec<Rng>,
    /// Each switch's flowlet table (empty until the switch first
    /// balances: switches that never do cost nothing).
    tables: Vec<Vec<Entry>>,
}

impl Letflow {
    /// A table size out of range is clamped into it (the scenario refuses
    /// it before).
    pub fn new(p: LetflowParams, seed: u64, switches: u32) -> Letflow {
        let entries = p
            .table
            .clamp(LetflowParams::MIN_TABLE, LetflowParams::MAX_TABLE)
            .next_power_of_two() as usize;
        Letflow {
            gap: p.gap,
            set_mask: entries / WAYS - 1,
            rngs: (0..switches as u64)
                .map(|s| Rng::new(seed, StreamKind::LoadBalance, s))
                .collect(),
            tables: (0..switches).map(|_| Vec::new()).collect(),
        }
    }

    #[inline(always)]
    pub fn pick(&mut self, s: u32, hdr: &Hdr, hops: &[u32], now: Time) -> u32 {
        let key = (hdr.flow as u64) << 32 | hdr.dst as u64 | LIVE;
        let table = &mut self.tables[s as usize];
        if table.is_empty() {
            *table = vec![Entry::default(); (self.set_mask + 1) * WAYS];
        }
        let set = (mix64(key) as usize & self.set_mask) * WAYS;
        let ways = &mut table[set..set + WAYS];
        let found = ways.iter().position(|e| e.key == key);
        if let Some(w) = found {
            let e = &mut ways[w];
            if now.saturating_sub(e.last) <= self.gap && hops.contains(&e.port) {
                e.last = now;
                return e.port;
            }
        }
        // A new flowlet: in the flow's own entry, else in the set's least
        // recently used (an empty one, or one aged out, if any).
        let w = found.unwrap_or_else(|| {
            (1..WAYS).fold(0, |v, w| if ways[w].last < ways[v].last { w } else { v })
        });
        let port = hops[self.rngs[s as usize].below(hops.len() as u64) as usize];
        ways[w] = Entry {
            key,
            last: now,
            port,
        };
        port
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr(src: u32, dst: u32) -> Hdr {
        let mut h = Hdr::of(3, 1048, true);
        h.flow = 7 << 16 | src;
        h.dst = dst;
        h
    }

    /// A flow keeps its hop while its gaps stay within `gap`, and may move
    /// only after a longer one; a table full of active flows evicts the
    /// least recently seen.
    #[test]
    fn flowlets_split_only_at_gaps() {
        let p = LetflowParams {
            gap: 10 * US,
            table: 4,
        };
        let mut lf = Letflow::new(p, 1, 1);
        let hops: Vec<u32> = (100..164).collect();
        let h = hdr(1, 2);
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
        // One set of four: four other active flows evict this one.
        lf.pick(0, &h, &hops, t + 1);
        for src in 10..14 {
            lf.pick(0, &hdr(src, 2), &hops, t + 2);
        }
        assert!(lf.tables[0]
            .iter()
            .all(|e| e.key != (h.flow as u64) << 32 | 2 | LIVE));
    }
}
