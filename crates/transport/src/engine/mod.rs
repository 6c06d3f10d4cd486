//! The transport engines of a QP and the one place that dispatches to them.
//!
//! - [`Engine`] (in `config`): the per-QP choice of engine and its
//!   configuration, as the API and scenario files name it.
//! - [`EngineState`]: the per-QP runtime state of the chosen engine, one
//!   variant per engine folder ([`gbn`], [`irn`], [`mprdma`], [`uet`]).
//! - [`EngineOps`]: what the QP asks of an engine; [`dispatch!`] is the one
//!   match over the variants.
//!
//! - [`EngineKind`] (in `names`): the one table of engine names.
//!
//! Adding an engine: a folder implementing [`EngineOps`], its variant in
//! [`Engine`] (with its configuration and capabilities) and in
//! [`EngineState`], its row in `names`, its line in `dispatch!` and in
//! [`EngineState::new`].
//!
//! May use `crate::api`, `crate::rc`, `crate::packet`, `crate::psn`,
//! `crate::memory` and the engine folders; never the QP (`crate::qp`) or
//! the NIC.

pub mod config;
pub(crate) mod gbn;
pub mod irn;
pub mod mprdma;
pub mod names;
pub mod uet;

pub use config::{Engine, StateBytes};
pub use names::EngineKind;

use crate::api::{InitialPsns, NicConfig, NicStats, QpConfig, QpId, WorkRequest};
use crate::memory::Dma;
use crate::packet::{Packet, PacketKind};
use crate::psn::Psn;
use crate::rc::{halves, Conn, Ctx, RecvWqe};
use engine::Time;

/// What the QP asks of its engine.
pub(crate) trait EngineOps {
    /// The requester side has something to (re)transmit now.
    fn req_has_data(&self) -> bool;
    /// The responder side has READ responses to send.
    fn resp_has_data(&self) -> bool;
    /// Posts a work request; `sync` is MP-RDMA's synchronise flag (the
    /// other engines deliver in order anyway).
    fn post(&mut self, now: Time, wr: WorkRequest, sync: bool, mtu: u32);
    fn post_recv(&mut self, wqe: RecvWqe);
    /// Sent but not done (requests, or READ responses not acknowledged).
    fn outstanding(&self) -> bool;
    /// Request PSNs sent and not acknowledged (a window's bytes in
    /// flight, in packets). MP-RDMA, which keeps its own window and runs
    /// no control that asks, answers 0.
    fn in_flight(&self) -> u32;
    /// PSNs a new message may still take (see `crate::rc::psn_room`).
    fn psn_room(&self) -> u32;
    /// The earliest retransmission deadline.
    fn deadline(&self) -> Option<Time>;
    /// The timer fired at `now`: the number of retransmission timeouts
    /// that expired.
    fn on_timer(&mut self, now: Time) -> u64;
    /// The next data packet (`has_data` must be true): requester data or a
    /// READ response, alternating through `resp_turn` when both wait. The
    /// caller fills the addresses, and the source port unless
    /// [`EngineOps::chooses_sport`].
    fn next_packet(
        &mut self,
        resp_turn: &mut bool,
        now: Time,
        cfg: &NicConfig,
        stats: &mut NicStats,
        dma: &mut Dma,
    ) -> Packet;
    /// The engine picks each packet's UDP source port itself (multipath).
    fn chooses_sport(&self) -> bool {
        false
    }
    /// Handles one packet for the QP; true if it may have something new to
    /// send.
    fn on_packet(&mut self, cx: &mut Ctx, conn: &mut Conn, pkt: &Packet) -> bool;
    /// Eunomia's SACK (`sack`) or NACK (`crate::order::eunomia`) at the
    /// requester; true if the QP may have something to send. An engine
    /// with a selective-repeat sender (IRN) marks the SACKed PSN received
    /// without recovery, or recovers everything unSACKed through the
    /// NACKed one. By default (go-back-N) the SACK is ignored and the NACK
    /// is a plain NACK of the gap (the ordering layer's flags cleared).
    fn on_order_ack(&mut self, cx: &mut Ctx, conn: &mut Conn, pkt: &Packet, sack: bool) -> bool {
        if sack {
            return false;
        }
        let plain = Packet {
            mp_flags: 0,
            sack_psn: pkt.psn,
            ..*pkt
        };
        self.on_packet(cx, conn, &plain)
    }
    /// The PSN of the next request packet the responder takes in order
    /// (for an ordering layer, `crate::order`); None if the engine orders
    /// its own packets.
    fn expected_request_psn(&self) -> Option<Psn>;
    /// When the requester's next packet ends a WRITE without immediate
    /// that nothing posted follows (the connection's last packet, for
    /// Eunomia's sender hold, `crate::order`): its PSN and the PSN below
    /// which every request is acknowledged. None otherwise, and for an
    /// engine that orders its own packets.
    fn last_write(&self) -> Option<(Psn, Psn)>;
}

