//! The event queue: a calendar wheel for the near future and a binary heap
//! for the rest, keyed by (time, insertion sequence).
//!
//! Ties at the same picosecond are served in insertion order, so a scenario
//! and a seed fully determine the order of events on any machine.
//!
//! Why two structures: nearly every event of a packet simulation is due
//! within a few microseconds (a frame's serialisation, its flight), while
//! a few are far away and mostly never fire (retransmission timeouts, flow
//! arrivals). The wheel has [`BUCKETS`] buckets of [`BUCKET_PS`] each; an
//! event due within its span goes into the bucket of its time, a list kept
//! in key order, so pop takes the first event of the earliest bucket and
//! nothing is ever sorted. Events mostly reach a bucket in time order, so
//! most insertions append or go first (88% of WS128's); the others
//! are walked in from the first node, or from the node the bucket's
//! previous such insertion placed when that one is not later (runs of
//! equal times, see `Bucket::hint`).
//! Everything further out goes to the heap, and moves into the wheel as
//! soon as now comes within a span of it; so every wheel event precedes
//! every heap event, and the heap is consulted only when the wheel is
//! empty.

use crate::time::Time;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// log2 of the width of one wheel bucket in picoseconds (256 ps). Narrow
/// enough that a fabric in lockstep (a permutation at line rate, where the
/// events of thousands of ports fall on a few picosecond values each
/// period) puts each value in a bucket of its own: at 1.024 ns, 61% of a
/// 1024-host permutation's insertions walked into a bucket, at 256 ps none.
const BUCKET_SHIFT: u32 = 8;
pub const BUCKET_PS: Time = 1 << BUCKET_SHIFT;
/// Number of wheel buckets; the wheel spans `BUCKETS * BUCKET_PS` (4.2 us),
/// a frame's flight over a datacenter link and then some.
pub const BUCKETS: usize = 16384;
const WORDS: usize = BUCKETS / 64;

/// An event in the heap, ordered by (time, sequence).
struct FarEvent<E> {
    key: (Time, u64),
    event: E,
}

impl<E> PartialEq for FarEvent<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for FarEvent<E> {}
impl<E> PartialOrd for FarEvent<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for FarEvent<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key.cmp(&other.key)
    }
}

/// A wheel event in its bucket's list (a freed node keeps its stale
/// contents until reused; only `next` matters then).
#[derive(Clone, Copy)]
struct Node<E> {
    time: Time,
    next: u32,
    event: E,
}

/// A bucket's list: first and last node, `first` NIL when empty (`last`
/// is then stale), and the node the latest insertion inside the list
/// placed (NIL once popped). Side by side, as an insertion that does not
/// append needs them all.
#[derive(Clone, Copy)]
struct Bucket {
    first: u32,
    last: u32,
    /// Where the next insertion inside starts its walk, if its time is not
    /// earlier. Fabrics in lockstep (a permutation at line rate) schedule
    /// runs of events at one picosecond into a bucket that already holds
    /// later ones: walking from `first` each time made the walk a quarter
    /// of a 1024-host run.
    hint: u32,
}

const NIL: u32 = u32::MAX;

pub struct EventQueue<E> {
    /// Wheel events, as singly linked lists (one per bucket) threaded
    /// through `nodes`. Freed nodes are reused last-in first-out, so a new
    /// event usually lands in a cache line an event just left: the working
    /// set is the pending events, not the wheel.
    nodes: Vec<Node<E>>,
    free: u32,
    /// Bucket `b` holds events whose time `t` has `(t >> BUCKET_SHIFT) %
    /// BUCKETS == b`, sorted by (time, sequence); all lie within one span
    /// of now, so buckets in circular order from now's are in time order.
    /// On the heap: at 192 KiB, inline it overflowed the 2 MiB stack of a
    /// sweep's worker thread in a debug build, where moves are copies.
    buckets: Box<[Bucket; BUCKETS]>,
    /// Bit b: bucket b holds events.
    occupied: [u64; WORDS],
    /// 1 + the absolute index (`time >> BUCKET_SHIFT`) of the earliest
    /// occupied bucket, 0 when unknown. It stays known until that bucket
    /// empties or an event goes into an earlier one, so most pops do not
    /// scan the bitmap.
    current: u64,
    /// The earliest occupied bucket, when `current` is known.
    current_bucket: usize,
    in_wheel: usize,
    far: BinaryHeap<Reverse<FarEvent<E>>>,
    /// Sequence numbers order ties in the heap; in the wheel, list order
    /// does.
    far_seq: u64,
    /// Once now reaches this, the heap's first event is within the wheel's
    /// span (`Time::MAX` when the heap is empty).
    migrate_at: Time,
    now: Time,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

/// Events are small plain values (`Copy`), moved between the heap and the
/// wheel by copy.
impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            nodes: Vec::new(),
            free: NIL,
            buckets: vec![
                Bucket {
                    first: NIL,
                    last: NIL,
                    hint: NIL,
                };
                BUCKETS
            ]
            .into_boxed_slice()
            .try_into()
            .unwrap_or_else(|_| unreachable!("BUCKETS buckets")),
            occupied: [0; WORDS],
            current: 0,
            current_bucket: 0,
            in_wheel: 0,
            far: BinaryHeap::new(),
            far_seq: 0,
            migrate_at: Time::MAX,
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
    #[inline(always)]
    pub fn schedule(&mut self, at: Time, event: E) {
        debug_assert!(at >= self.now, "event scheduled in the past");
        let at = at.max(self.now);
        let abs = at >> BUCKET_SHIFT;
        if abs - (self.now >> BUCKET_SHIFT) >= BUCKETS as u64 {
            self.schedule_far(at, event);
            return;
        }
        if abs + 1 < self.current {
            self.current = 0;
        }
        self.insert(abs as usize % BUCKETS, at, event);
    }

