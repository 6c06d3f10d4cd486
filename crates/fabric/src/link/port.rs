//! One direction of a link as seen from its sending port: the egress queues
//! (eight classes, strict priority), the PFC state imposed by the link
//! partner, the ECN marker, and the frames on the wire toward the partner.
//! The port's own methods touch only the port.
//!
//! Link `i` owns ports `2i` (at its `a` end) and `2i + 1` (at `b`), so a
//! port's partner is `port ^ 1`.

use crate::config::EcnSetting;
use crate::link::frame::{Ctrl, Frame};
use crate::net::arena::Hdr;
use crate::switch::mmu::CLASSES;
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
    pub ecn_marked: u64,
    /// Data packets this port's RED decided on (not control class, not
    /// already CE): the denominator of its marking ratio.
    pub ecn_eligible: u64,
}

/// One class's egress queue and the wire bytes it holds, alone in its half
/// of a cache line, so that a hop reads one line for it. Its bytes are the
/// switch's egress accounting of the (port, class): what ECN marks on and
/// what the lossy drop rule reads, kept here because a hop touches the
/// queue anyway.
#[derive(Clone, Debug, Default)]
#[repr(C, align(32))]
pub struct ClassQueue {
    pub hdrs: Ring<Hdr>,
    pub bytes: u64,
}

/// A port, laid out by cache line (`repr(C)`): in a large run a port is
/// touched every few hundred nanoseconds, long enough for the L1 and often
/// the L2 to lose it, so what matters is how many lines a hop reads.
/// Line 0 holds what the transmitter and the arrival read, line 1 what a
/// switch hop adds and what sending a PFC frame updates, line 2 the ECN
/// marker (read only where marking is on), then one line per pair of class
/// queues; the rest is cold.
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
    /// Bit c set: queue c is not empty.
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
    /// fault) or stamps HPCC's telemetry (`stamps_int`): the one test a
    /// transmission makes for all, the work out of line
    /// (`link/impair.rs`).
    pub impaired: bool,
    // Line 2.
    /// RED marking at this (switch) egress port, if on.
    pub ecn: Option<EcnSetting>,
    pub ecn_marked: u64,
    pub ecn_eligible: u64,
    // Lines 3-6.
    pub queues: [ClassQueue; CLASSES],
    // Cold.
    pub resume_sent: u64,
    pub pause_received: u64,
    paused_time: Time,
    pub paused_since: Time,
    rate_bps: u64,
    pub node: u32,
    /// A switch port stamping HPCC's telemetry on data packets (read
    /// only when `impaired`; `switch/int.rs`).
    pub stamps_int: bool,
    /// Random loss probability (read only when `impaired`).
    pub loss: f64,
    pub loss_rng: Rng,
    pub ecn_rng: Rng,
}

/// Where a port sits: its node, its own end and the far end of its link.
#[derive(Clone, Copy, Debug)]
pub struct PortEnds {
    pub node: u32,
    pub owner: End,
    pub peer: End,
}

