//! A circular bitmap over a sliding window of PSNs: bit `psn` lives at
//! index `psn mod capacity`, so the window slides by clearing the bits it
//! leaves, without shifting. The capacity is the cap rounded up to whole
//! 64-bit words (a power of two of them), allocated once per QP. A power
//! of two up to 2^24 divides the PSN spaces (2^32, and 2^24 on the wire),
//! so the index runs on unchanged across the PSNs' wrap-around. Ranges are
//! in serial order (`crate::psn`).

use crate::psn::{Psn, WIRE_MASK};

#[derive(Clone, Debug)]
pub(crate) struct RingBitmap {
    words: Box<[u64]>,
    /// Capacity in bits minus one (a power of two minus one).
    mask: u32,
}

impl RingBitmap {
    /// A bitmap that can hold any window of `cap` consecutive PSNs.
    pub fn new(cap: u32) -> RingBitmap {
        let bits = cap.max(64).next_power_of_two();
        debug_assert!(
            bits - 1 <= WIRE_MASK,
            "a ring of {bits} bits spans the PSNs"
        );
        RingBitmap {
            words: vec![0; (bits / 64) as usize].into_boxed_slice(),
            mask: bits - 1,
        }
    }

    #[inline]
    fn at(&self, psn: Psn) -> (usize, u64) {
        // The ring's index bits are among the 24 of the wire.
        let i = psn.wire() & self.mask;
        ((i / 64) as usize, 1u64 << (i % 64))
    }

    #[inline]
    pub fn get(&self, psn: Psn) -> bool {
        let (w, b) = self.at(psn);
        self.words[w] & b != 0
    }

    #[inline]
    pub fn set(&mut self, psn: Psn) {
        let (w, b) = self.at(psn);
        self.words[w] |= b;
    }

    #[inline]
    pub fn clear(&mut self, psn: Psn) {
        let (w, b) = self.at(psn);
        self.words[w] &= !b;
    }

    /// Clears the bits of `from..to` (the window's start moving to `to`).
    pub fn clear_range(&mut self, from: Psn, to: Psn) {
        for k in 0..to.diff(from).max(0) as u32 {
            self.clear(from + k);
        }
    }

    /// The bits set, over the whole ring.
    pub fn count_ones(&self) -> u32 {
        self.words.iter().map(|w| w.count_ones()).sum()
    }

    /// The bits set in `from..to`, a word at a time.
    pub fn count_range(&self, from: Psn, to: Psn) -> u32 {
        let n = to.diff(from).max(0) as u32;
        let (mut k, mut ones) = (0, 0);
        while k < n {
            let p = from + k;
            let (w, _) = self.at(p);
            let i = p.wire() & self.mask;
            let take = (64 - i % 64).min(n - k);
            let bits = self.words[w] >> (i % 64);
            let mask = if take == 64 { !0 } else { (1u64 << take) - 1 };
            ones += (bits & mask).count_ones();
            k += take;
        }
        ones
    }

    /// The first PSN in `from..to` whose bit is clear, if any.
    pub fn first_clear(&self, from: Psn, to: Psn) -> Option<Psn> {
        // Offsets from `from`: `n` PSNs (none if `to` is not after `from`).
        let n = to.diff(from).max(0) as u32;
        let mut k = 0;
        while k < n {
            let p = from + k;
            let (w, _) = self.at(p);
            let i = p.wire() & self.mask;
            // Bits of this word at or above p's index, inverted: the clear ones.
            let free = !self.words[w] >> (i % 64);
            if free != 0 {
                let q = k + free.trailing_zeros();
                return (q < n).then_some(from + q);
            }
            k += 64 - i % 64;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PSNs `base + k`: the same test from 0 and across the PSN wrap.
    fn slides_and_wraps_from(base: Psn) {
        let p = |k: u32| base + k;
        let mut b = RingBitmap::new(100);
        assert_eq!(b.mask, 127);
        for k in [120, 121, 127, 128, 200] {
            b.set(p(k));
        }
        assert!(b.get(p(120)) && b.get(p(128)) && !b.get(p(122)));
        assert_eq!(b.first_clear(p(120), p(130)), Some(p(122)));
        assert_eq!(b.first_clear(p(127), p(129)), None);
        assert_eq!(b.first_clear(p(200), p(201)), None);
        assert_eq!(b.first_clear(p(130), p(120)), None, "an empty range");
        b.clear_range(p(120), p(129));
        assert!(!b.get(p(121)) && b.get(p(200)));
        assert_eq!(b.first_clear(p(199), p(260)), Some(p(199)));
        // Across a word boundary of the ring.
        for k in 250..260 {
            b.set(p(k));
        }
        assert_eq!(b.first_clear(p(250), p(300)), Some(p(260)));
        assert_eq!(b.count_range(p(199), p(261)), 11);
        assert_eq!(b.count_range(p(252), p(256)), 4);
        assert_eq!(b.count_range(p(260), p(250)), 0, "an empty range");
        assert_eq!(b.count_ones(), 11);
    }

    #[test]
    fn window_slides_and_wraps() {
        slides_and_wraps_from(Psn::new(0));
    }

    #[test]
    fn window_slides_across_the_psn_wrap() {
        // base + 120 .. base + 300 crosses 2^32 (and 2^24 on the wire).
        slides_and_wraps_from(Psn::new(u32::MAX - 0x7F));
        let top = Psn::new(u32::MAX);
        let mut b = RingBitmap::new(64);
        b.set(top);
        assert!(b.get(top) && !b.get(top + 1));
        b.set(top + 1);
        assert_eq!(b.first_clear(top - 1, top + 6), Some(top - 1));
        assert_eq!(b.first_clear(top, top + 6), Some(top + 2));
    }
}
