//! The NIC's API types, at the bottom of the crate: identifiers and
//! configuration ([`QpId`], [`QpConfig`], [`InitialPsns`], [`NicConfig`]),
//! what a caller hands in ([`WorkRequest`], [`SendOptions`]) and gets out
//! ([`Transmit`], [`Event`], [`Completion`]), the errors of its calls
//! ([`ConfigError`], [`QpError`]), and the counters ([`NicStats`]).
//!
//! May use only plain-data modules of the crate: `packet`, `cc` (the
//! congestion-control choice), `reorder`, and the engines' configuration files
//! (`engine::config`, `engine::irn::config`, `engine::mprdma::config`)
//! and the ordering layer's (`order::config`),
//! none of which imports this file back.

use crate::cc::CcConfig;
use crate::engine::config::Engine;
use crate::engine::uet::nscc::NsccParams;
use crate::order::config::OrderingKind;
use crate::packet::{Packet, Verb};
use crate::reorder::OodHistogram;
use engine::Time;

/// NIC-local queue pair number.
pub type QpId = u32;

/// The longest retransmission timeout [`NicConfig::validate`] accepts (one
/// hour), so that a deadline never overflows the clock.
pub const MAX_RTO: Time = 3600 * engine::time::SEC;

/// Fields in declaration order (`repr(C)`): what every packet reads comes
/// first, so that it shares a cache line inside [`crate::Nic`].
#[derive(Clone, Debug)]
#[repr(C)]
pub struct NicConfig {
    /// This host's id (the `src` of every packet it sends).
    pub host: u32,
    /// Payload bytes per full packet (1000 by default, as HPCC/ConWeave ns-3).
    pub mtu: u32,
    /// Header bytes added to every data packet (48 by default, as HPCC ns-3).
    pub header_bytes: u32,
    /// Wire size of ACK/NACK/CNP packets (60 by default, as HPCC ns-3).
    pub ctrl_bytes: u32,
    /// Acknowledge every n-th data packet (1 = every packet); the last
    /// packet of a message and out-of-order events are always answered.
    pub ack_every: u32,
    /// Traffic class of data packets and of control packets.
    pub data_priority: u8,
    pub ctrl_priority: u8,
    /// Control packets leave even while a PAUSE holds their class (HPCC
    /// ns-3's hosts send ACKs from a queue of their own that only a PAUSE
    /// of class 0 stops, whatever class the switches queue them in; a
    /// real NIC holds a paused class's frames). False by default.
    pub ctrl_ignores_pause: bool,
    /// The ordering layer between demultiplexing and every QP's engine
    /// (`crate::order`); `None` by default. MP-RDMA orders its own packets
    /// and runs under `None` only.
    pub ordering: OrderingKind,
    /// Line rate of the NIC port, bits per second.
    pub line_rate_bps: u64,
    /// Retransmission timeout.
    pub rto: Time,
    /// IRN's shorter timeout for go-back-N (Eunomia §3.2.3 leaves real
    /// losses to "the existing timeout mechanism at the sender NICs such
    /// as in IRN"): while fewer than its packets are in flight, its
    /// timeout replaces `rto` ([`NicConfig::rto_for`]). None by default.
    pub rto_low: Option<RtoLow>,
    /// Congestion control of every QP (unless overridden per QP with
    /// [`crate::Nic::create_qp_with`]); also selects how this NIC, as a
    /// notification point, reports CE marks (see
    /// [`crate::dcqcn::Notification`]; `None` sends no notification).
    pub cc: CcConfig,
    /// Engine (loss recovery and receive-side ordering) of every QP,
    /// unless overridden per QP with [`crate::Nic::create_qp_with`].
    pub engine: Engine,
    /// ACK coalescing by time: a go-back-N or IRN QP's ACK waits this
    /// long for later ones to replace it (`crate::held`); 0 (the default,
    /// as HPCC ns-3): every ACK leaves at once.
    pub ack_interval: Time,
    /// The notification point's CNP generation delay: a CNP packet leaves
    /// this long after the marked packet that made it arrived; 0 (the
    /// default): at once.
    pub cnp_delay: Time,
    /// NSCC's parameters, for the UET QPs that run it
    /// (`crate::UetConfig::cc`).
    pub nscc: NsccParams,
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
            rto_low: None,
            data_priority: 3,
            ctrl_priority: 0,
            ctrl_ignores_pause: false,
            ordering: OrderingKind::None,
            cc: CcConfig::None,
            engine: Engine::default(),
            ack_interval: 0,
            cnp_delay: 0,
            nscc: NsccParams::default(),
        }
    }
}

