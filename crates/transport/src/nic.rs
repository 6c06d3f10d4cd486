//! The NIC ([`Nic`]): the QP table (a `Vec` indexed by `QpId`), packet
//! demultiplexing to each QP's engine, the control-packet FIFO and the data
//! scheduler (control first; then round-robin over QPs that have data and
//! whose rate limiter allows them to send). Its types are in `crate::api`.
//!
//! May use every module of the crate except `driver`; none uses it back.
//!
//! API CONTRACT: the simulator host is written against these signatures;
//! items may be added, not renamed or removed.

use std::collections::VecDeque;

use crate::api::{
    Event, InitialPsns, NicConfig, NicStats, QpConfig, QpId, SendOptions, Transmit, WorkRequest,
};
use crate::cc::{Cc, CcConfig};
use crate::engine::Engine;
use crate::memory::{Dma, Memory};
use crate::packet::Packet;
use crate::qp::{LineRate, Qp};
use crate::rc::{Ctx, RecvWqe};
use crate::sched::{SchedState, Scheduler};
use engine::Time;

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

    /// Creates a QP whose PSNs start at `psns` (RC's `sq_psn` and
    /// `rq_psn`) instead of 0, running the NIC's congestion control and
    /// engine.
    pub fn create_qp_with_psns(&mut self, cfg: QpConfig, psns: InitialPsns) -> QpId {
        let (cc, rel) = (self.cfg.cc, self.cfg.reliability);
        self.create(cfg, cc, rel, psns)
    }

    /// Creates a QP with its own congestion control and reliability scheme.
    /// Panics if either is invalid.
    pub fn create_qp_with(&mut self, cfg: QpConfig, cc: CcConfig, rel: Engine) -> QpId {
        self.create(cfg, cc, rel, InitialPsns::default())
    }

    fn create(&mut self, cfg: QpConfig, cc: CcConfig, rel: Engine, psns: InitialPsns) -> QpId {
        if let Err(e) = cc.validate() {
            panic!("invalid CcConfig: {e}");
        }
        if let Err(e) = rel.validate() {
            panic!("invalid Engine: {e}");
        }
        let id = QpId::try_from(self.qps.len()).expect("too many QPs");
        let state = Cc::new(&cc, self.cfg.line_rate_bps);
        self.qps
            .push(Qp::new(id, cfg, psns, rel, state, cc.notification()));
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
        if q.engine.is_mprdma() {
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
        let qp = &mut self.qps[qi];
        let mut cx = Ctx {
            now,
            qp: qp.id,
            peer: qp.cfg,
            cfg: &self.cfg,
            stats: &mut self.stats,
            events: &mut self.events,
            ctrl: &mut self.ctrl,
            dma,
        };
        let wake = qp.on_packet(&mut cx, pkt);
        qp.sync_timer(&mut self.events);
        if wake {
            self.wake(qi, now);
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

    /// The QP's sending rate at `now` (not before the latest time seen).
    pub fn qp_rate_bps_at(&self, qp: QpId, now: Time) -> u64 {
        self.qp(qp).cc.rate_at(now, self.cfg.line_rate_bps)
    }

    /// The QP's congestion-control state (e.g. DCQCN's alpha), as of its
    /// last update.
    pub fn qp_cc(&self, qp: QpId) -> &Cc {
        &self.qp(qp).cc
    }

    /// The engine `qp` runs.
    pub fn qp_engine(&self, qp: QpId) -> Engine {
        self.qp(qp).engine_cfg
    }

    /// [`Nic::qp_engine`].
    // TODO(merge): rename users (experiment's report.rs) to `qp_engine`.
    pub fn qp_reliability(&self, qp: QpId) -> Engine {
        self.qp_engine(qp)
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
mod tests;
