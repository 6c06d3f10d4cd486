//! One queue pair: what work its engine can carry
//! ([`check_work_request`]), its
//! engine's state ([`EngineState`]), its congestion
//! control state, its rate limiter (time and size of the last packet sent;
//! [`LineRate`], the NIC's serialisation at line rate without a division)
//! the bookkeeping of its single armed timer, and what stays of it once
//! destroyed (a tombstone).
//!
//! May use `crate::api`, `crate::engine`, `crate::rc`, `crate::cc`,
//! `crate::dcqcn`, `crate::memory`, `crate::packet`, `crate::sched` and
//! `crate::timers`;
//! never the NIC.

use std::num::NonZeroU32;

use crate::api::{InitialPsns, NicConfig, NicStats, QpConfig, QpError, QpId, WorkRequest, WrError};
use crate::cc::Cc;
use crate::dcqcn::Notification;
use crate::engine::{Engine, EngineState};
use crate::memory::Dma;
use crate::packet::Packet;
use crate::psn::{Psn, MAX_PSN_SPAN};
use crate::rc::{wqe_npkts, Conn, Ctx, RecvWqe};
use crate::sched::SchedState;
use crate::timers::Timers;
use engine::time::{ps_per_byte, serialization, serialization_at};
use engine::Time;

/// Serialisation times at the NIC's line rate, where most packets leave,
/// without a division when the rate allows (see [`ps_per_byte`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LineRate {
    bps: u64,
    ps_per_byte: u32,
}

impl LineRate {
    pub fn new(bps: u64) -> LineRate {
        LineRate {
            bps,
            ps_per_byte: ps_per_byte(bps),
        }
    }

    /// `serialization(bytes, rate)`.
    #[inline(always)]
    fn serialization(&self, bytes: u32, rate: u64) -> Time {
        if rate == self.bps {
            serialization_at(bytes as u64, rate, self.ps_per_byte)
        } else {
            serialization(bytes as u64, rate)
        }
    }
}

/// Whether a QP running `engine` with packets of `mtu` payload bytes can
/// carry `wr`: its verb ([`Engine::carries`]) and its length in
/// packets (at most [`MAX_PSN_SPAN`], the PSNs a QP may have in use).
/// [`crate::Nic::post_send`] refuses what this refuses; callers that plan
/// work ahead (a scenario's flows) ask it first.
pub fn check_work_request(engine: &Engine, wr: &WorkRequest, mtu: u32) -> Result<(), WrError> {
    if !engine.carries(wr.verb) {
        return Err(WrError::Unsupported(wr.verb));
    }
    if wqe_npkts(wr.verb, wr.len, mtu).is_none_or(|n| n > MAX_PSN_SPAN) {
        return Err(WrError::TooLong(wr.len));
    }
    Ok(())
}

/// A QP, laid out by cache line (`repr(C)`): in a large run a QP is out of
/// cache whenever its next packet comes, so what matters is how many lines
/// a packet reads. Line 0 holds what every packet reads (scheduling, rate
/// limiter, congestion control, timer, addressing); the engine's tag and
/// the requester's and responder's hot fields follow on lines 1-3; the
/// rest is read less.
#[derive(Debug)]
#[repr(C, align(64))]
pub(crate) struct Qp {
    // Line 0.
    pub sched: SchedState,
    /// Time of the last data packet sent (rate limiter; valid once
    /// `last_wire` is).
    pub last_tx_at: Time,
    /// The earliest timer entry armed and not yet run (`Time::MAX`:
    /// none; a plain time keeps line 0 within 64 bytes).
    pub armed: Time,
    pub cc: Cc,
    /// Wire size of the last data packet sent (None before the first).
    /// Apart from `last_tx_at`, so that both fit with `resp_turn`.
    pub last_wire: Option<NonZeroU32>,
    pub id: QpId,
    pub cfg: QpConfig,
    /// Alternates requester data and READ responses when both are waiting
    /// (read and written by every data packet sent).
    pub resp_turn: bool,
    /// Destroyed (`Nic::destroy_qp`): a tombstone that takes no input.
    pub destroyed: bool,
    // Lines 1-3 and on.
    pub engine: EngineState,
    /// How this QP, as a notification point, reports CE marks.
    pub notification: Notification,
    /// When this QP last sent a CNP packet.
    pub last_cnp: Option<Time>,
    /// The engine this QP was created with, and its configuration.
    pub engine_cfg: Engine,
}

