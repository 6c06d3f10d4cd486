//! The NIC: the public API (configuration, work requests, events, stats),
//! the QP table (a `Vec` indexed by `QpId`), packet dispatch to the
//! requester/responder halves of each QP's reliability scheme (go-back-N or
//! IRN), the control-packet FIFO and the data
//! scheduler (control first; then round-robin over QPs that have data and
//! whose rate limiter allows them to send).
//!
//! API CONTRACT: the simulator host is written against these signatures;
//! items may be added, not renamed or removed.

use std::collections::VecDeque;

use crate::cc::{Cc, CcConfig};
use crate::dcqcn::Notification;
use crate::memory::{Dma, Memory};
use crate::packet::{Packet, PacketKind, Verb};
use crate::qp::{Engine, LineRate, Qp};
use crate::reliability::Reliability;
use crate::responder::{RecvWqe, Reply};
use crate::sched::{SchedState, Scheduler};
use engine::Time;

/// NIC-local queue pair number.
pub type QpId = u32;

/// Fields in declaration order (`repr(C)`): what every packet reads comes
/// first, so that it shares a cache line inside [`Nic`].
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
    /// Line rate of the NIC port, bits per second.
    pub line_rate_bps: u64,
    /// Retransmission timeout.
    pub rto: Time,
    /// Congestion control of every QP (unless overridden per QP with
    /// [`Nic::create_qp_with_cc`]); also selects how this NIC, as a
    /// notification point, reports CE marks (see
    /// [`crate::dcqcn::Notification`]; `None` echoes on ACKs).
    pub cc: CcConfig,
    /// Reliability scheme of every QP (unless overridden per QP with
    /// [`Nic::create_qp_with`]).
    pub reliability: Reliability,
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
            reliability: Reliability::GoBackN,
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
        self.reliability.validate()?;
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

/// A work request. The addresses and operands matter only to callers that
/// move real bytes ([`Nic::poll_transmit_with`], [`Nic::on_packet_with`]).
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
    /// WRITE with immediate: the immediate; fetch-and-add: the addend;
    /// compare-and-swap: the swap value.
    pub imm: u64,
    /// Compare-and-swap: the compare value.
    pub compare: u64,
}

/// Per-operation flags of [`Nic::post_send_with`].
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
    /// Responder completion of a WRITE with immediate: the immediate.
    pub imm: u64,
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
    /// MP-RDMA: the out-of-order degree of every new data packet.
    pub mp_ood: crate::mprdma::OodHistogram,
    /// Payload bytes that could not be placed or read (outside registered
    /// memory, or a SEND overrunning its receive buffer); the packet is
    /// dropped without a reply.
    pub access_errors: u64,
    /// IRN: packets beyond the receiver's bitmap, dropped and NACKed.
    pub beyond_window_dropped: u64,
}

/// One host's RNIC: its queue pairs, their packets, timers and completions.
///
/// Laid out by cache line (`repr(C)`), as the per-packet path reads it: a
/// NIC is out of cache whenever its next packet comes in a large run. Line
/// 0 holds the QPs and the control queue, lines 1-2 the scheduler and the
/// event queue, line 2 also the line rate and the configuration's
/// per-packet fields, and the counters every packet updates fill one line
/// of their own.
#[repr(C, align(64))]
pub struct Nic {
    qps: Vec<Qp>,
    ctrl: VecDeque<Packet>,
    /// The latest time passed in by any call.
    now: Time,
    sched: Scheduler,
    events: VecDeque<Event>,
    line: LineRate,
    cfg: NicConfig,
    stats: NicStats,
}

impl Nic {
    /// Panics if the configuration is invalid (see [`NicConfig::validate`]).
    pub fn new(cfg: NicConfig) -> Nic {
        if let Err(e) = cfg.validate() {
            panic!("invalid NicConfig: {e}");
        }
        Nic {
            line: LineRate::new(cfg.line_rate_bps),
            cfg,
            qps: Vec::new(),
            ctrl: VecDeque::new(),
            events: VecDeque::new(),
            sched: Scheduler::default(),
            stats: NicStats::default(),
            now: 0,
        }
    }

    pub fn config(&self) -> &NicConfig {
        &self.cfg
    }

