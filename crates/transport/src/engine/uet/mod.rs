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
//! NSCC (`nscc`, unless `UetConfig::cc` is none) is the sender's
//! window: a request packet goes only while it has room for one more
//! beside those in flight (sent, not acknowledged, not SACKed and not
//! trimmed: a trimmed packet waiting to be resent is not in the network);
//! each ACK tells it the packets it newly acknowledges, the round trip of
//! the packet that triggered it (its `sent_at`, echoed) and its ECN echo,
//! a trimmed packet's NACK and a timeout tell it of a loss.
//!
//! Files: `config` (the parameters), `entropy` (the choice of entropy
//! values), `nscc` (the window control); this file (the engine). May use
//! `crate::api`, `crate::rc`, `crate::packet`, `crate::psn`,
//! `crate::memory` and `crate::engine::irn`; nothing else of the crate.

pub(crate) mod config;
pub(crate) mod entropy;
pub mod nscc;

use std::collections::VecDeque;

pub use config::{EvPolicy, UetCc, UetConfig, UetMode};

use entropy::{Entropy, Feedback};
use nscc::Nscc;

/// `Packet::mp_flags` bit: a data packet a switch trimmed to its headers,
/// or the NACK that answers one.
pub const TRIMMED: u8 = 1 << 7;

/// `Packet::mp_flags` bit of a request: acknowledge it at once (UET's
/// ACK request, AR). NSCC's sender sets it on the packet that fills its
/// window and on a resent trimmed packet: with fewer than `ack_every`
/// packets in flight the receiver's count would otherwise never be
/// reached, and the window would wait for the timeout.
pub const ACK_REQUEST: u8 = 1 << 6;

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
    /// Trimmed request PSNs to send again, lowest first; each
    /// unacknowledged and unSACKed (`on_ack` prunes the others).
    resend: VecDeque<Psn>,
    /// The sender's window control (None: `cc = "none"`).
    pub nscc: Option<Nscc>,
}

impl UetQp {
    /// A QP that sends from PSN `sq` and expects its peer's from `rq`,
    /// from source ports `sport + 0..evs`, its random choices seeded by
    /// `seed`, on `nic` (NSCC's parameters, and its line rate and MTU).
    pub fn new(cfg: UetConfig, sport: u16, seed: u64, sq: Psn, rq: Psn, nic: &NicConfig) -> UetQp {
        let rng = engine::Rng::new(seed, engine::StreamKind::Host, sport as u64);
        UetQp {
            cfg,
            irn: IrnQp::new(cfg.windows(), sq, rq),
            unacked: 0,
            base_sport: sport,
            ev: Entropy::new(cfg.ev_policy, cfg.evs, rng),
            resend: VecDeque::new(),
            nscc: (cfg.cc == UetCc::Nscc)
                .then(|| Nscc::new(&nic.nscc, nic.line_rate_bps, nic.mtu, cfg.max_in_flight)),
        }
    }

    /// A trimmed packet waits to be resent, or the requester has data,
    /// and NSCC's window has room for it.
    #[inline]
    pub fn req_has_data(&self) -> bool {
        (!self.resend.is_empty() || self.irn.req.has_data())
            && self
                .nscc
                .as_ref()
                .is_none_or(|n| n.window_open(self.in_network()))
    }

    /// Request packets in the network: sent and neither acknowledged nor
    /// SACKed, nor known lost and waiting to be resent (trimmed, in
    /// `resend`; or held lost by recovery after a timeout or NACK). With
    /// nothing in the network the window is open: it is never less than
    /// a packet.
    fn in_network(&self) -> u32 {
        let w = &self.irn.req.win;
        let gone = w.sacked_count() + w.lost_pending() + self.resend.len() as u32;
        w.nxt.since(w.una).saturating_sub(gone)
    }

    /// Packets acknowledged so far, cumulatively or by SACK (a running
    /// count whose differences NSCC reads).
    fn delivered(&self) -> u32 {
        let w = &self.irn.req.win;
        w.una.serial().wrapping_add(w.sacked_count())
    }

    /// The timer fired at `now`: the timeouts that expired (request and
    /// READ-response directions); a request timeout is NSCC's loss of
    /// everything unSACKed.
    pub fn on_timer(&mut self, now: Time) -> u64 {
        let lost = self.in_network();
        let req = self.irn.req.on_timer(now);
        if req {
            if let Some(n) = &mut self.nscc {
                n.on_timeout(lost);
            }
        }
        req as u64 + self.irn.resp.on_timer(now) as u64
    }

    /// Stamps a data packet about to leave: its entropy value (source
    /// port) and, under NSCC, the ACK request of a request packet that is
    /// resent (`resent`) or fills the window.
    #[inline]
    pub fn stamp(&mut self, p: &mut Packet, resent: bool) {
        p.sport = self.base_sport.wrapping_add(self.ev.next());
        if let Some(n) = &self.nscc {
            if p.kind == PacketKind::Request && (resent || !n.window_open(self.in_network())) {
                p.mp_flags |= ACK_REQUEST;
            }
        }
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
        let p = self.irn.req.resend(psn, now, cfg, stats, dma)?;
        // The timeout counts from now: the sender is resending what it
        // knows lost, and the timeout is for packets lost without a word,
        // as htsim's covers only packets not NACKed (from the oldest
        // one's sending). Counted from the last progress instead, an
        // incast whose first windows were trimmed whole, resent a packet
        // at a time under NSCC's window, timed out and resent every
        // packet again (149 timeouts, 10x the trims of htsim's run).
        self.irn.req.win.deadline = Some(now + self.cfg.rto);
        Some(p)
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
                    || pkt.mp_flags & ACK_REQUEST != 0
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
        let delivered = self.delivered();
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
            // In PSN order, lowest first (htsim's retransmission queue):
            // the cumulative ack moves as soon as it can.
            let at = self.resend.partition_point(|q| q.lt(psn));
            if psn.ge(win.una) && psn.lt(win.nxt) && self.resend.get(at) != Some(&psn) {
                self.resend.insert(at, psn);
            }
        }
        self.resend.retain(|&p| p.ge(win.una) && !win.is_sacked(p));
        if self.nscc.is_some() {
            self.nscc_feedback(now, pkt, delivered, trimmed);
        }
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

    /// Tells NSCC of an ACK or NACK (`delivered` before it): an ACK its
    /// newly acknowledged packets, the round trip of the packet that
    /// triggered it and its echo; a trimmed packet's NACK a loss. Other
    /// NACKs (ROD's out-of-order packets, the bitmap's end) feed nothing:
    /// one loss makes many of them.
    fn nscc_feedback(&mut self, now: Time, pkt: &Packet, delivered: u32, trimmed: bool) {
        let acked = self.delivered().wrapping_sub(delivered);
        let in_network = self.in_network();
        let Some(n) = &mut self.nscc else {
            return;
        };
        if pkt.kind == PacketKind::Ack {
            let rtt = now.checked_sub(pkt.sent_at);
            n.on_ack(now, acked, in_network, rtt, pkt.ecn_echo);
        } else if trimmed {
            n.on_trim_nack(now, 1, in_network);
        }
    }
}
