//! One direction of a link as seen from its sending port: the egress queues
//! (eight classes, strict priority), the PFC state imposed by the link
//! partner, and the packets on the wire toward the partner.
//!
//! Link `i` owns ports `2i` (at its `a` end) and `2i + 1` (at `b`), so a
//! port's partner is `port ^ 1`.

use crate::arena::Hdr;
use crate::mmu::CLASSES;
use engine::time::{serialization, SEC};
use engine::ring::Ring;
use engine::{Rng, Time};

/// What crosses a link: a packet, or a PFC frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    Packet(Hdr),
    /// PAUSE (true) or RESUME (false) of one class.
    Pfc {
        class: u8,
        pause: bool,
    },
}

/// The filler of a ring's unused slots.
impl Default for Frame {
    fn default() -> Self {
        Frame::Pfc {
            class: 0,
            pause: false,
        }
    }
}

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

#[derive(Clone, Debug, Default, PartialEq)]
#[repr(C)]
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

/// Fields in the order a hop touches them (`repr(C)` keeps it): the first
/// two cache lines hold what every frame reads and writes.
#[repr(C)]
pub struct Port {
    /// When the frame being serialised is done (a port whose time is
    /// past this is idle).
    pub busy_until: Time,
    /// Serialisation time of one byte when it is a whole number of
    /// picoseconds (every standard rate), else 0: saves a 128-bit division
    /// per frame.
    ps_per_byte: Time,
    pub delay: Time,
    /// Wire bytes waiting in the queues.
    pub queued_bytes: u64,
    pub loss: f64,
    pub node: u32,
    pub owner: End,
    /// A `TxDone` event is scheduled at `busy_until`. A switch port that has
    /// nothing else to send when it starts a frame schedules none: most
    /// hops at moderate load then cost one event instead of two, and a
    /// packet that arrives meanwhile asks for it.
    pub tx_done_pending: bool,
    /// Bit c set: queue c is not empty.
    pub backlogged: u8,
    /// Classes the link partner has paused.
    pub paused: u8,
    pub up: bool,
    pub peer: End,
    /// Frames on the wire toward the partner, with their arrival times.
    pub wire: Ring<(Time, Frame)>,
    /// PFC frames waiting to be sent on this port.
    pub pfc_out: Ring<(u8, bool)>,
    pub stats: PortStats,
    pub queues: [Ring<Hdr>; CLASSES],
    rate_bps: u64,
    pub paused_since: Time,
    pub loss_rng: Rng,
    pub ecn_rng: Rng,
}

impl Port {
    pub fn new(
        node: u32,
        owner: End,
        peer: End,
        rate_bps: u64,
        delay: Time,
        loss_rng: Rng,
        ecn_rng: Rng,
    ) -> Port {
        let mut port = Port {
            node,
            owner,
            peer,
            rate_bps: 0,
            ps_per_byte: 0,
            delay,
            up: true,
            loss: 0.0,
            loss_rng,
            busy_until: 0,
            tx_done_pending: false,
            queues: Default::default(),
            queued_bytes: 0,
            backlogged: 0,
            pfc_out: Ring::new(),
            paused: 0,
            paused_since: 0,
            wire: Ring::new(),
            ecn_rng,
            stats: Default::default(),
        };
        port.set_rate(rate_bps);
        port
    }

    #[inline]
    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    pub fn set_rate(&mut self, bps: u64) {
        self.rate_bps = bps;
        let per_byte = 8 * SEC;
        self.ps_per_byte = if per_byte.is_multiple_of(bps) {
            per_byte / bps
        } else {
            0
        };
    }

    /// Time to serialise `bytes` at this port's rate (rounded up).
    #[inline]
    pub fn tx_time(&self, bytes: u32) -> Time {
        if self.ps_per_byte != 0 {
            bytes as Time * self.ps_per_byte
        } else {
            serialization(bytes as u64, self.rate_bps)
        }
    }

    /// The next queued packet this port may send: strict priority over the
    /// classes the partner has not paused.
    #[inline]
    pub fn pop_eligible(&mut self) -> Option<Hdr> {
        let ready = self.backlogged & !self.paused;
        if ready == 0 {
            return None;
        }
        let class = ready.trailing_zeros() as usize;
        let q = &mut self.queues[class];
        let pkt = q.pop_front()?;
        if q.is_empty() {
            self.backlogged &= !(1 << class);
        }
        Some(pkt)
    }

    #[inline]
    pub fn push(&mut self, hdr: Hdr) {
        self.queues[hdr.class as usize].push_back(hdr);
        self.queued_bytes += hdr.wire as u64;
        self.backlogged |= 1 << hdr.class;
    }

    /// Something waits to go out: a PFC frame or a packet of an unpaused class.
    #[inline]
    pub fn has_work(&self) -> bool {
        self.backlogged & !self.paused != 0 || !self.pfc_out.is_empty()
    }

    /// Applies a PFC frame from the partner; returns true if this port may
    /// have become able to send.
    pub fn apply_pfc(&mut self, now: Time, class: u8, pause: bool) -> bool {
        let before = self.paused;
        if pause {
            self.paused |= 1 << class;
            self.stats.pause_received += 1;
        } else {
            self.paused &= !(1 << class);
        }
        if before == 0 && self.paused != 0 {
            self.paused_since = now;
        } else if before != 0 && self.paused == 0 {
            self.stats.paused_time += now - self.paused_since;
        }
        !pause
    }

    /// Paused time including a pause still in force at `now`.
    pub fn paused_time_at(&self, now: Time) -> Time {
        self.stats.paused_time
            + if self.paused != 0 {
                now - self.paused_since
            } else {
                0
            }
    }
}
