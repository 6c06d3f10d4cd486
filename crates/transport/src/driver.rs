//! The one drive loop of a [`Nic`], for every environment that runs one:
//! the simulator's hosts (fabric's `host/driver.rs`), the test benches
//! (`tests/it/common`, `tests/it/prop_placement.rs`) and the UDP datapath
//! (`datapath::endpoint`). The environment implements [`Io`] (its NICs, their wire, its
//! clock's wake-ups, its application) and calls, for NIC `n`:
//!
//! - after any input it gave the NIC (a post, [`deliver`] for a packet):
//!   [`after_input`], which hands the completions to the application, asks
//!   for a timer wake-up if the NIC's next timer moved earlier, and lets
//!   the NIC send;
//! - when its port is free to start a frame: [`transmit`] (a packet goes
//!   on the wire, or a transmit wake-up is asked for the rate limiter);
//! - when a wake-up it asked for comes: [`wake`] or [`timer`] (the NIC
//!   runs one timer per wake-up, as an input of its own).
//!
//! An environment that models timing around the NIC (the simulator's
//! QP-context cache, fabric's `host/qp_cache.rs`) overrides
//! [`Io::poll_transmit`], [`Io::poll_timeout`] and [`Io::handle_timeout`]:
//! its own timed inputs share the NIC's timer wake-ups.
//!
//! The functions are generic over the environment and inline into it: the
//! simulator's per-packet path compiles to what it was when written by
//! hand. [`Wakeups`] is what the loop keeps per NIC, so that it asks for
//! each wake-up once.
//!
//! Uses only the NIC's public API.

use crate::api::{Completion, Event, Transmit};
use crate::nic::Nic;
use crate::packet::Packet;
use engine::Time;

/// Why the loop asks to be called back ([`Io::call_at`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// The NIC's rate limiter lets it send then: call [`wake`].
    Transmit,
    /// One of the NIC's timers is due then: call [`timer`].
    Timer,
}

/// What the drive loop needs from where its NICs live.
pub trait Io {
    /// How the environment names its NICs.
    type Id: Copy;

    /// NIC `n`, and the wake-ups the loop asked for on its behalf.
    fn nic(&mut self, n: Self::Id) -> (&mut Nic, &mut Wakeups);

    /// NIC `n`'s next packet. An environment that moves real bytes calls
    /// [`Nic::poll_transmit_with`] instead, and keeps the payload for
    /// [`Io::send`].
    #[inline(always)]
    fn poll_transmit(&mut self, now: Time, n: Self::Id, paused: u8) -> Transmit {
        self.nic(n).0.poll_transmit(now, paused)
    }

    /// NIC `n`'s next timer ([`Nic::poll_timeout`]), or the environment's
    /// own timed input if earlier; with the loop's wake-ups of NIC `n`
    /// (one borrow: the loop indexes its NICs once).
    #[inline(always)]
    fn poll_timeout(&mut self, n: Self::Id) -> (Option<Time>, &mut Wakeups) {
        let (nic, wakeups) = self.nic(n);
        (nic.poll_timeout(), wakeups)
    }

    /// Runs NIC `n`'s earliest due timer ([`Nic::handle_timeout`]), or the
    /// environment's own timed input when it comes first: one input. Hands
    /// back the loop's wake-ups of NIC `n`.
    #[inline(always)]
    fn handle_timeout(&mut self, now: Time, n: Self::Id) -> &mut Wakeups {
        let (nic, wakeups) = self.nic(n);
        nic.handle_timeout(now);
        wakeups
    }

    /// Puts `pkt` on NIC `n`'s wire: its port is busy until the frame is
    /// out, and then calls [`transmit`] again.
    fn send(&mut self, now: Time, n: Self::Id, pkt: Packet);

    /// NIC `n` may have something to send: call [`transmit`] now if its
    /// port is free to start a frame (a busy port calls it when it frees).
    fn ready(&mut self, now: Time, n: Self::Id);

    /// Call [`wake`] or [`timer`] for NIC `n` at `at` (never before now).
    fn call_at(&mut self, at: Time, n: Self::Id, why: Wake);

    /// A completion of NIC `n`, reported at `now`.
    fn completion(&mut self, now: Time, n: Self::Id, c: Completion);
}

/// A packet arrived for NIC `n`: the NIC takes it (without moving bytes;
/// an environment that moves them calls [`Nic::on_packet_with`] and then
/// [`after_input`]).
#[inline(always)]
pub fn deliver<I: Io>(io: &mut I, now: Time, n: I::Id, pkt: &Packet) {
    io.nic(n).0.on_packet(now, pkt);
    after_input(io, now, n);
}