/// IRN's RTO_low and N ([`NicConfig::rto_low`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtoLow {
    pub rto: Time,
    /// The timeout applies while fewer than this many packets are in flight.
    pub below_packets: u32,
}

impl NicConfig {
    /// The go-back-N timeout to arm with `in_flight` packets sent and not
    /// acknowledged: IRN's RTO_low below its N ([`NicConfig::rto_low`]),
    /// else `rto`.
    #[inline(always)]
    pub fn rto_for(&self, in_flight: u32) -> Time {
        match self.rto_low {
            Some(l) if in_flight < l.below_packets => l.rto,
            _ => self.rto,
        }
    }

    /// Whether a QP running `engine` may sit under this NIC's ordering
    /// layer: an engine that orders its own packets
    /// ([`Engine::orders_itself`], MP-RDMA) runs without one.
    pub fn check_ordering(&self, engine: &Engine) -> Result<(), String> {
        if self.ordering != OrderingKind::None && engine.orders_itself() {
            return Err(format!(
                "ordering = \"{}\" cannot sit under {}, which orders its own packets (use ordering = \"none\")",
                self.ordering.name(),
                engine.name()
            ));
        }
        Ok(())
    }

    /// Checks the configuration ([`crate::Nic::new`] does).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let fail = |m: &str| Err(ConfigError::new(m));
        if self.line_rate_bps == 0 {
            return fail("line_rate_bps must be positive");
        }
        if self.mtu == 0 {
            return fail("mtu must be positive");
        }
        if self.ctrl_bytes == 0 {
            return fail("ctrl_bytes must be positive");
        }
        if self.header_bytes == 0 {
            return fail("header_bytes must be positive (a 0-byte message is a packet)");
        }
        if self.mtu.checked_add(self.header_bytes).is_none() {
            return fail("mtu + header_bytes must fit in 32 bits");
        }
        if self.ack_every == 0 {
            return fail("ack_every must be at least 1");
        }
        if self.rto == 0 {
            return fail("rto must be positive");
        }
        if self.rto > MAX_RTO {
            return fail("rto must be at most one hour");
        }
        if self.ack_interval > MAX_RTO || self.cnp_delay > MAX_RTO {
            return fail("ack_interval and cnp_delay must be at most one hour");
        }
        self.nscc.validate().map_err(ConfigError::new)?;
        if let Some(l) = self.rto_low {
            if l.rto == 0 || l.rto > self.rto {
                return fail("rto_low's timeout must be positive and at most rto");
            }
            if l.below_packets == 0 {
                return fail("rto_low's packet count must be at least 1");
            }
        }
        if self.data_priority > 7 || self.ctrl_priority > 7 {
            return fail("data_priority and ctrl_priority must be in 0..8");
        }
        self.engine.validate().map_err(ConfigError::new)?;
        self.check_ordering(&self.engine)
            .map_err(ConfigError::new)?;
        self.ordering
            .validate()
            .map_err(|e| ConfigError::new(format!("{}.{e}", self.ordering.name())))?;
        self.cc.validate().map_err(ConfigError::new)
    }
}

/// A configuration mistake: the field and what is wrong with it ("rto
/// must be positive").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(String);

impl ConfigError {
    pub(crate) fn new(message: impl Into<String>) -> ConfigError {
        ConfigError(message.into())
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// Why the NIC refused a call about a QP. Nothing changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QpError {
    /// No QP was created with this number.
    Unknown(QpId),
    /// The QP was destroyed ([`crate::Nic::destroy_qp`]).
    Destroyed(QpId),
    /// The QP's engine cannot carry the work request.
    Refused(QpId, WrError),
    /// Every QP number has been used (numbers are not reused).
    Exhausted,
    /// The QP's own engine or congestion-control configuration is invalid.
    Config(ConfigError),
}

impl std::fmt::Display for QpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QpError::Unknown(q) => write!(f, "no QP {q}"),
            QpError::Destroyed(q) => write!(f, "QP {q} was destroyed"),
            QpError::Refused(q, e) => write!(f, "QP {q}: {e}"),
            QpError::Exhausted => f.write_str("every QP number has been used"),
            QpError::Config(e) => write!(f, "invalid QP configuration: {e}"),
        }
    }
}

impl std::error::Error for QpError {}

#[derive(Clone, Copy, Debug)]
pub struct QpConfig {
    pub peer_host: u32,
    pub peer_qp: QpId,
    /// UDP source port of the packets this QP sends.
    pub sport: u16,
}