    /// Creates a QP running the NIC's congestion control. QP numbers are
    /// 0, 1, 2, ... in creation order.
    pub fn create_qp(&mut self, cfg: QpConfig) -> QpId {
        let (cc, rel) = (self.cfg.cc, self.cfg.reliability);
        self.create_qp_with(cfg, cc, rel)
    }

    /// Creates a QP with its own congestion control (overriding
    /// `NicConfig::cc`, also for its notification-point behaviour).
    /// Panics if `cc` is invalid.
    pub fn create_qp_with_cc(&mut self, cfg: QpConfig, cc: CcConfig) -> QpId {
        let rel = self.cfg.reliability;
        self.create_qp_with(cfg, cc, rel)
    }

    /// Creates a QP with its own congestion control and reliability scheme.
    /// Panics if either is invalid.
    pub fn create_qp_with(&mut self, cfg: QpConfig, cc: CcConfig, rel: Reliability) -> QpId {
        if let Err(e) = cc.validate() {
            panic!("invalid CcConfig: {e}");
        }
        if let Err(e) = rel.validate() {
            panic!("invalid Reliability: {e}");
        }
        let id = QpId::try_from(self.qps.len()).expect("too many QPs");
        let state = Cc::new(&cc, self.cfg.line_rate_bps);
        self.qps
            .push(Qp::new(id, cfg, rel, state, cc.notification()));
        id
    }

    /// Posts a work request on `qp`'s send queue. Panics if `qp` does not
    /// exist.
    pub fn post_send(&mut self, now: Time, qp: QpId, wr: WorkRequest) {
        self.post_send_with(now, qp, wr, SendOptions::default());
    }

    /// [`Nic::post_send`] with per-operation flags (MP-RDMA's synchronise).
    pub fn post_send_with(&mut self, now: Time, qp: QpId, wr: WorkRequest, opts: SendOptions) {
        self.now = self.now.max(now);
        let mtu = self.cfg.mtu;
        let events = &mut self.events;
        let q = self
            .qps
            .get_mut(qp as usize)
            .unwrap_or_else(|| panic!("no QP {qp}"));
        q.post(now, wr, opts.sync, mtu);
        if matches!(q.engine, Engine::MpRdma(_)) {
            self.stats.mp_sync_messages += u64::from(opts.sync);
            // A synchronise gate may need a timer.
            q.sync_timer(events);
        }
        self.wake(qp as usize, now);
    }

    /// Posts a receive WQE (for SENDs and WRITEs with immediate) of `len`
    /// bytes at address 0 (for callers that move lengths only). A SEND
    /// longer than its receive buffer is not placed (`access_errors`).
    pub fn post_recv(&mut self, qp: QpId, wr_id: u64, len: u64) {
        self.post_recv_at(qp, wr_id, 0, len);
    }

    /// Posts a receive WQE whose buffer is `len` bytes at `addr`.
    pub fn post_recv_at(&mut self, qp: QpId, wr_id: u64, addr: u64, len: u64) {
        self.qp_mut(qp).post_recv(RecvWqe { wr_id, addr, len });
    }

    #[inline]
    pub fn on_packet(&mut self, now: Time, pkt: &Packet) {
        self.on_packet_dma(now, pkt, &mut Dma::none());
    }

    /// As [`Nic::on_packet`], with the packet's payload bytes, placed into
    /// `mem`. A payload whose length is not the header's is dropped as
    /// malformed.
    pub fn on_packet_with(
        &mut self,
        now: Time,
        pkt: &Packet,
        payload: &[u8],
        mem: &mut dyn Memory,
    ) {
        if payload.len() != pkt.payload as usize {
            self.stats.malformed_dropped += 1;
            return;
        }
        self.on_packet_dma(now, pkt, &mut Dma::rx(mem, payload));
    }

