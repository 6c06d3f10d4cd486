//! The IRN requester: the send queue, request PSNs (sPSN) sent under BDP
//! flow control with selective repeat, and the receiver of READ/atomic
//! responses in their own PSN space (rPSN), placed out of order and
//! answered with read (N)ACKs.
//!
//! Every WQE gets its sPSN range at post time (a READ or atomic request is
//! one packet) and, for READ/atomics, its rPSN range (responses are numbered
//! in execution order, which is post order, so both ends agree without
//! exchanging it). A WQE completes, in post order, when its requests are
//! acknowledged and, for READ/atomics, all its responses have arrived. A
//! response acknowledges its request and every request before it (the
//! responder executes a READ only in order).
//!
//! Both PSN spaces start at the QP's `sq_psn` (the responder numbers its
//! responses from its `rq_psn`, the same value): the QP's 32-bit serial
//! numbers (`crate::psn`), 24 bits on the wire, read back relative to
//! `win.una` (ACKs) and `rx.epsn` (responses). `post` keeps each space's
//! PSNs from the oldest WQE not completed to the next within
//! `MAX_PSN_SPAN`. The receive and read WQE sequence numbers go out in 24
//! bits too, as IB's MSN.

use std::collections::VecDeque;

use super::config::IrnConfig;
use super::window::{Arrival, RecvWindow, SendWindow};
use crate::api::{Completion, Event, NicConfig, NicStats, QpId, WorkRequest};
use crate::memory::Dma;
use crate::packet::{Packet, PacketKind, Verb, ATOMIC_BYTES};
use crate::psn::{Msn, Psn};
use crate::rc::{
    data_packet, fetch_payload, offset_of, payload_of, psn_room, reserve_psns, response_payload,
    wqe_npkts, Ctx, Data, Outcome,
};
use engine::Time;

#[derive(Clone, Copy, Debug)]
struct Wqe {
    wr_id: u64,
    verb: Verb,
    len: u64,
    remote_addr: u64,
    local_addr: u64,
    imm: u64,
    compare: u64,
    s_first: Psn,
    /// Request packets (READ/atomics: one).
    s_n: u32,
    r_first: Psn,
    /// Response packets (0 unless READ/atomic).
    r_n: u32,
    /// Receive WQE SN (SEND, WRITE with immediate) or read WQE SN.
    sn: Msn,
}

impl Wqe {
    #[inline]
    fn s_end(&self) -> Psn {
        self.s_first + self.s_n
    }
    #[inline]
    fn r_end(&self) -> Psn {
        self.r_first + self.r_n
    }
}

/// A read ACK or NACK to send: (kind, cumulative rPSN, SACKed rPSN).
pub(crate) use crate::rc::halves::ReadReply;

#[derive(Debug)]
pub(crate) struct Requester {
    cfg: IrnConfig,
    wqes: VecDeque<Wqe>,
    /// Index in `wqes` of the WQE holding `win.nxt` (== len if none).
    cursor: usize,
    next_spsn: Psn,
    next_rpsn: Psn,
    next_recv_sn: Msn,
    next_read_sn: Msn,
    pub win: SendWindow,
    /// READ/atomic responses.
    rx: RecvWindow,
}

impl Requester {
    /// A requester whose request and response PSNs start at `first`.
    pub fn new(cfg: IrnConfig, first: Psn) -> Requester {
        Requester {
            cfg,
            wqes: VecDeque::new(),
            cursor: 0,
            next_spsn: first,
            next_rpsn: first,
            next_recv_sn: Msn::initial(0),
            next_read_sn: Msn::initial(0),
            win: SendWindow::new(cfg.bdp_packets, first),
            rx: RecvWindow::new(cfg.bdp_packets, first),
        }
    }

    /// PSNs a new message may still take (in the smaller of its request
    /// and READ-response spaces).
    pub fn psn_room(&self) -> u32 {
        let front = self.wqes.front();
        let oldest_s = front.map_or(self.next_spsn, |w| w.s_first);
        let oldest_r = front.map_or(self.next_rpsn, |w| w.r_first);
        psn_room(self.next_spsn, oldest_s).min(psn_room(self.next_rpsn, oldest_r))
    }

    pub fn post(&mut self, wr: WorkRequest, mtu: u32) {
        let len = if wr.verb.is_atomic() {
            ATOMIC_BYTES as u64
        } else {
            wr.len
        };
        let n = wqe_npkts(wr.verb, len, mtu);
        let (s_n, r_n) = if wr.verb.reads() {
            (Some(1), n)
        } else {
            (n, Some(0))
        };
        let front = self.wqes.front();
        let oldest_s = front.map_or(self.next_spsn, |w| w.s_first);
        let oldest_r = front.map_or(self.next_rpsn, |w| w.r_first);
        let (s_first, s_n) = reserve_psns(&mut self.next_spsn, oldest_s, s_n);
        let (r_first, r_n) = reserve_psns(&mut self.next_rpsn, oldest_r, r_n);
        let sn = if wr.verb.reads() {
            take_sn(&mut self.next_read_sn)
        } else if wr.verb.consumes_recv() {
            take_sn(&mut self.next_recv_sn)
        } else {
            // None: 0 on the wire.
            Msn::initial(0)
        };
        self.wqes.push_back(Wqe {
            wr_id: wr.wr_id,
            verb: wr.verb,
            len,
            remote_addr: wr.remote_addr,
            local_addr: wr.local_addr,
            imm: wr.imm,
            compare: wr.compare,
            s_first,
            s_n,
            r_first,
            r_n,
            sn,
        });
    }