    /// Puts an event into bucket `b` after every event due at or before
    /// it (all of which were scheduled before it).
    #[inline(always)]
    fn insert(&mut self, b: usize, time: Time, event: E) {
        self.in_wheel += 1;
        let Bucket { first, last, hint } = self.buckets[b];
        if first == NIL {
            let i = self.alloc(time, event, NIL);
            self.buckets[b] = Bucket {
                first: i,
                last: i,
                hint: NIL,
            };
            self.occupied[b / 64] |= 1 << (b % 64);
        } else if time >= self.nodes[last as usize].time {
            let i = self.alloc(time, event, NIL);
            self.nodes[last as usize].next = i;
            self.buckets[b].last = i;
        } else if time < self.nodes[first as usize].time {
            self.buckets[b].first = self.alloc(time, event, first);
        } else {
            let start = if hint != NIL && self.nodes[hint as usize].time <= time {
                hint
            } else {
                first
            };
            self.buckets[b].hint = self.insert_inside(start, time, event);
        }
    }

    /// `insert` when the event is due at or after node `start` of the
    /// bucket and before its last one; returns the new node.
    #[inline(never)]
    fn insert_inside(&mut self, start: u32, time: Time, event: E) -> u32 {
        // The walk stops at the last node at the latest.
        let mut p = start;
        loop {
            let n = self.nodes[p as usize].next;
            if time < self.nodes[n as usize].time {
                break;
            }
            p = n;
        }
        let i = self.alloc(time, event, self.nodes[p as usize].next);
        self.nodes[p as usize].next = i;
        i
    }

    #[cold]
    fn schedule_far(&mut self, at: Time, event: E) {
        self.far.push(Reverse(FarEvent {
            key: (at, self.far_seq),
            event,
        }));
        self.far_seq += 1;
        self.migrate_at = self.migrate_at.min(Self::in_span_from(at));
    }

    /// The earliest now from which `at` is within the wheel's span.
    fn in_span_from(at: Time) -> Time {
        ((at >> BUCKET_SHIFT) + 1).saturating_sub(BUCKETS as u64) << BUCKET_SHIFT
    }

    /// A node holding `time`, `event` and `next`.
    #[inline(always)]
    fn alloc(&mut self, time: Time, event: E, next: u32) -> u32 {
        if self.free == NIL {
            return self.grow(Node { time, next, event });
        }
        let i = self.free;
        let node = &mut self.nodes[i as usize];
        self.free = node.next;
        node.time = time;
        node.next = next;
        node.event = event;
        // The free list runs through nodes freed at any time in the past:
        // ask for the one the next allocation takes.
        crate::prefetch::prefetch_ptr(self.nodes.as_ptr().wrapping_add(self.free as usize));
        i
    }

