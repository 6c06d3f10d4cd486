//! The data scheduler's bookkeeping: a FIFO ring of QPs that may send now
//! (served round-robin) and a min-heap of QPs with data that wait for their
//! rate limiter (or for a rate change). Each QP is in at most one of them,
//! tracked by its [`SchedState`]; both are reused across packets, so the
//! steady state does not allocate, and no operation scans all QPs.
//!
//! The heap is a hand-written binary heap rather than `BinaryHeap` so that
//! its push and pop inline into the per-packet loop: a sending QP goes
//! through it on every packet, and it usually holds one or two entries.
//!
//! Uses only `crate::api` (for `QpId`).

use std::collections::VecDeque;

use crate::api::QpId;
use engine::Time;

/// Where a QP is in the scheduler.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum SchedState {
    /// In neither structure (nothing to send, or not yet woken).
    #[default]
    Idle,
    /// In the ready ring.
    Ready,
    /// In the heap with this key.
    Waiting(Time),
}

#[derive(Debug, Default)]
pub(crate) struct Scheduler {
    ready: VecDeque<QpId>,
    /// Min-heap on (time, QP): `waiting[i] <= waiting[2i+1], waiting[2i+2]`.
    waiting: Vec<(Time, QpId)>,
}

impl Scheduler {
    #[inline]
    pub fn push_ready(&mut self, qp: QpId, state: &mut SchedState) {
        debug_assert_eq!(*state, SchedState::Idle);
        self.ready.push_back(qp);
        *state = SchedState::Ready;
    }

    #[inline(always)]
    pub fn push_waiting(&mut self, qp: QpId, at: Time, state: &mut SchedState) {
        debug_assert_eq!(*state, SchedState::Idle);
        let h = &mut self.waiting;
        let e = (at, qp);
        let mut i = h.len();
        h.push(e);
        while i > 0 {
            let parent = (i - 1) / 2;
            if h[parent] <= e {
                break;
            }
            h[i] = h[parent];
            i = parent;
        }
        h[i] = e;
        *state = SchedState::Waiting(at);
    }

    /// The `k`-th QP in the ready ring (0: the next to send).
    #[inline]
    pub fn ready_at(&self, k: usize) -> Option<QpId> {
        self.ready.get(k).copied()
    }

    #[inline]
    pub fn pop_ready(&mut self) -> Option<QpId> {
        self.ready.pop_front()
    }

    /// Takes `qp` out of the ring and the heap (it was destroyed).
    pub fn remove(&mut self, qp: QpId) {
        self.ready.retain(|&q| q != qp);
        self.waiting.retain(|&(_, q)| q != qp);
        // A sorted array is a heap.
        self.waiting.sort_unstable();
    }

    /// No QP is ready or waiting.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.ready.is_empty() && self.waiting.is_empty()
    }

    /// A QP is ready, or waits for a time at or before `now`.
    #[inline]
    pub fn has_work(&self, now: Time) -> bool {
        !self.ready.is_empty() || self.waiting.first().is_some_and(|&(t, _)| t <= now)
    }

    /// Pops the earliest waiting entry due at or before `now` (the caller
    /// checks it against the QP's `SchedState` and discards stale ones).
    #[inline]
    pub fn pop_due(&mut self, now: Time) -> Option<(Time, QpId)> {
        match self.waiting.first() {
            Some(&top) if top.0 <= now => {
                self.pop_min();
                Some(top)
            }
            _ => None,
        }
    }

    /// The earliest waiting entry, popping entries `stale` says are dead.
    #[inline]
    pub fn earliest(&mut self, mut stale: impl FnMut(Time, QpId) -> bool) -> Option<Time> {
        while let Some(&(t, q)) = self.waiting.first() {
            if stale(t, q) {
                self.pop_min();
            } else {
                return Some(t);
            }
        }
        None
    }

    /// Removes the minimum, if any.
    #[inline(always)]
    fn pop_min(&mut self) {
        let h = &mut self.waiting;
        let Some(last) = h.pop() else {
            return;
        };
        let n = h.len();
        if n == 0 {
            return;
        }
        // Sift the former last entry down from the root.
        let mut i = 0;
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let c = if l + 1 < n && h[l + 1] < h[l] {
                l + 1
            } else {
                l
            };
            if last <= h[c] {
                break;
            }
            h[i] = h[c];
            i = c;
        }
        h[i] = last;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The heap pops in (time, QP) order whatever the push order.
    #[test]
    fn heap_pops_in_key_order() {
        let mut s = Scheduler::default();
        let mut keys: Vec<(Time, QpId)> = (0..200u32)
            .map(|i| (((i * 7919) % 61) as Time, i % 13))
            .collect();
        for &(t, q) in &keys {
            s.push_waiting(q, t, &mut SchedState::Idle);
        }
        keys.sort();
        let mut got = vec![];
        while let Some(e) = s.pop_due(Time::MAX) {
            got.push(e);
        }
        assert_eq!(got, keys);
        assert_eq!(s.earliest(|_, _| false), None);
    }

    /// A removed QP leaves the ring and the heap; the others keep their
    /// order.
    #[test]
    fn removed_qps_are_gone() {
        let mut s = Scheduler::default();
        for q in 0..4 {
            s.push_ready(q, &mut SchedState::Idle);
        }
        for (t, q) in [(5, 7), (3, 8), (9, 7), (1, 9), (4, 8)] {
            s.push_waiting(q, t, &mut SchedState::Idle);
        }
        s.remove(1);
        s.remove(8);
        let mut ready = vec![];
        while let Some(q) = s.pop_ready() {
            ready.push(q);
        }
        assert_eq!(ready, vec![0, 2, 3]);
        let mut due = vec![];
        while let Some(e) = s.pop_due(Time::MAX) {
            due.push(e);
        }
        assert_eq!(due, vec![(1, 9), (5, 7), (9, 7)]);
        assert!(s.is_empty());
    }
}
