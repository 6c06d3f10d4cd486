//! The event queue: a calendar wheel for the near future and a binary heap
//! for the rest, both keyed by (time, insertion sequence).
//!
//! Ties at the same picosecond are served in insertion order, so a scenario
//! and a seed fully determine the order of events on any machine.
//!
//! Why two structures: nearly every event of a packet simulation is due
//! within a few microseconds (a frame's serialisation, its flight), while
//! a few are far away and mostly never fire (retransmission timeouts, flow
//! arrivals). The wheel has [`BUCKETS`] buckets of [`BUCKET_PS`] each; an
//! event due within its span goes into the bucket of its time, unsorted,
//! and a bucket is sorted only when it becomes the earliest one, so push is
//! O(1) and pop is a bitmap scan plus a sort of a few entries. Everything
//! further out goes to the heap. `pop` takes the smaller of the wheel's and
//! the heap's heads, so the order is exactly that of one priority queue.

use crate::time::Time;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// log2 of the width of one wheel bucket in picoseconds (1.024 ns).
const BUCKET_SHIFT: u32 = 10;
pub const BUCKET_PS: Time = 1 << BUCKET_SHIFT;
/// Number of wheel buckets; the wheel spans `BUCKETS * BUCKET_PS` (4.2 us).
pub const BUCKETS: usize = 4096;
const WORDS: usize = BUCKETS / 64;

#[derive(Clone, Copy)]
struct Entry<E> {
    key: (Time, u64),
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key.cmp(&other.key)
    }
}

pub struct EventQueue<E> {
    /// Events in the wheel not yet in the open bucket, as singly linked
    /// lists threaded through `nodes`. Freed nodes are reused last-in
    /// first-out, so a new event usually lands in a cache line an event
    /// just left: the working set is the pending events, not the wheel.
    nodes: Vec<Node<E>>,
    free: u32,
    /// Head node of each bucket's list. Bucket `b` holds events whose time
    /// `t` has `(t >> BUCKET_SHIFT) % BUCKETS == b`; all lie within one span
    /// of now, so buckets in circular order from now's are in time order.
    heads: Vec<u32>,
    /// Bit b: bucket b holds events (in its list or, if open, in `open`).
    occupied: [u64; WORDS],
    /// The bucket being drained, sorted by descending key (minimum last).
    open: Vec<Entry<E>>,
    open_bucket: usize,
    in_wheel: usize,
    far: BinaryHeap<Reverse<Entry<E>>>,
    seq: u64,
    now: Time,
}

/// A wheel event in its bucket's list (a freed node keeps its stale entry
/// until reused; only `next` matters then).
struct Node<E> {
    entry: Entry<E>,
    next: u32,
}

const NIL: u32 = u32::MAX;
const CLOSED: usize = usize::MAX;

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