/// After any input to NIC `n`: its completions to the application, a
/// timer wake-up if its next timer moved earlier, and a chance to send.
#[inline(always)]
pub fn after_input<I: Io>(io: &mut I, now: Time, n: I::Id) {
    drain(io, now, n);
    io.ready(now, n);
}

/// NIC `n`'s port is free (the classes in `paused` are paused by the link
/// partner): the NIC's next packet goes on the wire, or it names when it
/// may send (a transmit wake-up is asked for), or it has nothing.
#[inline(always)]
pub fn transmit<I: Io>(io: &mut I, now: Time, n: I::Id, paused: u8) {
    match io.poll_transmit(now, n, paused) {
        Transmit::Packet(pkt) => {
            io.send(now, n, pkt);
            // Sending may arm the retransmission timer.
            drain(io, now, n);
        }
        Transmit::At(t) => {
            if io.nic(n).1.transmit_at(t) {
                io.call_at(t.max(now), n, Wake::Transmit);
            }
        }
        Transmit::Idle => {}
    }
}

/// A transmit wake-up asked for `now` came: the NIC may send, unless the
/// wake-up was replaced by an earlier one.
#[inline(always)]
pub fn wake<I: Io>(io: &mut I, now: Time, n: I::Id) {
    if io.nic(n).1.transmit_due(now) {
        io.ready(now, n);
    }
}

/// A timer wake-up came: the NIC runs its earliest due timer, an input of
/// its own.
#[inline(always)]
pub fn timer<I: Io>(io: &mut I, now: Time, n: I::Id) {
    io.handle_timeout(now, n).timer_due(now);
    after_input(io, now, n);
}

/// Hands NIC `n`'s completions to the application and asks for a timer
/// wake-up if its next timer is due before every one pending.
#[inline(always)]
fn drain<I: Io>(io: &mut I, now: Time, n: I::Id) {
    while let Some(ev) = io.nic(n).0.poll_event() {
        match ev {
            Event::Completion(c) => io.completion(now, n, c),
        }
    }
    let (next, wakeups) = io.poll_timeout(n);
    if let Some(t) = wakeups.timer_at(next, now) {
        io.call_at(t, n, Wake::Timer);
    }
}

/// The wake-ups the loop has asked for on behalf of one NIC: for its rate
/// limiter ([`Transmit::At`]) and for its timers ([`Nic::poll_timeout`]).
/// The environment keeps one per NIC (`Wakeups::default()`) and hands it
/// out with the NIC ([`Io::nic`]).
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
    fn transmit_at(&mut self, t: Time) -> bool {
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
    fn transmit_due(&mut self, now: Time) -> bool {
        if self.transmit == now {
            self.transmit = Time::MAX;
            true
        } else {
            false
        }
    }

    /// After any input to a NIC (at `now`): the time to ask for a timer
    /// wake-up at, if its next deadline `next` (or `now`, if that has passed) is
    /// earlier than every one pending.
    #[inline(always)]
    fn timer_at(&mut self, next: Option<Time>, now: Time) -> Option<Time> {
        let t = next?.max(now);
        if self.timers.last().is_some_and(|&p| p <= t) {
            return None;
        }
        self.timers.push(t);
        Some(t)
    }

    /// A timer wake-up came at `now` (the NIC has run a timer for it).
    #[inline(always)]
    fn timer_due(&mut self, now: Time) {
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
        assert_eq!(w.timer_at(nic.poll_timeout(), 0), None, "no timer armed");
        sent_at(&mut nic, 0, 0);
        assert_eq!(w.timer_at(nic.poll_timeout(), 0), Some(rto));
        assert_eq!(w.timer_at(nic.poll_timeout(), 0), None, "asked for already");
        sent_at(&mut nic, 1, 5);
        assert_eq!(
            w.timer_at(nic.poll_timeout(), 5),
            None,
            "a later deadline waits"
        );
        w.timer_due(rto);
        nic.handle_timeout(rto);
        assert_eq!(w.timer_at(nic.poll_timeout(), rto), Some(rto + 5));
        // Handled late: the wake-up is for now.
        w.timer_due(rto + 5);
        let mut w = Wakeups::default();
        assert_eq!(w.timer_at(nic.poll_timeout(), rto + 9), Some(rto + 9));
    }
}