impl Qp {
    /// QP `id` of the NIC configured by `nic` (an engine with a window
    /// control of its own, UET's NSCC, takes its parameters, line rate
    /// and MTU there).
    pub fn new(
        id: QpId,
        cfg: QpConfig,
        psns: InitialPsns,
        engine: Engine,
        nic: &NicConfig,
        cc: Cc,
        notification: Notification,
    ) -> Qp {
        Qp {
            id,
            cfg,
            engine_cfg: engine,
            engine: EngineState::new(engine, id, &cfg, psns, nic),
            cc,
            notification,
            last_cnp: None,
            last_tx_at: 0,
            last_wire: None,
            resp_turn: false,
            destroyed: false,
            armed: Time::MAX,
            sched: SchedState::Idle,
        }
    }

    /// What stays of QP `id` once destroyed: a go-back-N QP without work,
    /// congestion control or anything boxed, marked destroyed.
    pub fn tombstone(id: QpId, cfg: QpConfig) -> Qp {
        let psns = InitialPsns::default();
        let (gbn, off) = (Engine::GoBackN, Notification::Off);
        let nic = NicConfig::default();
        let mut q = Qp::new(id, cfg, psns, gbn, &nic, Cc::None, off);
        q.destroyed = true;
        q
    }

    /// Bytes of this QP's fixed state: the QP and what it boxes (IRN's or
    /// MP-RDMA's halves, DCQCN's state). Its work-request queues, which
    /// grow with what is posted, are not counted.
    pub fn bytes(&self) -> usize {
        std::mem::size_of::<Qp>() + self.engine.heap_bytes() + self.cc.heap_bytes()
    }

    /// Hints the CPU to fetch the lines a packet for this QP reads first:
    /// line 0 and the engine's first three lines (the go-back-N requester
    /// with its copy of the WQE being sent, and the responder's hot
    /// fields).
    #[inline]
    pub fn prefetch(&self) {
        use engine::prefetch::{prefetch, prefetch_ptr};
        prefetch(self);
        let at: *const u8 = (self as *const Qp).cast();
        prefetch_ptr(at.wrapping_add(128));
        prefetch_ptr(at.wrapping_add(192));
    }

    #[inline(always)]
    pub fn has_data(&self) -> bool {
        self.req_has_data() || self.resp_has_data()
    }

    /// The requester has something to send and its congestion control's
    /// window, if any, lets it.
    #[inline(always)]
    fn req_has_data(&self) -> bool {
        self.engine.req_has_data() && self.cc.window_open(|| self.engine.in_flight())
    }

    #[inline(always)]
    fn resp_has_data(&self) -> bool {
        self.engine.resp_has_data()
    }

    /// Refuses a work request this QP's engine cannot carry
    /// ([`check_work_request`]), or whose PSNs do not fit beside those in use.
    pub fn check(&self, wr: &WorkRequest, mtu: u32) -> Result<(), QpError> {
        let refused = |e| QpError::Refused(self.id, e);
        check_work_request(&self.engine_cfg, wr, mtu).map_err(refused)?;
        let n = wqe_npkts(wr.verb, wr.len, mtu).unwrap_or(u32::MAX);
        if n > self.engine.psn_room() {
            return Err(refused(WrError::PsnSpan(n)));
        }
        Ok(())
    }

    /// Posts a work request ([`Qp::check`]ed); `sync` is MP-RDMA's
    /// synchronise flag (the other engines deliver in order anyway).
    pub fn post(&mut self, now: Time, wr: WorkRequest, sync: bool, mtu: u32) {
        self.engine.post(now, wr, sync, mtu)
    }

    pub fn post_recv(&mut self, wqe: RecvWqe) {
        self.engine.post_recv(wqe)
    }

    /// Sent but not done (requests, or IRN READ responses not acknowledged).
    pub fn outstanding(&self) -> bool {
        self.engine.outstanding()
    }

