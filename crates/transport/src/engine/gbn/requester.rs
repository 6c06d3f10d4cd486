//! The requester half of an RC queue pair: the send queue of posted work
//! requests, PSN assignment and segmentation, cumulative ACK / NACK
//! processing with go-back-N, READ responses (received strictly in order;
//! a gap drops the rest and re-issues the READ from the first missing PSN),
//! the retransmission timeout and in-order requester completions.
//! Atomics are single-packet READs whose one response carries the 8-byte
//! original value; WRITE with immediate is a WRITE on this side.
//!
//! PSN state (the QP's 32-bit PSNs in serial arithmetic, `crate::psn`:
//! every PSN below lies within the span of the PSNs posted and not
//! completed, which `post` keeps within `MAX_PSN_SPAN`, so their serial
//! order is defined):
//! - `next_psn`: the first PSN of the next message posted;
//! - `snd_una`: everything below is done (WRITE/SEND acknowledged, READ
//!   response data received);
//! - `snd_nxt`: the next PSN to (re)transmit;
//! - `snd_max`: one past the highest PSN ever sent (retransmission accounting);
//! - `acked`: the responder's highest reported ePSN. It can run ahead of
//!   `snd_una` past a READ whose responses are still on their way (ACKs
//!   of later WRITEs overtake READ responses queued at the responder), so
//!   the READ itself only completes on its data. Never below `snd_una`.
//!
//! ACKs, NACKs and READ responses carry the low 24 bits of a PSN, read
//! back relative to `snd_una`: right while fewer than 2^23 PSNs are
//! outstanding, as IB requires. Go-back-N does not count them: what it
//! sends beyond `snd_una` is bounded by the line rate times the round trip
//! while ACKs come, and times the retransmission timeout when they stop (a
//! 4 ms RTO at 400 Gb/s lets out 660 000 packets of 256 bytes).
//!
//! A READ of n response packets takes n PSNs; its request is one packet
//! carrying the first PSN and the byte count still wanted. A READ response
//! implicitly acknowledges every request before its READ (the responder
//! only answers a READ once it reached it in order). A lost tail response,
//! or responses lost while an ACK for a later PSN arrived, are recovered by
//! the retransmission timeout (no "implied NAK").

use std::collections::VecDeque;

use crate::api::{Completion, Event, NicConfig, NicStats, QpId, WorkRequest};
use crate::memory::Dma;
use crate::packet::{Packet, PacketKind, Verb, ATOMIC_BYTES};
use crate::psn::Psn;
use crate::rc::{
    data_packet, fetch_payload, offset_of, payload_of, psn_room, reserve_psns, response_payload,
    wqe_npkts, Ctx, Data, Outcome, MAX_RD_ATOMIC,
};
use engine::Time;

/// A posted send WQE (64 bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct SendWqe {
    first_psn: Psn,
    npkts: u32,
    len: u64,
    remote_addr: u64,
    local_addr: u64,
    imm: u64,
    compare: u64,
    verb: Verb,
    wr_id: u64,
}

impl SendWqe {
    #[inline]
    fn end(&self) -> Psn {
        self.first_psn + self.npkts
    }
}

/// Laid out in declaration order (`repr(C)`), on the QP's lines 1-2 (see
/// `Qp`): the PSNs and the timer, then a copy of the WQE being sent, so
/// that sending a packet or taking an ACK reads no line of the send queue's
/// own allocation (at scale, a miss and often a TLB miss of its own). The
/// queue is read when a WQE starts being sent or completes.
#[derive(Debug, Default)]
#[repr(C)]
pub(crate) struct Requester {
    next_psn: Psn,
    snd_una: Psn,
    snd_nxt: Psn,
    snd_max: Psn,
    acked: Psn,
    /// `wqes.front()`'s end PSN and whether it reads (valid if any).
    front_end: Psn,
    /// Index in `wqes` of the WQE containing `snd_nxt` (== len if none).
    cursor: u32,
    front_reads: bool,
    /// Retransmission deadline; Some iff data is outstanding.
    pub rto_deadline: Option<Time>,
    /// `wqes[cursor]` (valid if `cursor < wqes.len()`).
    cur: SendWqe,
    wqes: VecDeque<SendWqe>,
    /// A READ-response gap at this `snd_una` already triggered a re-issue
    /// (one re-issue per gap episode, like the responder's NAK state).
    read_rewound_at: Option<Psn>,
}

