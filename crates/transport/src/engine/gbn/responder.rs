//! The responder half of an RC queue pair: the expected PSN (ePSN), in-order
//! acceptance of WRITE/SEND packets, ACK generation (every `ack_every`-th
//! packet and always a message's last), one NACK per gap episode,
//! re-ACK of duplicates, the receive queue consumed by SENDs, responder
//! completions, and the queue of READ responses to send.
//!
//! Conventions (documented choices):
//! - A WRITE produces a responder completion with `wr_id = 0` when its last
//!   packet arrives (the simulator uses it as the receiver-side finish time).
//! - A SEND consumes the oldest posted receive WQE at its first packet and
//!   completes it (`len` = bytes received) at its last packet.
//! - RNR: if no receive WQE is posted when the first packet of a SEND
//!   arrives, the packet is dropped silently (counted in `rnr_drops`) and
//!   the responder enters the "NAK sent" state, so the rest of the message
//!   is dropped without NACKs. The requester recovers by its retransmission
//!   timeout, which plays the role of the RNR retry timer (no RNR NAK).
//! - A duplicate READ request (PSN below ePSN) is re-executed, as in IB:
//!   queued responses from that PSN on are replaced by the new ones.
//! - With ACK coalescing (`ack_every > 1`), the ECN echo of an ACK is the OR
//!   of the CE bits of the packets it acknowledges.
//! - A WRITE with immediate consumes the oldest receive WQE at its last
//!   packet (RNR as for a SEND if none is posted) and completes it with the
//!   immediate.
//! - An atomic executes when it arrives in order and queues one response
//!   carrying the original value. A duplicate atomic is not executed again:
//!   its response is replayed from a cache of the last
//!   [`ATOMIC_CACHE`] results (older duplicates are ignored), as IB
//!   responders do.
//! - PSNs are the QP's 32-bit serial numbers (`crate::psn`), from its
//!   `rq_psn`; a request's 24-bit PSN is read relative to the ePSN, and is
//!   ahead of, at or behind it by their serial difference. A valid request
//!   lies at most `MAX_PSN_SPAN` below the ePSN (the requester's span).

use std::collections::VecDeque;

use crate::api::{Completion, CompletionSide, Event, NicConfig, NicStats};
use crate::memory::Dma;
use crate::packet::{Packet, PacketKind, Verb, ATOMIC_BYTES};
use crate::psn::{Psn, MAX_PSN_SPAN};
use crate::rc::{npkts, offset_of, response_payload, Ctx, RecvWqe, Reply, RxOutcome, ATOMIC_CACHE};
use engine::Time;

#[derive(Clone, Copy, Debug)]
struct ReadJob {
    verb: Verb,
    /// Remote address of the byte at `first_psn` (READ).
    addr: u64,
    /// Atomic: the original value.
    value: u64,
    /// First PSN of the request this job answers.
    first_psn: Psn,
    next_psn: Psn,
    end_psn: Psn,
    /// Bytes asked by the request (starting at `first_psn`).
    msg_len: u64,
}

/// The message a responder is receiving, with its bytes so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum InMsg {
    #[default]
    None,
    Write(u64),
    /// Its receive WQE is `Responder::send_wqe`.
    Send(u64),
}

/// Laid out in declaration order (`repr(C)`): what a WRITE packet reads
/// comes first, in the QP's line after the requester's (see `Qp`).
#[derive(Debug, Default)]
#[repr(C)]
pub(crate) struct Responder {
    /// The message being received: every request packet tests it (one
    /// may not start inside another), so it is first, and a SEND's
    /// receive WQE is elsewhere.
    cur: InMsg,
    epsn: Psn,
    unacked: u32,
    nak_sent: bool,
    ce_pending: bool,
    /// One past the highest READ response PSN ever sent (or, after
    /// [`Self::bound_read_max`], `MAX_PSN_SPAN` below the ePSN).
    read_max: Psn,
    reads: VecDeque<ReadJob>,
    recv: VecDeque<RecvWqe>,
    /// The receive WQE of the SEND in progress.
    send_wqe: Option<RecvWqe>,
    /// (PSN, original value) of the latest atomics.
    atomics: VecDeque<(Psn, u64)>,
}

impl Responder {
    /// Bytes from the start that a WRITE packet reads.
    #[cfg(test)]
    pub const HOT_BYTES: usize = std::mem::offset_of!(Responder, read_max) + 4;