    /// The earliest retransmission deadline of the QP.
    #[inline(always)]
    fn deadline(&self) -> Option<Time> {
        self.engine.deadline()
    }

    /// The timer fired at `now`: the number of retransmission timeouts that
    /// expired (IRN: request and READ-response directions each have one).
    pub fn on_timer(&mut self, now: Time) -> u64 {
        self.engine.on_timer(now)
    }

    /// Handles one packet for this QP (`cx.qp` is its id); true if it may
    /// have something new to send.
    #[inline(always)]
    pub fn on_packet(&mut self, cx: &mut Ctx, pkt: &Packet) -> bool {
        let mut conn = Conn {
            notification: self.notification,
            last_cnp: &mut self.last_cnp,
            cc: &mut self.cc,
        };
        self.engine.on_packet(cx, &mut conn, pkt)
    }

    /// Eunomia's SACK or NACK for this QP's requester
    /// ([`EngineState::on_order_ack`]).
    pub fn on_order_ack(&mut self, cx: &mut Ctx, pkt: &Packet, sack: bool) -> bool {
        let mut conn = Conn {
            notification: self.notification,
            last_cnp: &mut self.last_cnp,
            cc: &mut self.cc,
        };
        self.engine.on_order_ack(cx, &mut conn, pkt, sack)
    }

    /// The PSN of the next request the engine takes in order (None: the
    /// engine orders its own packets).
    #[inline]
    pub fn expected_request_psn(&self) -> Option<Psn> {
        self.engine.expected_request_psn()
    }

    /// The earliest time this QP may send at its current rate or, if its
    /// rate may increase before that, the time of that increase (when it
    /// must be looked at again). Returns `now` if it may send now.
    ///
    /// The limiter is "last send + serialisation of the last packet at the
    /// rate in force now", which is what HPCC's `ChangeRate` maintains by
    /// shifting `m_nextAvail` on every rate change.
    #[inline(always)]
    pub fn eligible_at(&mut self, now: Time, line: &LineRate, decreases: &mut u64) -> Time {
        let Some(wire) = self.last_wire else {
            return now;
        };
        let t = self.last_tx_at;
        let rate = self.cc.rate(now, line.bps, decreases);
        let free = t + line.serialization(wire.get(), rate);
        if free <= now {
            now
        } else {
            self.cc.next_increase().map_or(free, |c| c.min(free))
        }
    }

    /// Builds the next data packet and updates the rate limiter and the
    /// congestion control.
    #[inline]
    pub fn next_packet(
        &mut self,
        now: Time,
        cfg: &NicConfig,
        stats: &mut NicStats,
        dma: &mut Dma,
    ) -> Packet {
        let mut pkt = self.engine.next_packet(
            &mut self.resp_turn,
            self.cfg.sport,
            (now, cfg, &mut *stats),
            dma,
        );
        pkt.src = cfg.host;
        pkt.dst = self.cfg.peer_host;
        pkt.src_qp = self.id;
        pkt.dst_qp = self.cfg.peer_qp;
        self.last_tx_at = now;
        // Never 0: a data packet has headers (`NicConfig::header_bytes`).
        self.last_wire = NonZeroU32::new(pkt.wire);
        self.cc
            .on_sent(now, pkt.wire as u64, &mut stats.rate_decreases);
        pkt
    }