/// Where a QP's PSNs start, in each direction: RC's QP attributes
/// `sq_psn` and `rq_psn`, each taken modulo 2^24 (see `crate::psn`). A
/// QP's `sq_psn` must be its peer's `rq_psn`, and the other way round.
/// The default starts both at 0 (as the simulator's QPs do). With
/// [`crate::Nic::create_qp_with_psns`]; kept apart from [`QpConfig`], which
/// the QP keeps on the cache line every packet reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InitialPsns {
    /// The first PSN this QP sends (IRN: also the first of its READ
    /// responses' PSN space, as its peer's `rq_psn`).
    pub sq_psn: u32,
    /// The first PSN this QP expects from its peer (IRN: also the first
    /// of the READ responses it sends).
    pub rq_psn: u32,
}

/// A work request. The addresses and operands matter only to callers that
/// move real bytes ([`crate::Nic::poll_transmit_with`], [`crate::Nic::on_packet_with`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct WorkRequest {
    pub wr_id: u64,
    pub verb: Verb,
    /// Bytes (ignored for atomics, which move 8).
    pub len: u64,
    /// WRITE, READ, atomics: the address at the responder.
    pub remote_addr: u64,
    /// WRITE, SEND: where the data comes from; READ, atomics: where the
    /// data or the original value goes.
    pub local_addr: u64,
    /// WRITE with immediate, SEND (with immediate, when not 0): the
    /// immediate; fetch-and-add: the addend; compare-and-swap: the swap
    /// value.
    pub imm: u64,
    /// Compare-and-swap: the compare value.
    pub compare: u64,
}

/// Why a work request cannot be carried ([`crate::check_work_request`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WrError {
    /// The engine does not carry this verb.
    Unsupported(Verb),
    /// A message of this many bytes needs more packets than a QP may have
    /// in use ([`crate::MAX_PSN_SPAN`]).
    TooLong(u64),
    /// A message of this many packets would make the PSNs the QP has in
    /// use (posted and not completed) span more than their serial order
    /// allows (`crate::psn::MAX_PSN_SPAN`); post it when earlier work
    /// completes.
    PsnSpan(u32),
}

impl std::fmt::Display for WrError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WrError::Unsupported(v) => write!(f, "the engine does not carry {v:?}"),
            WrError::TooLong(len) => write!(
                f,
                "a message of {len} bytes needs more than {} packets, the most a QP may have in use",
                crate::psn::MAX_PSN_SPAN
            ),
            WrError::PsnSpan(n) => write!(
                f,
                "a message of {n} packets would make the QP's PSNs in use span more than {}",
                crate::psn::MAX_PSN_SPAN
            ),
        }
    }
}

impl std::error::Error for WrError {}

/// Per-operation flags of [`crate::Nic::post_send_with`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SendOptions {
    /// MP-RDMA's synchronise flag: the operation updates remote memory only
    /// after every operation posted before it has completed. (Go-back-N
    /// QPs deliver in order anyway and ignore it.)
    pub sync: bool,
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
    /// Responder completion of a WRITE with immediate or a SEND: the
    /// immediate (0 for a SEND posted without one).
    pub imm: u64,
}

impl Completion {
    /// The requester's work request `wr_id` finished at `at`.
    pub(crate) fn requester(qp: QpId, wr_id: u64, verb: Verb, len: u64, at: Time) -> Completion {
        Completion {
            qp,
            wr_id,
            verb,
            len,
            side: CompletionSide::Requester,
            at,
            imm: 0,
        }
    }
}

/// What the NIC reports (timers go through [`crate::Nic::poll_timeout`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Completion(Completion),
}

