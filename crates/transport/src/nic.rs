//! The NIC ([`Nic`]): the QP table (a `Vec` indexed by `QpId`), packet
//! demultiplexing to each QP's engine (through its ordering layer, when
//! the configuration names one: `crate::order`), the control-packet FIFO and the data
//! scheduler (control first; then round-robin over QPs that have data and
//! whose rate limiter allows them to send), and the timer table behind
//! `poll_timeout` / `handle_timeout`, on which the control packets it
//! holds (`crate::held`: CNPs delayed, ACKs coalesced by time) are
//! released too. Its types are in `crate::api`.
//! HPCC's telemetry echo is the receive side's too: the hop records an
//! environment gives with each arriving packet ([`Nic::int_received`])
//! wait, for a data packet, until the ACK or NACK that answers it leaves
//! ([`Nic::int_sent`]: the records go back beside it); an ACK's go to its
//! QP's congestion control.
//!
//! Nothing a caller passes in panics it: a configuration mistake is a
//! [`ConfigError`], a call about a QP that does not exist (or a work
//! request its engine cannot carry) a [`QpError`], and a packet it cannot
//! use is counted (`NicStats::malformed_dropped`) and dropped.
//!
//! May use every module of the crate except `driver`; none uses it back.

use std::collections::VecDeque;

use crate::api::{
    ConfigError, Event, InitialPsns, NicConfig, NicStats, QpConfig, QpError, QpId, SendOptions,
    Transmit, WorkRequest,
};
use crate::cc::{Cc, CcConfig};
use crate::engine::Engine;
use crate::held::Held;
use crate::int::{IntEcho, IntStack};
use crate::memory::{Dma, Memory};
use crate::order::{Layer, OrderMemory, OrderingKind};
use crate::packet::{Packet, PacketKind};
use crate::qp::{LineRate, Qp};
use crate::rc::{Ctx, RecvWqe};
use crate::reorder::QpReorder;
use crate::sched::{SchedState, Scheduler};
use crate::timers::Timers;
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
    /// No ordering layer and nothing held: a packet goes straight to its
    /// QP (the one test the receive path makes for both).
    plain: bool,
    stats: NicStats,
    /// The one timer channel (see [`Nic::poll_timeout`]).
    timers: Timers,
    /// Each QP's reordering counters, indexed as `qps` (apart from the QP:
    /// only out-of-order and duplicate packets write them).
    reorder: Vec<QpReorder>,
    /// Each QP's ordering layer, indexed as `qps`, and the layer's
    /// NIC-wide part: read only when `cfg.ordering` names one.
    order: Layer,
    /// The in-band telemetry of the packets delivered next (HPCC's, on
    /// ACKs; see [`Nic::int_received`]).
    rx_int: IntStack,
    /// The telemetry of data packets received and not yet answered
    /// (empty unless the environment gives it).
    echo: IntEcho,
    /// Control packets held before they leave (none unless
    /// `cfg.ack_interval` or `cfg.cnp_delay` is set).
    held: Held,
}

impl Nic {
    /// A NIC without QPs; refuses an invalid configuration (see
    /// [`NicConfig::validate`]).
    pub fn new(cfg: NicConfig) -> Result<Nic, ConfigError> {
        cfg.validate()?;
        let order = Layer::new(cfg.ordering);
        let held = Held::new(cfg.ack_interval, cfg.cnp_delay);
        Ok(Nic {
            plain: cfg.ordering == OrderingKind::None && !held.active,
            held,
            line: LineRate::new(cfg.line_rate_bps),
            cfg,
            qps: Vec::new(),
            ctrl: VecDeque::new(),
            events: VecDeque::new(),
            sched: Scheduler::default(),
            stats: NicStats::default(),
            timers: Timers::default(),
            reorder: Vec::new(),
            order,
            now: 0,
            rx_int: IntStack::default(),
            echo: IntEcho::default(),
        })
    }

    pub fn config(&self) -> &NicConfig {
        &self.cfg
    }

    /// Creates a QP running the NIC's engine and congestion control. QP
    /// numbers are 0, 1, 2, ... in creation order, never reused.
    pub fn create_qp(&mut self, cfg: QpConfig) -> Result<QpId, QpError> {
        let (cc, rel) = (self.cfg.cc, self.cfg.engine);
        self.create_qp_with(cfg, cc, rel)
    }

