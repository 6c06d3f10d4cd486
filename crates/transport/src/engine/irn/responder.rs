//! The IRN responder: request packets placed as they arrive, tracked in a
//! 2-bitmap over the BDP window, in-order actions, and the read responder.
//!
//! Bitmap 1 ("arrived", in [`RecvWindow`]) and bitmap 2 (`last`: the packet
//! ends a message whose action waits for everything before it). The
//! action itself is kept beside the bitmap in `pending` (the paper keeps
//! premature CQEs in host memory): a completion already made (SEND and
//! WRITE with immediate resolve their receive WQE from the WQE sequence
//! number they carry, so the CQE can be made before its turn), or a READ /
//! atomic request waiting in the read WQE buffer. When `epsn` passes the
//! packet, the action runs: the MSN advances, a receive WQE expires and its
//! CQE is delivered, a READ or atomic executes and its responses are
//! numbered in the response PSN space.
//!
//! Replies: ACK(epsn) when the packet arrived in order, else NACK(epsn)
//! with the packet as SACK; a duplicate below `epsn` is re-ACKed; a packet
//! beyond the bitmap is dropped and NACKed without SACK. A SEND or WRITE
//! with immediate whose receive WQE is not posted yet is dropped silently
//! (RNR, recovered by the requester's timeout, as in go-back-N).
//!
//! The read responder sends responses under the same selective repeat and
//! BDP cap as the requester, driven by read (N)ACKs and its own timeouts.
//! A retransmitted READ response reads memory again, as a re-executed READ
//! does in RoCE.
//!
//! PSNs (requests from the QP's `rq_psn`, responses numbered from it too)
//! and receive WQE sequence numbers are the QP's 32-bit serial numbers
//! (`crate::psn`), 24 bits on the wire, read back relative to `rx.epsn`,
//! `win.una` and `recv_base`. The read WQE sequence number is only echoed.

use std::collections::VecDeque;

use super::bitmap::RingBitmap;
use super::config::IrnConfig;
use super::window::{Arrival, RecvWindow, SendWindow};
use crate::api::{Completion, CompletionSide, Event, NicConfig, NicStats, QpId};
use crate::memory::Dma;
use crate::packet::{Packet, PacketKind, Verb, ATOMIC_BYTES};
use crate::psn::{Msn, Psn, MAX_PSN_SPAN};
use crate::rc::{
    data_packet, fetch_payload, npkts, offset_of, response_payload, Ctx, Data, Outcome, RecvWqe,
    Reply, RxOutcome,
};
use engine::Time;

/// What the last packet of a message does once everything before it arrived.
#[derive(Clone, Copy, Debug)]
enum Action {
    /// Deliver this CQE (and expire the oldest receive WQE if `recv`).
    Complete {
        wr_id: u64,
        verb: Verb,
        len: u64,
        imm: u64,
        recv: bool,
    },
    /// Execute a READ or atomic (the read WQE buffer entry).
    Read(Job),
}

#[derive(Clone, Copy, Debug)]
struct Job {
    verb: Verb,
    /// Remote address of the first byte.
    addr: u64,
    len: u64,
    imm: u64,
    compare: u64,
    /// Atomic: the original value (set on execution).
    value: u64,
    /// Read WQE sequence number, as received (24 bits), echoed on the
    /// responses.
    sn: u32,
    r_first: Psn,
    r_n: u32,
}

impl Job {
    #[inline]
    fn r_end(&self) -> Psn {
        self.r_first + self.r_n
    }
}

#[derive(Debug)]
pub(crate) struct Responder {
    cfg: IrnConfig,
    rx: RecvWindow,
    last: RingBitmap,
    /// (PSN, action) of the PSNs whose `last` bit is set.
    pending: Vec<(Psn, Action)>,
    recv: VecDeque<RecvWqe>,
    /// Receive WQE SN of `recv[0]`.
    recv_base: Msn,
    /// Executed READ/atomics whose responses are not all acknowledged.
    jobs: VecDeque<Job>,
    /// Index in `jobs` of the job holding `win.nxt`.
    cursor: usize,
    next_rpsn: Psn,
    pub win: SendWindow,
}

impl Responder {
    /// A responder that expects requests, and numbers its responses, from
    /// `first`.
    pub fn new(cfg: IrnConfig, first: Psn) -> Responder {
        Responder {
            cfg,
            rx: RecvWindow::new(cfg.bdp_packets, first),
            last: RingBitmap::new(cfg.bdp_packets),
            pending: Vec::new(),
            recv: VecDeque::new(),
            recv_base: Msn::initial(0),
            jobs: VecDeque::new(),
            cursor: 0,
            next_rpsn: first,
            win: SendWindow::new(cfg.bdp_packets, first),
        }
    }