/// The per-QP runtime state of its engine.
///
/// `repr(u8)` gives the variant a tag byte of its own: the NIC matches on
/// the engine several times per packet, and decoding a tag hidden in a
/// niche of the requester's fields took six instructions each time (the
/// tag costs 8 bytes).
#[derive(Debug)]
#[repr(u8)]
// Go-back-N, the common case at scale, inline; the larger engines boxed.
#[allow(clippy::large_enum_variant)]
pub(crate) enum EngineState {
    GoBackN(gbn::GoBackN),
    /// Boxed, as MP-RDMA's: go-back-N QPs, the common case at scale, stay
    /// small (IRN's halves are 440 bytes, go-back-N's 256).
    Irn(Box<irn::IrnQp>),
    /// Both halves in one (boxed, as IRN's).
    MpRdma(Box<mprdma::MpQp>),
    /// IRN's halves under UET's acknowledgements (boxed, as IRN's).
    Uet(Box<uet::UetQp>),
}

/// The one match over the engines: `dispatch!(state, e => e.method(..))`.
macro_rules! dispatch {
    ($state:expr, $e:ident => $body:expr) => {
        match $state {
            EngineState::GoBackN($e) => $body,
            EngineState::Irn($e) => $body,
            EngineState::MpRdma($e) => $body,
            EngineState::Uet($e) => $body,
        }
    };
}

impl EngineState {
    /// The state of a new QP `id` running `engine` toward `peer`, its PSNs
    /// starting at `psns`, on the NIC configured by `nic`.
    pub fn new(
        engine: Engine,
        id: QpId,
        peer: &QpConfig,
        psns: InitialPsns,
        nic: &NicConfig,
    ) -> EngineState {
        let (sq, rq) = (Psn::initial(psns.sq_psn), Psn::initial(psns.rq_psn));
        match engine {
            Engine::GoBackN => EngineState::GoBackN(gbn::GoBackN::new(sq, rq)),
            Engine::Irn(c) => EngineState::Irn(Box::new(irn::IrnQp::new(c, sq, rq))),
            Engine::MpRdma(c) => {
                // Seeded per QP: its random VPs and probes.
                let seed = (peer.peer_host as u64) << 32 | id as u64;
                let mp = mprdma::MpQp::new(c, peer.sport, seed, sq, rq);
                EngineState::MpRdma(Box::new(mp))
            }
            Engine::Uet(c) => {
                // Seeded per QP, as MP-RDMA's: its random entropy values.
                let seed = (peer.peer_host as u64) << 32 | id as u64;
                let qp = uet::UetQp::new(c, peer.sport, seed, sq, rq, nic);
                EngineState::Uet(Box::new(qp))
            }
        }
    }