    /// Creates a QP whose PSNs start at `psns` (RC's `sq_psn` and
    /// `rq_psn`) instead of 0, running the NIC's congestion control and
    /// engine.
    pub fn create_qp_with_psns(
        &mut self,
        cfg: QpConfig,
        psns: InitialPsns,
    ) -> Result<QpId, QpError> {
        let (cc, engine) = (self.cfg.cc, self.cfg.engine);
        self.create(cfg, cc, engine, psns)
    }

    /// Creates a QP with its own congestion control and engine; refuses
    /// an invalid one.
    pub fn create_qp_with(
        &mut self,
        cfg: QpConfig,
        cc: CcConfig,
        engine: Engine,
    ) -> Result<QpId, QpError> {
        self.create(cfg, cc, engine, InitialPsns::default())
    }

    fn create(
        &mut self,
        cfg: QpConfig,
        cc: CcConfig,
        engine: Engine,
        psns: InitialPsns,
    ) -> Result<QpId, QpError> {
        self.check_qp(&cc, &engine)?;
        let id = QpId::try_from(self.qps.len()).map_err(|_| QpError::Exhausted)?;
        let state = Cc::new(&cc, self.cfg.line_rate_bps, self.cfg.mtu);
        self.qps.push(Qp::new(
            id,
            cfg,
            psns,
            engine,
            &self.cfg,
            state,
            cc.notification(),
        ));
        self.reorder.push(QpReorder::default());
        self.order.push_qp();
        Ok(id)
    }

    /// Refuses a QP's invalid congestion control or engine.
    fn check_qp(&self, cc: &CcConfig, engine: &Engine) -> Result<(), QpError> {
        let invalid = |e| QpError::Config(ConfigError::new(e));
        cc.validate().map_err(invalid)?;
        engine.validate().map_err(invalid)?;
        cc.check_engine(engine).map_err(invalid)?;
        self.cfg.check_ordering(engine).map_err(invalid)
    }

    /// Reserves the next QP number for a QP whose settings are known only
    /// later (a daemon's link names its QPs to the other daemon before
    /// that one answers with its own, while other QPs may be made): until
    /// [`Nic::create_reserved_qp`] it is a tombstone, dropping what
    /// arrives for it and refusing every call, as a destroyed QP.
    pub fn reserve_qp(&mut self) -> Result<QpId, QpError> {
        let id = QpId::try_from(self.qps.len()).map_err(|_| QpError::Exhausted)?;
        let none = QpConfig {
            peer_host: u32::MAX,
            peer_qp: 0,
            sport: 0,
        };
        self.qps.push(Qp::tombstone(id, none));
        self.reorder.push(QpReorder::default());
        self.order.push_qp();
        Ok(id)
    }

    /// Makes the QP `qp` reserved by [`Nic::reserve_qp`], as
    /// [`Nic::create_qp_with_psns`] would have. The caller names only a
    /// number it reserved and has not made yet: a destroyed QP's number
    /// must stay dead, which the NIC cannot tell from a reserved one.
    pub fn create_reserved_qp(
        &mut self,
        qp: QpId,
        cfg: QpConfig,
        psns: InitialPsns,
    ) -> Result<(), QpError> {
        let (cc, engine) = (self.cfg.cc, self.cfg.engine);
        self.check_qp(&cc, &engine)?;
        let slot = self
            .qps
            .get_mut(qp as usize)
            .filter(|q| q.destroyed)
            .ok_or(QpError::Unknown(qp))?;
        let state = Cc::new(&cc, self.cfg.line_rate_bps, self.cfg.mtu);
        *slot = Qp::new(qp, cfg, psns, engine, &self.cfg, state, cc.notification());
        self.reorder[qp as usize] = QpReorder::default();
        Ok(())
    }

    /// Points `qp` at its peer's QP `peer_qp`: the second half of
    /// reserve-then-connect, for a QP created (with any `peer_qp`) before
    /// its peer's number was known, as verbs' INIT then RTR. Call it
    /// before anything is posted on or sent to the QP: the number is read
    /// on every packet, so packets already made keep the old one.
    pub fn connect_qp(&mut self, qp: QpId, peer_qp: QpId) -> Result<(), QpError> {
        live_mut(&mut self.qps, qp)?.cfg.peer_qp = peer_qp;
        Ok(())
    }

