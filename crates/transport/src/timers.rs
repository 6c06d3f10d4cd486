//! The NIC's one timer channel ([`Timers`]): a min-heap of (deadline, QP)
//! entries behind `Nic::poll_timeout` / `Nic::handle_timeout`.
//!
//! A QP adds an entry whenever its earliest deadline (retransmission
//! timeout, MP-RDMA's burst timer, synchronise gate or hole resend) becomes
//! earlier than the entry it already has armed (`Qp::sync_timer`): one
//! entry per RTO rather than one per ACK. Entries are not moved when a
//! deadline moves later (lazy deletion): the old entry comes due, finds
//! nothing due yet and the QP re-arms for its new deadline. So a QP may
//! hold several entries, even two at one picosecond (an entry at `t`, then
//! an earlier one whose timeout re-arms `t`); each is handled on its own,
//! as a separate input (see `Nic::handle_timeout`). A destroyed QP's
//! entries are removed.
//!
//! Uses only `crate::api` (for `QpId`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::api::QpId;
use engine::Time;

#[derive(Debug, Default)]
pub(crate) struct Timers {
    heap: BinaryHeap<Reverse<(Time, QpId)>>,
}

impl Timers {
    #[inline]
    pub fn arm(&mut self, at: Time, qp: QpId) {
        self.heap.push(Reverse((at, qp)));
    }

    /// The earliest deadline armed.
    #[inline]
    pub fn next(&self) -> Option<Time> {
        self.heap.peek().map(|&Reverse((t, _))| t)
    }

    /// Removes the earliest entry if it is due at `now`, and returns its QP
    /// (ties at one deadline in QP order).
    #[inline]
    pub fn pop_due(&mut self, now: Time) -> Option<QpId> {
        match self.heap.peek() {
            Some(&Reverse((t, _))) if t <= now => self.heap.pop().map(|Reverse((_, q))| q),
            _ => None,
        }
    }

    /// Removes every entry of `qp` (it was destroyed).
    pub fn remove(&mut self, qp: QpId) {
        self.heap.retain(|&Reverse((_, q))| q != qp);
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.heap.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries come out by deadline, then QP, duplicates included; none
    /// before it is due; a removed QP's never.
    #[test]
    fn pops_due_entries_in_order() {
        let mut t = Timers::default();
        assert_eq!(t.next(), None);
        for (at, qp) in [(30, 1), (10, 2), (30, 0), (20, 3), (10, 2)] {
            t.arm(at, qp);
        }
        assert_eq!(t.next(), Some(10));
        assert_eq!(t.pop_due(9), None);
        t.remove(1);
        let mut got = vec![];
        while let Some(q) = t.pop_due(30) {
            got.push(q);
        }
        assert_eq!(got, vec![2, 2, 3, 0]);
        assert_eq!(t.len(), 0);
    }
}
