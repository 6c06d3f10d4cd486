//! A FIFO of small `Copy` values in a power-of-two ring: what a port's
//! queues and wire hold.
//!
//! Why not `VecDeque`: its `push_back` is an out-of-line call with a
//! wrap-around branch, paid four times per packet-hop (queue in, queue out,
//! wire in, wire out). Here an index is a mask, the slots are plain values
//! (`Default` fills the unused ones, so no `unsafe`), and only growth is
//! out of line. Touches nothing else (a pop only asks the cache for the
//! slot a line ahead).

/// A growable FIFO ring.
#[derive(Clone, Debug)]
pub struct Ring<T> {
    /// Capacity is `buf.len()`: zero or a power of two.
    buf: Box<[T]>,
    head: u32,
    len: u32,
}

impl<T: Copy + Default> Default for Ring<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy + Default> Ring<T> {
    pub fn new() -> Self {
        Ring {
            buf: Box::new([]),
            head: 0,
            len: 0,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn push_back(&mut self, v: T) {
        if self.len as usize == self.buf.len() {
            self.grow();
        }
        let i = (self.head + self.len) as usize & (self.buf.len() - 1);
        self.buf[i] = v;
        self.len += 1;
        // The tail of a deep FIFO was last touched a whole ring ago: ask for
        // the line the next pushes will write, as `pop_front` does for reads.
        let ahead = 64 / std::mem::size_of::<T>().max(1);
        let next = (i + ahead) & (self.buf.len() - 1);
        crate::prefetch::prefetch_ptr(self.buf.as_ptr().wrapping_add(next));
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let v = self.buf[self.head as usize];
        // A deep FIFO is read a line at a time, each line written long
        // before: ask for the next line now, a few pops ahead of its use.
        // (In a shorter ring the slot is stale or already cached, and the
        // hint costs nothing.)
        let ahead = 64 / std::mem::size_of::<T>().max(1);
        let next = (self.head as usize + ahead) & (self.buf.len() - 1);
        crate::prefetch::prefetch_ptr(self.buf.as_ptr().wrapping_add(next));
        self.head = (self.head + 1) & (self.buf.len() as u32 - 1);
        self.len -= 1;
        Some(v)
    }

    #[inline]
    pub fn front(&self) -> Option<&T> {
        if self.len == 0 {
            None
        } else {
            Some(&self.buf[self.head as usize])
        }
    }

    /// The values, first to last.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        let mask = self.buf.len().wrapping_sub(1);
        (0..self.len as usize).map(move |k| &self.buf[(self.head as usize + k) & mask])
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let cap = (self.buf.len() * 2).max(4);
        assert!(cap <= 1 << 31, "ring of more than 2^31 values");
        let mut buf = vec![T::default(); cap].into_boxed_slice();
        for (slot, v) in buf.iter_mut().zip(self.iter()) {
            *slot = *v;
        }
        self.buf = buf;
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// Interleaved pushes and pops across growth and wrap-around behave as
    /// a `VecDeque`.
    #[test]
    fn behaves_as_a_fifo() {
        let mut ring = Ring::new();
        let mut reference = VecDeque::new();
        let mut x = 7u64;
        for step in 0..10_000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Grow for a while, then mostly drain, so the head wraps.
            let push = if step % 2000 < 1200 {
                x >> 62 != 0
            } else {
                x >> 62 == 0
            };
            if push {
                ring.push_back(step);
                reference.push_back(step);
            } else {
                assert_eq!(ring.pop_front(), reference.pop_front());
            }
            assert_eq!(ring.len(), reference.len());
            assert_eq!(ring.front(), reference.front());
            for k in [1, 2, reference.len()] {
                assert_eq!(ring.iter().nth(k), reference.get(k));
            }
        }
        assert!(ring.iter().eq(reference.iter()));
        while let Some(v) = reference.pop_front() {
            assert_eq!(ring.pop_front(), Some(v));
        }
        assert!(ring.is_empty());
        assert_eq!(ring.pop_front(), None);
    }
}
