//! The packet handling shared by the engines built from a requester half
//! and a responder half (go-back-N and IRN): which half each packet kind
//! goes to, the ACK/NACK a request is answered with, ECN echoes and CNPs,
//! and the counters. An engine implements [`Halves`] and calls
//! [`on_packet`].
//!
//! Uses `crate::rc` (its siblings), `crate::api`, `crate::packet`,
//! `crate::psn`, `crate::cc` (through `Conn`) and `crate::dcqcn`.

use super::ctx::{Conn, CtrlFields, Ctx};
use super::wqe::{Outcome, Reply, RxOutcome};
use crate::dcqcn::Notification;
use crate::packet::{Packet, PacketKind, Verb};
use crate::psn::{fits_wire, Psn};

/// A read (N)ACK to send: (kind, PSN, SACK PSN).
pub(crate) type ReadReply = (PacketKind, Psn, Psn);

/// The inputs of an engine made of a requester and a responder half.
pub(crate) trait Halves {
    /// A request packet (WRITE/SEND data, READ or atomic request), at the
    /// responder.
    fn on_request(&mut self, cx: &mut Ctx, pkt: &Packet) -> RxOutcome;
    /// A READ or atomic response, at the requester; and the read (N)ACK to
    /// send back, if the engine acknowledges responses.
    fn on_read_response(&mut self, cx: &mut Ctx, pkt: &Packet) -> (Outcome, Option<ReadReply>);
    /// An ACK or NACK of requests, at the requester.
    fn on_ack(&mut self, cx: &mut Ctx, pkt: &Packet) -> Outcome;
    /// A read ACK or NACK, at the responder.
    fn on_read_ack(&mut self, cx: &mut Ctx, pkt: &Packet) -> Outcome;
    /// The next request PSN the requester would send (what ACK-driven
    /// congestion controls compare ACKs with).
    fn snd_nxt(&self) -> Psn;
}

/// Handles one packet for the QP; true if it may have something new to
/// send. A packet whose sequence numbers do not fit their 24 wire bits is
/// malformed.
#[inline(always)]
pub(crate) fn on_packet<H: Halves>(h: &mut H, cx: &mut Ctx, conn: &mut Conn, pkt: &Packet) -> bool {
    let now = cx.now;
    // A PSN in every field (`sack_psn` too: a PSN, or 0 on data packets;
    // the iPSN is an index, not a sequence number),
    // a receive or read WQE SN or 0 in `wqe_sn`.
    if !fits_wire(pkt.psn | pkt.sack_psn | pkt.wqe_sn) {
        cx.stats.malformed_dropped += 1;
        return false;
    }
    match pkt.kind {
        PacketKind::Request => {
            let o = h.on_request(cx, pkt);
            if o.malformed {
                cx.stats.malformed_dropped += 1;
            }
            let reply = match o.reply {
                Reply::None => None,
                Reply::Ack(psn, ce) => Some((PacketKind::Ack, psn, psn, ce)),
                Reply::Nack(psn, ce) => Some((PacketKind::Nack, psn, psn, ce)),
                Reply::Sack(psn, sack, ce) => Some((PacketKind::Nack, psn, sack, ce)),
            };
            if let Some((kind, psn, sack_psn, ce)) = reply {
                // `notification` is on a line of the QP that an
                // unmarked packet does not otherwise read.
                let echo = ce && conn.notification == Notification::AckEcho;
                cx.stats.cnps_sent += echo as u64;
                let p = cx.ctrl_packet(CtrlFields {
                    kind,
                    psn: psn.wire(),
                    sack_psn: sack_psn.wire(),
                    verb: pkt.verb,
                    ecn_echo: echo,
                    sent_at: pkt.sent_at,
                });
                cx.ctrl.push_back(p);
            }
            if pkt.ce {
                match conn.notification {
                    Notification::Cnp { cnp_interval } => cx.maybe_cnp(conn, cnp_interval, pkt),
                    // READ requests get no ACK to carry the echo.
                    Notification::AckEcho if pkt.verb == Verb::Read => cx.maybe_cnp(conn, 0, pkt),
                    Notification::AckEcho | Notification::Off => {}
                }
            }
            o.read_queued
        }
        PacketKind::ReadResponse => {
            let (o, reply) = h.on_read_response(cx, pkt);
            if o.malformed {
                cx.stats.malformed_dropped += 1;
                return false;
            }
            if let Some((kind, psn, sack_psn)) = reply {
                let p = cx.ctrl_packet(CtrlFields {
                    kind,
                    psn: psn.wire(),
                    sack_psn: sack_psn.wire(),
                    verb: pkt.verb,
                    ecn_echo: false,
                    sent_at: pkt.sent_at,
                });
                cx.ctrl.push_back(p);
            }
            match conn.notification {
                _ if !pkt.ce => {}
                Notification::Cnp { cnp_interval } => cx.maybe_cnp(conn, cnp_interval, pkt),
                Notification::AckEcho => cx.maybe_cnp(conn, 0, pkt),
                Notification::Off => {}
            }
            true
        }
        PacketKind::Ack | PacketKind::Nack => {
            let o = h.on_ack(cx, pkt);
            if o.malformed {
                cx.stats.malformed_dropped += 1;
                return false;
            }
            if pkt.kind == PacketKind::Ack {
                cx.stats.acks_received += 1;
            } else {
                cx.stats.nacks_received += 1;
            }
            if pkt.ecn_echo {
                cx.stats.cnps_received += 1;
                conn.cc.on_congestion(now, &mut cx.stats.rate_decreases);
            }
            conn.cc.on_ack(now, pkt, cx.int, || {
                let nxt = h.snd_nxt();
                (Psn::from_wire(pkt.psn, nxt).serial(), nxt.serial())
            });
            true
        }
        PacketKind::ReadAck | PacketKind::ReadNack => {
            let o = h.on_read_ack(cx, pkt);
            if o.malformed {
                cx.stats.malformed_dropped += 1;
                return false;
            }
            true
        }
        PacketKind::Cnp => {
            cx.stats.cnps_received += 1;
            conn.cc.on_congestion(now, &mut cx.stats.rate_decreases);
            false
        }
        // A switch's own control packet is no NIC's.
        PacketKind::SwitchControl => {
            cx.stats.malformed_dropped += 1;
            false
        }
    }
}
