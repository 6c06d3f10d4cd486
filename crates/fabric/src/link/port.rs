//! One direction of a link as seen from its sending port: its rate and
//! delay, the frames on the wire toward the partner, the PFC state imposed
//! by the partner and the PFC frames to send, impairments, and which
//! classes have a packet waiting (`backlogged`, kept by the switch's
//! egress queues, `switch/queues/`, or zero at a host). The queues, the
//! ECN marker and HPCC's stamping are the switch's. The port's own
//! methods touch only the port.
//!
//! Link `i` owns ports `2i` (at its `a` end) and `2i + 1` (at `b`), so a
//! port's partner is `port ^ 1`.

use crate::link::frame::{Ctrl, Frame};
use engine::ring::Ring;
use engine::time::{ps_per_byte, serialization_at};
use engine::{Rng, StreamKind, Time};

/// One end of a link: a host, or a switch and the index of the port among
/// the switch's ports. A port keeps both its own end (`owner`: which kind of
/// node sends, without a lookup by node id) and the far one (`peer`: where
/// an arriving frame goes, kept in the sending port, which the arrival has
/// in cache since the wire is its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Host(u32),
    Switch(u32, u16),
}

/// Whether a port's frame end at `busy_until` is to run, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxEnd {
    None,
    /// A `TxDone` event is in the queues.
    Scheduled,
    /// No event: the port's switch is calm this window (`Mmu::calm`), and
    /// the end runs when the port is next touched or the switch's share of
    /// the window ends (`Network::catch_up`).
    Deferred,
}

/// What a port has done, as reports read it (see [`Port::stats`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PortStats {
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub pause_sent: u64,
    pub resume_sent: u64,
    pub pause_received: u64,
    /// Time during which the partner held at least one class paused.
    pub paused_time: Time,
}

/// A port, laid out by cache line (`repr(C)`): in a large run a port is
/// touched every few hundred nanoseconds, long enough for the L1 and often
/// the L2 to lose it, so what matters is how many lines a hop reads.
/// Line 0 holds what the transmitter and the arrival read, line 1 what a
/// switch hop adds and what sending a PFC frame updates; the rest is cold.
#[repr(C, align(64))]
pub struct Port {
    // Line 0.
    /// When the frame being serialised is done (a port whose time is
    /// past this is idle).
    pub busy_until: Time,
    pub delay: Time,
    /// Frames on the wire toward the partner, with their arrival times.
    pub wire: Ring<(Time, Frame)>,
    pub peer: End,
    pub owner: End,
    /// [`ps_per_byte`] of the port's rate.
    ps_per_byte: u32,
    /// The end of the frame being serialised, if something is to happen
    /// then. A switch port that has nothing else to send when it starts a
    /// frame asks for none: most hops at moderate load then cost one event
    /// instead of two, and a packet that arrives meanwhile asks for it.
    pub tx_end: TxEnd,
    /// Bit c set: the switch's queue of class c at this port is not
    /// empty (kept by `switch/queues/`).
    pub backlogged: u8,
    /// Classes the link partner has paused.
    pub paused: u8,
    pub up: bool,
    // Line 1.
    pub pause_sent: u64,
    /// Control frames (PFC, RCM notifications) waiting to be sent on
    /// this port, ahead of its packets.
    pub ctrl_out: Ring<Ctrl>,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// The direction loses or delays packets (random loss, a reorder
    /// fault): the one test a transmission makes for both, the work out of
    /// line (`link/impair.rs`).
    pub impaired: bool,
    // Cold.
    pub resume_sent: u64,
    pub pause_received: u64,
    paused_time: Time,
    pub paused_since: Time,
    rate_bps: u64,
    pub node: u32,
    /// Random loss probability (read only when `impaired`).
    pub loss: f64,
    pub loss_rng: Rng,
}

/// Where a port sits: its node, its own end and the far end of its link.
#[derive(Clone, Copy, Debug)]
pub struct PortEnds {
    pub node: u32,
    pub owner: End,
    pub peer: End,
}

impl Port {
    /// Port `id` (its random stream of loss is the run's `seed` stream
    /// of that index).
    pub fn new(ends: PortEnds, rate_bps: u64, delay: Time, seed: u64, id: u32) -> Port {
        let PortEnds { node, owner, peer } = ends;
        let loss_rng = Rng::new(seed, StreamKind::LinkLoss, id as u64);
        let mut port = Port {
            busy_until: 0,
            delay,
            wire: Ring::new(),
            peer,
            owner,
            ps_per_byte: 0,
            tx_end: TxEnd::None,
            backlogged: 0,
            paused: 0,
            up: true,
            ctrl_out: Ring::new(),
            tx_packets: 0,
            tx_bytes: 0,
            impaired: false,
            pause_sent: 0,
            resume_sent: 0,
            pause_received: 0,
            paused_time: 0,
            paused_since: 0,
            rate_bps: 0,
            node,
            loss: 0.0,
            loss_rng,
        };
        port.set_rate(rate_bps);
        port
    }

