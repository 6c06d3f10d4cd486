//! MP-RDMA (Lu et al., NSDI'18): a multi-path RC transport with one
//! congestion window for all paths. Its configuration ([`MpRdmaConfig`]),
//! the per-connection state it adds ([`state_bytes`]) and the QP engine
//! that joins the two halves: [`sender`] (window, multipath ACK clocking,
//! out-of-order-aware path selection, recovery, synchronise) and
//! [`receiver`] (the 2-bit [`bitmap`], in-order completion, per-packet
//! ACKs echoing the virtual path).
//!
//! A virtual path (VP) is a UDP source port; the fabric's ECMP hash maps it
//! to a physical path. Only WRITE and SEND are carried (MP-RDMA READs would
//! need the responder to run the multipath sender; not modelled).
//!
//! PSNs and MSNs are the QP's 32-bit serial numbers, 24 bits on the wire,
//! and wrap around (`crate::psn`).
//!
//! Files: `config` (parameters, counters, state size), `sender`,
//! `receiver`, `bitmap`; this file joins the halves and handles the
//! engine's packets, as the QP's dispatch calls it (`MpQp`). May use
//! `crate::api`, `crate::rc`, `crate::packet`, `crate::psn` and
//! `crate::memory`; nothing else of the crate.

pub mod bitmap;
pub(crate) mod config;
pub(crate) mod receiver;
pub(crate) mod sender;

pub use config::{state_bytes, state_fields, MpRdmaConfig, SenderMode, SyncMode};

use crate::packet::{Packet, PacketKind};
use crate::psn::{fits_wire, Psn};
use crate::rc::ctx::CtrlFields;
use crate::rc::Ctx;

/// The MP-RDMA engine of one QP: its sending and receiving halves.
#[derive(Debug)]
pub(crate) struct MpQp {
    pub snd: sender::Sender,
    pub rcv: receiver::Receiver,
}

impl MpQp {
    /// `seed` picks the QP's random VPs and probes (deterministic per QP);
    /// the QP sends from PSN `sq` and expects its peer's from `rq`.
    pub fn new(cfg: MpRdmaConfig, base_sport: u16, seed: u64, sq: Psn, rq: Psn) -> MpQp {
        let rng = engine::Rng::new(seed, engine::StreamKind::Host, base_sport as u64);
        MpQp {
            snd: sender::Sender::new(cfg, base_sport, rng, sq),
            rcv: receiver::Receiver::new(&cfg, rq),
        }
    }
}

impl MpQp {
    /// Handles one packet for the QP; true if it may have something new to
    /// send. MP-RDMA reacts to ECN echoes per ACK in its own window (no
    /// rate-based congestion control, no CNPs) and carries no READs. A
    /// packet whose sequence numbers do not fit their 24 wire bits is
    /// malformed.
    #[inline]
    pub fn handle_packet(&mut self, cx: &mut Ctx, pkt: &Packet) -> bool {
        let (now, id, cfg) = (cx.now, cx.qp, cx.cfg);
        // The PSNs and MSN (the iPSN is an index, not a sequence number).
        if !fits_wire(pkt.psn | pkt.wqe_sn | pkt.sack_psn) {
            cx.stats.malformed_dropped += 1;
            return false;
        }
        match pkt.kind {
            PacketKind::Request => {
                let reply = self.rcv.on_data(cx, pkt);
                if let Some(r) = reply {
                    cx.stats.cnps_sent += r.ecn as u64;
                    let mut a = cx.ctrl_packet(CtrlFields {
                        kind: r.kind,
                        psn: r.aack.wire(),
                        sack_psn: r.aack.wire(),
                        verb: pkt.verb,
                        ecn_echo: r.ecn,
                        sent_at: pkt.sent_at,
                    });
                    // The ACK travels on the data packet's VP too, so a
                    // failed path silences its own VP's clock both ways.
                    a.sport = pkt.sport;
                    r.mp.apply(&mut a);
                    cx.ctrl.push_back(a);
                }
                false
            }
            PacketKind::Ack | PacketKind::Nack => {
                let stats = &mut *cx.stats;
                let ok = if pkt.kind == PacketKind::Ack {
                    stats.acks_received += 1;
                    self.snd.on_ack(now, id, pkt, cfg, stats, cx.events)
                } else {
                    stats.nacks_received += 1;
                    self.snd.on_nack(now, id, pkt, cfg, stats, cx.events)
                };
                if !ok {
                    stats.malformed_dropped += 1;
                }
                stats.cnps_received += (ok && pkt.ecn_echo) as u64;
                ok
            }
            // MP-RDMA carries no READ responses and reacts to ECN echoes
            // per ACK, not to CNPs.
            PacketKind::ReadResponse
            | PacketKind::ReadAck
            | PacketKind::ReadNack
            | PacketKind::Cnp
            | PacketKind::SwitchControl => {
                cx.stats.malformed_dropped += 1;
                false
            }
        }
    }
}
