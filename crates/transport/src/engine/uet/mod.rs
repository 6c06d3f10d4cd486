//! The Ultra Ethernet Transport (UE 1.0, its packet delivery sublayer,
//! PDS): a connection's packets carry PSNs, the receiver places each as
//! it arrives (RUD) or only in order (ROD), and answers with coalesced
//! ACKs that carry the cumulative PSN and a 64-bit SACK bitmap of what
//! arrived above it; lost packets come back through NACKs or the
//! retransmission timeout. Our verbs map onto UET's semantic operations
//! as RMA (WRITE, WRITE with immediate, READ, atomics) and send (SEND);
//! a message completes when all its packets have arrived, in whatever
//! order.
//!
//! The selective-repeat machinery is IRN's (`crate::engine::irn`: its
//! windows, its placement of every packet on its own, its READ responses
//! in their own PSN space, acknowledged per packet): what UET changes is
//! how requests are acknowledged, here. The receiver ([`UetQp::on_request`])
//! acknowledges every [`UetConfig::ack_every`] packets, and at once a
//! message's last packet (so that completion never waits for a count), a
//! packet that closes a gap (the cumulative PSN jumps), a duplicate (the
//! sender is confused) and a CE-marked one (the echo is the control's
//! signal); the ACK names the PSN that triggered it in `sack_psn`, echoes
//! its source port (its entropy value) in `vp` and its CE mark in
//! `ecn_echo`, and carries the bitmap in `addr`, a field ACKs do not
//! otherwise use. The sender ([`UetQp::on_ack`]) marks the bitmap's PSNs
//! received, which neither recovery nor a timeout resends; a NACK
//! (`sack_psn`: the PSN the receiver could not take) makes every
//! unacknowledged PSN through it lost, resent at once.
//!
//! A switch that trims (`[switch] trimming`) cuts a data packet to its
//! headers and flags it [`TRIMMED`]: the receiver answers a trimmed
//! request at once with a NACK flagged [`TRIMMED`] too (an ACK if that
//! PSN has arrived after all), and the sender resends that one PSN
//! before anything else, without waiting for a timeout and without
//! entering loss recovery. A trimmed READ response is dropped: the read
//! responder's timeout resends it.
//!
//! Each data packet's source port is `sport + ev`, its entropy value
//! chosen by `entropy` (oblivious spraying, REPS or the bitmap policy),
//! which ACKs (the echoed EV and CE mark) and NACKs feed.
//!
//! Files: `config` (the parameters), `entropy` (the choice of entropy
//! values); this file (the engine). May use
//! `crate::api`, `crate::rc`, `crate::packet`, `crate::psn`,
//! `crate::memory` and `crate::engine::irn`; nothing else of the crate.

pub(crate) mod config;
pub(crate) mod entropy;

use std::collections::VecDeque;

pub use config::{EvPolicy, UetConfig, UetMode};

use entropy::{Entropy, Feedback};

/// `Packet::mp_flags` bit: a data packet a switch trimmed to its headers,
/// or the NACK that answers one.
pub const TRIMMED: u8 = 1 << 7;

use crate::api::{NicConfig, NicStats};
use crate::dcqcn::Notification;
use crate::engine::irn::IrnQp;
use crate::memory::Dma;
use crate::packet::{Packet, PacketKind};
use crate::psn::{fits_wire, Psn};
use crate::rc::ctx::CtrlFields;
use crate::rc::{halves, Conn, Ctx, Reply};
use engine::Time;

/// One UET connection: IRN's halves under UET's acknowledgements.
#[derive(Debug)]
pub(crate) struct UetQp {
    cfg: UetConfig,
    pub irn: IrnQp,
    /// Request packets taken since the last ACK.
    unacked: u32,
    /// The QP's source port: entropy value 0.
    base_sport: u16,
    ev: Entropy,
    /// Trimmed request PSNs to send again, oldest NACK first; each
    /// unacknowledged and unSACKed (`on_ack` prunes the others).
    resend: VecDeque<Psn>,
}