/// Counters of one NIC (all QPs).
/// In declaration order, from a line boundary (`repr(C, align(64))`): the
/// counters every packet updates come first, on one cache line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct NicStats {
    /// Data packets sent (WRITE/SEND data, READ requests, READ responses),
    /// retransmissions included.
    pub data_packets_sent: u64,
    /// Payload bytes of those packets.
    pub data_bytes_sent: u64,
    /// Wire bytes (payload + headers) of the data packets sent.
    pub data_wire_bytes_sent: u64,
    /// ACK, NACK and CNP packets sent.
    pub ctrl_packets_sent: u64,
    pub acks_received: u64,
    /// Congestion notifications sent: CNP packets plus ACK/NACKs carrying
    /// `ecn_echo`.
    pub cnps_sent: u64,
    /// Congestion notifications received (CNP packets plus ACK/NACKs with
    /// `ecn_echo`).
    pub cnps_received: u64,
    /// DCQCN rate decreases. Counted when the lazily evaluated timers are
    /// next brought up to date (when the QP next wants to send or receives
    /// a notification), so the count may lag behind the rate itself.
    pub rate_decreases: u64,
    /// Data packets sent with a PSN sent before (go-back-N, timeouts,
    /// re-issued READ requests, re-executed READ responses).
    pub retransmitted_packets: u64,
    pub nacks_received: u64,
    /// Retransmission timer expiries (each goes back to `snd_una`).
    pub timeouts: u64,
    /// Data packets dropped for arriving out of order (requests at the
    /// responder, READ responses at the requester).
    pub out_of_order_dropped: u64,
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
    /// MP-RDMA: packets retransmitted early (no new data to send).
    pub mp_early_retransmits: u64,
    /// MP-RDMA: ACKs from a path more than Delta behind (cwnd - 1, no clock).
    pub mp_ooo_prunes: u64,
    /// MP-RDMA: "use it or lose it" window reductions.
    pub mp_window_reductions: u64,
    /// MP-RDMA: sends moved to a new random VP by path probing.
    pub mp_probes: u64,
    /// MP-RDMA: NACK-triggered recovery episodes.
    pub mp_recoveries: u64,
    /// MP-RDMA: data packets dropped beyond `rcv_nxt + L`.
    pub mp_bitmap_drops: u64,
    /// MP-RDMA: synchronise packets dropped for arriving before earlier
    /// messages completed.
    pub mp_sync_drops: u64,
    /// MP-RDMA: synchronise operations posted.
    pub mp_sync_messages: u64,
    /// MP-RDMA: synchronise messages that arrived before earlier messages
    /// were complete (dropped at least once), each counted once, by the
    /// sender from the receiver's synchronise NACKs (a lost NACK goes
    /// uncounted, but its message's later packets are NACKed again).
    pub mp_sync_early: u64,
    /// MP-RDMA: the largest out-of-order degree (PSN - rcv_nxt) accepted.
    pub mp_max_ooo_degree: u64,
    /// The out-of-order degree of every new data packet on arrival, before
    /// any ordering layer (every engine: requests at the responder, READ
    /// responses at the requester; duplicates are not counted).
    pub ood: OodHistogram,
    /// Payload bytes that could not be placed or read (outside registered
    /// memory, or a SEND overrunning its receive buffer); the packet is
    /// dropped without a reply.
    pub access_errors: u64,
    /// IRN: packets beyond the receiver's bitmap, dropped and NACKed.
    pub beyond_window_dropped: u64,
    /// Request packets an ordering layer held until the gap before them
    /// filled (`NicConfig::ordering`).
    pub ordering_held: u64,
    /// The most packets one QP's ordering layer held at once.
    pub ordering_max_held: u64,
    /// Bitmap layers (`crate::order::eunomia`): SACKs sent for tracked
    /// out-of-order packets.
    pub eunomia_sacks_sent: u64,
    /// Bitmap layers: NACKs sent for packets that could not be tracked
    /// (one per gap).
    pub eunomia_nacks_sent: u64,
    /// Bitmap layers: packets dropped because tracking them would pass
    /// the bitmap's cap (a static bitmap: its size).
    pub eunomia_beyond_cap_dropped: u64,
    /// Eunomia: packets dropped because the memory controller had no room
    /// (for a new connection's metadata and first block, or for a block
    /// the bitmap had to grow by).
    pub eunomia_untracked_dropped: u64,
    /// Bitmap layers: bitmaps made (Eunomia: a connection's first
    /// out-of-order packet; a static bitmap: its first request packet)
    /// and freed (garbage collection when the connection completed).
    pub eunomia_bitmaps_made: u64,
    pub eunomia_bitmaps_freed: u64,
    /// Bitmap layers, `last_packet = "sender_hold"`: last packets of
    /// WRITEs the sender agent held until every earlier PSN was
    /// acknowledged, and the picoseconds they waited in all.
    pub eunomia_sender_held: u64,
    pub eunomia_sender_hold_ps: u64,
    /// Bitmap layers: last packets of WRITEs that arrived out of order and
    /// waited in host memory for everything before them (the appendix's
    /// receiver hold), and their payload bytes (each crosses PCIe twice
    /// more: read back and placed).
    pub eunomia_receiver_held: u64,
    pub eunomia_receiver_held_bytes: u64,
}
