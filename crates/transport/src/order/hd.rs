//! The hybrid-dynamic bitmap of one connection (Eunomia §3.3, Fig 7,
//! Table 7): rows of `block_bits` bits in the memory controller; the top
//! `circ_rows` rows are a circular array whose bit for a PSN is counted
//! from the head's position, the rest (if any) a linear array whose first
//! bit is the PSN after `tail`. A PSN beyond both grows the linear part by
//! whole rows (the cap permitting); once the head passes `tail` (the
//! circular part is flushed), the linear rows join the circle with no bit
//! moved. Without a linear part, `tail` moves with the head.
//!
//! Reach: a PSN is tracked up to `tail + cap - circ` (`circ` the circle's
//! bits; the linear part may grow to the rest of the cap). Without a
//! linear part that is `head + cap - 1`, a static bitmap's reach. Once a
//! linear part exists `tail` stays put (the linear part's first bit is the
//! PSN after it), so the reach shrinks by one for every PSN the head
//! moves: down to `head + cap - circ` when the head reaches `tail` (16
//! PSNs for a 240-bit circle under a 256-bit cap), and back to `head +
//! cap - 1` when the head passes `tail` and the rows merge. The circle's
//! flushed bits behind the head are what is lost: using them for PSNs
//! past the linear part would take a third mapping. This is the paper's
//! design, not a reading of ours: §3.3 absorbs the linear part "once the
//! circular array is completely flushed", updating only Tail and the
//! Circular BM Size. The rows could merge earlier with no bit moved in
//! two cases the paper does not describe (the circle holds no set bit
//! ahead of the head, re-indexing the head; or `tail` is the circle's
//! last bit); neither held at any drop beyond the cap in
//! docs/eunomia.md's Fig 18 runs.
//!
//! The same structure with one row, never grown, allocated when a
//! connection starts and freed when it completes, is the static bitmap of
//! §5.7.
//!
//! May use `crate::psn` and `crate::order::mc`.

use super::mc::MemoryController;
use crate::psn::Psn;

/// Sizes of a bitmap, from the layer's configuration.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Geometry {
    pub block_bits: u32,
    pub cap_bits: u32,
    /// Master-array units one row occupies.
    pub units_per_block: u32,
    /// Master-array units of one connection's metadata (0: none).
    pub metadata_units: u32,
}

/// Where a PSN ahead of the head went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Track {
    /// Marked: it had not arrived before.
    New,
    /// Already marked: a duplicate.
    Again,
    /// The bitmap would pass its cap: not tracked.
    BeyondCap,
    /// The memory controller has no block for the growth: not tracked.
    NoMemory,
}

/// One connection's bitmap and the state of its Table 7 (its address is
/// `rows[0]`, Dynamic Size `rows.len()`, Head BM ID and Index `head_pos`).
#[derive(Debug)]
pub(crate) struct Hd {
    /// First missing PSN.
    pub head: Psn,
    /// Highest PSN the circular part accommodates.
    tail: Psn,
    /// Last Seq: the PSN of the connection's last packet, once seen.
    pub last_seq: Option<Psn>,
    /// The head's bit, `row * block_bits + index`, in the circular part.
    head_pos: u32,
    /// Circular BM Size, in rows.
    circ_rows: u32,
    /// First unit of each row in the memory controller (the FPGA keeps
    /// the first absolute and the others relative: 2 bytes each).
    rows: Vec<u32>,
    /// First unit of the metadata run (the metadata start index).
    meta: u32,
    /// Bits set.
    marked: u32,
}

impl Hd {
    /// A bitmap of one row whose head is `head`: its metadata and first
    /// block from `mc`, or None if it has no room.
    pub fn create(mc: &mut MemoryController, g: &Geometry, head: Psn) -> Option<Hd> {
        let meta = if g.metadata_units > 0 {
            mc.alloc_metadata(g.metadata_units)?
        } else {
            0
        };
        let Some(row) = mc.alloc_block(g.units_per_block) else {
            if g.metadata_units > 0 {
                mc.free_metadata(meta, g.metadata_units);
            }
            return None;
        };
        Some(Hd {
            head,
            tail: head + (g.block_bits - 1),
            last_seq: None,
            head_pos: 0,
            circ_rows: 1,
            rows: vec![row],
            meta,
            marked: 0,
        })
    }