    /// Bytes the state boxes outside the QP.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        match self {
            EngineState::GoBackN(_) => 0,
            EngineState::Irn(_) => size_of::<irn::IrnQp>(),
            EngineState::MpRdma(_) => size_of::<mprdma::MpQp>(),
            EngineState::Uet(_) => size_of::<uet::UetQp>(),
        }
    }

    #[inline(always)]
    pub fn req_has_data(&self) -> bool {
        dispatch!(self, e => e.req_has_data())
    }

    #[inline(always)]
    pub fn resp_has_data(&self) -> bool {
        dispatch!(self, e => e.resp_has_data())
    }

    #[inline]
    pub fn post(&mut self, now: Time, wr: WorkRequest, sync: bool, mtu: u32) {
        dispatch!(self, e => e.post(now, wr, sync, mtu))
    }

    pub fn post_recv(&mut self, wqe: RecvWqe) {
        dispatch!(self, e => e.post_recv(wqe))
    }

    pub fn outstanding(&self) -> bool {
        dispatch!(self, e => e.outstanding())
    }

    pub fn psn_room(&self) -> u32 {
        dispatch!(self, e => e.psn_room())
    }

    #[inline]
    pub fn in_flight(&self) -> u32 {
        dispatch!(self, e => e.in_flight())
    }

    #[inline(always)]
    pub fn deadline(&self) -> Option<Time> {
        dispatch!(self, e => e.deadline())
    }

    pub fn on_timer(&mut self, now: Time) -> u64 {
        dispatch!(self, e => e.on_timer(now))
    }

    /// The next data packet, its source port `sport` unless the engine
    /// chooses it.
    #[inline(always)]
    pub fn next_packet(
        &mut self,
        resp_turn: &mut bool,
        sport: u16,
        cx: (Time, &NicConfig, &mut NicStats),
        dma: &mut Dma,
    ) -> Packet {
        let (now, cfg, stats) = cx;
        dispatch!(self, e => {
            let mut p = e.next_packet(resp_turn, now, cfg, stats, dma);
            if !e.chooses_sport() {
                p.sport = sport;
            }
            p
        })
    }

    #[inline(always)]
    pub fn on_packet(&mut self, cx: &mut Ctx, conn: &mut Conn, pkt: &Packet) -> bool {
        dispatch!(self, e => e.on_packet(cx, conn, pkt))
    }

    /// [`EngineOps::on_order_ack`].
    pub fn on_order_ack(
        &mut self,
        cx: &mut Ctx,
        conn: &mut Conn,
        pkt: &Packet,
        sack: bool,
    ) -> bool {
        dispatch!(self, e => e.on_order_ack(cx, conn, pkt, sack))
    }

    #[inline]
    pub fn expected_request_psn(&self) -> Option<Psn> {
        dispatch!(self, e => e.expected_request_psn())
    }

    pub fn last_write(&self) -> Option<(Psn, Psn)> {
        dispatch!(self, e => e.last_write())
    }
}

/// Requester data or a READ response, alternating when both wait: the
/// choice for engines made of a requester and a responder half.
macro_rules! alternate {
    ($req:expr, $resp:expr, $turn:expr, $now:expr, $cfg:expr, $stats:expr, $dma:expr) => {{
        let use_resp = $resp.has_data() && (*$turn || !$req.has_data());
        *$turn = !use_resp;
        if use_resp {
            $resp.next_packet($now, $cfg, $stats, $dma)
        } else {
            $req.next_packet($now, $cfg, $stats, $dma)
        }
    }};
}

