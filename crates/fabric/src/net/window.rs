//! The order of the event loop: conservative time windows, run node by node.
//!
//! Whatever a node does at time t reaches another node no earlier than t
//! plus the shortest link delay (the lookahead): a frame sent at t arrives
//! after its serialisation and its flight. So all events due in a window
//! `[t0, t0 + lookahead)` can run one node at a time, each node's in time
//! order: nothing a node does in the window changes what another node sees
//! in it. A node's ports, switch, MMU records and NIC then stay in L1 for
//! its whole share of the window (about 30 events a window in WS128),
//! where the global time order visited a port again only after thousands
//! of other hops, long out of cache.
//!
//! This file holds the three containers of that order; `run.rs` runs
//! the loop. It touches nothing else.
//!
//! Ties: events at the same picosecond at different nodes are independent,
//! and run in node order. At one node they run in the order of a key of
//! the event and the time ([`Tie`]), not in the order they were scheduled.
//! So the order of a node's events, and with it every result, does not
//! depend on where windows begin and end:
//! a run whose windows are a picosecond long (one time value each, which
//! is the global time order) gives exactly the results of full windows
//! (tested), and so does a run cut by a time limit or sampled. Events that
//! act on several nodes (a flow's start creates QPs at both ends, a fault
//! acts on both ends of a link, a sample reads the whole fabric) are
//! [`Globals`]: each runs alone, before any other event due at the same
//! time, in the order they were scheduled.

use engine::Time;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// How events due at the same picosecond at one node are ordered.
pub(crate) trait Tie: Copy {
    /// A key that differs for any two distinct events that can be due at
    /// one node at time `at`. A fixed order (say, by port) would be a fixed
    /// priority: flows that arrive in lockstep, as DCQCN flows sharing a
    /// bottleneck do, would see the same one win every tie and settle into
    /// an unfair share (seen: one of eight flows at 17 Gb/s for 18 ms while
    /// the others had 10-11), so the key should also vary with `at`.
    fn tie(&self, at: Time) -> u64;
}

/// `a` runs before `b` (a strict order: equal events keep their places).
#[inline(always)]
pub(crate) fn precedes<E: Tie>(a: &(Time, E), b: &(Time, E)) -> bool {
    a.0 < b.0 || a.0 == b.0 && a.1.tie(a.0) < b.1.tie(b.0)
}

/// The events of one window, grouped by node (a stable counting sort: each
/// node's events keep their time order).
pub(crate) struct ByNode<E> {
    /// (node, time, event), as they came from the calendar (by bucket of
    /// time, unsorted within one).
    batch: Vec<(u32, Time, E)>,
    sorted: Vec<(Time, E)>,
    /// After [`ByNode::sort`], `ends[k]` is the end of node k's events in
    /// `sorted`.
    ends: Vec<u32>,
    /// The nodes that have events, with the end of their events.
    groups: Vec<(u32, u32)>,
}

impl<E: Tie> ByNode<E> {
    pub fn new(nodes: usize) -> ByNode<E> {
        ByNode {
            batch: Vec::new(),
            sorted: Vec::new(),
            ends: vec![0; nodes + 1],
            groups: Vec::new(),
        }
    }

    pub fn clear(&mut self) {
        self.batch.clear();
    }

    /// Adds the next event of the window (events come in time order).
    #[inline]
    pub fn push(&mut self, node: u32, at: Time, ev: E) {
        self.batch.push((node, at, ev));
    }

    pub fn len(&self) -> usize {
        self.batch.len()
    }

    /// Groups the events by node, each node's in [`precedes`] order.
    pub fn sort(&mut self) {
        let ends = &mut self.ends;
        ends.fill(0);
        for &(k, _, _) in &self.batch {
            ends[k as usize + 1] += 1;
        }
        for i in 1..ends.len() {
            ends[i] += ends[i - 1];
        }
        self.sorted.clear();
        if let Some(&(_, t, ev)) = self.batch.first() {
            self.sorted.resize(self.batch.len(), (t, ev));
        }
        // Scattering moves each node's start to its end.
        for &(k, t, ev) in &self.batch {
            let at = &mut ends[k as usize];
            self.sorted[*at as usize] = (t, ev);
            *at += 1;
        }
        // The calendar gave each node's events bucket by bucket, in the
        // order they were scheduled within one: put them in `precedes`
        // order (few are out of it: a node has a few events a bucket).
        self.groups.clear();
        let mut start = 0;
        for (k, &end) in ends[..ends.len() - 1].iter().enumerate() {
            if end as usize > start {
                insertion_sort(&mut self.sorted[start..end as usize]);
                self.groups.push((k as u32, end));
                start = end as usize;
            }
        }
    }