    /// Destroys `qp`: its engine's state and queued work (no completion
    /// is reported for work not done), its congestion control, its
    /// pending timers, its place in the scheduler and the control packets
    /// it has queued are released. Completions it already reported stay
    /// in [`Nic::poll_event`]'s queue.
    ///
    /// QP numbers are not reused: the slot keeps a tombstone (the QP's
    /// fixed [`Nic::QP_BYTES`], nothing boxed), so a later packet for it
    /// is counted in `malformed_dropped` and dropped, and a later call
    /// about it is refused with [`QpError::Destroyed`].
    pub fn destroy_qp(&mut self, qp: QpId) -> Result<(), QpError> {
        let q = live_mut(&mut self.qps, qp)?;
        *q = Qp::tombstone(qp, q.cfg);
        self.order.destroy(qp as usize);
        self.sched.remove(qp);
        self.timers.remove(qp);
        self.ctrl.retain(|p| p.src_qp != qp);
        self.held.forget(qp);
        self.echo.forget(qp);
        Ok(())
    }

    /// Posts a work request on `qp`'s send queue.
    pub fn post_send(&mut self, now: Time, qp: QpId, wr: WorkRequest) -> Result<(), QpError> {
        self.post_send_with(now, qp, wr, SendOptions::default())
    }

    /// [`Nic::post_send`] with per-operation flags (MP-RDMA's synchronise).
    /// Refuses a verb the QP's engine does not carry and a message longer
    /// than it can count.
    pub fn post_send_with(
        &mut self,
        now: Time,
        qp: QpId,
        wr: WorkRequest,
        opts: SendOptions,
    ) -> Result<(), QpError> {
        let mtu = self.cfg.mtu;
        let q = live_mut(&mut self.qps, qp)?;
        q.check(&wr, mtu)?;
        self.now = self.now.max(now);
        q.post(now, wr, opts.sync, mtu);
        if q.engine_cfg.honours_sync() {
            self.stats.mp_sync_messages += u64::from(opts.sync);
            // A synchronise gate may need a timer.
            q.sync_timer(&mut self.timers);
        }
        self.wake(qp as usize, now);
        Ok(())
    }

    /// Posts a receive WQE (for SENDs and WRITEs with immediate) of `len`
    /// bytes at address 0 (for callers that move lengths only). A SEND
    /// longer than its receive buffer is not placed (`access_errors`).
    pub fn post_recv(&mut self, qp: QpId, wr_id: u64, len: u64) -> Result<(), QpError> {
        self.post_recv_at(qp, wr_id, 0, len)
    }

    /// Posts a receive WQE whose buffer is `len` bytes at `addr`.
    pub fn post_recv_at(
        &mut self,
        qp: QpId,
        wr_id: u64,
        addr: u64,
        len: u64,
    ) -> Result<(), QpError> {
        live_mut(&mut self.qps, qp)?.post_recv(RecvWqe { wr_id, addr, len });
        Ok(())
    }

    /// The hop records `pkt` arrived with: an environment whose switches
    /// stamp HPCC's telemetry (the simulator) gives each packet's just
    /// before delivering it (`on_packet`). A data packet's wait, by its
    /// QP, for the ACK or NACK that answers it ([`Nic::int_sent`]); any
    /// other packet's are what the packets delivered from now on show
    /// their congestion control (an ACK's, for HPCC). The records travel
    /// beside the packet, not in it, so that packets without them do not
    /// carry their 48 bytes.
    #[inline]
    pub fn int_received(&mut self, pkt: &Packet, int: IntStack) {
        if !pkt.is_data() {
            self.rx_int = int;
        } else if (pkt.dst_qp as usize) < self.qps.len() {
            // A packet for no QP is never answered: it keeps nothing.
            self.echo.arrived(pkt.dst_qp, pkt.sent_at, int);
        }
    }