    fn on_packet_dma(&mut self, now: Time, pkt: &Packet, dma: &mut Dma) {
        self.now = self.now.max(now);
        let qi = pkt.dst_qp as usize;
        let valid = pkt.dst == self.cfg.host
            && self
                .qps
                .get(qi)
                .is_some_and(|q| q.cfg.peer_host == pkt.src && q.cfg.peer_qp == pkt.src_qp);
        if !valid {
            self.stats.malformed_dropped += 1;
            return;
        }
        let cfg = &self.cfg;
        let stats = &mut self.stats;
        let events = &mut self.events;
        let ctrl = &mut self.ctrl;
        let qp = &mut self.qps[qi];
        let id = qp.id;
        if matches!(qp.engine, Engine::MpRdma(_)) {
            let wake = Self::on_packet_mp(now, qp, pkt, cfg, stats, events, ctrl, dma);
            qp.sync_timer(events);
            if wake {
                self.wake(qi, now);
            }
            return;
        }
        let mut wake = false;
        match pkt.kind {
            PacketKind::Request => {
                let o = match &mut qp.engine {
                    Engine::GoBackN { resp, .. } => {
                        resp.on_request(now, id, pkt, cfg, stats, events, dma)
                    }
                    Engine::Irn(i) => i.resp.on_request(now, id, pkt, cfg, stats, events, dma),
                    Engine::MpRdma(_) => unreachable!("MP-RDMA QPs go to on_packet_mp"),
                };
                if o.malformed {
                    stats.malformed_dropped += 1;
                }
                let reply = match o.reply {
                    Reply::None => None,
                    Reply::Ack(psn, ce) => Some((PacketKind::Ack, psn, psn, ce)),
                    Reply::Nack(psn, ce) => Some((PacketKind::Nack, psn, psn, ce)),
                    Reply::Sack(psn, sack, ce) => Some((PacketKind::Nack, psn, sack, ce)),
                };
                if let Some((kind, psn, sack, ce)) = reply {
                    // `notification` is on a line of the QP that an
                    // unmarked packet does not otherwise read.
                    let echo = ce && qp.notification == Notification::AckEcho;
                    stats.cnps_sent += echo as u64;
                    ctrl.push_back(qp.ctrl_packet(
                        kind,
                        psn,
                        sack,
                        pkt.verb,
                        echo,
                        pkt.sent_at,
                        cfg,
                    ));
                }
                if pkt.ce {
                    match qp.notification {
                        Notification::Cnp { cnp_interval } => {
                            qp.maybe_cnp(now, cnp_interval, pkt, cfg, ctrl, stats)
                        }
                        // READ requests get no ACK to carry the echo.
                        Notification::AckEcho if pkt.verb == Verb::Read => {
                            qp.maybe_cnp(now, 0, pkt, cfg, ctrl, stats)
                        }
                        Notification::AckEcho => {}
                    }
                }
                wake = o.read_queued;
            }
            PacketKind::ReadResponse => {
                let (o, reply) = match &mut qp.engine {
                    Engine::GoBackN { req, .. } => (
                        req.on_read_response(now, id, pkt, cfg, stats, events, dma),
                        None,
                    ),
                    Engine::Irn(i) => i
                        .req
                        .on_read_response(now, id, pkt, cfg, stats, events, dma),
                    Engine::MpRdma(_) => unreachable!("MP-RDMA QPs go to on_packet_mp"),
                };
                if o.malformed {
                    stats.malformed_dropped += 1;
                } else {
                    if let Some((kind, psn, sack)) = reply {
                        ctrl.push_back(qp.ctrl_packet(
                            kind,
                            psn,
                            sack,
                            pkt.verb,
                            false,
                            pkt.sent_at,
                            cfg,
                        ));
                    }
                    if pkt.ce {
                        let interval = match qp.notification {
                            Notification::Cnp { cnp_interval } => cnp_interval,
                            Notification::AckEcho => 0,
                        };
                        qp.maybe_cnp(now, interval, pkt, cfg, ctrl, stats);
                    }
                    wake = true;
                }
            }
            PacketKind::Ack | PacketKind::Nack => {
                let is_ack = pkt.kind == PacketKind::Ack;
                let o = match &mut qp.engine {
                    Engine::GoBackN { req, .. } if is_ack => {
                        req.on_ack(now, id, pkt.psn, cfg, events)
                    }
                    Engine::GoBackN { req, .. } => req.on_nack(now, id, pkt.psn, cfg, events),
                    Engine::Irn(i) => i.req.on_ack(now, id, pkt, events),
                    Engine::MpRdma(_) => unreachable!("MP-RDMA QPs go to on_packet_mp"),
                };
                if o.malformed {
                    stats.malformed_dropped += 1;
                } else {
                    if is_ack {
                        stats.acks_received += 1;
                    } else {
                        stats.nacks_received += 1;
                    }
                    if pkt.ecn_echo {
                        stats.cnps_received += 1;
                        qp.cc.on_congestion(now, &mut stats.rate_decreases);
                    }
                    wake = true;
                }
            }
            PacketKind::ReadAck | PacketKind::ReadNack => {
                let o = match &mut qp.engine {
                    Engine::Irn(i) => i.resp.on_read_ack(now, pkt),
                    Engine::GoBackN { .. } => crate::requester::Outcome { malformed: true },
                    Engine::MpRdma(_) => unreachable!("MP-RDMA QPs go to on_packet_mp"),
                };
                if o.malformed {
                    stats.malformed_dropped += 1;
                } else {
                    wake = true;
                }
            }
            PacketKind::Cnp => {
                stats.cnps_received += 1;
                qp.cc.on_congestion(now, &mut stats.rate_decreases);
            }
        }
        qp.sync_timer(events);
        if wake {
            self.wake(qi, now);
        }
    }