    pub fn post_recv(&mut self, wqe: RecvWqe) {
        self.recv.push_back(wqe);
    }

    #[inline]
    pub fn has_data(&self) -> bool {
        self.win.rtx_pending() || self.win.can_send_new(self.next_rpsn)
    }

    /// The receive WQE with sequence number `sn`, if posted and not expired.
    fn recv_wqe(&self, sn: Msn) -> Option<RecvWqe> {
        if sn.lt(self.recv_base) {
            return None;
        }
        self.recv.get(sn.since(self.recv_base) as usize).copied()
    }

    /// The next PSN taken in order.
    pub fn expected(&self) -> Psn {
        self.rx.epsn
    }

    /// Whether request `psn` has arrived.
    pub fn received(&self, psn: Psn) -> bool {
        self.rx.received(psn)
    }

    /// The arrived PSNs after [`Responder::expected`] (see
    /// [`RecvWindow::sack_bits`]).
    pub fn sack_bits(&self) -> u64 {
        self.rx.sack_bits()
    }

    /// Processes a request packet.
    pub fn on_request(&mut self, cx: &mut Ctx, pkt: &Packet) -> RxOutcome {
        let (now, qp, cfg) = (cx.now, cx.qp, cx.cfg);
        let (stats, events, dma) = (&mut *cx.stats, &mut *cx.events, &mut *cx.dma);
        let rx = &mut *cx.rx;
        let mut out = RxOutcome {
            reply: Reply::None,
            read_queued: false,
            malformed: false,
        };
        let psn = Psn::from_wire(pkt.psn, self.rx.epsn);
        let epsn = self.rx.epsn;
        match self.rx.classify(psn) {
            Arrival::Old => {
                rx.duplicates += 1;
                stats.duplicates_received += 1;
                out.reply = Reply::Ack(epsn, pkt.ce);
                return out;
            }
            Arrival::Again => {
                rx.duplicates += 1;
                stats.duplicates_received += 1;
                out.reply = Reply::Sack(epsn, psn, pkt.ce);
                return out;
            }
            Arrival::Beyond => {
                rx.out_of_order(&mut stats.ood, psn.since(epsn) as u64);
                stats.beyond_window_dropped += 1;
                out.reply = Reply::Nack(epsn, pkt.ce);
                return out;
            }
            Arrival::New if psn == epsn => stats.ood.in_order(),
            Arrival::New => rx.out_of_order(&mut stats.ood, psn.since(epsn) as u64),
        }
        let action = match self.accept(pkt, cfg, stats, dma) {
            Ok(a) => a,
            Err(Refused::Malformed) => {
                out.malformed = true;
                return out;
            }
            Err(Refused::Silent) => return out,
        };
        self.rx.mark(psn);
        if let Some(a) = action {
            self.last.set(psn);
            self.pending.push((psn, a));
        }
        while let Some(p) = self.rx.pop_in_order() {
            if self.last.get(p) {
                self.last.clear(p);
                let i = self
                    .pending
                    .iter()
                    .position(|&(q, _)| q == p)
                    .expect("a set last bit has its action");
                let (_, a) = self.pending.swap_remove(i);
                out.read_queued |= self.run(now, qp, a, stats, events, dma);
            }
        }
        out.reply = if psn == epsn {
            Reply::Ack(self.rx.epsn, pkt.ce)
        } else {
            Reply::Sack(self.rx.epsn, psn, pkt.ce)
        };
        out
    }

    /// Validates and places a new packet; returns the action its last bit
    /// stands for, if any.
    fn accept(
        &mut self,
        pkt: &Packet,
        cfg: &NicConfig,
        stats: &mut NicStats,
        dma: &mut Dma,
    ) -> Result<Option<Action>, Refused> {
        let mut job = Job {
            verb: pkt.verb,
            addr: pkt.addr,
            len: pkt.msg_len,
            imm: pkt.imm,
            compare: pkt.compare,
            value: 0,
            sn: pkt.wqe_sn,
            r_first: Psn::default(),
            r_n: 1,
        };
        if pkt.verb.reads() {
            if pkt.verb.is_atomic() {
                job.len = ATOMIC_BYTES as u64;
            } else {
                job.r_n = npkts(pkt.msg_len, cfg.mtu)
                    .filter(|&n| n <= MAX_PSN_SPAN)
                    .ok_or(Refused::Malformed)?;
            }
            return Ok(Some(Action::Read(job)));
        }
        if pkt.payload > cfg.mtu {
            return Err(Refused::Malformed);
        }
        let recv = if pkt.verb == Verb::Send || (pkt.verb == Verb::WriteImm && pkt.last) {
            let sn = Msn::from_wire(pkt.wqe_sn, self.recv_base);
            if sn.lt(self.recv_base) {
                return Err(Refused::Malformed);
            }
            let Some(w) = self.recv_wqe(sn) else {
                stats.rnr_drops += 1;
                return Err(Refused::Silent);
            };
            Some(w)
        } else {
            None
        };
        let placed = match (pkt.verb, recv) {
            (Verb::Send, Some(w)) => {
                pkt.addr + pkt.payload as u64 <= w.len && dma.place(w.addr + pkt.addr)
            }
            _ => dma.place(pkt.addr),
        };
        if !placed {
            stats.access_errors += 1;
            return Err(Refused::Silent);
        }
        Ok(pkt.last.then_some(Action::Complete {
            wr_id: recv.map_or(0, |w| w.wr_id),
            verb: pkt.verb,
            len: pkt.msg_len,
            imm: if matches!(pkt.verb, Verb::WriteImm | Verb::Send) {
                pkt.imm
            } else {
                0
            },
            recv: recv.is_some(),
        }))
    }