    /// The nodes that have events, in order, each with the end of its
    /// events in [`ByNode::events`] (where the previous one's end, or 0,
    /// is its start).
    pub fn groups(&self) -> &[(u32, u32)] {
        &self.groups
    }

    pub fn events(&self) -> &[(Time, E)] {
        &self.sorted
    }
}

/// Sorts a slice that is nearly in order (here: in order of time buckets).
fn insertion_sort<E: Tie>(v: &mut [(Time, E)]) {
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && precedes(&x, &v[j - 1]) {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

/// The current node's events due in the window that were scheduled during
/// it, in [`precedes`] order. A switch has a few at a time: one arrival
/// per busy input wire, one transmission end per busy port (6 on average
/// in WS128, 12 in A2A128).
pub(crate) struct NodeQueue<E> {
    /// Sorted from `head` on; the slots before it were popped.
    v: Vec<(Time, E)>,
    head: usize,
}

impl<E> Default for NodeQueue<E> {
    fn default() -> Self {
        NodeQueue {
            v: Vec::new(),
            head: 0,
        }
    }
}

impl<E: Tie> NodeQueue<E> {
    /// Adds an event. Appending is inline at the callers, the insertion
    /// out of line: a call's register saves and restores were 19
    /// instructions a push on P1024 (48 in the whole function), and most
    /// pushes append.
    #[inline(always)]
    pub fn push(&mut self, at: Time, ev: E) {
        let e = (at, ev);
        // An empty queue holds no popped slots (`pop` clears it), so the
        // last slot, if any, is an event: one test, no bounds check.
        debug_assert!(self.v.is_empty() || self.head < self.v.len());
        match self.v.last() {
            Some(last) if precedes(&e, last) => self.insert(e),
            _ => self.v.push(e),
        }
    }

    /// Puts `e`, which precedes the last event, in its place: one step of
    /// an insertion sort, from the nearer end. A new event often goes a
    /// few places from the back (two on average in WS128, four in P1024),
    /// where a call to `memmove` would cost more than the shifts; but in
    /// A2A128 a switch holds a dozen events, and a 64-byte ACK's end lands
    /// among them, so it shifts from the front when it can (into slots
    /// pops freed) if that is the shorter way. Against back-only
    /// insertion: A2A128 0.92-0.95 (docs/speed.md).
    #[inline(never)]
    fn insert(&mut self, e: (Time, E)) {
        let len = self.v.len();
        if self.head > 0 && precedes(&e, &self.v[(self.head + len) / 2]) {
            // It belongs in the front half: shift what comes before it one
            // place into the slot the last pop freed.
            let mut i = self.head - 1;
            while precedes(&self.v[i + 1], &e) {
                self.v[i] = self.v[i + 1];
                i += 1;
            }
            self.v[i] = e;
            self.head -= 1;
            return;
        }
        // It goes before the last.
        self.v.push(self.v[len - 1]);
        let mut i = len - 1;
        while i > self.head && precedes(&e, &self.v[i - 1]) {
            self.v[i] = self.v[i - 1];
            i -= 1;
        }
        self.v[i] = e;
    }

    #[inline]
    pub fn peek(&self) -> Option<&(Time, E)> {
        self.v.get(self.head)
    }

    /// Takes the first event; there must be one.
    #[inline]
    pub fn pop(&mut self) -> (Time, E) {
        let e = self.v[self.head];
        self.head += 1;
        if self.head == self.v.len() {
            self.v.clear();
            self.head = 0;
        }
        e
    }
}

/// Events that act on more than one node, in (time, scheduling order).
pub(crate) struct Globals<G> {
    /// (time, sequence, event): the sequence is unique, so the event's own
    /// order never decides.
    heap: BinaryHeap<Reverse<(Time, u64, G)>>,
    seq: u64,
}

impl<G: Ord> Default for Globals<G> {
    fn default() -> Self {
        Globals {
            heap: BinaryHeap::new(),
            seq: 0,
        }
    }
}

impl<G: Copy + Ord> Globals<G> {
    pub fn push(&mut self, at: Time, ev: G) {
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq, ev)));
    }

    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|Reverse((at, _, _))| *at)
    }

    pub fn pop(&mut self) -> Option<(Time, G)> {
        self.heap.pop().map(|Reverse((at, _, ev))| (at, ev))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Letters tie in alphabetical order.
    impl Tie for char {
        fn tie(&self, _: Time) -> u64 {
            *self as u64
        }
    }

    #[test]
    fn groups_by_node_keeping_each_nodes_order() {
        let mut b = ByNode::new(3);
        // Not in time order, as from one of the calendar's buckets; node
        // 0's tie at 2 in the order it was scheduled, not in `Tie` order.
        let batch = [
            (2, 3, 'c'),
            (0, 5, 'e'),
            (0, 2, 'x'),
            (2, 1, 'a'),
            (0, 2, 'b'),
            (1, 3, 'd'),
        ];
        for (node, at, ev) in batch {
            b.push(node, at, ev);
        }
        b.sort();
        assert_eq!(b.groups(), &[(0, 3), (1, 4), (2, 6)]);
        let evs: String = b.events().iter().map(|e| e.1).collect();
        assert_eq!(evs, "bxedac");
        // Reused for the next window: nothing of this one is left.
        b.clear();
        b.push(1, 7, 'f');
        b.sort();
        assert_eq!((b.groups(), b.events()), (&[(1, 1)][..], &[(7, 'f')][..]));
    }

    #[test]
    fn node_queue_orders_by_time_then_event() {
        let mut q = NodeQueue::default();
        q.push(10, 'c');
        q.push(5, 'b');
        q.push(10, 'a');
        q.push(7, 'd');
        assert_eq!(q.pop(), (5, 'b'));
        // A push after a pop goes behind what is already due earlier.
        q.push(6, 'e');
        q.push(10, 'f');
        let rest: Vec<_> = std::iter::from_fn(|| q.peek().is_some().then(|| q.pop())).collect();
        assert_eq!(rest, [(6, 'e'), (7, 'd'), (10, 'a'), (10, 'c'), (10, 'f')]);
        assert_eq!(q.peek(), None);
    }

    /// Pushes and pops interleaved at random (many ties, both insertion
    /// ends) come out as a sort of everything pushed would order them.
    #[test]
    fn node_queue_is_a_priority_queue() {
        let mut q = NodeQueue::default();
        let mut reference: Vec<(Time, char)> = Vec::new();
        let mut x = 11u64;
        let mut now = 0;
        for step in 0..20_000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Mostly pushes, then a run of pops that drains the queue.
            let pop = (x >> 62 == 0 || step % 512 > 500) && !reference.is_empty();
            if pop {
                let got = q.pop();
                let best = (0..reference.len())
                    .reduce(|a, b| {
                        if precedes(&reference[b], &reference[a]) {
                            b
                        } else {
                            a
                        }
                    })
                    .expect("not empty");
                assert_eq!(got, reference.remove(best), "step {step}");
                now = got.0;
            } else {
                // Never before the last pop, as in a window.
                let ev = (b'a' + (x >> 40) as u8 % 26) as char;
                let at = now + (x >> 20) % 8;
                q.push(at, ev);
                reference.push((at, ev));
            }
            assert_eq!(q.peek().is_some(), !reference.is_empty());
        }
    }

    #[test]
    fn globals_by_time_then_scheduling() {
        let mut g = Globals::default();
        g.push(4, 'c');
        g.push(2, 'b');
        g.push(4, 'a');
        assert_eq!(g.peek_time(), Some(2));
        // The tie at 4 in the order scheduled, not in the events' order.
        let all: Vec<_> = std::iter::from_fn(|| g.pop()).collect();
        assert_eq!(all, [(2, 'b'), (4, 'c'), (4, 'a')]);
    }
}