    /// An input for an MP-RDMA QP. Returns true if the QP may have
    /// something new to send.
    #[allow(clippy::too_many_arguments)]
    fn on_packet_mp(
        now: Time,
        qp: &mut Qp,
        pkt: &Packet,
        cfg: &NicConfig,
        stats: &mut NicStats,
        events: &mut VecDeque<Event>,
        ctrl: &mut VecDeque<Packet>,
        dma: &mut Dma,
    ) -> bool {
        let id = qp.id;
        let Engine::MpRdma(m) = &mut qp.engine else {
            unreachable!("on_packet_mp on a QP of another scheme");
        };
        match pkt.kind {
            PacketKind::Request => {
                let reply = m.rcv.on_data(now, id, pkt, cfg, stats, events, dma);
                if let Some(r) = reply {
                    stats.cnps_sent += r.ecn as u64;
                    let mut a =
                        qp.ctrl_packet(r.kind, r.aack, r.aack, pkt.verb, r.ecn, pkt.sent_at, cfg);
                    // The ACK travels on the data packet's VP too, so a
                    // failed path silences its own VP's clock both ways.
                    a.sport = pkt.sport;
                    r.mp.apply(&mut a);
                    ctrl.push_back(a);
                }
                false
            }
            PacketKind::Ack | PacketKind::Nack => {
                let ok = if pkt.kind == PacketKind::Ack {
                    stats.acks_received += 1;
                    m.snd.on_ack(now, id, pkt, cfg, stats, events)
                } else {
                    stats.nacks_received += 1;
                    m.snd.on_nack(now, id, pkt, cfg, stats, events)
                };
                if !ok {
                    stats.malformed_dropped += 1;
                }
                stats.cnps_received += (ok && pkt.ecn_echo) as u64;
                ok
            }
            // MP-RDMA carries no READ responses and reacts to ECN echoes
            // per ACK, not to CNPs.
            PacketKind::ReadResponse
            | PacketKind::ReadAck
            | PacketKind::ReadNack
            | PacketKind::Cnp => {
                stats.malformed_dropped += 1;
                false
            }
        }
    }

    /// A timer armed with `Event::ArmTimer { qp, at }` fired. Stale or early
    /// calls are harmless.
    pub fn on_timer(&mut self, now: Time, qp: QpId) {
        self.now = self.now.max(now);
        let qi = qp as usize;
        let Some(q) = self.qps.get_mut(qi) else {
            return;
        };
        if q.armed <= now {
            q.armed = Time::MAX;
        }
        self.stats.timeouts += q.on_timer(now);
        q.sync_timer(&mut self.events);
        self.wake(qi, now);
    }

    /// `paused` is a bitmask of traffic classes the link partner has paused (PFC).
    ///
    /// Control packets (ACK/NACK/CNP, FIFO) go first unless their class is
    /// paused; then data, round-robin over the QPs whose rate limiter allows
    /// them to send. `At(t)`: every QP with data is rate-limited until `t`
    /// at the earliest; `Idle`: nothing can go until new input (a post, a
    /// packet, a timer, or a PFC resume).
    ///
    /// Sending the first packet of a flight arms the retransmission timer:
    /// this call may queue an [`Event::ArmTimer`] (never a completion), so
    /// drain [`Nic::poll_event`] after it too.
    #[inline]
    pub fn poll_transmit(&mut self, now: Time, paused: u8) -> Transmit {
        self.poll_transmit_dma(now, paused, &mut Dma::none())
    }