    /// Out of line: a call on `schedule`'s path would make it save and
    /// restore registers on every call, and the node pool only grows while
    /// the number of pending events reaches a new high.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, node: Node<E>) -> u32 {
        self.nodes.push(node);
        self.nodes.len() as u32 - 1
    }

    /// Finds the first occupied bucket at or after now's, in circular
    /// order; false if the wheel is empty.
    #[inline]
    fn find_current(&mut self) -> bool {
        if self.in_wheel == 0 {
            return false;
        }
        let now_abs = self.now >> BUCKET_SHIFT;
        let start = now_abs as usize % BUCKETS;
        let mut w = start / 64;
        let mut word = self.occupied[w] & (!0u64 << (start % 64));
        // One extra word revisits the start word's low bits after wrapping.
        for _ in 0..=WORDS {
            if word != 0 {
                let b = w * 64 + word.trailing_zeros() as usize;
                self.current = now_abs + ((b + BUCKETS - start) % BUCKETS) as u64 + 1;
                self.current_bucket = b;
                return true;
            }
            w = (w + 1) % WORDS;
            word = self.occupied[w];
        }
        unreachable!("in_wheel > 0 but no bucket is occupied")
    }

    /// With the wheel empty: the heap's first event, if due by `limit`.
    #[cold]
    fn pop_far(&mut self, limit: Time) -> Option<(Time, E)> {
        if self.far.peek()?.0.key.0 > limit {
            return None;
        }
        let Reverse(f) = self.far.pop().expect("peeked");
        self.now = f.key.0;
        self.migrate();
        Some((f.key.0, f.event))
    }

    /// Moves the heap's events now within the wheel's span into it. They
    /// are later than every wheel event (which were all within the span of
    /// an earlier now), so their buckets hold only events moved in before
    /// them, in key order, or scheduled after them.
    #[cold]
    fn migrate(&mut self) {
        let now_abs = self.now >> BUCKET_SHIFT;
        while let Some(Reverse(f)) = self.far.peek() {
            let abs = f.key.0 >> BUCKET_SHIFT;
            if abs - now_abs >= BUCKETS as u64 {
                break;
            }
            let Reverse(f) = self.far.pop().expect("peeked");
            self.insert(abs as usize % BUCKETS, f.key.0, f.event);
        }
        self.migrate_at = self
            .far
            .peek()
            .map_or(Time::MAX, |Reverse(f)| Self::in_span_from(f.key.0));
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.pop_until(Time::MAX)
    }

    /// Pops the next event if it is due at or before `limit`.
    #[inline]
    pub fn pop_until(&mut self, limit: Time) -> Option<(Time, E)> {
        if self.current == 0 && !self.find_current() {
            return self.pop_far(limit);
        }
        let b = self.current_bucket;
        let i = self.buckets[b].first;
        let Node { time, next, event } = self.nodes[i as usize];
        if time > limit {
            return None;
        }
        self.buckets[b].first = next;
        if self.buckets[b].hint == i {
            self.buckets[b].hint = NIL;
        }
        self.nodes[i as usize].next = self.free;
        self.free = i;
        if next == NIL {
            self.occupied[b / 64] &= !(1 << (b % 64));
            self.current = 0;
        }
        self.in_wheel -= 1;
        self.now = time;
        if time >= self.migrate_at {
            self.migrate();
        }
        Some((time, event))
    }

    /// The time of the next pending event, if any.
    #[inline]
    pub fn peek_time(&mut self) -> Option<Time> {
        if self.current == 0 && !self.find_current() {
            return self.far.peek().map(|Reverse(f)| f.key.0);
        }
        let b = self.current_bucket;
        Some(self.nodes[self.buckets[b].first as usize].time)
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

    /// Like `matches_a_reference_heap`, with many equal times (on a coarse
    /// grid, at now, and heap events meeting wheel events once within the
    /// span), peeks and limited pops that open a bucket and then see an
    /// earlier one filled, and a run long enough to wrap the wheel often.
    #[test]
    fn matches_a_reference_heap_with_ties_peeks_and_limits() {
        let span = BUCKETS as Time * BUCKET_PS;
        for seed in 0..20 {
            let mut rng = Rng::new(seed, StreamKind::Workload, 1);
            let mut q = EventQueue::new();
            let mut reference = BinaryHeap::new();
            let mut seq = 0u64;
            for _ in 0..50_000 {
                let now = q.now();
                let grid = now.next_multiple_of(300);
                match rng.below(8) {
                    0..=3 => {
                        let at = match rng.below(7) {
                            0 => now,
                            1 => now + rng.below(BUCKET_PS * 2),
                            2 => grid + 300 * rng.below(8),
                            3 => grid + 300 * rng.below(span / 300 + 50),
                            4 => grid + span - 3 * BUCKET_PS + 300 * rng.below(20),
                            5 => now + span + rng.below(span * 3),
                            _ => now + rng.below(span),
                        };
                        q.schedule(at, seq);
                        reference.push(Reverse((at, seq)));
                        seq += 1;
                    }
                    4 => {
                        let want = reference.peek().map(|&Reverse((t, _))| t);
                        assert_eq!(q.peek_time(), want, "seed {seed}");
                    }
                    5 => {
                        let limit = now + rng.below(span * 2);
                        let want = match reference.peek() {
                            Some(&Reverse((t, s))) if t <= limit => {
                                reference.pop();
                                Some((t, s))
                            }
                            _ => None,
                        };
                        assert_eq!(q.pop_until(limit), want, "seed {seed}");
                    }
                    _ => {
                        let want = reference.pop().map(|Reverse(k)| k);
                        assert_eq!(q.pop(), want, "seed {seed}");
                    }
                }
                assert_eq!(q.len(), reference.len());
            }
            while let Some(Reverse(want)) = reference.pop() {
                assert_eq!(q.pop(), Some(want));
            }
            assert!(q.is_empty());
        }
    }
}
