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

use std::collections::VecDeque;

use super::config::IrnConfig;
use super::window::{Arrival, RecvWindow, SendWindow};
use crate::api::{Completion, CompletionSide, Event, NicConfig, NicStats, QpId, WorkRequest};
use crate::memory::Dma;
use crate::packet::{Packet, PacketKind, Verb, ATOMIC_BYTES};
use crate::rc::{offset_of, payload_of, response_payload, wqe_npkts, Ctx, Outcome};
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
    s_first: u32,
    /// Request packets (READ/atomics: one).
    s_n: u32,
    r_first: u32,
    /// Response packets (0 unless READ/atomic).
    r_n: u32,
    /// Receive WQE SN (SEND, WRITE with immediate) or read WQE SN.
    sn: u32,
}

impl Wqe {
    #[inline]
    fn s_end(&self) -> u32 {
        self.s_first + self.s_n
    }
    #[inline]
    fn r_end(&self) -> u32 {
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
    next_spsn: u32,
    next_rpsn: u32,
    next_recv_sn: u32,
    next_read_sn: u32,
    pub win: SendWindow,
    /// READ/atomic responses.
    rx: RecvWindow,
}

impl Requester {
    pub fn new(cfg: IrnConfig) -> Requester {
        Requester {
            cfg,
            wqes: VecDeque::new(),
            cursor: 0,
            next_spsn: 0,
            next_rpsn: 0,
            next_recv_sn: 0,
            next_read_sn: 0,
            win: SendWindow::new(cfg.bdp_packets),
            rx: RecvWindow::new(cfg.bdp_packets),
        }
    }

    pub fn post(&mut self, wr: WorkRequest, mtu: u32) {
        let len = if wr.verb.is_atomic() {
            ATOMIC_BYTES as u64
        } else {
            wr.len
        };
        let n = wqe_npkts(wr.verb, len, mtu).expect("message too long: more than 2^32 packets");
        let (s_n, r_n) = if wr.verb.reads() { (1, n) } else { (n, 0) };
        let sn = if wr.verb.reads() {
            self.next_read_sn += 1;
            self.next_read_sn - 1
        } else if wr.verb.consumes_recv() {
            self.next_recv_sn += 1;
            self.next_recv_sn - 1
        } else {
            0
        };
        self.wqes.push_back(Wqe {
            wr_id: wr.wr_id,
            verb: wr.verb,
            len,
            remote_addr: wr.remote_addr,
            local_addr: wr.local_addr,
            imm: wr.imm,
            compare: wr.compare,
            s_first: self.next_spsn,
            s_n,
            r_first: self.next_rpsn,
            r_n,
            sn,
        });
        self.next_spsn = self
            .next_spsn
            .checked_add(s_n)
            .expect("PSN space of the QP exhausted");
        self.next_rpsn = self
            .next_rpsn
            .checked_add(r_n)
            .expect("response PSN space of the QP exhausted");
    }

    #[inline]
    pub fn has_data(&self) -> bool {
        self.win.rtx_pending() || self.win.can_send_new(self.next_spsn)
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
            self.wqes.partition_point(|w| w.s_end() <= psn)
        } else {
            self.cursor
        };
        let w = self.wqes[i];
        let idx = psn - w.s_first;
        let mtu = cfg.mtu;
        let off = offset_of(mtu, idx).min(w.len);
        let (payload, addr, last) = if w.verb.reads() {
            (0, w.remote_addr, true)
        } else {
            let pl = payload_of(w.len, mtu, idx);
            if !dma.fetch(w.local_addr + off, pl) {
                stats.access_errors += 1;
            }
            let addr = if w.verb == Verb::Send {
                off
            } else {
                w.remote_addr + off
            };
            (pl, addr, idx + 1 == w.s_n)
        };
        self.win.on_sent(psn, now, &self.cfg);
        if !rtx && psn + 1 == w.s_end() {
            self.cursor += 1;
        }
        Packet {
            kind: PacketKind::Request,
            verb: w.verb,
            psn,
            payload,
            wire: payload + cfg.header_bytes,
            priority: cfg.data_priority,
            first: idx == 0,
            last,
            msg_len: w.len,
            sent_at: now,
            addr,
            imm: w.imm,
            compare: w.compare,
            wqe_sn: w.sn,
            ..Packet::default()
        }
    }

    /// ACK or NACK (with its SACK) of request PSNs.
    pub fn on_ack(
        &mut self,
        now: Time,
        qp: QpId,
        pkt: &Packet,
        events: &mut VecDeque<Event>,
    ) -> Outcome {
        let sack = (pkt.kind == PacketKind::Nack && pkt.sack_psn > pkt.psn).then_some(pkt.sack_psn);
        match self.win.on_ack(now, pkt.psn, sack, &self.cfg) {
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
        let bad = (Outcome { malformed: true }, None);
        let r = pkt.psn;
        if r >= self.next_rpsn {
            return bad;
        }
        let epsn = self.rx.epsn;
        let reply = match self.rx.classify(r) {
            Arrival::Old => {
                stats.duplicates_received += 1;
                (PacketKind::ReadAck, epsn, epsn)
            }
            Arrival::Again => {
                stats.duplicates_received += 1;
                (PacketKind::ReadNack, epsn, r)
            }
            Arrival::Beyond => {
                stats.beyond_window_dropped += 1;
                (PacketKind::ReadNack, epsn, epsn)
            }
            Arrival::New => {
                let i = self.wqes.partition_point(|w| w.r_end() <= r);
                let Some(&w) = self.wqes.get(i) else {
                    return bad;
                };
                let idx = r.wrapping_sub(w.r_first);
                if !w.verb.reads()
                    || pkt.verb != w.verb
                    || r < w.r_first
                    || pkt.payload != response_payload(w.verb, w.len, cfg.mtu, idx)
                    || w.s_end() > self.win.nxt
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
            let done = self.win.una >= w.s_end() && self.rx.epsn >= w.r_end();
            if !done {
                break;
            }
            self.wqes.pop_front();
            self.cursor = self.cursor.saturating_sub(1);
            events.push_back(Event::Completion(Completion {
                qp,
                wr_id: w.wr_id,
                verb: w.verb,
                len: w.len,
                side: CompletionSide::Requester,
                at: now,
                imm: 0,
            }));
        }
    }
}