impl UetQp {
    /// A QP that sends from PSN `sq` and expects its peer's from `rq`,
    /// from source ports `sport + 0..evs`, its random choices seeded by
    /// `seed`.
    pub fn new(cfg: UetConfig, sport: u16, seed: u64, sq: Psn, rq: Psn) -> UetQp {
        let rng = engine::Rng::new(seed, engine::StreamKind::Host, sport as u64);
        UetQp {
            cfg,
            irn: IrnQp::new(cfg.windows(), sq, rq),
            unacked: 0,
            base_sport: sport,
            ev: Entropy::new(cfg.ev_policy, cfg.evs, rng),
            resend: VecDeque::new(),
        }
    }

    /// A trimmed packet waits to be resent, or the requester has data.
    #[inline]
    pub fn req_has_data(&self) -> bool {
        !self.resend.is_empty() || self.irn.req.has_data()
    }

    /// The source port of the next data packet.
    #[inline]
    pub fn next_sport(&mut self) -> u16 {
        self.base_sport.wrapping_add(self.ev.next())
    }

    /// A trimmed request to send again, if one waits (the next data
    /// packet then; `EngineOps::next_packet` takes IRN's otherwise).
    #[inline]
    pub fn resend(
        &mut self,
        now: Time,
        cfg: &NicConfig,
        stats: &mut NicStats,
        dma: &mut Dma,
    ) -> Option<Packet> {
        let psn = self.resend.pop_front()?;
        self.irn.req.resend(psn, now, cfg, stats, dma)
    }

    /// Handles one packet; true if the QP may have something to send.
    pub fn handle_packet(&mut self, cx: &mut Ctx, conn: &mut Conn, pkt: &Packet) -> bool {
        match pkt.kind {
            PacketKind::Request | PacketKind::Ack | PacketKind::Nack
                if !fits_wire(pkt.psn | pkt.sack_psn | pkt.wqe_sn) =>
            {
                cx.stats.malformed_dropped += 1;
                false
            }
            PacketKind::Request => self.on_request(cx, conn, pkt),
            // Recovered by the read responder's timeout.
            PacketKind::ReadResponse if pkt.mp_flags & TRIMMED != 0 => false,
            PacketKind::Ack | PacketKind::Nack => self.on_ack(cx, conn, pkt),
            // READ responses and their acknowledgements, CNPs: IRN's.
            _ => halves::on_packet(&mut self.irn, cx, conn, pkt),
        }
    }

    /// A request packet at the receiver: placed (ROD: only in order) and
    /// acknowledged as the module's documentation says.
    fn on_request(&mut self, cx: &mut Ctx, conn: &mut Conn, pkt: &Packet) -> bool {
        let epsn = self.irn.resp.expected();
        let psn = Psn::from_wire(pkt.psn, epsn);
        if pkt.ce {
            if let Notification::Cnp { cnp_interval } = conn.notification {
                cx.maybe_cnp(conn, cnp_interval, pkt);
            }
        }
        if pkt.mp_flags & TRIMMED != 0 {
            if self.irn.resp.received(psn) {
                cx.duplicate();
                self.reply(cx, conn, pkt, PacketKind::Ack, epsn, psn);
            } else {
                self.reply(cx, conn, pkt, PacketKind::Nack, epsn, psn);
            }
            return false;
        }
        if self.cfg.mode == UetMode::Rod && psn.gt(epsn) {
            cx.stats.out_of_order_dropped += 1;
            self.reply(cx, conn, pkt, PacketKind::Nack, epsn, psn);
            return false;
        }
        let dups = cx.stats.duplicates_received;
        let o = self.irn.resp.on_request(cx, pkt);
        if o.malformed {
            cx.stats.malformed_dropped += 1;
        }
        let cum = self.irn.resp.expected();
        match o.reply {
            // Malformed, or not placed (no receive WQE yet): the sender's
            // timeout retries.
            Reply::None => {}
            // Beyond the tracking bitmap.
            Reply::Nack(..) => self.reply(cx, conn, pkt, PacketKind::Nack, cum, psn),
            Reply::Ack(..) | Reply::Sack(..) => {
                self.unacked += 1;
                let now = pkt.ce
                    || pkt.last
                    || self.unacked >= self.cfg.ack_every
                    || cum.since(epsn) > 1
                    || cx.stats.duplicates_received != dups;
                if now {
                    self.reply(cx, conn, pkt, PacketKind::Ack, cum, psn);
                }
            }
        }
        o.read_queued
    }