impl Requester {
    /// Bytes from the start that sending a packet or taking an ACK reads.
    #[cfg(test)]
    pub const HOT_BYTES: usize =
        std::mem::offset_of!(Requester, cur) + std::mem::size_of::<SendWqe>();

    /// A requester whose first PSN is `first` (the QP's `sq_psn`).
    pub fn new(first: Psn) -> Requester {
        Requester {
            next_psn: first,
            snd_una: first,
            snd_nxt: first,
            snd_max: first,
            acked: first,
            front_end: first,
            ..Requester::default()
        }
    }

    /// PSNs a new message may still take.
    pub fn psn_room(&self) -> u32 {
        let oldest = self.wqes.front().map_or(self.next_psn, |w| w.first_psn);
        psn_room(self.next_psn, oldest)
    }

    pub fn post(&mut self, wr: WorkRequest, mtu: u32) {
        let len = if wr.verb.is_atomic() {
            ATOMIC_BYTES as u64
        } else {
            wr.len
        };
        let n = wqe_npkts(wr.verb, len, mtu);
        let oldest = self.wqes.front().map_or(self.next_psn, |w| w.first_psn);
        let (first_psn, npkts) = reserve_psns(&mut self.next_psn, oldest, n);
        self.wqes.push_back(SendWqe {
            wr_id: wr.wr_id,
            verb: wr.verb,
            len,
            first_psn,
            npkts,
            remote_addr: wr.remote_addr,
            local_addr: wr.local_addr,
            imm: wr.imm,
            compare: wr.compare,
        });
        if self.wqes.len() == 1 {
            self.load_front();
        }
        if self.cursor as usize == self.wqes.len() - 1 {
            self.load_cur();
        }
    }

    /// Something is waiting to be (re)transmitted, and may go.
    #[inline]
    pub fn has_data(&self) -> bool {
        self.snd_nxt.lt(self.next_psn) && !self.rd_atomic_limited()
    }

    /// The WQE at `snd_nxt` is a READ or atomic and [`MAX_RD_ATOMIC`] of
    /// them are already outstanding before it.
    #[inline]
    fn rd_atomic_limited(&self) -> bool {
        self.cursor as usize >= MAX_RD_ATOMIC && self.rd_atomic_full()
    }

    /// The counting half of [`Self::rd_atomic_limited`], kept out of line so
    /// that `has_data`, asked several times per packet, inlines.
    #[inline(never)]
    fn rd_atomic_full(&self) -> bool {
        self.cur.verb.reads()
            && self
                .wqes
                .range(..self.cursor as usize)
                .filter(|w| w.verb.reads())
                .count()
                >= MAX_RD_ATOMIC
    }

    /// Sent but not done.
    #[inline]
    pub fn outstanding(&self) -> bool {
        self.snd_una.lt(self.snd_nxt)
    }

    /// See `crate::engine::EngineOps::last_write`: `snd_nxt` is the last
    /// PSN posted, and its WQE a WRITE.
    pub fn last_write(&self) -> Option<(Psn, Psn)> {
        let w = self.wqes.back()?;
        (w.verb == Verb::Write && self.snd_nxt + 1 == self.next_psn)
            .then_some((self.snd_nxt, self.snd_una))
    }

    /// (`snd_una`, `snd_nxt`).
    #[inline(always)]
    pub fn span(&self) -> (Psn, Psn) {
        (self.snd_una, self.snd_nxt)
    }

    #[cfg(test)]
    pub fn snd_una(&self) -> u32 {
        self.snd_una.wire()
    }
    #[cfg(test)]
    pub fn snd_nxt(&self) -> u32 {
        self.snd_nxt.wire()
    }