    /// Whether [`Nic::poll_transmit`] could return anything but `Idle`
    /// without new input: a control packet is queued, or a QP is ready or
    /// waits for its rate limiter. (It may still return `Idle`, if the
    /// class is paused or the waiting QPs have nothing left.)
    #[inline]
    pub fn may_transmit(&self) -> bool {
        !self.ctrl.is_empty() || !self.sched.is_empty()
    }

    /// As [`Nic::poll_transmit`], reading the payload of a data packet from
    /// `mem` into `payload` (cleared first; left empty for control packets).
    pub fn poll_transmit_with(
        &mut self,
        now: Time,
        paused: u8,
        mem: &mut dyn Memory,
        payload: &mut Vec<u8>,
    ) -> Transmit {
        self.poll_transmit_dma(now, paused, &mut Dma::tx(mem, payload))
    }

    #[inline]
    fn poll_transmit_dma(&mut self, now: Time, paused: u8, dma: &mut Dma) -> Transmit {
        self.now = self.now.max(now);
        if !self.ctrl.is_empty() && paused & (1u8 << self.cfg.ctrl_priority) == 0 {
            let p = self.ctrl.pop_front().expect("non-empty");
            self.stats.ctrl_packets_sent += 1;
            return Transmit::Packet(p);
        }
        if paused & (1u8 << self.cfg.data_priority) != 0 {
            return Transmit::Idle;
        }
        if self.sched.has_work(now) {
            self.transmit_data(now, dma)
        } else {
            self.next_data_time()
        }
    }

    /// The data half of [`Nic::poll_transmit`], when a QP is ready or due.
    /// Inlined into the caller's port loop (through `poll_transmit`): as a
    /// call it cost register saves and a copy of the packet on every data
    /// packet.
    #[inline(always)]
    fn transmit_data(&mut self, now: Time, dma: &mut Dma) -> Transmit {
        while let Some((t, qi)) = self.sched.pop_due(now) {
            let q = &mut self.qps[qi as usize];
            if q.sched == SchedState::Waiting(t) {
                q.sched = SchedState::Idle;
                self.sched.push_ready(qi, &mut q.sched);
            }
        }
        while let Some(qi) = self.sched.pop_ready() {
            let q = &mut self.qps[qi as usize];
            q.sched = SchedState::Idle;
            if !q.has_data() {
                continue;
            }
            let e = q.eligible_at(now, &self.line, &mut self.stats.rate_decreases);
            if e > now {
                self.sched.push_waiting(qi, e, &mut q.sched);
                continue;
            }
            let pkt = q.next_packet(now, &self.cfg, &mut self.stats, dma);
            self.stats.data_packets_sent += 1;
            self.stats.data_bytes_sent += pkt.payload as u64;
            self.stats.data_wire_bytes_sent += pkt.wire as u64;
            q.sync_timer(&mut self.events);
            self.wake(qi as usize, now);
            // A ready QP was last touched a round of the ring ago (in an
            // all-to-all, a hundred packets): ask for the lines of the one
            // after next, two packets ahead (A2A128 0.922). One ahead
            // (1.019 against two) and three ahead (1.035) did worse.
            if let Some(n) = self.sched.ready_at(1) {
                self.qps[n as usize].prefetch();
            }
            // The next one's line 0 was asked for a packet ago: follow its
            // congestion control's box.
            if let Some(n) = self.sched.ready_at(0) {
                self.qps[n as usize].cc.prefetch();
            }
            return Transmit::Packet(pkt);
        }
        self.next_data_time()
    }

    /// What to answer when no QP may send now.
    #[inline]
    fn next_data_time(&mut self) -> Transmit {
        let qps = &self.qps;
        match self
            .sched
            .earliest(|t, q| qps[q as usize].sched != SchedState::Waiting(t))
        {
            Some(t) => Transmit::At(t),
            None => Transmit::Idle,
        }
    }

    /// Hints the CPU to fetch what a packet for `qp` will read (a cache
    /// hint: an unknown QP is ignored).
    #[inline]
    pub fn prefetch_qp(&self, qp: QpId) {
        if let Some(q) = self.qps.get(qp as usize) {
            q.prefetch();
        }
    }

    #[inline]
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    pub fn stats(&self) -> &NicStats {
        &self.stats
    }