    /// A responder that expects the PSN `first` first (the QP's `rq_psn`).
    pub fn new(first: Psn) -> Responder {
        Responder {
            epsn: first,
            read_max: first,
            ..Responder::default()
        }
    }

    pub fn post_recv(&mut self, wqe: RecvWqe) {
        self.recv.push_back(wqe);
    }

    /// The next PSN taken in order.
    #[inline]
    pub fn expected(&self) -> Psn {
        self.epsn
    }

    #[cfg(test)]
    pub fn epsn(&self) -> u32 {
        self.epsn.wire()
    }

    #[inline]
    pub fn has_data(&self) -> bool {
        !self.reads.is_empty()
    }

    /// Processes a Request packet (WRITE/SEND data, READ or atomic request).
    #[inline(always)]
    pub fn on_request(&mut self, cx: &mut Ctx, pkt: &Packet) -> RxOutcome {
        let (now, qp, cfg) = (cx.now, cx.qp, cx.cfg);
        let mut out = RxOutcome {
            reply: Reply::None,
            read_queued: false,
            malformed: false,
        };
        let psn = Psn::from_wire(pkt.psn, self.epsn);
        let ahead = psn.diff(self.epsn);
        if ahead > 0 {
            cx.out_of_order(ahead as u32);
            cx.stats.out_of_order_dropped += 1;
            if !self.nak_sent {
                self.nak_sent = true;
                out.reply = Reply::Nack(self.epsn, pkt.ce);
            }
            return out;
        }
        if ahead < 0 {
            cx.duplicate();
            if pkt.verb == Verb::Read {
                let Some(end) = read_end(psn, pkt.msg_len, cfg.mtu).filter(|e| e.le(self.epsn))
                else {
                    out.malformed = true;
                    return out;
                };
                self.requeue_read(ReadJob {
                    verb: Verb::Read,
                    addr: pkt.addr,
                    value: 0,
                    first_psn: psn,
                    next_psn: psn,
                    end_psn: end,
                    msg_len: pkt.msg_len,
                });
                out.read_queued = true;
            } else if pkt.verb.is_atomic() {
                // The newest first: an entry from 2^32 PSNs ago has the
                // same number.
                let hit = self.atomics.iter().rev().find(|(p, _)| *p == psn);
                if let Some(&(_, value)) = hit {
                    self.requeue_read(ReadJob {
                        verb: pkt.verb,
                        addr: pkt.addr,
                        value,
                        first_psn: psn,
                        next_psn: psn,
                        end_psn: psn + 1,
                        msg_len: ATOMIC_BYTES as u64,
                    });
                    out.read_queued = true;
                }
            } else {
                let ce = self.ce_pending || pkt.ce;
                self.unacked = 0;
                self.ce_pending = false;
                out.reply = Reply::Ack(self.epsn, ce);
            }
            return out;
        }
        // In order.
        cx.in_order();
        let (stats, events, dma) = (&mut *cx.stats, &mut *cx.events, &mut *cx.dma);
        if pkt.verb.reads() {
            if self.cur != InMsg::None {
                out.malformed = true;
                return out;
            }
            let end = if pkt.verb.is_atomic() {
                Some(psn + 1)
            } else {
                read_end(psn, pkt.msg_len, cfg.mtu)
            };
            let Some(end) = end else {
                out.malformed = true;
                return out;
            };
            let mut job = ReadJob {
                verb: pkt.verb,
                addr: pkt.addr,
                value: 0,
                first_psn: psn,
                next_psn: psn,
                end_psn: end,
                msg_len: pkt.msg_len,
            };
            if pkt.verb.is_atomic() {
                let Some(old) = dma.atomic(pkt.verb, pkt.addr, pkt.imm, pkt.compare) else {
                    stats.access_errors += 1;
                    return out;
                };
                job.value = old;
                job.msg_len = ATOMIC_BYTES as u64;
                if self.atomics.len() == ATOMIC_CACHE {
                    self.atomics.pop_front();
                }
                self.atomics.push_back((psn, old));
            }
            self.nak_sent = false;
            self.epsn = end;
            self.bound_read_max();
            self.reads.push_back(job);
            out.read_queued = true;
        } else {
            let in_msg = self.cur != InMsg::None;
            if pkt.first == in_msg || pkt.payload > cfg.mtu {
                out.malformed = true;
                return out;
            }
            let is_send = pkt.verb == Verb::Send;
            let needs_recv = (is_send && pkt.first) || (pkt.verb == Verb::WriteImm && pkt.last);
            if needs_recv && self.recv.is_empty() {
                // RNR: drop silently, suppress NACKs for the rest of
                // the message; the requester's RTO retries.
                stats.rnr_drops += 1;
                self.nak_sent = true;
                return out;
            }
            let prev = self.cur;
            if is_send && pkt.first {
                self.send_wqe = Some(self.recv.pop_front().expect("checked"));
                self.cur = InMsg::Send(0);
            } else if !is_send && pkt.first {
                self.cur = InMsg::Write(0);
            }
            let before = match (self.cur, is_send) {
                (InMsg::Send(b), true) | (InMsg::Write(b), false) => b,
                _ => {
                    out.malformed = true;
                    return out;
                }
            };
            let total = before + pkt.payload as u64;
            let placed = if is_send {
                // A SEND lands in its receive buffer, which it may not
                // overrun.
                match self.send_wqe {
                    Some(w) => total <= w.len && dma.place(w.addr + before),
                    None => dma.place(pkt.addr),
                }
            } else {
                dma.place(pkt.addr)
            };
            if !placed {
                // A first packet that cannot be placed starts nothing: a
                // forged one must not leave the QP inside a message that
                // refuses the real first packet.
                if pkt.first {
                    self.cur = prev;
                    if is_send {
                        if let Some(w) = self.send_wqe.take() {
                            self.recv.push_front(w);
                        }
                    }
                }
                stats.access_errors += 1;
                return out;
            }
            self.cur = if is_send {
                InMsg::Send(total)
            } else {
                InMsg::Write(total)
            };
            self.nak_sent = false;
            self.epsn += 1;
            if pkt.last {
                let (wr_id, imm) = match pkt.verb {
                    Verb::Send => (self.send_wqe.take().map_or(0, |w| w.wr_id), pkt.imm),
                    Verb::WriteImm => (self.recv.pop_front().expect("checked").wr_id, pkt.imm),
                    _ => (0, 0),
                };
                self.cur = InMsg::None;
                self.bound_read_max();
                events.push_back(Event::Completion(Completion {
                    qp,
                    wr_id,
                    verb: pkt.verb,
                    len: total,
                    side: CompletionSide::Responder,
                    at: now,
                    imm,
                }));
            }
            self.unacked += 1;
            self.ce_pending |= pkt.ce;
            if self.unacked >= cfg.ack_every.max(1) || pkt.last {
                out.reply = Reply::Ack(self.epsn, self.ce_pending);
                self.unacked = 0;
                self.ce_pending = false;
            }
        }
        out
    }