impl Port {
    /// Port `id` (its random streams, for loss and ECN marking, are the
    /// run's `seed` streams of that index).
    pub fn new(
        ends: PortEnds,
        rate_bps: u64,
        delay: Time,
        ecn: Option<EcnSetting>,
        seed: u64,
        id: u32,
    ) -> Port {
        let PortEnds { node, owner, peer } = ends;
        let loss_rng = Rng::new(seed, StreamKind::LinkLoss, id as u64);
        let ecn_rng = Rng::new(seed, StreamKind::Ecn, id as u64);
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
            stamps_int: false,
            ecn,
            ecn_marked: 0,
            ecn_eligible: 0,
            queues: Default::default(),
            pause_sent: 0,
            resume_sent: 0,
            pause_received: 0,
            paused_time: 0,
            paused_since: 0,
            rate_bps: 0,
            node,
            loss: 0.0,
            loss_rng,
            ecn_rng,
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
            ecn_marked: self.ecn_marked,
            ecn_eligible: self.ecn_eligible,
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

    /// The class `pop_eligible` would serve: the highest-priority (lowest)
    /// class with packets and not paused.
    #[inline]
    pub fn eligible_class(&self) -> Option<usize> {
        let ready = self.backlogged & !self.paused;
        (ready != 0).then(|| ready.trailing_zeros() as usize)
    }

    /// The packet `pop_eligible` would return, in place (for a cache hint).
    #[inline]
    pub fn peek_eligible(&self) -> Option<&Hdr> {
        self.queues[self.eligible_class()?].hdrs.front()
    }

    /// The next queued packet this port may send: strict priority over the
    /// classes the partner has not paused.
    #[inline]
    pub fn pop_eligible(&mut self) -> Option<Hdr> {
        let class = self.eligible_class()?;
        let q = &mut self.queues[class];
        let pkt = q.hdrs.pop_front()?;
        q.bytes -= pkt.wire() as u64;
        // Arithmetic, not a branch: whether a busy queue just emptied is a
        // coin toss (6 M mispredictions on A2A128 as a branch).
        self.backlogged &= !((q.hdrs.is_empty() as u8) << class);
        Some(pkt)
    }

    /// The next queued packet of `class`, paused or not (a down link's
    /// queues are drained).
    pub fn pop_class(&mut self, class: usize) -> Option<Hdr> {
        let q = &mut self.queues[class];
        let pkt = q.hdrs.pop_front()?;
        q.bytes -= pkt.wire() as u64;
        if q.hdrs.is_empty() {
            self.backlogged &= !(1 << class);
        }
        Some(pkt)
    }

    #[inline]
    pub fn push(&mut self, hdr: Hdr) {
        let q = &mut self.queues[hdr.class()];
        q.hdrs.push_back(hdr);
        q.bytes += hdr.wire() as u64;
        self.backlogged |= 1 << hdr.class();
    }

    /// Accounts a packet of `class` queued outside the class's ring (by
    /// SRPT, `switch/srpt/`): its bytes and backlog bit, as `push`.
    pub fn hold(&mut self, class: usize, wire: u32) {
        self.queues[class].bytes += wire as u64;
        self.backlogged |= 1 << class;
    }

    /// A packet [`Port::hold`] accounted left, the last of its class if
    /// `empty`.
    pub fn release_held(&mut self, class: usize, wire: u32, empty: bool) {
        self.queues[class].bytes -= wire as u64;
        if empty {
            self.backlogged &= !(1 << class);
        }
    }

    /// Wire bytes waiting in the queues.
    pub fn queued_bytes(&self) -> u64 {
        self.queues.iter().map(|q| q.bytes).sum()
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
    /// touches on the first two lines, the ECN marker on the third, each
    /// class queue within one line.
    #[test]
    fn hot_fields_share_lines() {
        assert_eq!(std::mem::align_of::<Port>(), 64);
        for end in [offset_of!(Port, up), offset_of!(Port, owner)] {
            assert!(end < 64, "line 0 overflows at {end}");
        }
        assert_eq!(offset_of!(Port, pause_sent), 64);
        assert!(offset_of!(Port, impaired) < 128);
        // The option's tag ends line 1; the setting itself is on line 2.
        assert!(offset_of!(Port, ecn) + 8 <= 128);
        assert!(offset_of!(Port, ecn_eligible) + 8 <= 192);
        assert_eq!(offset_of!(Port, queues), 192);
        assert_eq!(std::mem::size_of::<ClassQueue>(), 32);
    }

    /// A 100 Gb/s switch port toward a host.
    fn switch_port() -> Port {
        let ends = PortEnds {
            node: 0,
            owner: End::Switch(0, 0),
            peer: End::Host(0),
        };
        Port::new(ends, 100_000_000_000, 1_000_000, None, 1, 0)
    }

    fn hdr(class: u8, wire: u32) -> Hdr {
        Hdr::of(class, wire, true)
    }

    /// A class queue's bytes (the switch's egress accounting) follow its
    /// packets in and out, class by class (strict priority: the lowest class
    /// number first; a paused class waits).
    #[test]
    fn class_bytes_follow_the_queue() {
        let mut port = switch_port();
        port.push(hdr(3, 1000));
        port.push(hdr(3, 64));
        port.push(hdr(0, 500));
        assert_eq!(port.queues[3].bytes, 1064);
        assert_eq!(port.queues[0].bytes, 500);
        assert_eq!(port.peek_eligible(), Some(&hdr(0, 500)));
        assert_eq!(port.pop_eligible(), Some(hdr(0, 500)));
        assert_eq!(port.queues[0].bytes, 0);
        port.paused = 1 << 3;
        assert_eq!(port.peek_eligible(), None);
        assert_eq!(port.pop_eligible(), None);
        assert_eq!(port.queues[3].bytes, 1064);
        port.paused = 0;
        assert_eq!(port.pop_eligible(), Some(hdr(3, 1000)));
        assert_eq!(port.queues[3].bytes, 64);
        assert_eq!(port.pop_eligible(), Some(hdr(3, 64)));
        assert_eq!(port.queues[3].bytes, 0);
    }

    /// A packet skips the queue only when `pop_eligible` would return it
    /// next and the port would start it now.
    #[test]
    fn takes_at_once_only_when_the_pop_would_return_it() {
        let mut port = switch_port();
        assert!(port.takes_at_once(0, 3));
        port.busy_until = 10;
        assert!(!port.takes_at_once(9, 3));
        assert!(port.takes_at_once(10, 3));
        // Another class waiting and eligible goes first.
        port.push(hdr(5, 100));
        assert!(!port.takes_at_once(10, 3));
        // Paused, it does not; but a paused class of its own must wait.
        port.paused = 1 << 5;
        assert!(port.takes_at_once(10, 3));
        assert!(!port.takes_at_once(10, 5));
        port.ctrl_out.push_back(Ctrl::pfc(3, true));
        assert!(!port.takes_at_once(10, 3));
    }
}