impl EngineOps for gbn::GoBackN {
    #[inline(always)]
    fn req_has_data(&self) -> bool {
        self.req.has_data()
    }
    #[inline(always)]
    fn resp_has_data(&self) -> bool {
        self.resp.has_data()
    }
    #[inline]
    fn post(&mut self, _now: Time, wr: WorkRequest, _sync: bool, mtu: u32) {
        self.req.post(wr, mtu)
    }
    fn post_recv(&mut self, wqe: RecvWqe) {
        self.resp.post_recv(wqe)
    }
    fn outstanding(&self) -> bool {
        self.req.outstanding()
    }
    #[inline]
    fn in_flight(&self) -> u32 {
        let (una, nxt) = self.req.span();
        nxt.since(una)
    }
    fn psn_room(&self) -> u32 {
        self.req.psn_room()
    }
    #[inline(always)]
    fn deadline(&self) -> Option<Time> {
        self.req.rto_deadline
    }
    fn on_timer(&mut self, now: Time) -> u64 {
        self.req.on_timer(now) as u64
    }
    #[inline(always)]
    fn next_packet(
        &mut self,
        resp_turn: &mut bool,
        now: Time,
        cfg: &NicConfig,
        stats: &mut NicStats,
        dma: &mut Dma,
    ) -> Packet {
        alternate!(self.req, self.resp, resp_turn, now, cfg, stats, dma)
    }
    #[inline(always)]
    fn on_packet(&mut self, cx: &mut Ctx, conn: &mut Conn, pkt: &Packet) -> bool {
        halves::on_packet(self, cx, conn, pkt)
    }
    fn expected_request_psn(&self) -> Option<Psn> {
        Some(self.resp.expected())
    }
    fn last_write(&self) -> Option<(Psn, Psn)> {
        self.req.last_write()
    }
}