    /// Arms a timer entry if the QP's deadline is earlier than the one
    /// already armed (or none is). A later deadline waits for the armed
    /// entry to come due, which then re-arms: at most one entry per QP per
    /// RTO instead of one per ACK.
    #[inline(always)]
    pub fn sync_timer(&mut self, timers: &mut Timers) {
        if let Some(d) = self.deadline() {
            if d < self.armed {
                self.armed = d;
                timers.arm(d, self.id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::gbn::requester::Requester;
    use crate::engine::gbn::responder::Responder;
    use crate::engine::irn::IrnQp;
    use crate::engine::mprdma::MpQp;
    use std::mem::offset_of;

    /// The layout the per-packet path was measured with: what every packet
    /// reads on line 0, the engine (its tag and the requester's and the
    /// go-back-N responder's hot fields) from line 1.
    #[test]
    fn hot_fields_share_lines() {
        assert_eq!(std::mem::align_of::<Qp>(), 64);
        assert!(offset_of!(Qp, cfg) + std::mem::size_of::<QpConfig>() <= 64);
        assert!(offset_of!(Qp, cc) + std::mem::size_of::<Cc>() <= 64);
        assert!(offset_of!(Qp, resp_turn) < 64);
        assert!(offset_of!(Qp, destroyed) < 64);
        assert_eq!(offset_of!(Qp, engine), 64);
    }

    /// A go-back-N packet reads line 0 and: to be sent, the requester's
    /// PSNs and its copy of the WQE (lines 1-2); as an ACK, the PSNs (line
    /// 1); as data, the responder's hot fields (line 3). `prefetch` asks
    /// for lines 0-3.
    #[test]
    fn go_back_n_halves_by_line() {
        let cfg = QpConfig {
            peer_host: 1,
            peer_qp: 0,
            sport: 7,
        };
        let qp = Qp::new(
            0,
            cfg,
            InitialPsns::default(),
            Engine::GoBackN,
            &NicConfig::default(),
            Cc::None,
            Notification::AckEcho,
        );
        let EngineState::GoBackN(g) = &qp.engine else {
            unreachable!()
        };
        let (req, resp) = (&g.req, &g.resp);
        let at = |p: usize| p - (&qp as *const Qp as usize);
        let req = at(req as *const Requester as usize);
        let resp = at(resp as *const Responder as usize);
        assert!(req + Requester::HOT_BYTES <= 192, "requester at {req}");
        assert_eq!(resp / 64, 3, "responder at {resp}");
        assert_eq!((resp + Responder::HOT_BYTES - 1) / 64, 3);
    }

    /// A go-back-N QP without congestion control stays within eight lines
    /// (the common case at scale: a flow's memory is mostly its two QPs);
    /// the other schemes' state is boxed and counted in `bytes`.
    #[test]
    fn schemes_box_what_go_back_n_does_not_need() {
        use crate::cc::CcConfig;
        use crate::dcqcn::DcqcnParams;
        let cfg = QpConfig {
            peer_host: 1,
            peer_qp: 0,
            sport: 7,
        };
        let qp = |engine, cc: &CcConfig| {
            let cc = Cc::new(cc, 100_000_000_000, 1000);
            Qp::new(
                0,
                cfg,
                InitialPsns::default(),
                engine,
                &NicConfig::default(),
                cc,
                Notification::AckEcho,
            )
        };
        let plain = std::mem::size_of::<Qp>();
        assert!(plain <= 8 * 64, "{plain} bytes");
        assert_eq!(qp(Engine::GoBackN, &CcConfig::None).bytes(), plain);
        let dcqcn = CcConfig::Dcqcn(DcqcnParams::default());
        assert_eq!(
            qp(Engine::GoBackN, &dcqcn).bytes(),
            plain + std::mem::size_of::<crate::dcqcn::Dcqcn>()
        );
        let irn = Engine::Irn(crate::engine::irn::IrnConfig::default());
        assert_eq!(
            qp(irn, &CcConfig::None).bytes(),
            plain + std::mem::size_of::<IrnQp>()
        );
        let mp = Engine::MpRdma(crate::engine::mprdma::MpRdmaConfig::default());
        assert_eq!(
            qp(mp, &dcqcn).bytes(),
            plain + std::mem::size_of::<MpQp>() + std::mem::size_of::<crate::dcqcn::Dcqcn>()
        );
    }

    /// The multiplication agrees with the division, at line rate and off it.
    #[test]
    fn line_rate_serialization_is_exact() {
        for bps in [
            100_000_000_000,
            25_000_000_000,
            40_000_000_000,
            3,
            7_000_000_001,
        ] {
            let line = LineRate::new(bps);
            for rate in [bps, bps / 2 + 1, 1_000_000_007] {
                for bytes in [0, 1, 60, 1048, 9000] {
                    assert_eq!(
                        line.serialization(bytes, rate),
                        serialization(bytes as u64, rate),
                        "{bytes} bytes at {rate} b/s, line {bps} b/s"
                    );
                }
            }
        }
    }
}