    /// Bits now allocated (Dynamic Size x block).
    pub fn bits(&self, g: &Geometry) -> u32 {
        self.rows.len() as u32 * g.block_bits
    }

    /// Bits set: tracked PSNs ahead of the head.
    pub fn marked(&self) -> u32 {
        self.marked
    }

    fn unit_bit(&self, g: &Geometry, pos: u32) -> (u32, u32) {
        let (row, idx) = (pos / g.block_bits, pos % g.block_bits);
        (self.rows[row as usize] + idx / 16, idx % 16)
    }

    /// Marks `psn` (ahead of the head), growing the linear part if needed.
    pub fn track(&mut self, mc: &mut MemoryController, g: &Geometry, psn: Psn) -> Track {
        debug_assert!(psn.gt(self.head));
        let circ_bits = self.circ_rows * g.block_bits;
        let pos = if psn.le(self.tail) {
            (self.head_pos + psn.since(self.head)) % circ_bits
        } else {
            let l = psn.since(self.tail) - 1;
            let lin_bits = self.bits(g) - circ_bits;
            if l >= lin_bits {
                let new_rows = (l + 1 - lin_bits).div_ceil(g.block_bits);
                if u64::from(self.bits(g)) + u64::from(new_rows * g.block_bits)
                    > u64::from(g.cap_bits)
                {
                    return Track::BeyondCap;
                }
                for _ in 0..new_rows {
                    // A row allocated before the controller ran out stays:
                    // it is a valid part of the linear array.
                    let Some(r) = mc.alloc_block(g.units_per_block) else {
                        return Track::NoMemory;
                    };
                    self.rows.push(r);
                }
            }
            circ_bits + l
        };
        let (u, b) = self.unit_bit(g, pos);
        if mc.get(u, b) {
            return Track::Again;
        }
        mc.set(u, b);
        self.marked += 1;
        Track::New
    }

    /// Whether `psn` (ahead of the head) is marked.
    #[cfg(test)]
    pub fn is_marked(&self, mc: &MemoryController, g: &Geometry, psn: Psn) -> bool {
        let circ_bits = self.circ_rows * g.block_bits;
        let pos = if psn.le(self.tail) {
            (self.head_pos + psn.since(self.head)) % circ_bits
        } else {
            let l = psn.since(self.tail) - 1;
            if l >= self.bits(g) - circ_bits {
                return false;
            }
            circ_bits + l
        };
        let (u, b) = self.unit_bit(g, pos);
        mc.get(u, b)
    }

    /// The highest PSN `track` accepts now, the cap permitting (the
    /// module doc's reach).
    #[cfg(test)]
    pub fn reach(&self, g: &Geometry) -> Psn {
        self.tail + (g.cap_bits - self.circ_rows * g.block_bits)
    }

    /// Moves the head to `to` (the engine's expected PSN), clearing the
    /// bits it passes (flushing them), and absorbs the linear part into
    /// the circle once the head has passed `tail`. Constant work per PSN
    /// while bits are set; a jump over clear bits costs one step.
    pub fn advance_to(&mut self, mc: &mut MemoryController, g: &Geometry, to: Psn) {
        while self.head.lt(to) && self.marked > 0 {
            let (u, b) = self.unit_bit(g, self.head_pos);
            if mc.get(u, b) {
                mc.clear(u, b);
                self.marked -= 1;
            }
            self.step(g, 1);
        }
        if self.head.lt(to) {
            self.step(g, to.since(self.head));
        }
    }

    /// Moves the head `n` PSNs on (every bit it passes is clear or
    /// cleared).
    fn step(&mut self, g: &Geometry, n: u32) {
        let circ_bits = self.circ_rows * g.block_bits;
        let total = self.bits(g);
        self.head += n;
        if total == circ_bits {
            self.head_pos =
                ((u64::from(self.head_pos) + u64::from(n)) % u64::from(circ_bits)) as u32;
            self.tail = self.head + (circ_bits - 1);
        } else if self.head.gt(self.tail) {
            // The circle is flushed: the linear rows join it where they are.
            let into = u64::from(self.head.since(self.tail) - 1);
            self.head_pos = ((u64::from(circ_bits) + into) % u64::from(total)) as u32;
            self.circ_rows = self.rows.len() as u32;
            self.tail = self.head + (total - 1);
        } else {
            self.head_pos =
                ((u64::from(self.head_pos) + u64::from(n)) % u64::from(circ_bits)) as u32;
        }
    }

