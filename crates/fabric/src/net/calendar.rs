//! The events that cross windows (see `window.rs`): a calendar of buckets
//! by time, each an unsorted list, and a heap for what lies beyond them.
//!
//! The windowed loop takes a window's events all at once and sorts them
//! per node itself (`ByNode::sort`), so this queue need not keep any
//! order: an event is appended to the bucket of its time, and a window
//! takes whole buckets (filtering only the one its end cuts). The buckets
//! are a few dozen vectors written and read front to back, where a sorted
//! wheel walked lists of nodes spread over a pool. Events are handed out
//! in an order fixed by the calls made (bucket by bucket, each in the order
//! of its insertions), so a run is deterministic; the order of a node's
//! events is then set by `ByNode::sort` alone.
//!
//! Buckets are `2^shift` picoseconds wide ([`Calendar::shift_for`]: an
//! eighth of the lookahead or less), [`BUCKETS`] of them. An event beyond
//! their span (a retransmission timer, the arrival over a link much longer
//! than the shortest) waits in a binary heap and moves into its bucket
//! once the span reaches it. Touches nothing else.

use engine::{EventQueue, Time};

/// Number of buckets (one bit each in a `u64`).
const BUCKETS: u64 = 64;

pub(crate) struct Calendar<E> {
    shift: u32,
    /// Bucket `abs % BUCKETS` holds the events whose time is in
    /// `[abs << shift, (abs + 1) << shift)`, for `abs` in
    /// `[base, base + BUCKETS)`.
    buckets: Vec<Vec<(Time, E)>>,
    /// Bit `b`: bucket `b` is not empty.
    occupied: u64,
    /// No event in the buckets or the heap is in a bucket before `base`.
    base: u64,
    /// Events in the buckets.
    len: usize,
    /// Events at least `BUCKETS` buckets after `base`.
    far: EventQueue<E>,
}

impl<E: Copy> Calendar<E> {
    pub fn new(shift: u32) -> Calendar<E> {
        Calendar {
            shift,
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            occupied: 0,
            base: 0,
            len: 0,
            far: EventQueue::new(),
        }
    }

    /// The bucket width (log2, in picoseconds) for windows of `lookahead`:
    /// an eighth of it or less, so that a window takes at most nine
    /// buckets and the span holds eight windows.
    pub fn shift_for(lookahead: Time) -> u32 {
        (lookahead / 8).max(1).ilog2()
    }

    /// The bucket width (log2, in picoseconds).
    pub fn shift(&self) -> u32 {
        self.shift
    }

    /// Empties this calendar (it must be) and starts it where `other` is,
    /// so that it takes whatever `other` could.
    pub fn align_with(&mut self, other: &Calendar<E>) {
        debug_assert!(self.len == 0 && self.far.peek_time().is_none());
        self.shift = other.shift;
        self.base = other.base;
        self.occupied = 0;
    }

    /// Takes every event out (the buckets' from `base` on, then the
    /// heap's), leaving `base` where it is.
    pub fn take_all(&mut self, mut f: impl FnMut(Time, E)) {
        for k in 0..BUCKETS {
            let b = ((self.base + k) % BUCKETS) as usize;
            for &(t, ev) in &self.buckets[b] {
                f(t, ev);
            }
            self.buckets[b].clear();
        }
        self.len = 0;
        self.occupied = 0;
        while let Some((t, ev)) = self.far.pop() {
            f(t, ev);
        }
        // A fresh heap: the old one would clamp what comes next to the
        // last time it handed out.
        self.far = EventQueue::new();
    }

    /// Re-buckets every event for a new bucket width.
    pub fn reshape(&mut self, shift: u32) {
        let mut all = Vec::new();
        self.take_all(|t, ev| all.push((t, ev)));
        let base = all.iter().map(|&(t, _)| t).min().unwrap_or(0);
        self.shift = shift;
        self.base = base >> shift;
        for (t, ev) in all {
            self.schedule(t, ev);
        }
    }

    /// Adds an event due at `at`, which must not be before the last
    /// picosecond of the latest window drained.
    #[inline]
    pub fn schedule(&mut self, at: Time, ev: E) {
        let abs = at >> self.shift;
        debug_assert!(abs >= self.base, "event at {at} before the calendar's base");
        if abs.wrapping_sub(self.base) >= BUCKETS {
            self.far.schedule(at, ev);
            return;
        }
        let b = (abs % BUCKETS) as usize;
        self.buckets[b].push((at, ev));
        self.occupied |= 1 << b;
        self.len += 1;
    }

    /// The absolute number of the first non-empty bucket (`len > 0`).
    #[inline]
    fn first(&self) -> u64 {
        let r = (self.base % BUCKETS) as u32;
        self.base + self.occupied.rotate_right(r).trailing_zeros() as u64
    }

