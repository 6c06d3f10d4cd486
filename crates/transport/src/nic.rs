//! The NIC: the public API (configuration, work requests, events, stats),
//! the QP table (a `Vec` indexed by `QpId`), packet dispatch to the
//! requester/responder halves, the control-packet FIFO and the data
//! scheduler (control first; then round-robin over QPs that have data and
//! whose rate limiter allows them to send).
//!
//! API CONTRACT: the simulator host is written against these signatures;
//! items may be added, not renamed or removed.

use std::collections::VecDeque;

use crate::cc::{Cc, CcConfig};
use crate::dcqcn::Notification;
use crate::packet::{Packet, PacketKind, Verb};
use crate::qp::Qp;
use crate::responder::Reply;
use crate::sched::{SchedState, Scheduler};
use engine::Time;

/// NIC-local queue pair number.
pub type QpId = u32;

#[derive(Clone, Debug)]
pub struct NicConfig {
    /// This host's id (the `src` of every packet it sends).
    pub host: u32,
    /// Line rate of the NIC port, bits per second.
    pub line_rate_bps: u64,
    /// Payload bytes per full packet (1000 by default, as HPCC/ConWeave ns-3).
    pub mtu: u32,
    /// Header bytes added to every data packet (48 by default, as HPCC ns-3).
    pub header_bytes: u32,
    /// Wire size of ACK/NACK/CNP packets (60 by default, as HPCC ns-3).
    pub ctrl_bytes: u32,
    /// Acknowledge every n-th data packet (1 = every packet); the last
    /// packet of a message and out-of-order events are always answered.
    pub ack_every: u32,
    /// Retransmission timeout.
    pub rto: Time,
    /// Traffic class of data packets and of control packets.
    pub data_priority: u8,
    pub ctrl_priority: u8,
    /// Congestion control of every QP (unless overridden per QP with
    /// [`Nic::create_qp_with_cc`]); also selects how this NIC, as a
    /// notification point, reports CE marks (see
    /// [`crate::dcqcn::Notification`]; `None` echoes on ACKs).
    pub cc: CcConfig,
}

impl Default for NicConfig {
    fn default() -> Self {
        NicConfig {
            host: 0,
            line_rate_bps: 100_000_000_000,
            mtu: 1000,
            header_bytes: 48,
            ctrl_bytes: 60,
            ack_every: 1,
            rto: 4 * engine::time::MS,
            data_priority: 3,
            ctrl_priority: 0,
            cc: CcConfig::None,
        }
    }
}

impl NicConfig {
    /// Checks the configuration; [`Nic::new`] panics on an invalid one.
    pub fn validate(&self) -> Result<(), String> {
        if self.line_rate_bps == 0 {
            return Err("line_rate_bps must be positive".into());
        }
        if self.mtu == 0 {
            return Err("mtu must be positive".into());
        }
        if self.ctrl_bytes == 0 {
            return Err("ctrl_bytes must be positive".into());
        }
        if self.header_bytes == 0 {
            return Err("header_bytes must be positive (a 0-byte message is a packet)".into());
        }
        if self.ack_every == 0 {
            return Err("ack_every must be at least 1".into());
        }
        if self.rto == 0 {
            return Err("rto must be positive".into());
        }
        if self.data_priority > 7 || self.ctrl_priority > 7 {
            return Err("priorities must be in 0..8".into());
        }
        self.cc.validate()
    }
}

#[derive(Clone, Copy, Debug)]
pub struct QpConfig {
    pub peer_host: u32,
    pub peer_qp: QpId,
    /// UDP source port of the packets this QP sends.
    pub sport: u16,
}

#[derive(Clone, Copy, Debug)]
pub struct WorkRequest {
    pub wr_id: u64,
    pub verb: Verb,
    pub len: u64,
}

/// What the NIC wants to put on the wire next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Transmit {
    Packet(Packet),
    /// Nothing may go now, but something may at this time (rate limiter).
    At(Time),
    /// Nothing to send until new input arrives.
    Idle,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionSide {
    /// The requester's work request finished (WRITE/SEND acknowledged, READ data all arrived).
    Requester,
    /// The responder consumed a receive WQE (SEND) or saw a WRITE message complete.
    Responder,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub qp: QpId,
    pub wr_id: u64,
    pub verb: Verb,
    pub len: u64,
    pub side: CompletionSide,
    pub at: Time,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Call `on_timer(qp)` at `at`. Stale timers are harmless: the NIC
    /// ignores a timer that fires before its current deadline (and asks
    /// again for the new one).
    ArmTimer {
        qp: QpId,
        at: Time,
    },
    Completion(Completion),
}

/// Counters of one NIC (all QPs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NicStats {
    /// Data packets sent (WRITE/SEND data, READ requests, READ responses),
    /// retransmissions included.
    pub data_packets_sent: u64,
    /// Payload bytes of those packets.
    pub data_bytes_sent: u64,
    /// Data packets sent with a PSN sent before (go-back-N, timeouts,
    /// re-issued READ requests, re-executed READ responses).
    pub retransmitted_packets: u64,
    /// ACK, NACK and CNP packets sent.
    pub ctrl_packets_sent: u64,
    pub acks_received: u64,
    pub nacks_received: u64,
    /// Retransmission timer expiries (each goes back to `snd_una`).
    pub timeouts: u64,
    /// Data packets dropped for arriving out of order (requests at the
    /// responder, READ responses at the requester).
    pub out_of_order_dropped: u64,
    /// Wire bytes (payload + headers) of the data packets sent.
    pub data_wire_bytes_sent: u64,
    /// Data packets below the expected PSN (requests re-ACKed or READs
    /// re-executed; stale READ responses ignored).
    pub duplicates_received: u64,
    /// First packets of a SEND dropped because no receive WQE was posted.
    pub rnr_drops: u64,
    /// Packets dropped as invalid for this NIC / QP (wrong address or QP,
    /// PSN never sent, inconsistent message framing).
    pub malformed_dropped: u64,
    /// READ re-issued because of a gap in its responses.
    pub read_reissues: u64,
    /// Congestion notifications sent: CNP packets plus ACK/NACKs carrying
    /// `ecn_echo`.
    pub cnps_sent: u64,
    /// Congestion notifications received (CNP packets plus ACK/NACKs with
    /// `ecn_echo`).
    pub cnps_received: u64,
    /// DCQCN rate decreases. Counted when the lazily evaluated timer is
    /// next brought up to date (at the QP's next send, notification or rate
    /// query), so it may lag by one decrease interval.
    pub rate_decreases: u64,
}

