//! The data scheduler's bookkeeping: a FIFO ring of QPs that may send now
//! (served round-robin) and a min-heap of QPs with data that wait for their
//! rate limiter (or for a rate change). Each QP is in at most one of them,
//! tracked by its [`SchedState`]; both are reused across packets, so the
//! steady state does not allocate, and no operation scans all QPs.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::nic::QpId;
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
    waiting: BinaryHeap<Reverse<(Time, QpId)>>,
}

impl Scheduler {
    #[inline]
    pub fn push_ready(&mut self, qp: QpId, state: &mut SchedState) {
        debug_assert_eq!(*state, SchedState::Idle);
        self.ready.push_back(qp);
        *state = SchedState::Ready;
    }

    #[inline]
    pub fn push_waiting(&mut self, qp: QpId, at: Time, state: &mut SchedState) {
        debug_assert_eq!(*state, SchedState::Idle);
        self.waiting.push(Reverse((at, qp)));
        *state = SchedState::Waiting(at);
    }

    #[inline]
    pub fn pop_ready(&mut self) -> Option<QpId> {
        self.ready.pop_front()
    }

    /// Pops the earliest waiting entry due at or before `now` (the caller
    /// checks it against the QP's `SchedState` and discards stale ones).
    #[inline]
    pub fn pop_due(&mut self, now: Time) -> Option<(Time, QpId)> {
        match self.waiting.peek() {
            Some(&Reverse((t, q))) if t <= now => {
                self.waiting.pop();
                Some((t, q))
            }
            _ => None,
        }
    }

    /// The earliest waiting entry, popping entries `stale` says are dead.
    #[inline]
    pub fn earliest(&mut self, mut stale: impl FnMut(Time, QpId) -> bool) -> Option<Time> {
        while let Some(&Reverse((t, q))) = self.waiting.peek() {
            if stale(t, q) {
                self.waiting.pop();
            } else {
                return Some(t);
            }
        }
        None
    }
}
