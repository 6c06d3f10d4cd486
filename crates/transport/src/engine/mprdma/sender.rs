//! The MP-RDMA sender (paper §3.2-§3.5): one congestion window for all
//! virtual paths, adjusted per ACK (+1/cwnd, or -1/2 on an ECN echo); the
//! NewReno-style `inflate` so that `awnd = cwnd + inflate - (snd_nxt -
//! snd_una)` (minus retransmissions in flight, which do not move snd_nxt);
//! multipath ACK clocking (an ACK grants sends on its own VP, at most two,
//! the rest by later ACKs or, if none comes for half an RTT, to random VPs
//! by the burst timer); "use it or lose it"; path probing; out-of-order-
//! aware path selection; loss repair (NACK recovery, the hole at `snd_una`
//! resent early and again if still missing, the timeout); the synchronise
//! gate and the resend of synchronise messages that arrived early.
//! docs/mprdma.md lists where this departs from the paper, and why.
//!
//! Granted sends wait in `tokens` (the VP each will use) until the NIC's
//! scheduler serves the QP: the NIC port may be busy when the ACK arrives.
//! An ACK adds grants only up to `floor(awnd)`; a later cwnd decrease does
//! not revoke them (that would punish whichever VPs happen to be queued,
//! not the ECN-marked path) but holds them until the window reopens: the
//! ACKs that would have reopened it add no grant of their own.
//!
//! PSNs (from the QP's `sq_psn`) and MSNs are the QP's 32-bit serial
//! numbers (`crate::psn`), 24 bits on the wire; an ACK's PSNs are read
//! back relative to `snd_una`. `post` keeps the PSNs from the oldest
//! message not acknowledged to the next within `MAX_PSN_SPAN`. The PSN
//! fields that could otherwise fall behind that span are kept up: `early`
//! moves with `snd_una`; a resend is dropped ([`Resend::Passed`]) once
//! `snd_una` passes it; `hole` and the synchronise state are cleared as
//! they were; the recovery fields are set afresh when a recovery starts;
//! `snd_ooh` follows every new selective ack.

use std::collections::VecDeque;

use super::config::{MpRdmaConfig, SenderMode, SyncMode};
use crate::api::{Completion, Event, NicConfig, NicStats, QpId, WorkRequest};
use crate::memory::Dma;
use crate::packet::{MpHeader, Packet, PacketKind, Verb};
use crate::psn::{Msn, Psn};
use crate::rc::{
    data_packet, fetch_payload, npkts, offset_of, payload_of, psn_room, reserve_psns, Data,
};
use engine::{Rng, Time};

/// An ACK clocks out at most this many packets on its VP.
const BURST_PER_ACK: usize = 2;
/// Early retransmission resends a packet once at least this many later
/// PSNs were selectively acknowledged (TCP's duplicate-ACK threshold), more
/// if the connection has shown more reordering (`Sender::reorder`).
const EARLY_RETX_GAP: u32 = 3;
/// Idle time, in RTTs, after which the window restarts from IW.
const IDLE_RTTS: u64 = 3;
const MIN_CWND: f64 = 1.0;

#[derive(Clone, Copy, Debug)]
struct SendWqe {
    wr_id: u64,
    verb: Verb,
    len: u64,
    /// WRITE: where the message goes at the receiver.
    remote_addr: u64,
    /// Where the payload is read from.
    local_addr: u64,
    /// SEND with immediate: the immediate.
    imm: u64,
    first_psn: Psn,
    npkts: u32,
    /// SEND: the message sequence number (which receive WQE), as it goes
    /// on the wire (24 bits; WRITEs carry 0).
    msn: u32,
    sync: bool,
    /// A synchronise message the receiver NACKed for arriving early
    /// (counted once in `mp_sync_early`).
    early: bool,
}

impl SendWqe {
    fn end(&self) -> Psn {
        self.first_psn + self.npkts
    }
}

/// What the next granted send carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Choice {
    /// Retransmit this PSN: a lost hole's resend, a synchronise message's
    /// resend, or recovery.
    Retx(Psn),
    /// New data at `snd_nxt`.
    New,
    /// No new data may go: retransmit the hole at `snd_una` early.
    Early(Psn),
    None,
}

/// The resend of a lost hole (see `Sender::hole`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Resend {
    /// None waits.
    Idle,
    /// This PSN (at or above `snd_una`) goes again.
    Due(Psn),
    /// A resend was acknowledged before it went. From then on no hole is
    /// resent again (`hole_deadline`): that is how this sender has always
    /// behaved (it kept such a resend waiting for good, below `snd_una`),
    /// kept so that outputs do not move.
    Passed,
}

#[derive(Debug)]
pub(crate) struct Sender {
    cfg: MpRdmaConfig,
    wqes: VecDeque<SendWqe>,
    /// Index in `wqes` of the WQE holding `snd_nxt`.
    cursor: usize,
    next_psn: Psn,
    /// MSN of the next SEND.
    send_msn: Msn,
    pub snd_una: Psn,
    pub snd_nxt: Psn,
    pub cwnd: f64,
    pub inflate: i64,
    /// Retransmissions sent and not yet answered (they take window space
    /// without moving snd_nxt).
    retx_out: u32,
    pub snd_ooh: Psn,
    /// The largest reordering seen: how far the selective acks had got
    /// ahead of a hole at `snd_una` that its first transmission filled.
    reorder: u32,
    pub in_recovery: bool,
    recovery: Psn,
    snd_retx: Psn,
    /// One past the last PSN retransmitted early (each hole goes once), or
    /// `snd_una` if that is later.
    early: Psn,
    pub tokens: VecDeque<u16>,
    rng: Rng,
    pub srtt: Time,
    last_probe: Time,
    last_send: Option<Time>,
    burst_at: Option<Time>,
    /// The next new packet starts a synchronise message that may not go yet.
    gated: bool,
    /// When the delayed synchronise gate opens (Delayed mode).
    gate_at: Option<Time>,
    rto_deadline: Option<Time>,
    base_sport: u16,
    /// The hole (`snd_una`, retransmitted) and when it last went: if it is
    /// still missing two RTTs later, its resend was lost too and it goes
    /// again (`resend`) rather than waiting for the timeout.
    hole: Option<(Psn, Time)>,
    resend: Resend,
    /// Synchronise messages were dropped for arriving early: (the lowest
    /// first PSN NACKed, `snd_nxt` when NACKed). While `snd_una` is in this
    /// range, a synchronise message starting at `snd_una` is resent whole:
    /// everything before it is then acknowledged, so the retry cannot be
    /// early again.
    sync_nacked: Option<(Psn, Psn)>,
    /// The message being resent: (next PSN, end).
    sync_retry: Option<(Psn, Psn)>,
}

