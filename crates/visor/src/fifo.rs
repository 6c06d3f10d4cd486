//! A byte FIFO: bytes appended at the back, taken from the front. The
//! daemon's output to a session waiting for room in its ring, or to a
//! link waiting for room in its TCP connection, and the frames read from
//! a ring (by the daemon and by the client) waiting to be parsed.
//!
//! Taking from the front of a plain `Vec` moves everything behind it: with
//! a client slower than its peers, the daemon's backlog grew to 160 MB and
//! each flush of a 256 KB ring moved all of it, so delivery slowed as the
//! backlog grew (0.47 Gb/s against 7 Gb/s with 64 KB messages); and each
//! 64 B frame parsed from 64 KB read moved the rest of the 64 KB. Here the
//! front is an offset, and the bytes behind it move only once it passes
//! half the buffer: each byte moves at most once on average.
//!
//! Touches nothing else.

#[derive(Default)]
pub struct Fifo {
    buf: Vec<u8>,
    start: usize,
}

impl Fifo {
    /// Where to append more bytes.
    pub fn back(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// The bytes not yet taken.
    pub fn bytes(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    pub fn len(&self) -> usize {
        self.buf.len() - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first `n` bytes were taken.
    pub fn take(&mut self, n: usize) {
        self.start += n.min(self.len());
        if self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        } else if self.start >= self.buf.len() / 2 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Fifo;

    #[test]
    fn bytes_leave_in_order_and_the_buffer_compacts() {
        let mut o = Fifo::default();
        let mut expect = Vec::new();
        let mut next = 0u8;
        for round in 0..1000 {
            for _ in 0..(round % 7 + 1) {
                o.back().push(next);
                expect.push(next);
                next = next.wrapping_add(1);
            }
            let n = (round % 5).min(o.len());
            assert_eq!(&o.bytes()[..n], &expect[..n]);
            o.take(n);
            expect.drain(..n);
            assert_eq!(o.bytes(), &expect[..]);
            // Never more than twice what is waiting (plus what came in
            // since the last take).
            assert!(
                o.buf.len() <= 2 * o.len() + 8,
                "{} for {}",
                o.buf.len(),
                o.len()
            );
        }
        o.take(o.len());
        assert!(o.is_empty() && o.buf.is_empty());
    }
}
