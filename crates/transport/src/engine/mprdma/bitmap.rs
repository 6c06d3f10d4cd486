//! The receiver's cyclic tracking bitmap (MP-RDMA §3.3.1): `L` slots of two
//! bits each, packed into `u64` words; the head slot stands for `rcv_nxt`
//! and slot `i` for `rcv_nxt + i`. Popping the head clears it and moves the
//! head one slot on, so the array is reused cyclically without copying.

/// The state of one slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// Not received.
    Empty = 0,
    /// Received, not the last packet of its message.
    Received = 1,
    /// The last packet of a message that needs no completion (WRITE).
    Tail = 2,
    /// The last packet of a message that completes a receive WQE (SEND).
    TailCompletion = 3,
}

impl Slot {
    fn from_bits(b: u64) -> Slot {
        match b & 3 {
            0 => Slot::Empty,
            1 => Slot::Received,
            2 => Slot::Tail,
            _ => Slot::TailCompletion,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Bitmap {
    words: Vec<u64>,
    slots: u32,
    /// Physical index of the head slot.
    head: u32,
}

impl Bitmap {
    /// A bitmap of `slots` slots (at least 1), all empty.
    pub fn new(slots: u32) -> Bitmap {
        let slots = slots.max(1);
        Bitmap {
            words: vec![0; (slots as usize * 2).div_ceil(64)],
            slots,
            head: 0,
        }
    }

    /// Number of slots (`L`; never zero).
    pub fn slots(&self) -> u32 {
        self.slots
    }

    #[inline]
    fn locate(&self, offset: u32) -> (usize, u32) {
        debug_assert!(offset < self.slots, "offset {offset} beyond the bitmap");
        let phys = (self.head as u64 + offset as u64) % self.slots as u64;
        ((phys / 32) as usize, (phys % 32) as u32 * 2)
    }

    /// The slot `offset` places after the head (`offset < len()`).
    #[inline]
    pub fn get(&self, offset: u32) -> Slot {
        let (w, s) = self.locate(offset);
        Slot::from_bits(self.words[w] >> s)
    }

    #[inline]
    pub fn set(&mut self, offset: u32, slot: Slot) {
        let (w, s) = self.locate(offset);
        self.words[w] = (self.words[w] & !(3 << s)) | ((slot as u64) << s);
    }

    /// Returns the head slot, clears it and advances the head by one.
    #[inline]
    pub fn pop_front(&mut self) -> Slot {
        let slot = self.get(0);
        self.set(0, Slot::Empty);
        self.head = (self.head + 1) % self.slots;
        slot
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_hold_all_four_states_independently() {
        let mut b = Bitmap::new(64);
        let states = [
            Slot::Empty,
            Slot::Received,
            Slot::Tail,
            Slot::TailCompletion,
        ];
        for i in 0..64 {
            b.set(i, states[i as usize % 4]);
        }
        for i in 0..64 {
            assert_eq!(b.get(i), states[i as usize % 4], "slot {i}");
        }
        assert_eq!(b.words.len(), 2, "64 slots x 2 bits = two words");
    }

    #[test]
    fn wraps_around_many_times() {
        // An odd length so slots straddle word boundaries at varying phases.
        let mut b = Bitmap::new(37);
        for round in 0..1000u32 {
            // Mark slot 36 (the farthest) and slot 1; pop one.
            let s = if round % 3 == 0 {
                Slot::Tail
            } else {
                Slot::Received
            };
            b.set(36, s);
            assert_eq!(b.get(36), s);
            let front = b.pop_front();
            if round >= 36 {
                // What was set 36 pops ago is at the head now.
                let expect = if (round - 36) % 3 == 0 {
                    Slot::Tail
                } else {
                    Slot::Received
                };
                assert_eq!(front, expect, "round {round}");
            } else {
                assert_eq!(front, Slot::Empty);
            }
            assert_eq!(b.get(35), s, "the marked slot moved one closer");
        }
    }

    #[test]
    fn pop_clears_the_slot_for_reuse() {
        let mut b = Bitmap::new(2);
        b.set(0, Slot::TailCompletion);
        b.set(1, Slot::Received);
        assert_eq!(b.pop_front(), Slot::TailCompletion);
        assert_eq!(b.get(0), Slot::Received);
        assert_eq!(
            b.get(1),
            Slot::Empty,
            "the popped slot is the new tail, empty"
        );
        assert_eq!(b.pop_front(), Slot::Received);
        assert_eq!(b.pop_front(), Slot::Empty);
    }
}
