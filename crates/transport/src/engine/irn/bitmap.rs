//! A circular bitmap over a sliding window of PSNs: bit `psn` lives at
//! index `psn mod capacity`, so the window slides by clearing the bits it
//! leaves, without shifting. The capacity is the cap rounded up to whole
//! 64-bit words (a power of two of them), allocated once per QP.

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
        RingBitmap {
            words: vec![0; (bits / 64) as usize].into_boxed_slice(),
            mask: bits - 1,
        }
    }

    #[inline]
    fn at(&self, psn: u32) -> (usize, u64) {
        let i = psn & self.mask;
        ((i / 64) as usize, 1u64 << (i % 64))
    }

    #[inline]
    pub fn get(&self, psn: u32) -> bool {
        let (w, b) = self.at(psn);
        self.words[w] & b != 0
    }

    #[inline]
    pub fn set(&mut self, psn: u32) {
        let (w, b) = self.at(psn);
        self.words[w] |= b;
    }

    #[inline]
    pub fn clear(&mut self, psn: u32) {
        let (w, b) = self.at(psn);
        self.words[w] &= !b;
    }

    /// Clears the bits of `from..to` (the window's start moving to `to`).
    pub fn clear_range(&mut self, from: u32, to: u32) {
        for p in from..to {
            self.clear(p);
        }
    }

    /// The first PSN in `from..to` whose bit is clear, if any.
    pub fn first_clear(&self, from: u32, to: u32) -> Option<u32> {
        let mut p = from;
        while p < to {
            let (w, _) = self.at(p);
            let i = p & self.mask;
            // Bits of this word at or above p's index, inverted: the clear ones.
            let free = !self.words[w] >> (i % 64);
            if free != 0 {
                let q = p + free.trailing_zeros();
                return (q < to).then_some(q);
            }
            p += 64 - i % 64;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_slides_and_wraps() {
        let mut b = RingBitmap::new(100);
        assert_eq!(b.mask, 127);
        for p in [120, 121, 127, 128, 200] {
            b.set(p);
        }
        assert!(b.get(120) && b.get(128) && !b.get(122));
        assert_eq!(b.first_clear(120, 130), Some(122));
        assert_eq!(b.first_clear(127, 129), None);
        assert_eq!(b.first_clear(200, 201), None);
        b.clear_range(120, 129);
        assert!(!b.get(121) && b.get(200));
        assert_eq!(b.first_clear(199, 260), Some(199));
        // Across a word boundary of the ring.
        for p in 250..260 {
            b.set(p);
        }
        assert_eq!(b.first_clear(250, 300), Some(260));
    }
}