    /// Keeps `read_max` no more than `MAX_PSN_SPAN` below the ePSN, where
    /// its serial order with the PSNs of new responses stays defined (the
    /// ePSN moves by at most a message between two calls). No valid
    /// request lies farther below the ePSN, so for every response the
    /// responder can send, "below `read_max`" is unchanged.
    #[inline]
    fn bound_read_max(&mut self) {
        if self.epsn.since(self.read_max) > MAX_PSN_SPAN {
            self.read_max = self.epsn - MAX_PSN_SPAN;
        }
    }

    fn requeue_read(&mut self, job: ReadJob) {
        let psn = job.first_psn;
        // Drop queued responses from `psn` on: the re-issued request covers
        // them (or, for later READs, go-back-N will request them again).
        while let Some(back) = self.reads.back_mut() {
            if back.end_psn.le(psn) {
                break;
            }
            if back.next_psn.lt(psn) {
                back.end_psn = psn;
                break;
            }
            self.reads.pop_back();
        }
        self.reads.push_back(job);
    }

    /// Builds the next READ or atomic response packet (addresses filled by
    /// the caller), reading the data from memory.
    pub fn next_packet(
        &mut self,
        now: Time,
        cfg: &NicConfig,
        stats: &mut NicStats,
        dma: &mut Dma,
    ) -> Packet {
        let job = self
            .reads
            .front_mut()
            .expect("next_packet without READ responses");
        let psn = job.next_psn;
        let idx = psn.since(job.first_psn);
        let payload = response_payload(job.verb, job.msg_len, cfg.mtu, idx);
        if job.verb.is_atomic() {
            dma.put(&job.value.to_le_bytes());
        } else if !dma.fetch(job.addr + offset_of(cfg.mtu, idx), payload) {
            stats.access_errors += 1;
        }
        let pkt = Packet {
            src: 0,
            dst: 0,
            src_qp: 0,
            dst_qp: 0,
            sport: 0,
            kind: PacketKind::ReadResponse,
            verb: job.verb,
            psn: psn.wire(),
            payload,
            wire: payload + cfg.header_bytes,
            priority: cfg.data_priority,
            ce: false,
            ecn_echo: false,
            first: psn == job.first_psn,
            last: psn + 1 == job.end_psn,
            msg_len: job.msg_len,
            sent_at: now,
            ipsn: idx,
            ..Packet::default()
        };
        job.next_psn += 1;
        if job.next_psn == job.end_psn {
            self.reads.pop_front();
        }
        if psn.lt(self.read_max) {
            stats.retransmitted_packets += 1;
        }
        self.read_max = self.read_max.max(psn + 1);
        pkt
    }
}