    #[inline]
    pub fn has_data(&self) -> bool {
        self.win.rtx_pending() || self.win.can_send_new(self.next_spsn)
    }

    /// See `crate::engine::EngineOps::last_write`: the PSN sent next (a
    /// lost one first) is the last posted, and its WQE a WRITE.
    pub fn last_write(&self) -> Option<(Psn, Psn)> {
        let w = self.wqes.back()?;
        let (psn, _) = self.win.next_psn();
        (w.verb == Verb::Write && psn + 1 == self.next_spsn).then_some((psn, self.win.una))
    }

    /// Builds the next request packet: a lost one first, else a new one.
    pub fn next_packet(
        &mut self,
        now: Time,
        cfg: &NicConfig,
        stats: &mut NicStats,
        dma: &mut Dma,
    ) -> Packet {
        let (psn, rtx) = self.win.next_psn();
        let i = if rtx {
            stats.retransmitted_packets += 1;
            self.wqes.partition_point(|w| w.s_end().le(psn))
        } else {
            self.cursor
        };
        let p = self.request(i, psn, now, cfg, stats, dma);
        self.win.on_sent(psn, now, &self.cfg);
        if !rtx && psn + 1 == self.wqes[i].s_end() {
            self.cursor += 1;
        }
        p
    }

    /// UET: request `psn` again, alone (a trimmed packet the receiver
    /// NACKed), leaving loss recovery as it is; None if it needs no
    /// resending (acknowledged, SACKed, or never sent).
    pub fn resend(
        &mut self,
        psn: Psn,
        now: Time,
        cfg: &NicConfig,
        stats: &mut NicStats,
        dma: &mut Dma,
    ) -> Option<Packet> {
        if psn.lt(self.win.una) || psn.ge(self.win.nxt) || self.win.is_sacked(psn) {
            return None;
        }
        stats.retransmitted_packets += 1;
        let i = self.wqes.partition_point(|w| w.s_end().le(psn));
        Some(self.request(i, psn, now, cfg, stats, dma))
    }

    /// The request packet `psn` of WQE `i`.
    fn request(
        &mut self,
        i: usize,
        psn: Psn,
        now: Time,
        cfg: &NicConfig,
        stats: &mut NicStats,
        dma: &mut Dma,
    ) -> Packet {
        let w = self.wqes[i];
        let idx = psn.since(w.s_first);
        let mtu = cfg.mtu;
        let off = offset_of(mtu, idx).min(w.len);
        let (payload, addr, last) = if w.verb.reads() {
            (0, w.remote_addr, true)
        } else {
            let pl = payload_of(w.len, mtu, idx);
            fetch_payload(dma, stats, w.local_addr + off, pl);
            let addr = if w.verb == Verb::Send {
                off
            } else {
                w.remote_addr + off
            };
            (pl, addr, idx + 1 == w.s_n)
        };
        let data = Data {
            kind: PacketKind::Request,
            verb: w.verb,
            psn: psn.wire(),
            // A READ request asks for `msg_len` bytes from its own.
            ipsn: if w.verb.reads() { 0 } else { idx },
            payload,
            first: idx == 0,
            last,
            msg_len: w.len,
            addr,
            imm: w.imm,
            compare: w.compare,
            wqe_sn: w.sn.wire(),
        };
        data_packet(cfg, now, data)
    }

    /// ACK or NACK (with its SACK) of request PSNs.
    pub fn on_ack(
        &mut self,
        now: Time,
        qp: QpId,
        pkt: &Packet,
        events: &mut VecDeque<Event>,
    ) -> Outcome {
        let una = self.win.una;
        let (cum, sack) = (
            Psn::from_wire(pkt.psn, una),
            Psn::from_wire(pkt.sack_psn, una),
        );
        let sack = (pkt.kind == PacketKind::Nack && sack.gt(cum)).then_some(sack);
        match self.win.on_ack(now, cum, sack, &self.cfg) {
            Err(_) => Outcome { malformed: true },
            Ok(_) => {
                self.complete(now, qp, events);
                Outcome::default()
            }
        }
    }

