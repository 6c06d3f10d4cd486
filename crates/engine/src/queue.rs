//! A deterministic event queue for simple drivers (the transport crate's
//! test harnesses, the far events of the fabric's calendar): a binary
//! heap keyed by (time, insertion sequence), so
//! events at the same picosecond come out in the order they were
//! scheduled, and a scenario and a seed fully determine the order on any
//! machine.
//!
//! The fabric's windowed loop keeps its own queues for its hot path
//! (`fabric/src/net/calendar.rs`, `fabric/src/net/window.rs`).

use crate::time::Time;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// An event, ordered by (time, sequence) alone.
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
    heap: BinaryHeap<Reverse<Entry<E>>>,
    seq: u64,
    now: Time,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            seq: 0,
            now: 0,
        }
    }

    /// The time of the last event popped.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Schedules `event` at `at`. Scheduling in the past is a logic error,
    /// clamped to now in release builds.
    pub fn schedule(&mut self, at: Time, event: E) {
        debug_assert!(at >= self.now, "event scheduled in the past");
        self.heap.push(Reverse(Entry {
            key: (at.max(self.now), self.seq),
            event,
        }));
        self.seq += 1;
    }

    /// The time of the next event.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|Reverse(e)| e.key.0)
    }

    /// Takes the next event.
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let Reverse(e) = self.heap.pop()?;
        self.now = e.key.0;
        Some((e.key.0, e.event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(q.pop(), Some((4, 3)));
        assert_eq!(q.pop(), None);
    }
}
