//! Flowlet tables, one per switch, for the flowlet-grained schemes
//! (LetFlow, CONGA): a flow's packets that follow each other within `gap`
//! form a flowlet and keep one next hop; a packet that comes after a
//! longer gap (or the first of a flow) starts a new flowlet on the hop the
//! scheme chooses. A flow is the packet's exact identity, `hdr.flow`
//! (source host and UDP source port) with `hdr.dst`.
//!
//! Each switch's table is of bounded size, allocated at its first use:
//! `table` entries (rounded up to a power of two, at least [`WAYS`]), in
//! sets of [`WAYS`] chosen by a hash of the flow. An entry idle for longer
//! than `gap` has aged out (its flow's next packet starts a new flowlet
//! anyway) and is the first to be reused; when every way of a set is still
//! active, the least recently seen flow loses its entry, and its next
//! packet starts a new flowlet early. The table's memory is thus `table` x
//! 24 bytes per switch that uses it, whatever the number of flows. Touches
//! only its tables.

use crate::hash::mix64;
use crate::net::arena::Hdr;
use engine::Time;

/// The bounds of a table's size, in entries.
pub const MIN_TABLE: u32 = WAYS as u32;
pub const MAX_TABLE: u32 = 1 << 16;

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

pub(crate) struct Flowlets {
    gap: Time,
    /// Sets per table, minus one (a power of two, minus one).
    set_mask: usize,
    /// Each switch's table (empty until the switch first asks: switches
    /// that never do cost nothing).
    tables: Vec<Vec<Entry>>,
}

impl Flowlets {
    /// Swaps switch `s`'s table with `other`'s.
    pub fn swap_switch(&mut self, other: &mut Flowlets, s: usize) {
        std::mem::swap(&mut self.tables[s], &mut other.tables[s]);
    }

    /// A table size out of range is clamped into it (the scenario refuses
    /// it before).
    pub fn new(gap: Time, table: u32, switches: u32) -> Flowlets {
        let entries = table.clamp(MIN_TABLE, MAX_TABLE).next_power_of_two() as usize;
        Flowlets {
            gap,
            set_mask: entries / WAYS - 1,
            tables: (0..switches).map(|_| Vec::new()).collect(),
        }
    }

    /// The next hop of `hdr` at switch `s` at `now`: its flowlet's, if the
    /// flow's previous packet passed within the gap and that hop is still
    /// among `hops`, else `choose()`'s, which starts a new flowlet.
    #[inline(always)]
    pub fn port(
        &mut self,
        s: u32,
        hdr: &Hdr,
        hops: &[u32],
        now: Time,
        choose: impl FnOnce() -> u32,
    ) -> u32 {
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
        let port = choose();
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
    use engine::time::US;

    fn hdr(src: u32, dst: u32) -> Hdr {
        let mut h = Hdr::of(3, 1048, true);
        h.flow = 7 << 16 | src;
        h.dst = dst;
        h
    }

    /// A flow keeps its hop while its gaps stay within `gap` and is asked
    /// anew only after a longer one, or when its hop is no longer offered;
    /// a table full of active flows evicts the least recently seen.
    #[test]
    fn flowlets_split_only_at_gaps() {
        let mut f = Flowlets::new(10 * US, 4, 1);
        let hops: Vec<u32> = (100..164).collect();
        let h = hdr(1, 2);
        // Each new flowlet goes to the next port up.
        let asked = std::cell::Cell::new(0);
        let pick = |f: &mut Flowlets, h: &Hdr, hops: &[u32], t: Time| {
            f.port(0, h, hops, t, || {
                asked.set(asked.get() + 1);
                100 + asked.get()
            })
        };
        let first = pick(&mut f, &h, &hops, 1);
        for i in 1..1000 {
            assert_eq!(pick(&mut f, &h, &hops, 1 + i * 10 * US), first);
        }
        let t = 1 + 1000 * 10 * US + 1;
        assert_ne!(pick(&mut f, &h, &hops, t), first);
        // Its hop withdrawn: a new flowlet even within the gap.
        let now = pick(&mut f, &h, &hops, t + 1);
        let fewer: Vec<u32> = hops.iter().copied().filter(|&p| p != now).collect();
        assert_ne!(pick(&mut f, &h, &fewer, t + 2), now);
        assert_eq!(asked.get(), 3);
        // One set of four: four other active flows evict this one.
        for src in 10..14 {
            f.port(0, &hdr(src, 2), &hops, t + 3, || 100);
        }
        let key = (h.flow as u64) << 32 | 2 | LIVE;
        assert!(f.tables[0].iter().all(|e| e.key != key));
    }
}