    /// The time of the earliest event (every event in the heap is after
    /// every event in the buckets).
    pub fn peek_time(&self) -> Option<Time> {
        if self.len == 0 {
            return self.far.peek_time();
        }
        let b = &self.buckets[(self.first() % BUCKETS) as usize];
        b.iter().map(|&(t, _)| t).min()
    }

    /// Moves `base` to `abs` (no event is before it) and takes the heap's
    /// events that are now within the span into their buckets: the heap
    /// keeps only events at least `BUCKETS` buckets after `base`.
    fn advance(&mut self, abs: u64) {
        debug_assert!(abs >= self.base);
        self.base = abs;
        while let Some(t) = self.far.peek_time() {
            if (t >> self.shift) - self.base >= BUCKETS {
                break;
            }
            let (t, ev) = self.far.pop().expect("peeked");
            self.schedule(t, ev);
        }
    }

    /// Hands every event due before `end` to `f`, bucket by bucket, each
    /// bucket's in the order they were scheduled.
    pub fn drain_before(&mut self, end: Time, mut f: impl FnMut(Time, E)) {
        if end == 0 {
            return;
        }
        let last = (end - 1) >> self.shift;
        while self.len > 0 {
            let abs = self.first();
            if abs > last {
                break;
            }
            let b = (abs % BUCKETS) as usize;
            let bucket = &mut self.buckets[b];
            if abs < last {
                for &(t, ev) in bucket.iter() {
                    f(t, ev);
                }
                self.len -= bucket.len();
                bucket.clear();
            } else {
                // The bucket the window's end cuts: keep what is after it.
                let before = bucket.len();
                bucket.retain(|&(t, ev)| {
                    let due = t < end;
                    if due {
                        f(t, ev);
                    }
                    !due
                });
                self.len -= before - bucket.len();
            }
            if bucket.is_empty() {
                self.occupied &= !(1 << b);
            }
            if abs == last {
                break;
            }
        }
        // The heap holds only events after every bucket's (see `advance`),
        // so it has some before `end` only if the buckets are empty now (a
        // window longer than the span): they come next, in its order.
        if self.len == 0 {
            while self.far.peek_time().is_some_and(|t| t < end) {
                let (t, ev) = self.far.pop().expect("peeked");
                f(t, ev);
            }
        }
        if last > self.base {
            self.advance(last);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::{Rng, StreamKind};

    /// Whatever the bucket width, windows drained from a calendar hand out
    /// exactly the events due in them, and `peek_time` is the earliest
    /// pending time, with events scheduled from each window's start on
    /// (some beyond the span), no earlier than the last picosecond of the
    /// window drained before, and some windows longer than the span.
    #[test]
    fn drains_exactly_each_window() {
        for shift in [0, 3, 10, 16] {
            let mut rng = Rng::new(7, StreamKind::Host, shift as u64);
            let mut cal = Calendar::new(shift);
            let mut pending: Vec<(Time, u32)> = Vec::new();
            let mut id = 0;
            let mut now = 0;
            for _ in 0..300 {
                for _ in 0..rng.below(12) {
                    let far = rng.below(10) == 0;
                    let span = if far {
                        1 << (shift + 8)
                    } else {
                        1 << (shift + 4)
                    };
                    let at = now + rng.below(span);
                    cal.schedule(at, id);
                    pending.push((at, id));
                    id += 1;
                }
                let want_first = pending.iter().map(|&(t, _)| t).min();
                assert_eq!(cal.peek_time(), want_first, "shift {shift}");
                let Some(t0) = want_first else { continue };
                // Some windows longer than the span (64 buckets).
                let long = rng.below(5) == 0;
                let end = t0 + 1 + rng.below(1 << (shift + if long { 8 } else { 3 }));
                let mut got = Vec::new();
                cal.drain_before(end, |t, e| got.push((t, e)));
                let mut want: Vec<_> = pending.iter().copied().filter(|&(t, _)| t < end).collect();
                pending.retain(|&(t, _)| t >= end);
                got.sort();
                want.sort();
                assert_eq!(got, want, "shift {shift}, window [{t0}, {end})");
                now = end - 1;
            }
        }
    }

    /// Re-bucketing keeps every event.
    #[test]
    fn reshape_keeps_events() {
        let mut cal = Calendar::new(16);
        for (i, t) in [5u64, 1 << 30, 70_000, 3].into_iter().enumerate() {
            cal.schedule(t, i as u32);
        }
        cal.reshape(0);
        assert_eq!(cal.peek_time(), Some(3));
        let mut got = Vec::new();
        cal.drain_before(Time::MAX, |t, e| got.push((t, e)));
        got.sort();
        assert_eq!(got, vec![(3, 3), (5, 0), (70_000, 2), (1 << 30, 1)]);
    }
}