/// One past the last PSN of a READ of `len` bytes from `psn`; None if it
/// takes more PSNs than a QP may have in use.
#[inline]
fn read_end(psn: Psn, len: u64, mtu: u32) -> Option<Psn> {
    let n = npkts(len, mtu).filter(|&n| n <= MAX_PSN_SPAN)?;
    Some(psn + n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(psn: u32, verb: Verb, first: bool, last: bool, payload: u32) -> Packet {
        Packet {
            src: 1,
            dst: 0,
            src_qp: 0,
            dst_qp: 0,
            sport: 7,
            kind: PacketKind::Request,
            verb,
            psn,
            payload,
            wire: payload + 48,
            priority: 3,
            ce: false,
            ecn_echo: false,
            first,
            last,
            msg_len: 0,
            sent_at: 5,
            ..Packet::default()
        }
    }

    struct H {
        r: Responder,
        c: NicConfig,
        st: NicStats,
        ev: VecDeque<Event>,
    }
    impl H {
        fn new(ack_every: u32) -> H {
            H {
                r: Responder::default(),
                c: NicConfig {
                    ack_every,
                    ..NicConfig::default()
                },
                st: NicStats::default(),
                ev: VecDeque::new(),
            }
        }
        fn rx(&mut self, p: Packet) -> Reply {
            self.r
                .on_request(
                    &mut Ctx::test(
                        0,
                        0,
                        &self.c,
                        &mut self.st,
                        &mut self.ev,
                        &mut VecDeque::new(),
                        &mut Dma::none(),
                    ),
                    &p,
                )
                .reply
        }
    }

    #[test]
    fn acks_every_nth_and_last_and_ors_ce() {
        let mut h = H::new(3);
        let mut reps = vec![];
        for i in 0..5 {
            let mut p = data(i, Verb::Write, i == 0, i == 4, 1000);
            p.ce = i == 3;
            reps.push(h.rx(p));
        }
        assert_eq!(
            reps,
            vec![
                Reply::None,
                Reply::None,
                Reply::Ack(Psn::new(3), false),
                Reply::None,
                Reply::Ack(Psn::new(5), true)
            ]
        );
        let c: Vec<_> = h.ev.drain(..).collect();
        assert_eq!(c.len(), 1);
        let Event::Completion(c) = c[0];
        assert_eq!(
            (c.wr_id, c.len, c.side, c.verb),
            (0, 5000, CompletionSide::Responder, Verb::Write)
        );
    }

    #[test]
    fn one_nack_per_gap_and_reack_duplicates() {
        let mut h = H::new(1);
        assert_eq!(
            h.rx(data(0, Verb::Write, true, false, 1000)),
            Reply::Ack(Psn::new(1), false)
        );
        // 1 lost: 2, 3, 4 out of order -> a single NACK(1).
        let r: Vec<_> = (2..5)
            .map(|i| h.rx(data(i, Verb::Write, false, false, 1000)))
            .collect();
        assert_eq!(
            r,
            vec![Reply::Nack(Psn::new(1), false), Reply::None, Reply::None]
        );
        assert_eq!(h.st.out_of_order_dropped, 3);
        // The gap is filled; a new gap NACKs again.
        assert_eq!(
            h.rx(data(1, Verb::Write, false, false, 1000)),
            Reply::Ack(Psn::new(2), false)
        );
        assert_eq!(
            h.rx(data(3, Verb::Write, false, false, 1000)),
            Reply::Nack(Psn::new(2), false)
        );
        // Duplicate: re-ACK ePSN.
        assert_eq!(
            h.rx(data(0, Verb::Write, true, false, 1000)),
            Reply::Ack(Psn::new(2), false)
        );
        assert_eq!(h.st.duplicates_received, 1);
    }

    #[test]
    fn send_consumes_recv_wqes_in_order_and_rnr_drops() {
        let mut h = H::new(1);
        // No receive posted: RNR drop, silent; the next packets do not NACK.
        assert_eq!(h.rx(data(0, Verb::Send, true, false, 1000)), Reply::None);
        assert_eq!(h.rx(data(1, Verb::Send, false, true, 10)), Reply::None);
        assert_eq!(h.st.rnr_drops, 1);
        h.r.post_recv(RecvWqe {
            wr_id: 11,
            addr: 0,
            len: 2000,
        });
        h.r.post_recv(RecvWqe {
            wr_id: 12,
            addr: 0,
            len: 2000,
        });
        assert_eq!(
            h.rx(data(0, Verb::Send, true, false, 1000)),
            Reply::Ack(Psn::new(1), false)
        );
        assert_eq!(
            h.rx(data(1, Verb::Send, false, true, 10)),
            Reply::Ack(Psn::new(2), false)
        );
        assert_eq!(
            h.rx(data(2, Verb::Send, true, true, 0)),
            Reply::Ack(Psn::new(3), false)
        );
        let got: Vec<_> =
            h.ev.drain(..)
                .map(|e| match e {
                    Event::Completion(c) => (c.wr_id, c.len),
                })
                .collect();
        assert_eq!(got, vec![(11, 1010), (12, 0)]);
    }

    #[test]
    fn read_request_queues_responses_and_duplicate_reexecutes() {
        let mut h = H::new(1);
        let mut rq = data(0, Verb::Read, true, true, 0);
        rq.msg_len = 2500;
        let o = h.r.on_request(
            &mut Ctx::test(
                0,
                0,
                &h.c,
                &mut h.st,
                &mut h.ev,
                &mut VecDeque::new(),
                &mut Dma::none(),
            ),
            &rq,
        );
        assert!(o.read_queued && o.reply == Reply::None);
        assert_eq!(h.r.epsn(), 3);
        let p0 = h.r.next_packet(1, &h.c, &mut h.st, &mut Dma::none());
        assert_eq!(
            (p0.psn, p0.payload, p0.first, p0.last),
            (0, 1000, true, false)
        );
        // Re-issue for the remainder from PSN 1 (1500 bytes): replaces the queue.
        let mut rq2 = data(1, Verb::Read, false, true, 0);
        rq2.msg_len = 1500;
        h.r.on_request(
            &mut Ctx::test(
                2,
                0,
                &h.c,
                &mut h.st,
                &mut h.ev,
                &mut VecDeque::new(),
                &mut Dma::none(),
            ),
            &rq2,
        );
        let rest: Vec<_> = std::iter::from_fn(|| {
            h.r.has_data()
                .then(|| h.r.next_packet(3, &h.c, &mut h.st, &mut Dma::none()))
        })
        .map(|p| (p.psn, p.payload, p.last))
        .collect();
        assert_eq!(rest, vec![(1, 1000, false), (2, 500, true)]);
        assert_eq!(h.st.retransmitted_packets, 0);
        // A bogus duplicate READ reaching past ePSN is malformed, and so is
        // a READ longer than the PSN space.
        let mut rq3 = data(2, Verb::Read, false, true, 0);
        rq3.msg_len = 5000;
        assert!(
            h.r.on_request(
                &mut Ctx::test(
                    4,
                    0,
                    &h.c,
                    &mut h.st,
                    &mut h.ev,
                    &mut VecDeque::new(),
                    &mut Dma::none()
                ),
                &rq3
            )
            .malformed
        );
        let mut rq4 = data(3, Verb::Read, true, true, 0);
        rq4.msg_len = u64::MAX;
        assert!(
            h.r.on_request(
                &mut Ctx::test(
                    5,
                    0,
                    &h.c,
                    &mut h.st,
                    &mut h.ev,
                    &mut VecDeque::new(),
                    &mut Dma::none()
                ),
                &rq4
            )
            .malformed
        );
        assert_eq!(h.r.epsn(), 3);
    }
}
