//! The NIC: owns the queue pairs of one host and schedules their packets.
//!
//! API CONTRACT (implementation pending): the simulator host is written
//! against exactly these signatures.

use crate::packet::{Packet, Verb};
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
        }
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

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NicStats {
    pub data_packets_sent: u64,
    pub data_bytes_sent: u64,
    pub retransmitted_packets: u64,
    pub ctrl_packets_sent: u64,
    pub acks_received: u64,
    pub nacks_received: u64,
    pub timeouts: u64,
    pub out_of_order_dropped: u64,
}

pub struct Nic {}

impl Nic {
    pub fn new(_cfg: NicConfig) -> Nic {
        todo!()
    }
    pub fn config(&self) -> &NicConfig {
        todo!()
    }
    pub fn create_qp(&mut self, _cfg: QpConfig) -> QpId {
        todo!()
    }
    pub fn post_send(&mut self, _now: Time, _qp: QpId, _wr: WorkRequest) {
        todo!()
    }
    pub fn post_recv(&mut self, _qp: QpId, _wr_id: u64, _len: u64) {
        todo!()
    }
    pub fn on_packet(&mut self, _now: Time, _pkt: &Packet) {
        todo!()
    }
    pub fn on_timer(&mut self, _now: Time, _qp: QpId) {
        todo!()
    }
    /// `paused` is a bitmask of traffic classes the link partner has paused (PFC).
    pub fn poll_transmit(&mut self, _now: Time, _paused: u8) -> Transmit {
        todo!()
    }
    pub fn poll_event(&mut self) -> Option<Event> {
        todo!()
    }
    pub fn stats(&self) -> &NicStats {
        todo!()
    }
}