impl EngineOps for irn::IrnQp {
    #[inline(always)]
    fn req_has_data(&self) -> bool {
        self.req.has_data()
    }
    #[inline(always)]
    fn resp_has_data(&self) -> bool {
        self.resp.has_data()
    }
    #[inline]
    fn post(&mut self, _now: Time, wr: WorkRequest, _sync: bool, mtu: u32) {
        self.req.post(wr, mtu)
    }
    fn post_recv(&mut self, wqe: RecvWqe) {
        self.resp.post_recv(wqe)
    }
    fn psn_room(&self) -> u32 {
        self.req.psn_room()
    }
    fn outstanding(&self) -> bool {
        self.req.win.outstanding() || self.resp.win.outstanding()
    }
    #[inline]
    fn in_flight(&self) -> u32 {
        self.req.win.nxt.since(self.req.win.una)
    }
    #[inline(always)]
    fn deadline(&self) -> Option<Time> {
        match (self.req.win.deadline, self.resp.win.deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
    fn on_timer(&mut self, now: Time) -> u64 {
        self.req.on_timer(now) as u64 + self.resp.on_timer(now) as u64
    }
    #[inline(always)]
    fn next_packet(
        &mut self,
        resp_turn: &mut bool,
        now: Time,
        cfg: &NicConfig,
        stats: &mut NicStats,
        dma: &mut Dma,
    ) -> Packet {
        let mut p = alternate!(self.req, self.resp, resp_turn, now, cfg, stats, dma);
        // IRN's own header fields (§5); UET, on the same halves, has its own format.
        if p.kind == PacketKind::Request {
            p.wire += irn::headers::request_bytes(p.verb, p.first, p.last);
        }
        p
    }
    #[inline]
    fn on_packet(&mut self, cx: &mut Ctx, conn: &mut Conn, pkt: &Packet) -> bool {
        halves::on_packet(self, cx, conn, pkt)
    }
    fn on_order_ack(&mut self, cx: &mut Ctx, _conn: &mut Conn, pkt: &Packet, sack: bool) -> bool {
        let out = self.req.on_order_ack(cx.now, cx.qp, pkt, sack, cx.events);
        if out.malformed {
            cx.stats.malformed_dropped += 1;
        }
        !sack && !out.malformed
    }
    fn expected_request_psn(&self) -> Option<Psn> {
        Some(self.resp.expected())
    }
    fn last_write(&self) -> Option<(Psn, Psn)> {
        self.req.last_write()
    }
}

impl EngineOps for mprdma::MpQp {
    #[inline(always)]
    fn req_has_data(&self) -> bool {
        self.snd.has_data()
    }
    #[inline(always)]
    fn resp_has_data(&self) -> bool {
        false
    }
    #[inline]
    fn post(&mut self, now: Time, wr: WorkRequest, sync: bool, mtu: u32) {
        self.snd.post(now, wr, sync, mtu)
    }
    fn post_recv(&mut self, wqe: RecvWqe) {
        self.rcv.post_recv(wqe)
    }
    fn psn_room(&self) -> u32 {
        self.snd.psn_room()
    }
    fn outstanding(&self) -> bool {
        self.snd.outstanding()
    }
    fn in_flight(&self) -> u32 {
        0
    }
    #[inline(always)]
    fn deadline(&self) -> Option<Time> {
        self.snd.deadline()
    }
    fn on_timer(&mut self, now: Time) -> u64 {
        self.snd.on_timer(now) as u64
    }
    /// The MP-RDMA sender chooses the VP (source port) itself.
    #[inline(always)]
    fn next_packet(
        &mut self,
        resp_turn: &mut bool,
        now: Time,
        cfg: &NicConfig,
        stats: &mut NicStats,
        dma: &mut Dma,
    ) -> Packet {
        *resp_turn = true;
        self.snd.next_packet(now, cfg, stats, dma)
    }
    fn chooses_sport(&self) -> bool {
        true
    }
    #[inline]
    fn on_packet(&mut self, cx: &mut Ctx, _conn: &mut Conn, pkt: &Packet) -> bool {
        self.handle_packet(cx, pkt)
    }
    /// MP-RDMA places out-of-order packets with its own bitmap.
    fn expected_request_psn(&self) -> Option<Psn> {
        None
    }
    fn last_write(&self) -> Option<(Psn, Psn)> {
        None
    }
}

impl EngineOps for uet::UetQp {
    #[inline(always)]
    fn req_has_data(&self) -> bool {
        uet::UetQp::req_has_data(self)
    }
    #[inline(always)]
    fn resp_has_data(&self) -> bool {
        self.irn.resp_has_data()
    }
    #[inline]
    fn post(&mut self, now: Time, wr: WorkRequest, sync: bool, mtu: u32) {
        self.irn.post(now, wr, sync, mtu)
    }
    fn post_recv(&mut self, wqe: RecvWqe) {
        self.irn.post_recv(wqe)
    }
    fn psn_room(&self) -> u32 {
        self.irn.psn_room()
    }
    fn outstanding(&self) -> bool {
        self.irn.outstanding()
    }
    #[inline]
    fn in_flight(&self) -> u32 {
        self.irn.in_flight()
    }
    #[inline(always)]
    fn deadline(&self) -> Option<Time> {
        self.irn.deadline()
    }
    fn on_timer(&mut self, now: Time) -> u64 {
        uet::UetQp::on_timer(self, now)
    }
    #[inline]
    fn next_packet(
        &mut self,
        resp_turn: &mut bool,
        now: Time,
        cfg: &NicConfig,
        stats: &mut NicStats,
        dma: &mut Dma,
    ) -> Packet {
        // A trimmed request first.
        let (mut p, resent) = match self.resend(now, cfg, stats, dma) {
            Some(p) => (p, true),
            None => (self.irn.next_packet(resp_turn, now, cfg, stats, dma), false),
        };
        self.stamp(&mut p, resent);
        p
    }
    /// Each data packet leaves with its entropy value as source port.
    fn chooses_sport(&self) -> bool {
        true
    }
    #[inline]
    fn on_packet(&mut self, cx: &mut Ctx, conn: &mut Conn, pkt: &Packet) -> bool {
        self.handle_packet(cx, conn, pkt)
    }
    /// UET places every packet itself (RUD) or takes them in order (ROD):
    /// no ordering layer sits under it.
    fn expected_request_psn(&self) -> Option<Psn> {
        None
    }
    fn last_write(&self) -> Option<(Psn, Psn)> {
        None
    }
}