impl Sender {
    /// A sender whose first PSN is `first`.
    pub fn new(cfg: MpRdmaConfig, base_sport: u16, rng: Rng, first: Psn) -> Sender {
        Sender {
            cfg,
            wqes: VecDeque::new(),
            cursor: 0,
            next_psn: first,
            send_msn: Msn::initial(0),
            snd_una: first,
            snd_nxt: first,
            cwnd: cfg.initial_window as f64,
            inflate: 0,
            retx_out: 0,
            snd_ooh: first,
            reorder: 0,
            in_recovery: false,
            recovery: first,
            snd_retx: first,
            early: first,
            tokens: VecDeque::new(),
            rng,
            srtt: 0,
            last_probe: 0,
            last_send: None,
            burst_at: None,
            gated: false,
            gate_at: None,
            rto_deadline: None,
            base_sport,
            hole: None,
            resend: Resend::Idle,
            sync_nacked: None,
            sync_retry: None,
        }
    }

    /// Posts a WRITE or SEND. Panics on READ (not carried by MP-RDMA here).
    /// PSNs a new message may still take.
    pub fn psn_room(&self) -> u32 {
        let oldest = self.wqes.front().map_or(self.next_psn, |w| w.first_psn);
        psn_room(self.next_psn, oldest)
    }

    pub fn post(&mut self, now: Time, wr: WorkRequest, sync: bool, mtu: u32) {
        let msn = match wr.verb {
            Verb::Send => {
                let m = self.send_msn;
                self.send_msn += 1;
                m.wire()
            }
            Verb::Write => 0,
            v => panic!("MP-RDMA QPs carry WRITE and SEND only, not {v:?}"),
        };
        let oldest = self.wqes.front().map_or(self.next_psn, |w| w.first_psn);
        let (first_psn, n) = reserve_psns(&mut self.next_psn, oldest, npkts(wr.len, mtu));
        self.wqes.push_back(SendWqe {
            wr_id: wr.wr_id,
            verb: wr.verb,
            len: wr.len,
            remote_addr: wr.remote_addr,
            local_addr: wr.local_addr,
            imm: wr.imm,
            first_psn,
            npkts: n,
            msn,
            sync,
            early: false,
        });
        // Nothing in flight means no ACK will clock: (re)start by spreading
        // the window over random VPs, from IW after an idle period.
        if !self.outstanding() && self.tokens.is_empty() {
            let idle = self
                .last_send
                .is_none_or(|t| now.saturating_sub(t) > IDLE_RTTS * self.srtt);
            if idle {
                self.cwnd = self.cfg.initial_window as f64;
            }
            self.inflate = 0;
            self.retx_out = 0;
            self.grant_random(self.free());
        }
        self.refresh_gate(now);
    }

    /// A granted send has something to carry.
    #[inline]
    pub fn has_data(&self) -> bool {
        if self.tokens.is_empty() {
            return false;
        }
        match self.choice() {
            Choice::None => false,
            // A lost hole's resend replaces a packet already counted.
            Choice::Retx(r) if self.resend == Resend::Due(r) => true,
            _ => self.awnd() >= 1,
        }
    }

    #[inline]
    pub fn outstanding(&self) -> bool {
        self.snd_una.lt(self.snd_nxt)
    }

