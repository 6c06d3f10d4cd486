//! What an event-driven driver of a [`Nic`] keeps beside it
//! ([`Wakeups`]): the wake-ups it has asked its event loop for, so that it
//! asks for each once. The simulator's hosts and the test benches use it.
//!
//! Uses only the NIC's public API.

use crate::nic::Nic;
use engine::Time;

/// The wake-ups a driver has asked for on behalf of one NIC: for its rate
/// limiter ([`crate::Transmit::At`]) and for its timers
/// ([`Nic::poll_timeout`]).
///
/// Timer wake-ups come one per timer: the NIC runs one timer per
/// [`Nic::handle_timeout`], and the driver polls transmit after each. A
/// new one is asked for only when the NIC's next deadline is earlier than
/// every one pending, so they come due in the reverse order they were
/// asked for: a stack.
#[derive(Clone, Debug)]
pub struct Wakeups {
    /// The pending transmit wake-up (`Time::MAX`: none).
    transmit: Time,
    /// The pending timer wake-ups, latest first.
    timers: Vec<Time>,
}

impl Default for Wakeups {
    fn default() -> Self {
        Wakeups {
            transmit: Time::MAX,
            timers: Vec::new(),
        }
    }
}

impl Wakeups {
    /// The NIC answered `Transmit::At(t)`: true if the driver must ask for
    /// a transmit wake-up at `t` (none at or before it is pending).
    #[inline(always)]
    pub fn transmit_at(&mut self, t: Time) -> bool {
        if t < self.transmit {
            self.transmit = t;
            true
        } else {
            false
        }
    }

    /// A transmit wake-up asked for `now` came: true if it is still wanted
    /// (poll transmit), false if it was replaced by an earlier one.
    #[inline(always)]
    pub fn transmit_due(&mut self, now: Time) -> bool {
        if self.transmit == now {
            self.transmit = Time::MAX;
            true
        } else {
            false
        }
    }

    /// After any input to `nic` (at `now`): the time to ask for a timer
    /// wake-up at, if its next deadline (or `now`, if that has passed) is
    /// earlier than every one pending.
    #[inline(always)]
    pub fn timer_at(&mut self, nic: &Nic, now: Time) -> Option<Time> {
        let t = nic.poll_timeout()?.max(now);
        if self.timers.last().is_some_and(|&p| p <= t) {
            return None;
        }
        self.timers.push(t);
        Some(t)
    }

    /// A timer wake-up came at `now`: the driver then calls
    /// [`Nic::handle_timeout`] and treats it as any input.
    #[inline(always)]
    pub fn timer_due(&mut self, now: Time) {
        let t = self.timers.pop();
        debug_assert_eq!(t, Some(now), "timer wake-ups come in order");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{NicConfig, QpConfig, Transmit, WorkRequest};
    use crate::packet::Verb;

    /// A NIC with one QP that has sent one packet at `at`: its timer is
    /// due at `at + rto`.
    fn sent_at(nic: &mut Nic, qp: u32, at: Time) {
        let wr = WorkRequest {
            verb: Verb::Write,
            len: 100,
            ..WorkRequest::default()
        };
        nic.post_send(at, qp, wr).unwrap();
        assert!(matches!(nic.poll_transmit(at, 0), Transmit::Packet(_)));
    }

    /// A transmit wake-up is asked for once per time, only when earlier
    /// than the one pending; a replaced one does nothing when it comes.
    #[test]
    fn transmit_wakeups_are_asked_once() {
        let mut w = Wakeups::default();
        assert!(w.transmit_at(50));
        assert!(!w.transmit_at(50));
        assert!(!w.transmit_at(60));
        assert!(w.transmit_at(40));
        assert!(w.transmit_due(40));
        assert!(!w.transmit_due(50), "replaced by the one at 40");
        assert!(w.transmit_at(70));
    }

    /// Timer wake-ups: one per deadline earlier than all pending, none for
    /// a later one until the earlier has come, clamped to `now` when the
    /// deadline has passed.
    #[test]
    fn timer_wakeups_follow_the_earliest_deadline() {
        let mut nic = Nic::new(NicConfig::default()).unwrap();
        let rto = nic.config().rto;
        for i in 0..2 {
            let cfg = QpConfig {
                peer_host: 1,
                peer_qp: i,
                sport: 0,
            };
            nic.create_qp(cfg).unwrap();
        }
        let mut w = Wakeups::default();
        assert_eq!(w.timer_at(&nic, 0), None, "no timer armed");
        sent_at(&mut nic, 0, 0);
        assert_eq!(w.timer_at(&nic, 0), Some(rto));
        assert_eq!(w.timer_at(&nic, 0), None, "asked for already");
        sent_at(&mut nic, 1, 5);
        assert_eq!(w.timer_at(&nic, 5), None, "a later deadline waits");
        w.timer_due(rto);
        nic.handle_timeout(rto);
        assert_eq!(w.timer_at(&nic, rto), Some(rto + 5));
        // Handled late: the wake-up is for now.
        w.timer_due(rto + 5);
        let mut w = Wakeups::default();
        assert_eq!(w.timer_at(&nic, rto + 9), Some(rto + 9));
    }
}