    /// Sends an ACK (cumulative `cum`, the SACK bitmap above it) or a NACK
    /// (`cum`, and `psn`, the PSN not taken) answering `pkt`.
    fn reply(
        &mut self,
        cx: &mut Ctx,
        conn: &Conn,
        pkt: &Packet,
        kind: PacketKind,
        cum: Psn,
        psn: Psn,
    ) {
        self.unacked = 0;
        let mut p = cx.ctrl_packet(CtrlFields {
            kind,
            psn: cum.wire(),
            sack_psn: psn.wire(),
            verb: pkt.verb,
            ecn_echo: pkt.ce,
            sent_at: pkt.sent_at,
        });
        if kind == PacketKind::Ack {
            p.addr = self.irn.resp.sack_bits();
        } else {
            p.mp_flags = pkt.mp_flags & TRIMMED;
        }
        p.vp = pkt.sport;
        cx.stats.cnps_sent += (pkt.ce && conn.notification == Notification::AckEcho) as u64;
        cx.ctrl.push_back(p);
    }

    /// An ACK or NACK at the sender.
    fn on_ack(&mut self, cx: &mut Ctx, conn: &mut Conn, pkt: &Packet) -> bool {
        let (now, qp) = (cx.now, cx.qp);
        let req = &mut self.irn.req;
        let cum = Psn::from_wire(pkt.psn, req.win.una);
        let trimmed = pkt.kind == PacketKind::Nack && pkt.mp_flags & TRIMMED != 0;
        let o = if pkt.kind == PacketKind::Ack {
            req.on_sack_bitmap(now, qp, cum, pkt.addr, cx.events)
        } else if trimmed {
            req.on_sack_bitmap(now, qp, cum, 0, cx.events)
        } else {
            req.on_order_ack(now, qp, pkt, false, cx.events)
        };
        if o.malformed {
            cx.stats.malformed_dropped += 1;
            return false;
        }
        let win = &self.irn.req.win;
        if trimmed {
            let psn = Psn::from_wire(pkt.sack_psn, win.una);
            if psn.ge(win.una) && psn.lt(win.nxt) && !self.resend.contains(&psn) {
                self.resend.push_back(psn);
            }
        }
        self.resend.retain(|&p| p.ge(win.una) && !win.is_sacked(p));
        let fb = match (pkt.kind, pkt.ecn_echo) {
            (PacketKind::Ack, false) => Feedback::Good,
            (PacketKind::Ack, true) => Feedback::Marked,
            _ => Feedback::Nack,
        };
        self.ev.feedback(pkt.vp.wrapping_sub(self.base_sport), fb);
        if pkt.kind == PacketKind::Ack {
            cx.stats.acks_received += 1;
        } else {
            cx.stats.nacks_received += 1;
        }
        if pkt.ecn_echo && conn.notification == Notification::AckEcho {
            cx.stats.cnps_received += 1;
            conn.cc.on_congestion(now, &mut cx.stats.rate_decreases);
        }
        let nxt = self.irn.req.win.nxt;
        conn.cc.on_ack(now, pkt, cx.int, || {
            (Psn::from_wire(pkt.psn, nxt).serial(), nxt.serial())
        });
        true
    }
}