    /// The earliest timer this sender needs (RTO, burst timer, synchronise
    /// gate, hole resend).
    pub fn deadline(&self) -> Option<Time> {
        [
            self.rto_deadline,
            self.burst_at,
            self.gate_at,
            self.hole_deadline(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn hole_deadline(&self) -> Option<Time> {
        let (_, t) = self.hole?;
        (self.srtt > 0 && self.resend == Resend::Idle).then(|| t + 2 * self.srtt)
    }

    /// The available window, `floor(cwnd + inflate - in flight)`.
    pub fn awnd(&self) -> i64 {
        let outstanding = self.snd_nxt.since(self.snd_una) as i64;
        let left = self.inflate.clamp(0, outstanding);
        let inflight = outstanding - left + self.retx_out as i64;
        (self.cwnd - inflight as f64).floor() as i64
    }

    /// Window not yet granted to a VP.
    fn free(&self) -> i64 {
        self.awnd() - self.tokens.len() as i64
    }

    /// The next PSN of a synchronise message to resend (see
    /// `sync_nacked`), with the message's end.
    fn sync_retry_psn(&self) -> Option<(Psn, Psn)> {
        let (floor, ceil) = self.sync_nacked?;
        let u = self.snd_una;
        if u.lt(floor) || u.ge(ceil) {
            return None;
        }
        if let Some((next, end)) = self.sync_retry {
            if end.gt(u) {
                // Resending this message, or done and awaiting its ACKs.
                let r = next.max(u);
                return r.lt(end).then_some((r, end));
            }
        }
        // Only what had been sent when the NACK came is resent; the rest of
        // the message goes as new data.
        let w = self.wqes[self.wqes.partition_point(|w| w.end().le(u))];
        (w.sync && w.first_psn == u).then_some((u, w.end().min(ceil)))
    }

    fn choice(&self) -> Choice {
        if let Resend::Due(r) = self.resend {
            return Choice::Retx(r);
        }
        if let Some((r, _)) = self.sync_retry_psn() {
            return Choice::Retx(r);
        }
        let guarded = self.cfg.sender == SenderMode::Guarded;
        // The receiver can only track PSNs below rcv_nxt + L (and rcv_nxt >=
        // snd_una): the guarded sender sends nothing beyond, so a loss
        // stalls new data within about an RTT, and early retransmission
        // repairs it without waiting for a bitmap overflow. The paper's
        // sender sends on, and the receiver drops and NACKs what its bitmap
        // cannot hold.
        let below_limit = |p: Psn| !guarded || p.lt(self.snd_una + self.cfg.l_slots);
        if self.in_recovery {
            let r = self.snd_retx.max(self.snd_una);
            if r.lt(self.recovery) && below_limit(r) {
                return Choice::Retx(r);
            }
        }
        // Guarded: a hole more than Delta behind the highest SACK is lost
        // (the OOO control keeps slower paths within Delta): resend it
        // before new data rather than after the window stalls at the
        // bitmap's end.
        let e = self.snd_una;
        let unsent = self.early.le(e) && e.lt(self.snd_nxt);
        if guarded && unsent && (e + self.cfg.delta).le(self.snd_ooh) {
            return Choice::Early(e);
        }
        let new_data = self.snd_nxt.lt(self.next_psn);
        if new_data && below_limit(self.snd_nxt) && !self.gated {
            return Choice::New;
        }
        // Early retransmission resends only the hole at snd_una, once: the
        // sender keeps no SACK state, so every later PSN may have arrived
        // (resending them all cost a fifth of the goodput at 0.5% loss).
        // The next hole becomes snd_una once this one is filled. The
        // guarded sender does so when no new data may go and the rule
        // above cannot fire (fewer than Delta PSNs went after the hole),
        // the paper's only when there is none; both once the hole is
        // further behind than the reordering the connection has shown
        // (`early_gap`). The OOO control allows paths Delta apart, so a
        // hole less than Delta behind may be late rather than lost: the
        // guarded sender, stalled at the bitmap's end, resent such holes
        // while it learned the reordering (14-25 per seed of a loss-free
        // 1 KB testbed permutation, every one a duplicate).
        let delta_rule_can_fire = guarded && (e + self.cfg.delta).lt(self.snd_nxt);
        if unsent
            && (e + self.early_gap()).le(self.snd_ooh)
            && (guarded || !new_data)
            && !delta_rule_can_fire
        {
            return Choice::Early(e);
        }
        Choice::None
    }

    /// How far behind the highest selective ack the hole must be to be
    /// resent early: beyond the largest reordering seen on a hole that was
    /// filled by its first transmission, at least `EARLY_RETX_GAP` and at
    /// most Delta (beyond which the OOO control treats a path as slow). A
    /// fixed 3 resent 1,250-1,403 packets of a loss-free 1 KB permutation
    /// whose reordering reaches 30 (TCP adapts its threshold the same way:
    /// Linux's `tcp_reordering`).
    fn early_gap(&self) -> u32 {
        (self.reorder + 1).clamp(EARLY_RETX_GAP, self.cfg.delta.max(EARLY_RETX_GAP))
    }

    /// Something could be sent now or once a synchronise gate opens or the
    /// receiver's bitmap has room.
    fn anything_to_send(&self) -> bool {
        self.choice() != Choice::None || self.snd_nxt.lt(self.next_psn)
    }

    fn random_vp(&mut self) -> u16 {
        let i = self.rng.below(self.cfg.num_vps as u64) as u16;
        self.base_sport.wrapping_add(i)
    }

    fn grant_random(&mut self, n: i64) {
        for _ in 0..n.max(0) {
            let vp = self.random_vp();
            self.tokens.push_back(vp);
        }
    }

    /// Sets cwnd within [1, L] for the guarded sender: no more than L
    /// packets beyond `snd_una` can ever be sent, so a larger window is
    /// never usable, and an unbounded one (nothing marks ECN when the
    /// sender's own NIC is the bottleneck) would keep multiplying the VPs
    /// of lossy paths by its +1/cwnd growth faster than their losses
    /// remove them. The paper's sender has no upper bound.
    fn set_cwnd(&mut self, w: f64) {
        self.cwnd = match self.cfg.sender {
            SenderMode::Guarded => w.clamp(MIN_CWND, self.cfg.l_slots as f64),
            SenderMode::Paper => w.max(MIN_CWND),
        };
    }

    /// Re-evaluates whether the next new packet (the first of a synchronise
    /// message) must wait.
    fn refresh_gate(&mut self, now: Time) {
        self.gated = false;
        let at_sync = self
            .wqes
            .get(self.cursor)
            .is_some_and(|w| w.sync && self.snd_nxt == w.first_psn && self.snd_una.lt(w.first_psn));
        if at_sync {
            let delayed = self.cfg.sync_mode == SyncMode::Delayed && self.srtt > 0;
            if delayed {
                // Δt = α · Δ / (cwnd / RTT) after the previous packet.
                let dt =
                    (self.cfg.alpha * self.cfg.delta as f64 * self.srtt as f64 / self.cwnd) as Time;
                let at = *self
                    .gate_at
                    .get_or_insert(self.last_send.unwrap_or(now) + dt);
                self.gated = now < at;
            } else {
                // Stop-and-wait (or no RTT sample yet): wait for the ACKs.
                self.gated = true;
            }
        }
        if !self.gated {
            self.gate_at = None;
        }
    }

    /// Builds the next packet on the oldest granted VP, its payload read
    /// through `dma`; `has_data()` must be true. The caller fills the hosts
    /// and QPs.
    pub fn next_packet(
        &mut self,
        now: Time,
        cfg: &NicConfig,
        stats: &mut NicStats,
        dma: &mut Dma,
    ) -> Packet {
        let vp = self
            .tokens
            .pop_front()
            .expect("next_packet without a grant");
        let (psn, retx) = match self.choice() {
            Choice::Retx(r) => {
                if self.resend == Resend::Due(r) {
                    self.resend = Resend::Idle;
                } else if let Some((_, end)) = self.sync_retry_psn().filter(|&(p, _)| p == r) {
                    self.sync_retry = Some((r + 1, end));
                } else {
                    self.snd_retx = r + 1;
                }
                (r, true)
            }
            Choice::Early(e) => {
                self.early = e + 1;
                stats.mp_early_retransmits += 1;
                (e, true)
            }
            Choice::New => {
                let p = self.snd_nxt;
                self.snd_nxt += 1;
                if self.snd_nxt == self.wqes[self.cursor].end() {
                    self.cursor += 1;
                }
                (p, false)
            }
            Choice::None => panic!("next_packet with nothing to send"),
        };
        if retx {
            self.retx_out += 1;
            stats.retransmitted_packets += 1;
            if psn == self.snd_una {
                self.hole = Some((psn, now));
            }
        }
        self.last_send = Some(now);
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + cfg.rto);
        }
        self.refresh_gate(now);
        let i = self.wqes.partition_point(|w| w.end().le(psn));
        let w = self.wqes[i];
        let idx = psn.since(w.first_psn);
        let payload = payload_of(w.len, cfg.mtu, idx);
        let off = offset_of(cfg.mtu, idx).min(w.len);
        fetch_payload(dma, stats, w.local_addr + off, payload);
        let addr = match w.verb {
            Verb::Send => off,
            _ => w.remote_addr + off,
        };
        let data = Data {
            kind: PacketKind::Request,
            verb: w.verb,
            psn: psn.wire(),
            ipsn: idx,
            payload,
            first: idx == 0,
            last: idx + 1 == w.npkts,
            msg_len: w.len,
            addr,
            imm: w.imm,
            ..Data::default()
        };
        // The engine chooses the VP (`EngineOps::chooses_sport`).
        let mut pkt = Packet {
            sport: vp,
            ..data_packet(cfg, now, data)
        };
        MpHeader {
            msn: w.msn,
            ipsn: idx,
            retx,
            sync: w.sync,
            ..MpHeader::default()
        }
        .apply(&mut pkt);
        pkt
    }

    /// Moves `snd_una` to the cumulative ACK `aack`, completing WQEs.
    fn cumulative(
        &mut self,
        now: Time,
        qp: QpId,
        aack: Psn,
        cfg: &NicConfig,
        events: &mut VecDeque<Event>,
    ) {
        if aack.le(self.snd_una) {
            return;
        }
        self.inflate -= aack.since(self.snd_una) as i64;
        self.snd_una = aack;
        // `early <= snd_una` holds or fails as before; kept within reach.
        self.early = self.early.max(aack);
        if matches!(self.resend, Resend::Due(r) if r.lt(aack)) {
            self.resend = Resend::Passed;
        }
        if self.hole.is_some_and(|(h, _)| h.lt(aack)) {
            self.hole = None;
        }
        if self.sync_nacked.is_some_and(|(_, ceil)| ceil.le(aack)) {
            self.sync_nacked = None;
            self.sync_retry = None;
        }
        while let Some(&w) = self.wqes.front() {
            if w.end().gt(self.snd_una) {
                break;
            }
            self.wqes.pop_front();
            self.cursor = self.cursor.saturating_sub(1);
            events.push_back(Event::Completion(Completion::requester(
                qp, w.wr_id, w.verb, w.len, now,
            )));
        }
        if self.in_recovery && self.snd_una.ge(self.recovery) {
            self.in_recovery = false;
        }
        // Keep the estimate within what is possible, so errors do not
        // accumulate: between zero and the outstanding packets have left
        // the network. Each lost ACK would otherwise lower awnd for good
        // (inflate reached -41 after a link failure, and then only ACKs
        // that move snd_una clocked anything: every VP on a faster path
        // starved), and a packet both NACKed and acknowledged as a
        // retransmission would raise it for good. Retransmissions still
        // unanswered when snd_una moves (outside recovery) were lost or
        // are duplicates: forget them for the same reason.
        self.inflate = self
            .inflate
            .clamp(0, self.snd_nxt.since(self.snd_una) as i64);
        if !self.in_recovery {
            self.retx_out = 0;
        }
        if !self.outstanding() {
            // Nothing in flight: the estimate is exact again.
            self.inflate = 0;
            self.retx_out = 0;
            self.rto_deadline = None;
        } else {
            self.rto_deadline = Some(now + cfg.rto);
        }
    }

    /// An ACK/NACK's cumulative ACK and SACK, read relative to `snd_una`,
    /// if they are consistent with what was sent (before anything was, a
    /// SACK of the first PSN passes).
    fn valid(&self, pkt: &Packet) -> Option<(Psn, Psn)> {
        let aack = Psn::from_wire(pkt.psn, self.snd_una);
        let sack = Psn::from_wire(pkt.sack_psn, self.snd_una);
        let nothing_sent = self.last_send.is_none();
        let ok = aack.le(self.snd_nxt)
            && (sack.lt(self.snd_nxt) || nothing_sent && sack == self.snd_nxt);
        ok.then_some((aack, sack))
    }

    /// A per-packet ACK. Returns false if it is malformed.
    pub fn on_ack(
        &mut self,
        now: Time,
        qp: QpId,
        pkt: &Packet,
        cfg: &NicConfig,
        stats: &mut NicStats,
        events: &mut VecDeque<Event>,
    ) -> bool {
        let Some((aack, sack)) = self.valid(pkt) else {
            return false;
        };
        let h = MpHeader::of(pkt);
        if !h.retx && !h.dup {
            let sample = now.saturating_sub(pkt.sent_at);
            self.srtt = if self.srtt == 0 {
                sample
            } else {
                (7 * self.srtt + sample) / 8
            };
        }
        // Each new SACK adds one to inflate, then a cumulative move takes
        // the span back (exact again when nothing is outstanding).
        if !h.dup {
            self.inflate += 1;
        }
        // The hole at snd_una filled by its first transmission: it was
        // reordered, not lost, by as far as the selective acks got ahead.
        let una = self.snd_una;
        if !h.retx && !h.dup && sack == una && aack.gt(una) && self.snd_ooh.gt(una) {
            self.reorder = self.reorder.max(self.snd_ooh.since(una));
        }
        self.cumulative(now, qp, aack, cfg, events);
        if h.retx {
            self.retx_out = self.retx_out.saturating_sub(1);
        } else if h.dup {
            // A network duplicate: it carries no new information.
            self.refresh_gate(now);
            return true;
        }
        let w = if pkt.ecn_echo {
            self.cwnd - 0.5
        } else {
            self.cwnd + 1.0 / self.cwnd
        };
        self.set_cwnd(w);
        self.snd_ooh = self.snd_ooh.max(sack);
        // Out-of-order-aware path selection: an ACK more than Δ behind the
        // fastest path marks a slow path; retransmissions are exempt.
        if !h.retx && (sack + self.cfg.delta).lt(self.snd_ooh) {
            stats.mp_ooo_prunes += 1;
            self.set_cwnd(self.cwnd - 1.0);
            self.refresh_gate(now);
            return true;
        }
        self.refresh_gate(now);
        self.clock(now, h.vp, stats);
        true
    }

    /// A NACK: the receiver dropped a packet (bitmap overflow, or a
    /// synchronise message too early) and asks for PSNs from `mp.sack` on.
    pub fn on_nack(
        &mut self,
        now: Time,
        qp: QpId,
        pkt: &Packet,
        cfg: &NicConfig,
        stats: &mut NicStats,
        events: &mut VecDeque<Event>,
    ) -> bool {
        let Some((aack, from)) = self.valid(pkt) else {
            return false;
        };
        let h = MpHeader::of(pkt);
        // The dropped packet left the network.
        self.inflate += 1;
        self.cumulative(now, qp, aack, cfg, events);
        if h.retx {
            self.retx_out = self.retx_out.saturating_sub(1);
        }
        if pkt.ecn_echo {
            self.set_cwnd(self.cwnd - 0.5);
        }
        if h.dup {
            // A drop report for a hole already NACKed: clocking only.
        } else if h.sync {
            // A synchronise message arrived before earlier messages were
            // complete: resend it (only it) once they are all acknowledged,
            // so the retry cannot be early again. Rewinding the whole
            // window instead (recovery) resent later synchronise messages
            // early again: 10,958 NACKs and 5.6 Gb/s at 50% synchronise
            // messages of 32 KB.
            let i = self.wqes.partition_point(|w| w.first_psn.lt(from));
            if let Some(w) = self.wqes.get_mut(i).filter(|w| w.first_psn == from) {
                stats.mp_sync_early += u64::from(!w.early);
                w.early = true;
            }
            if from.ge(self.snd_una) {
                let (floor, ceil) = self.sync_nacked.unwrap_or((from, self.snd_nxt));
                self.sync_nacked = Some((floor.min(from), ceil.max(self.snd_nxt)));
            }
        } else if from.ge(self.snd_una) && !self.in_recovery {
            self.in_recovery = true;
            self.recovery = self.snd_nxt;
            self.snd_retx = from;
            stats.mp_recoveries += 1;
        }
        self.refresh_gate(now);
        self.clock(now, h.vp, stats);
        true
    }

    /// Grants window opened by an ACK from `vp`: at most two sends on it
    /// (one may probe a new random VP), the rest by the burst timer.
    fn clock(&mut self, now: Time, vp: u16, stats: &mut NicStats) {
        let free = self.free();
        if free <= 0 {
            return;
        }
        if !self.anything_to_send() {
            // Use it or lose it.
            stats.mp_window_reductions += 1;
            self.set_cwnd(self.cwnd - 1.0);
            return;
        }
        for _ in 0..(free as usize).min(BURST_PER_ACK) {
            let mut v = vp;
            if self.srtt > 0 && now >= self.last_probe + self.srtt {
                self.last_probe = now;
                if self.rng.bernoulli(self.cfg.probe_p) {
                    stats.mp_probes += 1;
                    v = self.random_vp();
                }
            }
            self.tokens.push_back(v);
        }
        // The rest waits for later ACKs; only if none comes for half an
        // RTT does the burst timer send it to random VPs.
        self.burst_at = (free as usize > BURST_PER_ACK).then(|| now + (self.srtt / 2).max(1));
    }

    /// A timer fired: the burst timer grants the remaining window to random
    /// VPs; the retransmission timeout resends everything unacknowledged
    /// from IW. Returns true on a timeout.
    pub fn on_timer(&mut self, now: Time) -> bool {
        let mut timeout = false;
        if self.hole_deadline().is_some_and(|t| t <= now) {
            let (h, _) = self.hole.expect("hole deadline");
            // Still missing: its resend was lost. Send it again, on a
            // random VP if no ACK left a grant.
            self.resend = Resend::Due(h);
            if self.tokens.is_empty() {
                self.grant_random(1);
            }
        }
        if self.burst_at.is_some_and(|t| t <= now) {
            self.burst_at = None;
            if self.anything_to_send() {
                let n = self.free();
                self.grant_random(n);
            }
        }
        if self.rto_deadline.is_some_and(|t| t <= now) {
            self.rto_deadline = None;
            if self.outstanding() {
                timeout = true;
                self.in_recovery = true;
                self.recovery = self.snd_nxt;
                self.snd_retx = self.snd_una;
                self.early = self.snd_una;
                // Everything in flight is presumed lost.
                self.retx_out = 0;
                self.inflate = self.snd_nxt.since(self.snd_una) as i64;
                self.cwnd = self.cfg.initial_window as f64;
                self.tokens.clear();
                self.sync_retry = None;
                self.grant_random(self.free());
            }
        }
        self.refresh_gate(now);
        timeout
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::StreamKind;

    fn cfg() -> NicConfig {
        NicConfig::default()
    }

    fn sender(iw: u32, mode: SenderMode) -> Sender {
        let c = MpRdmaConfig {
            initial_window: iw,
            probe_p: 0.0,
            sender: mode,
            ..MpRdmaConfig::default()
        };
        Sender::new(c, 1000, Rng::new(1, StreamKind::Host, 0), Psn::default())
    }

    fn write(s: &mut Sender, len: u64) {
        s.post(
            0,
            WorkRequest {
                wr_id: 1,
                verb: Verb::Write,
                len,
                ..WorkRequest::default()
            },
            false,
            1000,
        );
    }

    fn hdr(p: &Packet) -> MpHeader {
        MpHeader::of(p)
    }

    fn ack(aack: u32, sack: u32, vp: u16, ece: bool, sent_at: Time) -> Packet {
        let mut p = Packet {
            src: 1,
            dst: 0,
            src_qp: 0,
            dst_qp: 0,
            sport: vp,
            kind: PacketKind::Ack,
            verb: Verb::Write,
            psn: aack,
            payload: 0,
            wire: 60,
            priority: 0,
            ce: false,
            ecn_echo: ece,
            first: false,
            last: false,
            msg_len: 0,
            sent_at,
            ..Packet::default()
        };
        MpHeader {
            sack,
            vp,
            ..MpHeader::default()
        }
        .apply(&mut p);
        p
    }

    struct H {
        s: Sender,
        st: NicStats,
        ev: VecDeque<Event>,
        c: NicConfig,
    }

    impl H {
        fn new(iw: u32, len: u64) -> H {
            H::with(iw, len, SenderMode::Guarded)
        }
        fn with(iw: u32, len: u64, mode: SenderMode) -> H {
            let mut s = sender(iw, mode);
            write(&mut s, len);
            H {
                s,
                st: NicStats::default(),
                ev: VecDeque::new(),
                c: cfg(),
            }
        }
        fn send_all(&mut self, now: Time) -> Vec<Packet> {
            let mut v = vec![];
            while self.s.has_data() {
                v.push(
                    self.s
                        .next_packet(now, &self.c, &mut self.st, &mut Dma::none()),
                );
            }
            v
        }
        fn ack(&mut self, now: Time, p: Packet) {
            assert!(self
                .s
                .on_ack(now, 0, &p, &self.c, &mut self.st, &mut self.ev));
        }
    }

    #[test]
    fn initial_window_goes_out_on_random_vps() {
        let mut h = H::new(16, 100_000);
        let sent = h.send_all(0);
        assert_eq!(sent.len(), 16);
        let vps: std::collections::BTreeSet<u16> = sent.iter().map(|p| p.sport).collect();
        assert!(vps.len() > 8, "IW spread over many VPs: {vps:?}");
        assert!(vps.iter().all(|v| (1000..1256).contains(v)));
        assert_eq!(h.s.awnd(), 0);
    }

    #[test]
    fn window_arithmetic_per_ack() {
        let mut h = H::new(4, 100_000);
        h.send_all(0);
        // In-order ACK without ECN: cwnd 4 -> 4.25; una moves by one, so
        // inflate +1 -1 = 0; awnd = floor(4.25 + 0 - 3) = 1.
        h.ack(10, ack(1, 0, 7, false, 0));
        assert_eq!(h.s.cwnd, 4.25);
        assert_eq!(h.s.inflate, 0);
        assert_eq!(h.s.awnd(), 1);
        assert_eq!(h.s.tokens, [7], "clocked out on the ACK's VP");
        // An out-of-order SACK (PSN 2, aack still 1): inflate 1, and an ECN
        // echo: cwnd - 1/2 = 3.75; awnd = floor(3.75 + 1 - 3) = 1, which
        // the token already holds.
        h.ack(11, ack(1, 2, 8, true, 0));
        assert_eq!(h.s.cwnd, 3.75);
        assert_eq!(h.s.inflate, 1);
        assert_eq!(h.s.awnd(), 1);
        assert_eq!(h.s.tokens, [7]);
        // The cumulative ACK jumps to 3 (covering the SACKed PSN 2): inflate
        // 1 + 1 - 2 = 0.
        h.ack(12, ack(3, 1, 9, false, 0));
        assert_eq!(h.s.inflate, 0);
        assert_eq!(h.s.snd_una.wire(), 3);
        assert_eq!(
            h.s.awnd(),
            (3.75 + 1.0 / 3.75 + 0.0 - 1.0f64).floor() as i64
        );
    }

    #[test]
    fn burst_control_two_per_ack_then_timer_to_random_vps() {
        let mut h = H::new(4, 100_000);
        h.send_all(0);
        // A big cumulative jump with a large cwnd opens 6 packets of window.
        h.s.cwnd = 8.0;
        h.ack(10 * engine::time::US, ack(4, 3, 5, false, 0));
        assert_eq!(h.s.tokens, [5, 5], "at most two on the ACK's VP");
        let at = h.s.burst_at.expect("burst timer armed");
        assert_eq!(at, 10 * engine::time::US + h.s.srtt / 2);
        h.send_all(at - 1);
        h.s.on_timer(at);
        assert_eq!(h.s.tokens.len(), 6, "the rest to random VPs");
    }

    #[test]
    fn use_it_or_lose_it_without_data() {
        let mut h = H::new(4, 4000);
        h.send_all(0);
        assert!(!h.s.has_data());
        // Every ACK would clock a packet; there is none: cwnd - 1 each (the
        // +1/cwnd comes first).
        h.ack(10, ack(1, 0, 7, false, 0));
        assert_eq!(h.s.cwnd, 4.25 - 1.0);
        assert_eq!(h.st.mp_window_reductions, 1);
        assert!(h.s.tokens.is_empty());
    }

    #[test]
    fn slow_path_ack_shrinks_cwnd_and_clocks_nothing() {
        let mut h = H::new(60, 1_000_000);
        h.send_all(0);
        // A fast path has delivered PSN 50.
        h.ack(10, ack(0, 50, 1, false, 0));
        assert_eq!(h.s.snd_ooh.wire(), 50);
        let before = h.s.tokens.len();
        let cwnd = h.s.cwnd;
        // An ACK for PSN 10 < 50 - 32: its path is pruned.
        h.ack(11, ack(0, 10, 2, false, 0));
        assert_eq!(h.st.mp_ooo_prunes, 1);
        assert_eq!(h.s.cwnd, cwnd + 1.0 / cwnd - 1.0);
        assert!(h.s.tokens.iter().skip(before).all(|&v| v != 2));
        // The same PSN as a retransmission is exempt.
        let mut r = ack(0, 11, 3, false, 0);
        r.mp_flags |= MpHeader::RETX;
        h.ack(12, r);
        assert_eq!(h.st.mp_ooo_prunes, 1);
        // PSN 18 = 50 - 32 is within Δ: not pruned.
        h.ack(13, ack(0, 18, 4, false, 0));
        assert_eq!(h.st.mp_ooo_prunes, 1);
    }

    #[test]
    fn nack_recovery_retransmits_from_the_hole_then_new_data() {
        let mut h = H::new(8, 100_000);
        h.send_all(0);
        let mut n = ack(2, 2, 6, false, 0);
        n.kind = PacketKind::Nack;
        assert!(h.s.on_nack(5, 0, &n, &h.c, &mut h.st, &mut h.ev));
        assert!(h.s.in_recovery);
        // Window for two more: ACKs of 3 and 4 (SACKs) clock retransmissions
        // of 2, 3 (recovery point 8), not new data.
        h.ack(6, ack(2, 3, 6, false, 0));
        h.ack(6, ack(2, 4, 6, false, 0));
        let p = h.send_all(7);
        let psns: Vec<(u32, bool)> = p.iter().map(|p| (p.psn, hdr(p).retx)).collect();
        assert_eq!(psns[0], (2, true));
        assert!(psns.iter().all(|&(_, r)| r));
        // A repeated NACK of the same hole does not restart recovery.
        assert!(h.s.on_nack(8, 0, &n, &h.c, &mut h.st, &mut h.ev));
        assert_eq!(h.st.mp_recoveries, 1);
        // The cumulative ACK passes the recovery point: recovery ends.
        h.ack(9, ack(8, 2, 6, false, 0));
        assert!(!h.s.in_recovery);
    }

    #[test]
    fn early_retransmission_when_no_new_data() {
        let mut h = H::new(8, 8000);
        h.send_all(0);
        // PSN 0 lost; 1..=4 SACKed. No new data: PSN 0 goes again early,
        // once 3 later PSNs were SACKed.
        for s in 1..=4 {
            h.ack(10, ack(0, s, 9, false, 0));
        }
        let p = h.send_all(11);
        let got: Vec<(u32, bool)> = p.iter().map(|p| (p.psn, hdr(p).retx)).collect();
        assert_eq!(got, vec![(0, true)], "only the hole, once");
        assert_eq!(h.st.mp_early_retransmits, 1);
        // Still missing two RTTs later: its resend was lost; it goes again.
        let due = 11 + 2 * h.s.srtt;
        assert_eq!(h.s.deadline(), Some(due));
        h.s.on_timer(due);
        let p = h.send_all(due);
        assert_eq!((p[0].psn, hdr(&p[0]).retx), (0, true));
    }

    #[test]
    fn a_hole_delta_behind_goes_before_new_data() {
        let mut h = H::new(40, 1_000_000);
        h.send_all(0);
        // PSN 0 missing, PSN 31 SACKed: within Delta (32), new data first.
        h.ack(10, ack(0, 31, 9, false, 0));
        let p = h.send_all(11);
        assert!(p.iter().all(|p| !hdr(p).retx));
        // PSN 32 SACKed: 0 is Delta behind, lost; it goes first.
        h.ack(12, ack(0, 32, 9, false, 0));
        let p = h.send_all(13);
        assert_eq!((p[0].psn, hdr(&p[0]).retx), (0, true));
        assert!(p[1..].iter().all(|p| !hdr(p).retx));
    }

    #[test]
    fn at_the_bitmaps_end_a_hole_waits_until_it_is_delta_behind() {
        let mut h = H::new(64, 1_000_000);
        assert_eq!(h.send_all(0).len(), 64, "up to snd_una + L");
        // PSN 0 missing, 1..=31 arrived: it may still be late (the OOO
        // control lets paths be Delta apart); nothing goes.
        for s in 1..=31 {
            h.ack(10, ack(0, s, 9, false, 0));
        }
        assert!(h.send_all(11).is_empty());
        assert_eq!(h.st.mp_early_retransmits, 0);
        // Delta behind: lost.
        h.ack(12, ack(0, 32, 9, false, 0));
        let p = h.send_all(13);
        assert_eq!((p[0].psn, hdr(&p[0]).retx), (0, true));
    }

    #[test]
    fn early_retransmission_waits_beyond_the_reordering_seen() {
        // 40 packets, all sent: no new data, fewer than Delta after PSN 11.
        let mut h = H::new(40, 40_000);
        assert_eq!(h.send_all(0).len(), 40);
        // PSN 0 arrives after 1..=10: reordered by 10, not lost.
        for s in 1..=10 {
            h.ack(10, ack(0, s, 9, false, 0));
        }
        h.ack(11, ack(11, 0, 9, false, 0));
        assert_eq!(h.s.reorder, 10);
        // PSN 11 missing: 10 later PSNs arrived, within what was seen.
        for s in 12..=21 {
            h.ack(12, ack(11, s, 9, false, 0));
        }
        assert!(h.send_all(13).is_empty());
        // 11 later PSNs: beyond it; the hole goes, once.
        h.ack(14, ack(11, 22, 9, false, 0));
        let got: Vec<(u32, bool)> = h
            .send_all(15)
            .iter()
            .map(|p| (p.psn, hdr(p).retx))
            .collect();
        assert_eq!(got, vec![(11, true)]);
    }

    #[test]
    fn cwnd_is_capped_at_the_bitmap_size() {
        let mut h = H::new(64, 1_000_000);
        h.send_all(0);
        h.ack(10, ack(1, 0, 9, false, 0));
        assert_eq!(h.s.cwnd, 64.0, "L = 64: no growth beyond");
    }

    #[test]
    fn the_paper_sender_sends_past_the_bitmap_and_its_window_past_l() {
        for mode in [SenderMode::Guarded, SenderMode::Paper] {
            let mut h = H::with(64, 1_000_000, mode);
            assert_eq!(h.send_all(0).len(), 64);
            // PSN 0 missing, 1..=40 arrived: the window stays at snd_una + L.
            h.ack(10, ack(0, 40, 9, false, 0));
            let p = h.send_all(11);
            let got: Vec<(u32, bool)> = p.iter().map(|p| (p.psn, hdr(p).retx)).collect();
            match mode {
                // Nothing at or beyond 0 + 64: the hole, Delta behind, goes.
                SenderMode::Guarded => assert_eq!(got, vec![(0, true)]),
                // New data beyond the bitmap, no early resend while there
                // is new data.
                SenderMode::Paper => assert_eq!(got, vec![(64, false)]),
            }
            // An ACK from a fast path (no pruning): +1/cwnd.
            h.ack(12, ack(1, 41, 9, false, 0));
            match mode {
                SenderMode::Guarded => assert_eq!(h.s.cwnd, 64.0),
                SenderMode::Paper => assert!(h.s.cwnd > 64.0, "{}", h.s.cwnd),
            }
        }
    }

    #[test]
    fn the_paper_sender_resends_the_hole_early_only_when_no_data_is_left() {
        // 10 packets, all sent: no new data is left.
        let mut h = H::with(16, 10_000, SenderMode::Paper);
        assert_eq!(h.send_all(0).len(), 10);
        h.ack(10, ack(0, 3, 9, false, 0));
        let p = h.send_all(11);
        assert_eq!(p.len(), 1);
        assert_eq!((p[0].psn, hdr(&p[0]).retx), (0, true));
    }

    #[test]
    fn timeout_resends_everything_from_iw() {
        let mut h = H::new(4, 100_000);
        h.send_all(0);
        let rto = h.c.rto;
        assert_eq!(h.s.deadline(), Some(rto));
        assert!(h.s.on_timer(rto));
        let p = h.send_all(rto);
        let psns: Vec<u32> = p.iter().map(|p| p.psn).collect();
        assert_eq!(psns, vec![0, 1, 2, 3]);
        assert!(p.iter().all(|p| hdr(p).retx));
    }

    #[test]
    fn synchronise_waits_alpha_delta_over_rate() {
        let mut h = H::new(4, 2000);
        h.s.post(
            0,
            WorkRequest {
                wr_id: 2,
                verb: Verb::Write,
                len: 1000,
                ..WorkRequest::default()
            },
            true,
            1000,
        );
        // No RTT sample yet: the sync message waits for the ACKs.
        let p = h.send_all(0);
        assert_eq!(p.len(), 2);
        assert!(h.s.gated);
        // An ACK with RTT 10 µs: Δt = 1 * 32 * 10 µs / cwnd after the last send.
        let us = engine::time::US;
        h.ack(10 * us, ack(1, 0, 3, false, 0));
        let dt = (32.0 * (10 * us) as f64 / h.s.cwnd) as Time;
        assert_eq!(h.s.deadline(), Some(dt));
        assert!(!h.s.has_data());
        h.s.on_timer(dt);
        let p = h.send_all(dt);
        assert_eq!((p[0].psn, hdr(&p[0]).sync), (2, true));
    }

    #[test]
    fn an_early_synchronise_message_is_counted_once() {
        // PSN 0: a WRITE; 1: synchronise; 2..=3: synchronise (2 packets).
        let mut h = H::new(8, 1000);
        for len in [1000, 2000] {
            h.s.post(
                0,
                WorkRequest {
                    wr_id: 1,
                    verb: Verb::Write,
                    len,
                    ..WorkRequest::default()
                },
                true,
                1000,
            );
        }
        h.send_all(0);
        // The ACK of PSN 0 opens the first gate and gives an RTT sample;
        // the second synchronise message waits its delay.
        h.ack(10, ack(1, 0, 3, false, 0));
        h.send_all(10);
        let due = h.s.deadline().expect("synchronise delay");
        h.s.on_timer(due);
        let p = h.send_all(due);
        assert_eq!(h.s.snd_nxt.wire(), 4, "{p:?}");
        let sync_nack = |sack: u32| {
            let mut n = ack(1, sack, 3, false, 0);
            n.kind = PacketKind::Nack;
            n.mp_flags |= MpHeader::SYNC;
            n
        };
        let mut nack = |sack: u32| {
            assert!(h
                .s
                .on_nack(due + 1, 0, &sync_nack(sack), &h.c, &mut h.st, &mut h.ev));
            h.st.mp_sync_early
        };
        assert_eq!(nack(2), 1);
        // The same message NACKed again (at another receiver step): once.
        assert_eq!(nack(2), 1);
        assert_eq!(nack(1), 2);
    }

    #[test]
    fn packets_carry_addresses_and_bytes_read_from_memory() {
        /// Registered from 0x1000 to 0x3000; each byte is its address's low
        /// byte.
        struct Src;
        impl crate::memory::Memory for Src {
            fn read(&mut self, addr: u64, buf: &mut [u8]) -> bool {
                if addr < 0x1000 || addr + buf.len() as u64 > 0x3000 {
                    return false;
                }
                for (i, b) in buf.iter_mut().enumerate() {
                    *b = (addr + i as u64) as u8;
                }
                true
            }
            fn write(&mut self, _: u64, _: &[u8]) -> bool {
                unreachable!("the sender only reads")
            }
        }
        let mut s = sender(8, SenderMode::Guarded);
        let post = |s: &mut Sender, verb, len, remote_addr, local_addr| {
            let wr = WorkRequest {
                wr_id: 1,
                verb,
                len,
                remote_addr,
                local_addr,
                ..WorkRequest::default()
            };
            s.post(0, wr, false, 1000);
        };
        post(&mut s, Verb::Write, 2500, 0x9000, 0x1000);
        post(&mut s, Verb::Send, 1200, 0, 0x2000);
        post(&mut s, Verb::Send, 10, 0, 0x2ffc);
        let (c, mut st) = (cfg(), NicStats::default());
        let mut got = vec![];
        while s.has_data() {
            let mut bytes = vec![];
            let p = s.next_packet(0, &c, &mut st, &mut Dma::tx(&mut Src, &mut bytes));
            assert_eq!(bytes.len(), p.payload as usize);
            got.push((p.verb, p.addr, hdr(&p).ipsn, hdr(&p).msn, bytes));
        }
        let want_bytes = |from: u64, n: u64| (from..from + n).map(|a| a as u8).collect::<Vec<_>>();
        let want = vec![
            // WRITE: the remote address of each packet's first byte.
            (Verb::Write, 0x9000, 0, 0, want_bytes(0x1000, 1000)),
            (
                Verb::Write,
                0x9000 + 1000,
                1,
                0,
                want_bytes(0x1000 + 1000, 1000),
            ),
            (
                Verb::Write,
                0x9000 + 2000,
                2,
                0,
                want_bytes(0x1000 + 2000, 500),
            ),
            // SEND: the offset in the message; MSN = the n-th SEND.
            (Verb::Send, 0, 0, 0, want_bytes(0x2000, 1000)),
            (Verb::Send, 1000, 1, 0, want_bytes(0x2000 + 1000, 200)),
            // A source running past the registered region: nothing is
            // read and the error counted; the packet still goes (as with
            // go-back-N and IRN).
            (Verb::Send, 0, 0, 1, vec![0; 10]),
        ];
        assert!(got == want, "packets (verb, addr, iPSN, MSN, bytes) differ");
        assert_eq!(st.access_errors, 1);
    }
}