/// Events are small plain values (`Copy`), moved between lists and
/// buckets by copy.
impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            nodes: Vec::new(),
            free: NIL,
            heads: vec![NIL; BUCKETS],
            occupied: [0; WORDS],
            open: Vec::new(),
            open_bucket: CLOSED,
            in_wheel: 0,
            far: BinaryHeap::new(),
            seq: 0,
            now: 0,
        }
    }

    /// The time of the last event popped.
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// Schedules `event` at `at`. Scheduling in the past is a logic error,
    /// clamped to now in release builds.
    #[inline]
    pub fn schedule(&mut self, at: Time, event: E) {
        debug_assert!(at >= self.now, "event scheduled in the past");
        let at = at.max(self.now);
        let e = Entry {
            key: (at, self.seq),
            event,
        };
        self.seq += 1;
        if (at >> BUCKET_SHIFT) - (self.now >> BUCKET_SHIFT) >= BUCKETS as u64 {
            self.far.push(Reverse(e));
            return;
        }
        let b = (at >> BUCKET_SHIFT) as usize % BUCKETS;
        self.in_wheel += 1;
        self.occupied[b / 64] |= 1 << (b % 64);
        if b == self.open_bucket {
            // Descending order: the new entry goes before every smaller key.
            let pos = self.open.partition_point(|x| x.key > e.key);
            self.open.insert(pos, e);
        } else {
            self.link(b, e);
        }
    }

    #[inline]
    fn link(&mut self, b: usize, e: Entry<E>) {
        let node = Node {
            entry: e,
            next: self.heads[b],
        };
        let i = if self.free != NIL {
            let i = self.free;
            self.free = self.nodes[i as usize].next;
            self.nodes[i as usize] = node;
            i
        } else {
            self.nodes.push(node);
            self.nodes.len() as u32 - 1
        };
        self.heads[b] = i;
    }

    /// Makes bucket `b` the open one: its list moves into `open`, sorted.
    /// A bucket left open with events in it (an earlier one has since been
    /// filled) goes back to its list first.
    fn open(&mut self, b: usize) {
        if self.open_bucket != CLOSED {
            let old = self.open_bucket;
            while let Some(e) = self.open.pop() {
                self.link(old, e);
            }
        }
        let mut i = std::mem::replace(&mut self.heads[b], NIL);
        while i != NIL {
            let node = &mut self.nodes[i as usize];
            let e = node.entry;
            let next = node.next;
            node.next = self.free;
            self.free = i;
            i = next;
            // Insertion sort: a bucket holds a handful of events.
            self.open.push(e);
            let mut j = self.open.len() - 1;
            while j > 0 && self.open[j - 1].key < self.open[j].key {
                self.open.swap(j - 1, j);
                j -= 1;
            }
        }
        self.open_bucket = b;
    }

    /// The first occupied bucket at or after now's, in circular order,
    /// opened.
    #[inline]
    fn first_bucket(&mut self) -> Option<usize> {
        if self.in_wheel == 0 {
            return None;
        }
        let start = (self.now >> BUCKET_SHIFT) as usize % BUCKETS;
        let mut w = start / 64;
        let mut word = self.occupied[w] & (!0u64 << (start % 64));
        // One extra word revisits the start word's low bits after wrapping.
        for _ in 0..=WORDS {
            if word != 0 {
                let b = w * 64 + word.trailing_zeros() as usize;
                if b != self.open_bucket {
                    self.open(b);
                }
                return Some(b);
            }
            w = (w + 1) % WORDS;
            word = self.occupied[w];
        }
        unreachable!("in_wheel > 0 but no bucket is occupied")
    }

    /// Where the next event is (`true`: the open bucket, `false`: the
    /// heap) and its key; `None` when the queue is empty.
    #[inline]
    fn head(&mut self) -> Option<(bool, (Time, u64))> {
        let wheel = self
            .first_bucket()
            .map(|_| self.open.last().expect("occupied").key);
        let far = self.far.peek().map(|Reverse(e)| e.key);
        match (wheel, far) {
            (Some(k), Some(f)) if k < f => Some((true, k)),
            (Some(k), None) => Some((true, k)),
            (_, Some(f)) => Some((false, f)),
            (None, None) => None,
        }
    }

    #[inline]
    fn take(&mut self, from_wheel: bool) -> (Time, E) {
        let e = if from_wheel {
            let e = self.open.pop().expect("occupied");
            if self.open.is_empty() {
                let b = self.open_bucket;
                self.occupied[b / 64] &= !(1 << (b % 64));
                self.open_bucket = CLOSED;
            }
            self.in_wheel -= 1;
            e
        } else {
            self.far.pop().expect("peeked").0
        };
        self.now = e.key.0;
        (e.key.0, e.event)
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let (from_wheel, _) = self.head()?;
        Some(self.take(from_wheel))
    }

    /// Pops the next event if it is due at or before `limit`.
    #[inline]
    pub fn pop_until(&mut self, limit: Time) -> Option<(Time, E)> {
        match self.head()? {
            (from_wheel, (t, _)) if t <= limit => Some(self.take(from_wheel)),
            _ => None,
        }
    }

    /// The time of the next pending event, if any.
    #[inline]
    pub fn peek_time(&mut self) -> Option<Time> {
        self.head().map(|(_, (t, _))| t)
    }

    pub fn len(&self) -> usize {
        self.in_wheel + self.far.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Rng, StreamKind};

    #[test]
    fn orders_by_time_then_insertion() {
        let mut q = EventQueue::new();
        q.schedule(10, "b");
        q.schedule(5, "a");
        q.schedule(10, "c");
        q.schedule(7, "x");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(5, "a"), (7, "x"), (10, "b"), (10, "c")]);
    }

    #[test]
    fn schedule_at_now_after_pop() {
        let mut q = EventQueue::new();
        q.schedule(3, 1);
        assert_eq!(q.pop(), Some((3, 1)));
        q.schedule(3, 2);
        q.schedule(4, 3);
        assert_eq!(q.pop(), Some((3, 2)));
        assert_eq!(q.now(), 3);
        assert_eq!(q.peek_time(), Some(4));
    }

    #[test]
    fn pop_until_stops_at_the_limit() {
        let mut q = EventQueue::new();
        q.schedule(10, 'a');
        q.schedule(20, 'b');
        assert_eq!(q.pop_until(15), Some((10, 'a')));
        assert_eq!(q.pop_until(15), None);
        assert_eq!(q.len(), 1);
        assert_eq!(q.pop_until(20), Some((20, 'b')));
        assert!(q.is_empty());
    }

    #[test]
    fn wheel_and_heap_interleave_in_key_order() {
        let span = BUCKETS as Time * BUCKET_PS;
        let mut q = EventQueue::new();
        q.schedule(span + 5, "far-a");
        q.schedule(3, "near");
        q.schedule(span + 5, "far-b");
        assert_eq!(q.pop(), Some((3, "near")));
        // span + 5 is now within the wheel; ties still go by insertion.
        q.schedule(span + 5, "near-c");
        q.schedule(span + 4, "near-d");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, vec!["near-d", "far-a", "far-b", "near-c"]);
    }

    /// Random schedules around and across the wheel's span, interleaved with
    /// pops, come out exactly as from a plain heap of (time, seq).
    #[test]
    fn matches_a_reference_heap() {
        let span = BUCKETS as Time * BUCKET_PS;
        for seed in 0..20 {
            let mut rng = Rng::new(seed, StreamKind::Workload, 0);
            let mut q = EventQueue::new();
            let mut reference = BinaryHeap::new();
            let mut seq = 0u64;
            let mut now = 0;
            for _ in 0..20_000 {
                if rng.below(5) < 3 {
                    let delay = match rng.below(4) {
                        0 => rng.below(BUCKET_PS * 3),
                        1 => rng.below(span),
                        2 => span - 2 + rng.below(4),
                        _ => rng.below(span * 4),
                    };
                    q.schedule(now + delay, seq);
                    reference.push(Reverse((now + delay, seq)));
                    seq += 1;
                } else {
                    let want = reference.pop().map(|Reverse((t, s))| (t, s));
                    assert_eq!(q.pop(), want, "seed {seed}");
                    if let Some((t, _)) = want {
                        now = t;
                    }
                }
            }
            while let Some(Reverse(want)) = reference.pop() {
                assert_eq!(q.pop(), Some(want));
            }
            assert!(q.is_empty());
        }
    }
}