    /// What the port has done so far (its paused time as of the last
    /// change of its PFC state; see [`Port::paused_time_at`]).
    pub fn stats(&self) -> PortStats {
        PortStats {
            tx_packets: self.tx_packets,
            tx_bytes: self.tx_bytes,
            pause_sent: self.pause_sent,
            resume_sent: self.resume_sent,
            pause_received: self.pause_received,
            paused_time: self.paused_time,
        }
    }

    #[inline]
    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    pub fn set_rate(&mut self, bps: u64) {
        self.rate_bps = bps;
        self.ps_per_byte = ps_per_byte(bps);
    }

    /// Time to serialise `bytes` at this port's rate (rounded up).
    #[inline]
    pub fn tx_time(&self, bytes: u32) -> Time {
        serialization_at(bytes as u64, self.rate_bps, self.ps_per_byte)
    }

    /// The class the queues would serve next: the highest-priority
    /// (lowest) class with packets and not paused.
    #[inline]
    pub fn eligible_class(&self) -> Option<usize> {
        let ready = self.backlogged & !self.paused;
        (ready != 0).then(|| ready.trailing_zeros() as usize)
    }

    /// A packet of `class` pushed now would be the next to go, at once: the
    /// port is idle, has no PFC frame and nothing else eligible to send,
    /// and the class is not paused.
    #[inline]
    pub fn takes_at_once(&self, now: Time, class: usize) -> bool {
        now >= self.busy_until
            && (self.backlogged & !self.paused) | (self.paused & 1 << class) == 0
            && self.ctrl_out.is_empty()
    }

    /// Something waits to go out: a PFC frame or a packet of an unpaused class.
    #[inline]
    pub fn has_work(&self) -> bool {
        self.backlogged & !self.paused != 0 || !self.ctrl_out.is_empty()
    }

    /// Applies a PFC frame from the partner; returns true if this port may
    /// have become able to send.
    pub fn apply_pfc(&mut self, now: Time, class: u8, pause: bool) -> bool {
        let before = self.paused;
        if pause {
            self.paused |= 1 << class;
            self.pause_received += 1;
        } else {
            self.paused &= !(1 << class);
        }
        if before == 0 && self.paused != 0 {
            self.paused_since = now;
        } else if before != 0 && self.paused == 0 {
            self.paused_time += now - self.paused_since;
        }
        !pause
    }

    /// Paused time including a pause still in force at `now`.
    pub fn paused_time_at(&self, now: Time) -> Time {
        self.paused_time
            + if self.paused != 0 {
                now - self.paused_since
            } else {
                0
            }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    /// The layout the hot path was measured with: the fields every hop
    /// touches on the first two lines.
    #[test]
    fn hot_fields_share_lines() {
        assert_eq!(std::mem::align_of::<Port>(), 64);
        for end in [offset_of!(Port, up), offset_of!(Port, owner)] {
            assert!(end < 64, "line 0 overflows at {end}");
        }
        assert_eq!(offset_of!(Port, pause_sent), 64);
        assert!(offset_of!(Port, impaired) < 128);
    }

    /// A 100 Gb/s switch port toward a host.
    fn switch_port() -> Port {
        let ends = PortEnds {
            node: 0,
            owner: End::Switch(0, 0),
            peer: End::Host(0),
        };
        Port::new(ends, 100_000_000_000, 1_000_000, 1, 0)
    }

    /// A packet skips the queue only when the queues would serve its
    /// class next and the port would start it now.
    #[test]
    fn takes_at_once_only_when_the_pop_would_return_it() {
        let mut port = switch_port();
        assert!(port.takes_at_once(0, 3));
        port.busy_until = 10;
        assert!(!port.takes_at_once(9, 3));
        assert!(port.takes_at_once(10, 3));
        // Another class waiting and eligible goes first.
        port.backlogged |= 1 << 5;
        assert!(!port.takes_at_once(10, 3));
        // Paused, it does not; but a paused class of its own must wait.
        port.paused = 1 << 5;
        assert!(port.takes_at_once(10, 3));
        assert!(!port.takes_at_once(10, 5));
        port.ctrl_out.push_back(Ctrl::pfc(3, true));
        assert!(!port.takes_at_once(10, 3));
    }
}