    /// Returns every block and the metadata to `mc` (garbage collection).
    pub fn free(self, mc: &mut MemoryController, g: &Geometry) {
        for r in self.rows {
            mc.free_block(r, g.units_per_block);
        }
        if g.metadata_units > 0 {
            mc.free_metadata(self.meta, g.metadata_units);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: Geometry = Geometry {
        block_bits: 16,
        cap_bits: 64,
        units_per_block: 1,
        metadata_units: 12,
    };

    fn hd(mc: &mut MemoryController) -> Hd {
        hd_at(mc, 0)
    }

    fn hd_at(mc: &mut MemoryController, head: u32) -> Hd {
        Hd::create(mc, &G, Psn::new(head)).unwrap()
    }

    #[test]
    fn grows_linearly_and_merges_without_moving_bits() {
        let mut mc = MemoryController::new(256);
        let mut h = hd(&mut mc);
        assert_eq!(h.track(&mut mc, &G, Psn::new(5)), Track::New);
        assert_eq!(h.track(&mut mc, &G, Psn::new(5)), Track::Again);
        // Fig 7(b): beyond the tail (15), a linear row.
        assert_eq!(h.track(&mut mc, &G, Psn::new(20)), Track::New);
        assert_eq!(h.bits(&G), 32);
        assert_eq!(mc.memory().bitmap_bytes, 4);
        // Fig 7(c): the head moves to 6 (0..5 arrived); the circle is
        // not flushed yet, so 17 goes to the linear row.
        h.advance_to(&mut mc, &G, Psn::new(6));
        assert_eq!(h.marked(), 1);
        assert_eq!(h.track(&mut mc, &G, Psn::new(17)), Track::New);
        assert!(h.is_marked(&mc, &G, Psn::new(20)) && h.is_marked(&mc, &G, Psn::new(17)));
        // Past the tail: merged; 17 flushed, 20 keeps its bit.
        h.advance_to(&mut mc, &G, Psn::new(18));
        assert!(h.is_marked(&mc, &G, Psn::new(20)));
        assert_eq!(h.marked(), 1);
        // The merged circle (32 bits from 18) wraps into the first row.
        assert_eq!(h.track(&mut mc, &G, Psn::new(49)), Track::New);
        assert_eq!(h.bits(&G), 32, "no growth inside the circle");
        // Growth stops at the cap (64 bits: the head plus 63).
        assert_eq!(h.track(&mut mc, &G, Psn::new(18 + 63)), Track::New);
        assert_eq!(h.bits(&G), 64);
        assert_eq!(h.track(&mut mc, &G, Psn::new(18 + 64)), Track::BeyondCap);
        assert!(h.is_marked(&mc, &G, Psn::new(20)) && h.is_marked(&mc, &G, Psn::new(49)));
        h.advance_to(&mut mc, &G, Psn::new(200));
        assert_eq!(h.marked(), 0);
        h.free(&mut mc, &G);
        assert_eq!(mc.memory().bitmap_bytes + mc.memory().metadata_bytes, 0);
    }

    /// The module doc's reach: a linear part waits at a fixed `tail`, so
    /// a PSN within the cap of the head is refused until the head passes
    /// it.
    #[test]
    fn reach_shrinks_while_the_linear_part_waits() {
        let mut mc = MemoryController::new(256);
        let mut h = hd(&mut mc);
        // A circle of 48 bits from head 16 (tail 63): rows for 20 and 40,
        // merged when the head passes 15.
        h.track(&mut mc, &G, Psn::new(20));
        h.track(&mut mc, &G, Psn::new(40));
        h.advance_to(&mut mc, &G, Psn::new(16));
        assert_eq!((h.bits(&G), h.circ_rows), (48, 3));
        assert_eq!(
            h.reach(&G),
            Psn::new(16 + 63),
            "no linear part: head + cap - 1"
        );
        // 64 is past the tail: a linear row, the cap reached; the tail
        // stays at 63, the reach at 63 + 16.
        assert_eq!(h.track(&mut mc, &G, Psn::new(64)), Track::New);
        assert_eq!(h.bits(&G), 64);
        assert_eq!(h.reach(&G), Psn::new(79));
        // 62 arrives; the head moves to 61, still in the circle, which
        // holds 62's bit.
        assert_eq!(h.track(&mut mc, &G, Psn::new(62)), Track::New);
        h.advance_to(&mut mc, &G, Psn::new(61));
        assert_eq!(h.reach(&G), Psn::new(79));
        assert_eq!(h.track(&mut mc, &G, Psn::new(79)), Track::New);
        // 80 is 19 ahead of the head: a static 64-bit bitmap would track
        // it; here it is beyond the cap.
        assert_eq!(h.track(&mut mc, &G, Psn::new(80)), Track::BeyondCap);
        // 61 and 63 arrive: the head passes 62, the tail and 64; the rows
        // merge (64 bits from 65) and the reach is the cap's again.
        h.advance_to(&mut mc, &G, Psn::new(65));
        assert_eq!(h.circ_rows, 4);
        assert_eq!(h.reach(&G), Psn::new(65 + 63));
        assert_eq!(h.track(&mut mc, &G, Psn::new(80)), Track::New);
        assert_eq!(h.track(&mut mc, &G, Psn::new(128)), Track::New);
        assert_eq!(h.track(&mut mc, &G, Psn::new(129)), Track::BeyondCap);
        assert!([79, 80, 128]
            .iter()
            .all(|&p| h.is_marked(&mc, &G, Psn::new(p))));
        assert_eq!(h.marked(), 3);
    }

    #[test]
    fn out_of_memory_is_reported() {
        // 12 units of metadata and 2 of bitmap.
        let mut mc = MemoryController::new(28);
        let mut h = hd(&mut mc);
        assert_eq!(h.track(&mut mc, &G, Psn::new(30)), Track::New);
        assert_eq!(h.track(&mut mc, &G, Psn::new(40)), Track::NoMemory);
        assert!(Hd::create(&mut mc, &G, Psn::new(0)).is_none());
    }

    /// Against a set of PSNs, under random arrivals and head moves.
    #[test]
    fn agrees_with_a_set() {
        let mut mc = MemoryController::new(1024);
        let mut h = hd(&mut mc);
        let mut set = std::collections::BTreeSet::new();
        let mut x: u64 = 7;
        let mut head = 0u32;
        for _ in 0..20_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = (x >> 33) as u32;
            if r.is_multiple_of(60) {
                // Everything arrives, as when a connection completes and
                // another starts: a new bitmap grows (and waits on its
                // linear part) again, where a grown circle would not.
                head = set.last().map_or(head, |&l| l + 1);
                h.advance_to(&mut mc, &G, Psn::new(head));
                set.clear();
                h.free(&mut mc, &G);
                h = hd_at(&mut mc, head);
            } else if r.is_multiple_of(3) {
                // As the engine's expected PSN: never on a marked one.
                head += r % 9;
                while set.contains(&head) {
                    head += 1;
                }
                h.advance_to(&mut mc, &G, Psn::new(head));
                set.retain(|&p| p > head);
            } else {
                let p = head + 1 + r % 70;
                let reach = h.reach(&G);
                let t = h.track(&mut mc, &G, Psn::new(p));
                match t {
                    Track::New => assert!(set.insert(p), "{p}"),
                    Track::Again => assert!(set.contains(&p), "{p}"),
                    Track::BeyondCap => assert!(!set.contains(&p), "{p}"),
                    Track::NoMemory => panic!("room enough"),
                }
                // Refused exactly past the reach, which a linear part
                // waiting at its tail keeps short of the cap.
                assert_eq!(t == Track::BeyondCap, Psn::new(p).gt(reach), "{p}");
                if p - head >= 64 {
                    assert_eq!(t, Track::BeyondCap);
                }
            }
            assert_eq!(h.marked() as usize, set.len());
            for &p in &set {
                assert!(h.is_marked(&mc, &G, Psn::new(p)));
            }
        }
    }
}