    /// The hop records that go beside `pkt`, the packet
    /// [`Nic::poll_transmit`] just returned: for an ACK or NACK, those of
    /// the data packet it answers (the one whose send time it echoes; the
    /// records of packets answered by none before it are dropped), given
    /// by [`Nic::int_received`]; None for other packets or when none wait.
    /// An environment that gives records asks for each packet it sends,
    /// in order, before its next input.
    #[inline]
    pub fn int_sent(&mut self, pkt: &Packet) -> Option<IntStack> {
        if !matches!(pkt.kind, PacketKind::Ack | PacketKind::Nack) {
            return None;
        }
        self.echo.answer(pkt.src_qp, pkt.sent_at)
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
            && self.qps.get(qi).is_some_and(|q| {
                q.cfg.peer_host == pkt.src && q.cfg.peer_qp == pkt.src_qp && !q.destroyed
            });
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
            rx: &mut self.reorder[qi],
            int: &self.rx_int,
        };
        // One predictable branch without an ordering layer or anything
        // held.
        let wake = if self.plain {
            qp.on_packet(&mut cx, pkt)
        } else {
            let parts = (&mut self.order, &mut self.held, &mut self.timers);
            layered_packet(parts, qi, qp, &mut cx, pkt)
        };
        qp.sync_timer(&mut self.timers);
        if wake {
            self.wake(qi, now);
        }
    }

    /// The earliest time [`Nic::handle_timeout`] has something to do (None:
    /// no timer armed). Only an input (a post, a packet, a transmit, a
    /// timeout) moves it: ask again after each.
    #[inline]
    pub fn poll_timeout(&self) -> Option<Time> {
        self.timers.next()
    }

    /// Runs the earliest timer due at `now`, if any: a QP's retransmission
    /// timeout or, for MP-RDMA, its burst timer, synchronise gate or hole
    /// resend (a QP whose deadline moved later re-arms for it), after
    /// releasing the held control packets due (whose entries name the QP
    /// that made them, whose own timers then find nothing due). Harmless
    /// when early or repeated.
    ///
    /// One timer per call: when several are due at once, [`Nic::poll_timeout`]
    /// stays at or before `now`, and each is an input of its own, after
    /// which the driver polls transmit and events as after any input (see
    /// `crate::driver`). A driver that calls this whenever `poll_timeout`
    /// has passed runs them all. (Run back to back, without a transmit in
    /// between, an MP-RDMA QP's second timer at the instant its
    /// synchronise gate opened would close the gate again.)
    pub fn handle_timeout(&mut self, now: Time) {
        self.now = self.now.max(now);
        let Some(qp) = self.timers.pop_due(now) else {
            return;
        };
        self.held.release(now, &mut self.ctrl);
        let qi = qp as usize;
        let Some(q) = self.qps.get_mut(qi) else {
            return;
        };
        if q.armed <= now {
            q.armed = Time::MAX;
        }
        self.stats.timeouts += q.on_timer(now);
        q.sync_timer(&mut self.timers);
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
    /// ask [`Nic::poll_timeout`] after it too (it never queues an event).
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

    /// Whether a QP has data to send now or once its rate limiter allows
    /// (what a caller that asked with the data class paused has waiting).
    #[inline]
    pub fn data_scheduled(&self) -> bool {
        !self.sched.is_empty()
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

    /// Inlined in its callers (the fabric's host `kick`): a call cost
    /// about 1% instructions a hop once the fabric's window loop grew.
    #[inline(always)]
    fn poll_transmit_dma(&mut self, now: Time, paused: u8, dma: &mut Dma) -> Transmit {
        self.now = self.now.max(now);
        if !self.ctrl.is_empty()
            && (paused & (1u8 << self.cfg.ctrl_priority) == 0 || self.cfg.ctrl_ignores_pause)
        {
            if let Some(p) = self.ctrl.pop_front() {
                self.stats.ctrl_packets_sent += 1;
                return Transmit::Packet(p);
            }
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
            // One predictable branch without an ordering layer (the
            // second tests the same register).
            let layered = self.cfg.ordering != OrderingKind::None;
            // Eunomia's sender hold: the ACK that releases the packet
            // wakes the QP.
            if layered && self.order.holds(qi as usize, q, now) {
                continue;
            }
            let mut pkt = q.next_packet(now, &self.cfg, &mut self.stats, dma);
            if layered {
                self.order
                    .on_send(qi as usize, q, &mut pkt, now, &mut self.stats);
            }
            self.stats.data_packets_sent += 1;
            self.stats.data_bytes_sent += pkt.payload as u64;
            self.stats.data_wire_bytes_sent += pkt.wire as u64;
            q.sync_timer(&mut self.timers);
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

    /// Number of QPs created, destroyed ones included (their numbers are
    /// not reused).
    pub fn num_qps(&self) -> usize {
        self.qps.len()
    }

    /// The QP's sending rate at `now` (not before the latest time seen).
    pub fn qp_rate_bps_at(&self, qp: QpId, now: Time) -> Result<u64, QpError> {
        Ok(live(&self.qps, qp)?.cc.rate_at(now, self.cfg.line_rate_bps))
    }

    /// The QP's congestion-control state (e.g. DCQCN's alpha), as of its
    /// last update.
    pub fn qp_cc(&self, qp: QpId) -> Result<&Cc, QpError> {
        Ok(&live(&self.qps, qp)?.cc)
    }

    /// What `qp`'s receiving side saw of reordering (kept after the QP is
    /// destroyed).
    pub fn qp_reorder(&self, qp: QpId) -> Result<QpReorder, QpError> {
        self.reorder
            .get(qp as usize)
            .copied()
            .ok_or(QpError::Unknown(qp))
    }

    /// NIC memory of the ordering layer's bitmaps and their metadata
    /// (None without a bitmap layer: `ordering` "none" or "ideal").
    pub fn order_memory(&self) -> Option<OrderMemory> {
        self.order.memory()
    }

    /// Bits of reordering bitmap `qp` holds now and the most it held at
    /// once (0 without a bitmap layer).
    pub fn qp_bitmap_bits(&self, qp: QpId) -> Result<(u32, u32), QpError> {
        live(&self.qps, qp)?;
        Ok(self.order.qp_bitmap_bits(qp as usize))
    }

    /// The engine `qp` runs.
    pub fn qp_engine(&self, qp: QpId) -> Result<Engine, QpError> {
        Ok(live(&self.qps, qp)?.engine_cfg)
    }

    /// True if no QP has anything to send or outstanding and no control
    /// packet or event is queued.
    pub fn is_quiescent(&self) -> bool {
        self.ctrl.is_empty()
            && self.held.is_empty()
            && self.events.is_empty()
            && self.qps.iter().all(|q| !q.has_data() && !q.outstanding())
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

/// [`Nic::on_packet`]'s input to QP `qi` through what sits between the
/// NIC and the QP: the ordering layer, if any, then the control packets
/// it made, some of which the NIC may hold (`crate::held`). Out of line,
/// so that the plain path, which inlines the QP's, stays as it was.
#[inline(never)]
fn layered_packet(
    (order, held, timers): (&mut Layer, &mut Held, &mut Timers),
    qi: usize,
    qp: &mut Qp,
    cx: &mut Ctx,
    pkt: &Packet,
) -> bool {
    let made_from = cx.ctrl.len();
    let wake = if cx.cfg.ordering == OrderingKind::None {
        qp.on_packet(cx, pkt)
    } else {
        order.on_packet(qi, qp, cx, pkt)
    };
    if held.active {
        let how = (qp.engine_cfg.acks_each_packet(), pkt.last && pkt.is_data());
        held.take(cx.ctrl, made_from, cx.now, how, timers);
    }
    wake
}

/// The QP `qp`, or why there is none.
fn live(qps: &[Qp], qp: QpId) -> Result<&Qp, QpError> {
    match qps.get(qp as usize) {
        None => Err(QpError::Unknown(qp)),
        Some(q) if q.destroyed => Err(QpError::Destroyed(qp)),
        Some(q) => Ok(q),
    }
}

/// [`live`], mutable.
fn live_mut(qps: &mut [Qp], qp: QpId) -> Result<&mut Qp, QpError> {
    match qps.get_mut(qp as usize) {
        None => Err(QpError::Unknown(qp)),
        Some(q) if q.destroyed => Err(QpError::Destroyed(qp)),
        Some(q) => Ok(q),
    }
}

#[cfg(test)]
mod tests;
