//! Eunomia's memory controller (§3.4, §4): one per NIC, a master array of
//! 2-byte blocks ("units" here, to keep them apart from bitmap blocks), a
//! block-allocation bitmap with one bit per unit, and the bytes in use.
//! Bitmap blocks are allocated first fit from the head of the array,
//! a connection's metadata as one run of consecutive units searched from
//! the tail backward, as the FPGA does; both are freed when the
//! connection completes (garbage collection, §3.5.3), without erasing the
//! data, which the next owner overwrites.
//!
//! The bits of every connection's hybrid-dynamic bitmap live here (`get`,
//! `set`, `clear` by unit and bit). The metadata run holds Table 7's
//! variables on the FPGA; the simulator keeps them in the connection's
//! `Hd` and charges the run here, so that capacity and accounting are the
//! NIC's. The per-connection metadata start index (3 bytes per entry on
//! the FPGA) is the `Hd`'s `meta` field.
//!
//! Which units are allocated, and the searches for a free run, are
//! `free_runs`'s.
//!
//! Imports nothing of the crate but `super::free_runs`.

use super::free_runs::FreeRuns;

/// The NIC's memory controller.
#[derive(Debug)]
pub(crate) struct MemoryController {
    master: Vec<u16>,
    /// Which units of `master` are allocated.
    free: FreeRuns,
    bitmap_units: u32,
    metadata_units: u32,
    peak_units: u32,
}

/// Bytes of the memory controller in use, now and at most.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OrderMemory {
    /// Bytes of connections' bitmap blocks.
    pub bitmap_bytes: u64,
    /// Bytes of connections' metadata (Table 7 and block addresses).
    pub metadata_bytes: u64,
    /// The most bytes of both in use at once.
    pub peak_bytes: u64,
}

impl MemoryController {
    /// A controller of `bytes` (even) bytes.
    pub fn new(bytes: u32) -> MemoryController {
        let units = (bytes / 2) as usize;
        MemoryController {
            master: vec![0; units],
            free: FreeRuns::new(units as u32),
            bitmap_units: 0,
            metadata_units: 0,
            peak_units: 0,
        }
    }

    /// A bitmap block of `n` units, cleared, first fit from the head; None
    /// when full.
    pub fn alloc_block(&mut self, n: u32) -> Option<u32> {
        let s = self.free.first_fit(n)?;
        self.free.mark(s, n, true);
        self.master[s as usize..(s + n) as usize].fill(0);
        self.bitmap_units += n;
        self.note_peak();
        Some(s)
    }

    /// A metadata run of `n` units, searched from the tail backward; None
    /// when no run is free.
    pub fn alloc_metadata(&mut self, n: u32) -> Option<u32> {
        let s = self.free.last_fit(n)?;
        self.free.mark(s, n, true);
        self.metadata_units += n;
        self.note_peak();
        Some(s)
    }

    fn note_peak(&mut self) {
        self.peak_units = self.peak_units.max(self.bitmap_units + self.metadata_units);
    }

    pub fn free_block(&mut self, start: u32, n: u32) {
        self.free.mark(start, n, false);
        self.bitmap_units -= n;
    }

    pub fn free_metadata(&mut self, start: u32, n: u32) {
        self.free.mark(start, n, false);
        self.metadata_units -= n;
    }

    #[inline]
    pub fn get(&self, unit: u32, bit: u32) -> bool {
        self.master[unit as usize] >> bit & 1 != 0
    }

    #[inline]
    pub fn set(&mut self, unit: u32, bit: u32) {
        self.master[unit as usize] |= 1 << bit;
    }

    #[inline]
    pub fn clear(&mut self, unit: u32, bit: u32) {
        self.master[unit as usize] &= !(1 << bit);
    }

    pub fn memory(&self) -> OrderMemory {
        OrderMemory {
            bitmap_bytes: 2 * self.bitmap_units as u64,
            metadata_bytes: 2 * self.metadata_units as u64,
            peak_bytes: 2 * self.peak_units as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_from_the_head_metadata_from_the_tail() {
        let mut mc = MemoryController::new(64); // 32 units
        assert_eq!(mc.alloc_metadata(24), Some(8));
        assert_eq!(mc.alloc_block(1), Some(0));
        assert_eq!(mc.alloc_block(1), Some(1));
        mc.set(1, 3);
        assert!(mc.get(1, 3) && !mc.get(0, 3));
        mc.free_block(0, 1);
        assert_eq!(mc.alloc_block(2), Some(2), "first fit of two units");
        assert_eq!(mc.alloc_block(1), Some(0), "the freed unit again");
        assert_eq!(mc.alloc_metadata(24), None, "full");
        let m = mc.memory();
        assert_eq!((m.bitmap_bytes, m.metadata_bytes), (8, 48));
        mc.free_metadata(8, 24);
        mc.free_block(1, 1);
        mc.set(2, 0);
        mc.free_block(2, 2);
        assert_eq!(mc.alloc_block(2), Some(1), "cleared on allocation");
        assert!(!mc.get(2, 0));
        assert_eq!(mc.memory().peak_bytes, 56);
    }
}