    /// Simulator memory of one go-back-N QP without congestion control,
    /// in bytes (its work-request queues grow on the heap with what is
    /// posted; other schemes box more, see [`Nic::qp_bytes`]).
    pub const QP_BYTES: usize = std::mem::size_of::<Qp>();

    /// Bytes of all QPs' fixed state, boxes included.
    pub fn qp_bytes(&self) -> usize {
        self.qps.iter().map(Qp::bytes).sum()
    }

    /// Number of QPs created.
    pub fn num_qps(&self) -> usize {
        self.qps.len()
    }

    pub fn qp_config(&self, qp: QpId) -> &QpConfig {
        &self.qp(qp).cfg
    }

    /// The QP's sending rate at the latest time this NIC has been told about
    /// (any call's `now`). Congestion-control timers are evaluated lazily;
    /// use [`Nic::qp_rate_bps_at`] to sample at a precise time.
    pub fn qp_rate_bps(&self, qp: QpId) -> u64 {
        self.qp_rate_bps_at(qp, self.now)
    }

    /// The QP's sending rate at `now` (not before the latest time seen).
    pub fn qp_rate_bps_at(&self, qp: QpId, now: Time) -> u64 {
        self.qp(qp).cc.rate_at(now, self.cfg.line_rate_bps)
    }

    /// The QP's congestion-control state (e.g. DCQCN's alpha), as of its
    /// last update.
    pub fn qp_cc(&self, qp: QpId) -> &Cc {
        &self.qp(qp).cc
    }

    /// Work requests posted on `qp` and not yet completed.
    pub fn qp_pending_wrs(&self, qp: QpId) -> usize {
        self.qp(qp).pending_wrs()
    }

    /// The reliability scheme `qp` runs.
    pub fn qp_reliability(&self, qp: QpId) -> Reliability {
        self.qp(qp).reliability
    }

    /// True if no QP has anything to send or outstanding and no control
    /// packet or event is queued.
    pub fn is_quiescent(&self) -> bool {
        self.ctrl.is_empty()
            && self.events.is_empty()
            && self.qps.iter().all(|q| !q.has_data() && !q.outstanding())
    }

    fn qp(&self, qp: QpId) -> &Qp {
        self.qps
            .get(qp as usize)
            .unwrap_or_else(|| panic!("no QP {qp}"))
    }

    fn qp_mut(&mut self, qp: QpId) -> &mut Qp {
        self.qps
            .get_mut(qp as usize)
            .unwrap_or_else(|| panic!("no QP {qp}"))
    }

