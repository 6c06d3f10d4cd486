//! One queue pair: its requester and responder halves, its congestion
//! control state, its rate limiter (time and size of the last packet sent)
//! and the bookkeeping of its single armed timer.

use std::collections::VecDeque;

use crate::cc::Cc;
use crate::dcqcn::Notification;
use crate::mprdma::MpQp;
use crate::nic::{Event, NicConfig, NicStats, QpConfig, QpId};
use crate::packet::{Packet, PacketKind, Verb};
use crate::requester::Requester;
use crate::responder::Responder;
use crate::sched::SchedState;
use engine::time::serialization;
use engine::Time;

#[derive(Debug)]
pub(crate) struct Qp {
    pub id: QpId,
    pub cfg: QpConfig,
    pub req: Requester,
    pub resp: Responder,
    pub cc: Cc,
    /// How this QP, as a notification point, reports CE marks.
    pub notification: Notification,
    /// When this QP last sent a CNP packet.
    pub last_cnp: Option<Time>,
    /// Time and wire size of the last data packet sent (rate limiter).
    pub last_tx: Option<(Time, u32)>,
    /// Alternates requester data and READ responses when both are waiting.
    pub resp_turn: bool,
    /// The earliest `ArmTimer` handed out and not yet fired.
    pub armed: Option<Time>,
    pub sched: SchedState,
    /// The MP-RDMA engine, replacing `req`/`resp` on MP-RDMA QPs (boxed:
    /// go-back-N QPs, the common case at scale, stay small).
    pub mp: Option<Box<MpQp>>,
}

impl Qp {
    pub fn new(id: QpId, cfg: QpConfig, cc: Cc, notification: Notification) -> Qp {
        Qp {
            id,
            cfg,
            req: Requester::default(),
            resp: Responder::default(),
            cc,
            notification,
            last_cnp: None,
            last_tx: None,
            resp_turn: false,
            armed: None,
            sched: SchedState::Idle,
            mp: None,
        }
    }

    #[inline]
    pub fn has_data(&self) -> bool {
        match &self.mp {
            Some(m) => m.snd.has_data(),
            None => self.req.has_data() || self.resp.has_data(),
        }
    }

    /// Sent and not yet acknowledged.
    #[inline]
    pub fn outstanding(&self) -> bool {
        match &self.mp {
            Some(m) => m.snd.outstanding(),
            None => self.req.outstanding(),
        }
    }

    /// The earliest time this QP may send at its current rate or, if its
    /// rate may increase before that, the time of that increase (when it
    /// must be looked at again). Returns `now` if it may send now.
    ///
    /// The limiter is "last send + serialisation of the last packet at the
    /// rate in force now", which is what HPCC's `ChangeRate` maintains by
    /// shifting `m_nextAvail` on every rate change.
    #[inline]
    pub fn eligible_at(&mut self, now: Time, decreases: &mut u64) -> Time {
        let Some((t, wire)) = self.last_tx else {
            return now;
        };
        let rate = self.cc.rate(now, decreases);
        let free = t + serialization(wire as u64, rate);
        if free <= now {
            now
        } else {
            self.cc.next_increase().map_or(free, |c| c.min(free))
        }
    }

    /// Builds the next data packet (requester data or a READ response,
    /// alternating when both wait) and updates the rate limiter and the
    /// congestion control.
    pub fn next_packet(&mut self, now: Time, cfg: &NicConfig, stats: &mut NicStats) -> Packet {
        if let Some(m) = self.mp.as_mut() {
            // The sender chose the VP (source port).
            let mut pkt = m.snd.next_packet(now, cfg, stats);
            pkt.src = cfg.host;
            pkt.dst = self.cfg.peer_host;
            pkt.src_qp = self.id;
            pkt.dst_qp = self.cfg.peer_qp;
            self.last_tx = Some((now, pkt.wire));
            self.cc
                .on_sent(now, pkt.wire as u64, &mut stats.rate_decreases);
            return pkt;
        }
        let use_resp = self.resp.has_data() && (self.resp_turn || !self.req.has_data());
        let mut pkt = if use_resp {
            self.resp_turn = false;
            self.resp.next_packet(now, cfg, stats)
        } else {
            self.resp_turn = true;
            self.req.next_packet(now, cfg, stats)
        };
        pkt.src = cfg.host;
        pkt.dst = self.cfg.peer_host;
        pkt.src_qp = self.id;
        pkt.dst_qp = self.cfg.peer_qp;
        pkt.sport = self.cfg.sport;
        self.last_tx = Some((now, pkt.wire));
        self.cc
            .on_sent(now, pkt.wire as u64, &mut stats.rate_decreases);
        pkt
    }

    /// A control packet (ACK, NACK, CNP) to the peer QP.
    pub fn ctrl_packet(
        &self,
        kind: PacketKind,
        psn: u32,
        verb: Verb,
        ecn_echo: bool,
        sent_at: Time,
        cfg: &NicConfig,
    ) -> Packet {
        Packet {
            src: cfg.host,
            dst: self.cfg.peer_host,
            src_qp: self.id,
            dst_qp: self.cfg.peer_qp,
            sport: self.cfg.sport,
            kind,
            verb,
            psn,
            payload: 0,
            wire: cfg.ctrl_bytes,
            priority: cfg.ctrl_priority,
            ce: false,
            ecn_echo,
            first: false,
            last: false,
            msg_len: 0,
            sent_at,
            mp: Default::default(),
        }
    }

    /// Sends a CNP for the marked packet `pkt` unless one went out less than
    /// `interval` ago.
    pub fn maybe_cnp(
        &mut self,
        now: Time,
        interval: Time,
        pkt: &Packet,
        cfg: &NicConfig,
        ctrl: &mut VecDeque<Packet>,
        stats: &mut NicStats,
    ) {
        if self
            .last_cnp
            .is_some_and(|t| now < t.saturating_add(interval))
        {
            return;
        }
        self.last_cnp = Some(now);
        ctrl.push_back(self.ctrl_packet(PacketKind::Cnp, pkt.psn, pkt.verb, false, now, cfg));
        stats.cnps_sent += 1;
    }

    /// Emits an `ArmTimer` if the QP's deadline is earlier than the timer
    /// already armed (or none is armed). A later deadline waits for the armed
    /// timer to fire, which then re-arms: at most one timer per QP per RTO
    /// instead of one per ACK.
    #[inline]
    pub fn sync_timer(&mut self, events: &mut VecDeque<Event>) {
        let deadline = match &self.mp {
            Some(m) => m.snd.deadline(),
            None => self.req.rto_deadline,
        };
        if let Some(d) = deadline {
            if self.armed.is_none_or(|a| d < a) {
                self.armed = Some(d);
                events.push_back(Event::ArmTimer { qp: self.id, at: d });
            }
        }
    }
}