    /// Runs an in-order action; true if READ responses were queued.
    fn run(
        &mut self,
        now: Time,
        qp: QpId,
        a: Action,
        stats: &mut NicStats,
        events: &mut VecDeque<Event>,
        dma: &mut Dma,
    ) -> bool {
        match a {
            Action::Complete {
                wr_id,
                verb,
                len,
                imm,
                recv,
            } => {
                if recv {
                    self.recv.pop_front();
                    self.recv_base += 1;
                }
                events.push_back(Event::Completion(Completion {
                    qp,
                    wr_id,
                    verb,
                    len,
                    side: CompletionSide::Responder,
                    at: now,
                    imm,
                }));
                false
            }
            Action::Read(mut job) => {
                if job.verb.is_atomic() {
                    job.value = dma
                        .atomic(job.verb, job.addr, job.imm, job.compare)
                        .unwrap_or_else(|| {
                            stats.access_errors += 1;
                            0
                        });
                }
                job.r_first = self.next_rpsn;
                self.next_rpsn += job.r_n;
                self.jobs.push_back(job);
                true
            }
        }
    }

    /// Builds the next READ/atomic response: a lost one first, else a new one.
    pub fn next_packet(
        &mut self,
        now: Time,
        cfg: &NicConfig,
        stats: &mut NicStats,
        dma: &mut Dma,
    ) -> Packet {
        let (r, rtx) = self.win.next_psn();
        let i = if rtx {
            stats.retransmitted_packets += 1;
            self.jobs.partition_point(|j| j.r_end().le(r))
        } else {
            self.cursor
        };
        let job = self.jobs[i];
        let idx = r.since(job.r_first);
        let payload = response_payload(job.verb, job.len, cfg.mtu, idx);
        let off = offset_of(cfg.mtu, idx);
        if job.verb.is_atomic() {
            dma.put(&job.value.to_le_bytes());
        } else {
            fetch_payload(dma, stats, job.addr + off, payload);
        }
        self.win.on_sent(r, now, &self.cfg);
        if !rtx && r + 1 == job.r_end() {
            self.cursor += 1;
        }
        let data = Data {
            kind: PacketKind::ReadResponse,
            verb: job.verb,
            psn: r.wire(),
            ipsn: idx,
            payload,
            first: idx == 0,
            last: idx + 1 == job.r_n,
            msg_len: job.len,
            addr: job.addr + off,
            wqe_sn: job.sn,
            ..Data::default()
        };
        data_packet(cfg, now, data)
    }

    /// A read ACK/NACK from the requester.
    pub fn on_read_ack(&mut self, now: Time, pkt: &Packet) -> Outcome {
        let una = self.win.una;
        let (cum, sack) = (
            Psn::from_wire(pkt.psn, una),
            Psn::from_wire(pkt.sack_psn, una),
        );
        let sack = (pkt.kind == PacketKind::ReadNack && sack.gt(cum)).then_some(sack);
        if self.win.on_ack(now, cum, sack, &self.cfg).is_err() {
            return Outcome { malformed: true };
        }
        while self
            .jobs
            .front()
            .is_some_and(|j| j.r_end().le(self.win.una))
        {
            self.jobs.pop_front();
            self.cursor = self.cursor.saturating_sub(1);
        }
        Outcome::default()
    }

    /// The timer fired; true if the read responder's RTO expired.
    pub fn on_timer(&mut self, now: Time) -> bool {
        self.win.on_timer(now)
    }
}

/// Why a new packet was not accepted.
enum Refused {
    Malformed,
    /// Not placed (no receive WQE yet, or an access error): no reply, the
    /// requester's timeout retries.
    Silent,
}