    /// Puts an idle QP that has something to send into the scheduler.
    #[inline(always)]
    fn wake(&mut self, qi: usize, now: Time) {
        let q = &mut self.qps[qi];
        if q.sched != SchedState::Idle || !q.has_data() {
            return;
        }
        let e = q.eligible_at(now, &self.line, &mut self.stats.rate_decreases);
        if e <= now {
            self.sched.push_ready(q.id, &mut q.sched);
        } else {
            self.sched.push_waiting(q.id, e, &mut q.sched);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::time::{serialization, US};
    use std::mem::offset_of;

    /// The layout the per-packet path was measured with (see [`Nic`]).
    #[test]
    fn hot_fields_share_lines() {
        assert_eq!(std::mem::align_of::<Nic>(), 64);
        assert!(offset_of!(Nic, now) + 8 <= 64);
        assert_eq!(offset_of!(Nic, sched), 64);
        let cfg = offset_of!(Nic, cfg);
        assert!(cfg >= 128 && cfg + offset_of!(NicConfig, ctrl_priority) < 192);
        assert_eq!(offset_of!(Nic, stats) % 64, 0);
        assert!(offset_of!(NicStats, rate_decreases) + 8 <= 64);
    }

    fn nic_with_qps(n: u32) -> Nic {
        let mut nic = Nic::new(NicConfig::default());
        for i in 0..n {
            let q = nic.create_qp(QpConfig {
                peer_host: 1,
                peer_qp: i,
                sport: i as u16,
            });
            assert_eq!(q, i, "QP numbers are 0, 1, 2, ...");
        }
        nic
    }

    fn write(nic: &mut Nic, now: Time, qp: QpId, len: u64) {
        nic.post_send(
            now,
            qp,
            WorkRequest {
                wr_id: 1,
                verb: Verb::Write,
                len,
                ..WorkRequest::default()
            },
        );
    }

    /// A data packet from the peer (host 1) to QP `qp`.
    fn incoming(qp: QpId, psn: u32, first: bool, last: bool) -> Packet {
        Packet {
            src: 1,
            dst: 0,
            src_qp: qp,
            dst_qp: qp,
            sport: 9,
            kind: PacketKind::Request,
            verb: Verb::Write,
            psn,
            payload: 1000,
            wire: 1048,
            priority: 3,
            ce: false,
            ecn_echo: false,
            first,
            last,
            msg_len: 1000 * (psn as u64 + 1),
            sent_at: 0,
            ..Packet::default()
        }
    }

    fn unwrap_pkt(t: Transmit) -> Packet {
        match t {
            Transmit::Packet(p) => p,
            other => panic!("expected a packet, got {other:?}"),
        }
    }

    #[test]
    fn idle_then_packets_then_rate_limited() {
        let mut nic = nic_with_qps(1);
        assert_eq!(nic.poll_transmit(0, 0), Transmit::Idle);
        write(&mut nic, 0, 0, 2500);
        let p = unwrap_pkt(nic.poll_transmit(0, 0));
        assert_eq!(
            (p.src, p.dst, p.src_qp, p.dst_qp, p.sport, p.priority),
            (0, 1, 0, 0, 0, 3)
        );
        let ser = serialization(1048, 100_000_000_000);
        assert_eq!(nic.poll_transmit(0, 0), Transmit::At(ser));
        assert_eq!(nic.poll_transmit(ser - 1, 0), Transmit::At(ser));
        assert_eq!(unwrap_pkt(nic.poll_transmit(ser, 0)).psn, 1);
        assert_eq!(unwrap_pkt(nic.poll_transmit(2 * ser, 0)).payload, 500);
        assert_eq!(nic.poll_transmit(3 * ser, 0), Transmit::Idle);
    }

    #[test]
    fn pfc_mask_holds_the_paused_class_only() {
        let mut nic = nic_with_qps(1);
        write(&mut nic, 0, 0, 5000);
        nic.on_packet(0, &incoming(0, 0, true, true));
        let data_paused = 1u8 << 3;
        let ctrl_paused = 1u8 << 0;
        // Control first, even though data is queued; then nothing while the
        // data class is paused.
        let ack = unwrap_pkt(nic.poll_transmit(0, data_paused));
        assert_eq!(
            (ack.kind, ack.psn, ack.wire, ack.priority),
            (PacketKind::Ack, 1, 60, 0)
        );
        assert_eq!(nic.poll_transmit(0, data_paused), Transmit::Idle);
        // Control paused: data goes, the ACK waits.
        nic.on_packet(0, &incoming(0, 1, true, true));
        assert_eq!(
            unwrap_pkt(nic.poll_transmit(0, ctrl_paused)).kind,
            PacketKind::Request
        );
        assert_eq!(unwrap_pkt(nic.poll_transmit(0, 0)).kind, PacketKind::Ack);
        assert_eq!(nic.stats().ctrl_packets_sent, 2);
        assert_eq!(
            nic.poll_transmit(0, data_paused | ctrl_paused),
            Transmit::Idle
        );
    }

    #[test]
    fn ack_echoes_sent_at_and_ce() {
        let mut nic = nic_with_qps(1);
        let mut p = incoming(0, 0, true, true);
        p.ce = true;
        p.sent_at = 1234;
        nic.on_packet(5 * US, &p);
        let ack = unwrap_pkt(nic.poll_transmit(5 * US, 0));
        assert!(ack.ecn_echo);
        assert_eq!(ack.sent_at, 1234);
        assert_eq!(nic.stats().cnps_sent, 1);
    }

    #[test]
    fn invalid_packets_are_counted_and_dropped() {
        let mut nic = nic_with_qps(1);
        let mut p = incoming(0, 0, true, true);
        p.dst_qp = 5;
        nic.on_packet(0, &p);
        let mut p = incoming(0, 0, true, true);
        p.src = 7;
        nic.on_packet(0, &p);
        let mut ack = incoming(0, 0, false, false);
        ack.kind = PacketKind::Ack;
        ack.psn = 1000; // never sent
        nic.on_packet(0, &ack);
        assert_eq!(nic.stats().malformed_dropped, 3);
        assert_eq!(nic.poll_transmit(0, 0), Transmit::Idle);
        assert!(nic.poll_event().is_none());
    }

    /// One ArmTimer for many ACKs; a timer that fires before the deadline
    /// re-arms once for the new deadline; none when nothing is outstanding.
    #[test]
    fn timers_are_not_flooded() {
        let mut nic = nic_with_qps(1);
        let rto = nic.config().rto;
        write(&mut nic, 0, 0, 100_000);
        let mut t = 0;
        let mut ack = incoming(0, 0, false, false);
        ack.kind = PacketKind::Ack;
        for i in 0..50 {
            let p = unwrap_pkt(nic.poll_transmit(t, 0));
            t += serialization(p.wire as u64, 100_000_000_000);
            // Acknowledge all but the packet just sent.
            ack.psn = i;
            nic.on_packet(t, &ack);
        }
        let arms: Vec<Event> = std::iter::from_fn(|| nic.poll_event()).collect();
        assert_eq!(arms, vec![Event::ArmTimer { qp: 0, at: rto }]);
        // Fires early (progress moved the deadline): exactly one re-arm.
        nic.on_timer(rto, 0);
        let arms: Vec<Event> = std::iter::from_fn(|| nic.poll_event()).collect();
        assert_eq!(arms, vec![Event::ArmTimer { qp: 0, at: t + rto }]);
        assert_eq!(nic.stats().timeouts, 0);
        // A stale duplicate call does nothing.
        nic.on_timer(rto, 0);
        assert!(nic.poll_event().is_none());
        // Expiry: go back to snd_una = 49.
        nic.on_timer(t + rto, 0);
        assert_eq!(nic.stats().timeouts, 1);
        assert!(
            nic.poll_event().is_none(),
            "nothing outstanding until resent"
        );
        let p = unwrap_pkt(nic.poll_transmit(t + rto, 0));
        assert_eq!(p.psn, 49);
        assert_eq!(nic.stats().retransmitted_packets, 1);
        let arms: Vec<Event> = std::iter::from_fn(|| nic.poll_event()).collect();
        assert_eq!(
            arms,
            vec![Event::ArmTimer {
                qp: 0,
                at: 2 * rto + t
            }]
        );
    }

    /// Only the QPs with data are visited, in round-robin order, however
    /// many QPs exist.
    #[test]
    fn ten_thousand_qps_round_robin_over_active_ones() {
        let mut nic = nic_with_qps(10_000);
        for qp in [9_999, 17, 4_242] {
            write(&mut nic, 0, qp, 3000);
        }
        let ser = serialization(1048, 100_000_000_000);
        let mut order = vec![];
        let mut t = 0;
        loop {
            match nic.poll_transmit(t, 0) {
                Transmit::Packet(p) => {
                    order.push(p.src_qp);
                    t += ser;
                }
                Transmit::At(a) => t = a,
                Transmit::Idle => break,
            }
        }
        assert_eq!(
            order,
            vec![9_999, 17, 4_242, 9_999, 17, 4_242, 9_999, 17, 4_242]
        );
    }

    #[test]
    fn read_responses_share_the_qp_with_requests() {
        let mut nic = nic_with_qps(1);
        write(&mut nic, 0, 0, 3000);
        let mut rq = incoming(0, 0, true, true);
        rq.verb = Verb::Read;
        rq.payload = 0;
        rq.msg_len = 3000;
        nic.on_packet(0, &rq);
        let mut kinds = vec![];
        let mut t = 0;
        loop {
            match nic.poll_transmit(t, 0) {
                Transmit::Packet(p) => {
                    kinds.push(p.kind);
                    t += serialization(p.wire as u64, 100_000_000_000);
                }
                Transmit::At(a) => t = a,
                Transmit::Idle => break,
            }
        }
        use PacketKind::*;
        assert_eq!(
            kinds,
            vec![
                Request,
                ReadResponse,
                Request,
                ReadResponse,
                Request,
                ReadResponse
            ]
        );
    }

    #[test]
    #[should_panic(expected = "invalid NicConfig")]
    fn invalid_config_panics_with_a_message() {
        Nic::new(NicConfig {
            mtu: 0,
            ..NicConfig::default()
        });
    }
}