    /// Eunomia's SACK (`sack`: `sack_psn` is tracked at the responder's
    /// layer, never a loss) or NACK (`sack_psn` could not be tracked:
    /// recover it and every unSACKed PSN before it).
    pub fn on_order_ack(
        &mut self,
        now: Time,
        qp: QpId,
        pkt: &Packet,
        sack: bool,
        events: &mut VecDeque<Event>,
    ) -> Outcome {
        let una = self.win.una;
        let (cum, s) = (
            Psn::from_wire(pkt.psn, una),
            Psn::from_wire(pkt.sack_psn, una),
        );
        // The SACK goes first: `on_ack` then absorbs a SACKed PSN at the
        // new `una`. A SACK overtaken by the cumulative ack reaching its
        // PSN would otherwise leave that PSN unacknowledged with nothing
        // to resend: no RTO armed, and a WRITE's last packet held by
        // Eunomia's sender hold forever.
        let r = if sack {
            self.win
                .mark_sacked(s)
                .and_then(|()| self.win.on_ack(now, cum, None, &self.cfg))
        } else {
            self.win.on_drop_nack(now, cum, s, &self.cfg)
        };
        match r {
            Err(_) => Outcome { malformed: true },
            Ok(_) => {
                self.complete(now, qp, events);
                Outcome::default()
            }
        }
    }

    /// UET's SACK bitmap: everything below `cum` arrived, and PSN
    /// `cum + 1 + i` for each bit `i` set in `bits`; neither recovery nor
    /// a timeout resends those (recovery is not entered).
    pub fn on_sack_bitmap(
        &mut self,
        now: Time,
        qp: QpId,
        cum: Psn,
        bits: u64,
        events: &mut VecDeque<Event>,
    ) -> Outcome {
        let r = (0..64u32)
            .filter(|&i| bits >> i & 1 != 0)
            .try_for_each(|i| self.win.mark_sacked(cum + 1 + i))
            .and_then(|()| self.win.on_ack(now, cum, None, &self.cfg));
        match r {
            Err(_) => Outcome { malformed: true },
            Ok(_) => {
                self.complete(now, qp, events);
                Outcome::default()
            }
        }
    }

    /// A READ/atomic response: placed at once if it is new and fits the
    /// window; answered with a read ACK (in order) or NACK.
    pub fn on_read_response(&mut self, cx: &mut Ctx, pkt: &Packet) -> (Outcome, Option<ReadReply>) {
        let (now, qp, cfg) = (cx.now, cx.qp, cx.cfg);
        let (stats, events, dma) = (&mut *cx.stats, &mut *cx.events, &mut *cx.dma);
        let rx = &mut *cx.rx;
        let bad = (Outcome { malformed: true }, None);
        let r = Psn::from_wire(pkt.psn, self.rx.epsn);
        if r.ge(self.next_rpsn) {
            return bad;
        }
        let epsn = self.rx.epsn;
        let reply = match self.rx.classify(r) {
            Arrival::Old => {
                rx.duplicates += 1;
                stats.duplicates_received += 1;
                (PacketKind::ReadAck, epsn, epsn)
            }
            Arrival::Again => {
                rx.duplicates += 1;
                stats.duplicates_received += 1;
                (PacketKind::ReadNack, epsn, r)
            }
            Arrival::Beyond => {
                rx.out_of_order(&mut stats.ood, r.since(epsn) as u64);
                stats.beyond_window_dropped += 1;
                (PacketKind::ReadNack, epsn, epsn)
            }
            Arrival::New => {
                if r == epsn {
                    stats.ood.in_order();
                } else {
                    rx.out_of_order(&mut stats.ood, r.since(epsn) as u64);
                }
                let i = self.wqes.partition_point(|w| w.r_end().le(r));
                let Some(&w) = self.wqes.get(i) else {
                    return bad;
                };
                let idx = r.since(w.r_first);
                if !w.verb.reads()
                    || pkt.verb != w.verb
                    || r.lt(w.r_first)
                    || pkt.payload != response_payload(w.verb, w.len, cfg.mtu, idx)
                    || w.s_end().gt(self.win.nxt)
                {
                    return bad;
                }
                if !dma.place(w.local_addr + offset_of(cfg.mtu, idx)) {
                    stats.access_errors += 1;
                    return (Outcome::default(), None);
                }
                // The responder ran this READ in order: every request up to
                // it has arrived.
                if self.win.on_ack(now, w.s_end(), None, &self.cfg).is_err() {
                    return bad;
                }
                self.rx.mark(r);
                while self.rx.pop_in_order().is_some() {}
                let e = self.rx.epsn;
                if r == epsn {
                    (PacketKind::ReadAck, e, e)
                } else {
                    (PacketKind::ReadNack, e, r)
                }
            }
        };
        self.complete(now, qp, events);
        (Outcome::default(), Some(reply))
    }

    /// The timer fired; true if the request window's RTO expired.
    pub fn on_timer(&mut self, now: Time) -> bool {
        self.win.on_timer(now)
    }

    /// Completes finished WQEs from the front, in post order.
    fn complete(&mut self, now: Time, qp: QpId, events: &mut VecDeque<Event>) {
        while let Some(&w) = self.wqes.front() {
            let done = self.win.una.ge(w.s_end()) && self.rx.epsn.ge(w.r_end());
            if !done {
                break;
            }
            self.wqes.pop_front();
            self.cursor = self.cursor.saturating_sub(1);
            events.push_back(Event::Completion(Completion::requester(
                qp, w.wr_id, w.verb, w.len, now,
            )));
        }
    }
}

/// The next sequence number of a counter, which moves on.
#[inline]
fn take_sn(counter: &mut Msn) -> Msn {
    let sn = *counter;
    *counter += 1;
    sn
}