    /// Builds the next packet from `snd_nxt` and advances it. The caller
    /// fills the addresses and `sent_at`; `has_data()` must be true.
    #[inline]
    pub fn next_packet(
        &mut self,
        now: Time,
        cfg: &NicConfig,
        stats: &mut NicStats,
        dma: &mut Dma,
    ) -> Packet {
        debug_assert_eq!(Some(&self.cur), self.wqes.get(self.cursor as usize));
        let w = self.cur;
        let psn = self.snd_nxt;
        let idx = psn.since(w.first_psn);
        let mtu = cfg.mtu;
        let off = offset_of(mtu, idx).min(w.len);
        let (payload, msg_len, first, last, next) = if w.verb.reads() {
            // Re-issued READs ask only for the remainder.
            let asked = w.len - off;
            (0, asked, idx == 0, true, w.end())
        } else {
            let pl = payload_of(w.len, mtu, idx);
            fetch_payload(dma, stats, w.local_addr + off, pl);
            (pl, w.len, idx == 0, idx + 1 == w.npkts, psn + 1)
        };
        let addr = match w.verb {
            Verb::Send => off,
            _ => w.remote_addr + off,
        };
        if psn.lt(self.snd_max) {
            stats.retransmitted_packets += 1;
        }
        self.snd_nxt = next;
        // The WQE's last packet (a READ request is its only one).
        if last {
            self.cursor += 1;
            self.load_cur();
        }
        self.snd_max = self.snd_max.max(next);
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + cfg.rto_for(self.snd_max.since(self.snd_una)));
        }
        let data = Data {
            kind: PacketKind::Request,
            verb: w.verb,
            psn: psn.wire(),
            // A READ request asks for `msg_len` bytes from its own.
            ipsn: if w.verb.reads() { 0 } else { idx },
            payload,
            first,
            last,
            msg_len,
            addr,
            imm: w.imm,
            compare: w.compare,
            wqe_sn: 0,
        };
        data_packet(cfg, now, data)
    }

    /// Cumulative ACK: the responder expects `psn` (24 bits) next.
    #[inline(always)]
    pub fn on_ack(
        &mut self,
        now: Time,
        qp: QpId,
        psn: u32,
        cfg: &NicConfig,
        events: &mut VecDeque<Event>,
    ) -> Outcome {
        self.on_cumulative(now, qp, psn, false, cfg, events)
    }

    /// Sequence error: the responder expects `psn` (24 bits); go back to
    /// it.
    pub fn on_nack(
        &mut self,
        now: Time,
        qp: QpId,
        psn: u32,
        cfg: &NicConfig,
        events: &mut VecDeque<Event>,
    ) -> Outcome {
        self.on_cumulative(now, qp, psn, true, cfg, events)
    }

    /// ACK and NACK both acknowledge everything below `psn`; a NACK also
    /// sends from `psn` again.
    #[inline(always)]
    fn on_cumulative(
        &mut self,
        now: Time,
        qp: QpId,
        psn: u32,
        nack: bool,
        cfg: &NicConfig,
        events: &mut VecDeque<Event>,
    ) -> Outcome {
        let psn = Psn::from_wire(psn, self.snd_una);
        if psn.gt(self.snd_max) {
            return Outcome { malformed: true };
        }
        let old = self.snd_una;
        self.acked = self.acked.max(psn);
        self.advance(now, qp, events);
        // A NACK below snd_una is stale (that gap was repaired already).
        if nack && psn.ge(self.snd_una) && psn.lt(self.snd_nxt) {
            self.go_back(psn);
        }
        self.finish(now, old, cfg)
    }

    /// A READ (or atomic) response arrived; in order, its payload is placed.
    pub fn on_read_response(&mut self, cx: &mut Ctx, pkt: &Packet) -> Outcome {
        let (now, qp, cfg) = (cx.now, cx.qp, cx.cfg);
        let (stats, events, dma) = (&mut *cx.stats, &mut *cx.events, &mut *cx.dma);
        let rx = &mut *cx.rx;
        let p = Psn::from_wire(pkt.psn, self.snd_una);
        let bad = Outcome { malformed: true };
        if p.ge(self.snd_max) {
            return bad;
        }
        if p.lt(self.snd_una) {
            rx.duplicates += 1;
            stats.duplicates_received += 1;
            return Outcome::default();
        }
        let i = self.wqes.partition_point(|w| w.end().le(p));
        let Some(&w) = self.wqes.get(i) else {
            return bad;
        };
        let idx = p.since(w.first_psn);
        if !w.verb.reads()
            || pkt.verb != w.verb
            || pkt.payload != response_payload(w.verb, w.len, cfg.mtu, idx)
        {
            return bad;
        }
        let old = self.snd_una;
        // Every request before this READ reached the responder.
        self.acked = self.acked.max(w.first_psn);
        self.advance(now, qp, events);
        if p == self.snd_una {
            stats.ood.in_order();
            if !dma.place(w.local_addr + offset_of(cfg.mtu, idx)) {
                stats.access_errors += 1;
            }
            self.snd_una = p + 1;
            // `acked` stays at or above `snd_una` (it would otherwise fall
            // behind, out of the span whose serial order is defined); the
            // same as leaving it, since only an `acked` above `snd_una`
            // moves anything.
            self.acked = self.acked.max(self.snd_una);
            self.advance(now, qp, events);
        } else {
            rx.out_of_order(&mut stats.ood, p.since(self.snd_una) as u64);
            stats.out_of_order_dropped += 1;
            let una = self.snd_una;
            if self.read_rewound_at != Some(una) && self.snd_nxt.gt(una) {
                self.read_rewound_at = Some(una);
                stats.read_reissues += 1;
                self.go_back(una);
            }
        }
        self.finish(now, old, cfg)
    }

    /// The retransmission timer fired at `now`. True if it expired (go back
    /// to `snd_una`).
    pub fn on_timer(&mut self, now: Time) -> bool {
        match self.rto_deadline {
            Some(d) if d <= now => {
                self.rto_deadline = None;
                if self.outstanding() {
                    self.read_rewound_at = None;
                    let una = self.snd_una;
                    self.go_back(una);
                    true
                } else {
                    false
                }
            }
            _ => false,
        }
    }

    /// Completes finished WQEs from the front, in post order, and moves
    /// `snd_una` over acknowledged WRITE/SEND PSNs.
    #[inline(always)]
    fn advance(&mut self, now: Time, qp: QpId, events: &mut VecDeque<Event>) {
        while !self.wqes.is_empty() {
            let end = self.front_end;
            if !self.front_reads && self.acked.gt(self.snd_una) {
                self.snd_una = self.acked.min(end);
            }
            let done = self.snd_una.ge(end);
            if !done {
                break;
            }
            let w = self.wqes.pop_front().expect("front exists");
            self.load_front();
            // The cursor's WQE is the same one; only its index moved (a
            // cursor at the popped WQE is recomputed below, since then
            // `snd_nxt < snd_una`).
            self.cursor = self.cursor.saturating_sub(1);
            events.push_back(Event::Completion(Completion::requester(
                qp, w.wr_id, w.verb, w.len, now,
            )));
        }
        if self.snd_nxt.lt(self.snd_una) {
            self.snd_nxt = self.snd_una;
            self.recompute_cursor();
        }
    }

    fn go_back(&mut self, psn: Psn) {
        self.snd_nxt = psn.max(self.snd_una);
        self.recompute_cursor();
    }

    fn recompute_cursor(&mut self) {
        let nxt = self.snd_nxt;
        // At most one WQE a PSN, and at most `MAX_PSN_SPAN` PSNs in use.
        self.cursor = self.wqes.partition_point(|w| w.end().le(nxt)) as u32;
        self.load_cur();
    }

    /// Copies `wqes[cursor]` into `cur` (whenever the cursor moves to
    /// another WQE).
    fn load_cur(&mut self) {
        if let Some(&w) = self.wqes.get(self.cursor as usize) {
            self.cur = w;
        }
    }

    /// Caches what `advance` reads of the front WQE.
    fn load_front(&mut self) {
        if let Some(w) = self.wqes.front() {
            self.front_end = w.end();
            self.front_reads = w.verb.reads();
        }
    }

    /// Timer bookkeeping after an input: restart on progress, clear when
    /// nothing is outstanding.
    #[inline(always)]
    fn finish(&mut self, now: Time, old_una: Psn, cfg: &NicConfig) -> Outcome {
        let progressed = self.snd_una.gt(old_una);
        if progressed {
            self.read_rewound_at = None;
        }
        if !self.outstanding() {
            self.rto_deadline = None;
        } else if progressed || self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + cfg.rto_for(self.snd_max.since(self.snd_una)));
        }
        Outcome { malformed: false }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rc::npkts;

    fn cfg() -> NicConfig {
        NicConfig::default()
    }

    fn wr(id: u64, verb: Verb, len: u64) -> WorkRequest {
        WorkRequest {
            wr_id: id,
            verb,
            len,
            ..WorkRequest::default()
        }
    }

    fn completions(ev: &mut VecDeque<Event>) -> Vec<u64> {
        ev.drain(..)
            .map(|e| match e {
                Event::Completion(c) => c.wr_id,
            })
            .collect()
    }

    #[test]
    fn segmentation() {
        assert_eq!(npkts(0, 1000), Some(1));
        assert_eq!(npkts(1000, 1000), Some(1));
        assert_eq!(npkts(1001, 1000), Some(2));
        assert_eq!(npkts(u64::MAX, 1000), None);
        assert_eq!(payload_of(2500, 1000, 2), 500);
        assert_eq!(payload_of(0, 1000, 0), 0);
        let c = cfg();
        let mut st = NicStats::default();
        let mut r = Requester::default();
        r.post(wr(1, Verb::Write, 2500), c.mtu);
        r.post(wr(2, Verb::Send, 0), c.mtu);
        let pk: Vec<Packet> = (0..4)
            .map(|_| r.next_packet(0, &c, &mut st, &mut Dma::none()))
            .collect();
        assert!(!r.has_data());
        let f = |p: &Packet| (p.psn, p.payload, p.wire, p.first, p.last, p.msg_len);
        assert_eq!(f(&pk[0]), (0, 1000, 1048, true, false, 2500));
        assert_eq!(f(&pk[1]), (1, 1000, 1048, false, false, 2500));
        assert_eq!(f(&pk[2]), (2, 500, 548, false, true, 2500));
        assert_eq!(f(&pk[3]), (3, 0, 48, true, true, 0));
        assert_eq!(pk[3].verb, Verb::Send);
    }

    #[test]
    fn read_request_consumes_psns_and_reissues_remainder() {
        let c = cfg();
        let mut st = NicStats::default();
        let mut ev = VecDeque::new();
        let mut r = Requester::default();
        r.post(wr(1, Verb::Read, 3500), c.mtu);
        r.post(wr(2, Verb::Write, 10), c.mtu);
        let req = r.next_packet(0, &c, &mut st, &mut Dma::none());
        assert_eq!(
            (req.psn, req.payload, req.wire, req.msg_len),
            (0, 0, 48, 3500)
        );
        let w = r.next_packet(0, &c, &mut st, &mut Dma::none());
        assert_eq!(w.psn, 4, "READ of 4 response packets took PSNs 0..4");
        // Response 0 arrives, then 2 (1 lost): gap -> re-issue from 1.
        let resp = |psn: u32, payload: u32| Packet {
            kind: PacketKind::ReadResponse,
            psn,
            payload,
            ..req
        };
        assert!(
            !r.on_read_response(
                &mut Ctx::test(
                    1,
                    0,
                    &c,
                    &mut st,
                    &mut ev,
                    &mut VecDeque::new(),
                    &mut Dma::none()
                ),
                &resp(0, 1000)
            )
            .malformed
        );
        assert_eq!(r.snd_una(), 1);
        let o = r.on_read_response(
            &mut Ctx::test(
                2,
                0,
                &c,
                &mut st,
                &mut ev,
                &mut VecDeque::new(),
                &mut Dma::none(),
            ),
            &resp(2, 1000),
        );
        assert!(!o.malformed);
        assert_eq!(r.snd_una(), 1);
        assert_eq!(st.out_of_order_dropped, 1);
        assert_eq!(r.snd_nxt(), 1);
        // A second out-of-order response does not rewind again.
        r.next_packet(3, &c, &mut st, &mut Dma::none());
        assert_eq!(r.snd_nxt(), 4);
        r.on_read_response(
            &mut Ctx::test(
                3,
                0,
                &c,
                &mut st,
                &mut ev,
                &mut VecDeque::new(),
                &mut Dma::none(),
            ),
            &resp(3, 500),
        );
        assert_eq!(r.snd_nxt(), 4);
        assert_eq!(st.read_reissues, 1);
        // The WRITE's ACK overtakes the READ responses: no completion yet.
        r.on_ack(4, 0, 5, &c, &mut ev);
        assert!(completions(&mut ev).is_empty());
        for (p, pl) in [(1, 1000), (2, 1000), (3, 500)] {
            r.on_read_response(
                &mut Ctx::test(
                    5,
                    0,
                    &c,
                    &mut st,
                    &mut ev,
                    &mut VecDeque::new(),
                    &mut Dma::none(),
                ),
                &resp(p, pl),
            );
        }
        assert_eq!(
            completions(&mut ev),
            vec![1, 2],
            "READ then WRITE, in order"
        );
        assert!(r.rto_deadline.is_none());
    }

    #[test]
    fn at_most_max_rd_atomic_reads_and_atomics_outstanding() {
        let c = cfg();
        let mut st = NicStats::default();
        let mut ev = VecDeque::new();
        let mut r = Requester::default();
        for id in 0..MAX_RD_ATOMIC as u64 + 1 {
            r.post(wr(id, Verb::FetchAdd, 8), c.mtu);
        }
        r.post(wr(99, Verb::Write, 10), c.mtu);
        let sent: Vec<Packet> = (0..MAX_RD_ATOMIC)
            .map(|_| r.next_packet(0, &c, &mut st, &mut Dma::none()))
            .collect();
        assert!(
            !r.has_data(),
            "the 17th atomic waits, and the WRITE behind it"
        );
        let resp = Packet {
            kind: PacketKind::ReadResponse,
            payload: ATOMIC_BYTES,
            ..sent[0]
        };
        r.on_read_response(
            &mut Ctx::test(
                1,
                0,
                &c,
                &mut st,
                &mut ev,
                &mut VecDeque::new(),
                &mut Dma::none(),
            ),
            &resp,
        );
        assert_eq!(completions(&mut ev), vec![0]);
        assert!(r.has_data());
        assert_eq!(r.next_packet(2, &c, &mut st, &mut Dma::none()).psn, 16);
    }

    #[test]
    fn reissued_read_asks_for_remainder() {
        let c = cfg();
        let mut st = NicStats::default();
        let mut ev = VecDeque::new();
        let mut r = Requester::default();
        r.post(wr(1, Verb::Read, 3500), c.mtu);
        let req = r.next_packet(0, &c, &mut st, &mut Dma::none());
        let resp = Packet {
            kind: PacketKind::ReadResponse,
            psn: 0,
            payload: 1000,
            ..req
        };
        r.on_read_response(
            &mut Ctx::test(
                1,
                0,
                &c,
                &mut st,
                &mut ev,
                &mut VecDeque::new(),
                &mut Dma::none(),
            ),
            &resp,
        );
        assert!(r.on_timer(1 + c.rto));
        let again = r.next_packet(2 + c.rto, &c, &mut st, &mut Dma::none());
        assert_eq!((again.psn, again.msg_len, again.first), (1, 2500, false));
        assert_eq!(st.retransmitted_packets, 1);
    }

    #[test]
    fn nack_goes_back_and_stale_nack_is_ignored() {
        let c = cfg();
        let mut st = NicStats::default();
        let mut ev = VecDeque::new();
        let mut r = Requester::default();
        r.post(wr(1, Verb::Write, 10_000), c.mtu);
        for _ in 0..8 {
            r.next_packet(0, &c, &mut st, &mut Dma::none());
        }
        r.on_nack(1, 0, 3, &c, &mut ev);
        assert_eq!((r.snd_una(), r.snd_nxt()), (3, 3));
        for _ in 0..2 {
            r.next_packet(2, &c, &mut st, &mut Dma::none());
        }
        assert_eq!(st.retransmitted_packets, 2);
        r.on_ack(3, 0, 4, &c, &mut ev);
        // A late duplicate NACK(3) is below snd_una: ignored.
        r.on_nack(4, 0, 3, &c, &mut ev);
        assert_eq!(r.snd_nxt(), 5);
        // A NACK beyond anything sent is malformed.
        assert!(r.on_nack(4, 0, 100, &c, &mut ev).malformed);
    }

    #[test]
    fn rto_restarts_on_progress_and_clears_when_idle() {
        let c = cfg();
        let mut st = NicStats::default();
        let mut ev = VecDeque::new();
        let mut r = Requester::default();
        r.post(wr(1, Verb::Write, 3000), c.mtu);
        for _ in 0..3 {
            r.next_packet(10, &c, &mut st, &mut Dma::none());
        }
        assert_eq!(r.rto_deadline, Some(10 + c.rto));
        r.on_ack(20, 0, 1, &c, &mut ev);
        assert_eq!(r.rto_deadline, Some(20 + c.rto));
        // A duplicate ACK is not progress.
        r.on_ack(30, 0, 1, &c, &mut ev);
        assert_eq!(r.rto_deadline, Some(20 + c.rto));
        assert!(!r.on_timer(20 + c.rto - 1));
        assert!(r.on_timer(20 + c.rto));
        assert_eq!(r.snd_nxt(), 1);
        assert_eq!(r.rto_deadline, None);
        r.next_packet(40, &c, &mut st, &mut Dma::none());
        r.next_packet(40, &c, &mut st, &mut Dma::none());
        r.on_ack(50, 0, 3, &c, &mut ev);
        assert_eq!(r.rto_deadline, None);
        assert_eq!(completions(&mut ev), vec![1]);
    }
}
