//! Eunomia's agents for one QP ([`BitmapQp`]), over a hybrid-dynamic
//! bitmap (`ordering = "eunomia"`) or over a static bitmap of fixed size
//! (`ordering = "static_bitmap"`, §5.7's comparison: the same agents, one
//! row allocated when the QP is made, never grown nor freed).
//!
//! Sender agent (§3.2). Every request packet carries the metadata: Head,
//! the connection's first PSN, and the last-packet bit. Head is what RC
//! connection setup already gave the receiver (its expected first PSN),
//! and the receiver agent takes it from there, so no field of ours holds
//! it (`sack_psn` of a data packet is its index in the message, SRPT's
//! key); the last-packet bit rides in `mp_flags` ([`LAST`]: the packet
//! ends a message and the send queue holds nothing after it), so the
//! arena's 64-byte slot does not grow. The wire size is not changed: the
//! paper's 33 bits are 5 bytes a scenario can add to `header_bytes`. Acknowledgements from the receiver
//! agent are ACK/NACK packets with a flag in `mp_flags` and are never seen
//! by the engine as such: a SACK ([`SACK`]) never triggers recovery (IRN
//! marks the PSN received; go-back-N ignores it); a NACK ([`NACK`]: the
//! receiver could not track the packet in `sack_psn`) triggers the
//! engine's recovery (go-back-N rewinds to the cumulative PSN; IRN enters
//! recovery with everything unSACKed through the dropped PSN lost). Real
//! losses are left to the engine's timeouts (§3.2.3).
//!
//! Receiver agent (§3.3, §3.5). A request at or below the engine's
//! expected PSN goes to the engine as without a layer. A request ahead of
//! it is tracked: the bitmap is created on the connection's first
//! out-of-order packet (its head the engine's expected PSN, which the
//! carried Head equals for a first packet: RC connection setup gives the
//! receiver the same first PSN), the PSN is marked, and a SACK goes back.
//! The NIC places a tracked packet's payload in host memory at once (§3.5.2:
//! "regardless of the order it is received as long as it is tracked");
//! the simulator places it when the engine takes the packet in order,
//! which leaves the same bytes at the same addresses, since nothing may
//! read them before the completion; so the engine below always sees an
//! in-order stream, and the packet headers the simulator keeps meanwhile
//! (`HeldPackets`) are its stand-in for the work the NIC did at arrival,
//! not NIC memory: what NIC memory the layer uses is the bitmap and its
//! metadata, in the memory controller. A packet the bitmap cannot track
//! (beyond the cap, no block left, or no room for a new connection's
//! metadata: the connection is then not tracked) is dropped, counted, and
//! NACKed once per gap (until the expected PSN moves). In-order arrivals
//! flush the head; when the head passes the connection's Last Seq with
//! nothing marked, the bitmap and its metadata are freed (§3.5.3).
//!
//! May use `crate::qp`, `crate::rc`, `crate::packet`, `crate::psn` and
//! `crate::order::{hd, held, mc}`.

use super::hd::{Geometry, Hd, Track};
use super::held::HeldPackets;
use super::mc::MemoryController;
use crate::packet::{Packet, PacketKind};
use crate::psn::{fits_wire, Psn};
use crate::qp::Qp;
use crate::rc::ctx::CtrlFields;
use crate::rc::Ctx;

/// `mp_flags` bit on a request: the connection's last packet (so far).
pub const LAST: u8 = 1 << 3;
/// `mp_flags` bit on an ACK: Eunomia's SACK of `sack_psn`.
pub const SACK: u8 = 1 << 4;
/// `mp_flags` bit on a NACK: `sack_psn` could not be tracked.
pub const NACK: u8 = 1 << 5;

/// The NIC-wide part of a bitmap layer.
#[derive(Debug)]
pub(crate) struct Bitmaps {
    /// Eunomia's memory controller (a static bitmap's QPs own theirs).
    pub mc: MemoryController,
    pub geo: Geometry,
    /// Eunomia (bitmaps made on demand, grown, and freed); else static.
    pub dynamic: bool,
}

/// One QP's agents.
#[derive(Debug)]
pub(crate) struct BitmapQp {
    /// The bitmap, while there is one.
    hd: Option<Hd>,
    held: HeldPackets,
    /// The expected PSN the last NACK named: one NACK per gap.
    nacked: Option<Psn>,
    /// A static bitmap's own storage.
    own: Option<Box<MemoryController>>,
    /// The most bits of bitmap this QP held at once.
    peak_bits: u32,
}

impl BitmapQp {
    /// The agents of a QP whose first expected PSN is `rq`; a static
    /// bitmap is made at once.
    pub fn new(b: &Bitmaps, rq: Psn) -> BitmapQp {
        let mut q = BitmapQp {
            hd: None,
            held: HeldPackets::default(),
            nacked: None,
            own: None,
            peak_bits: 0,
        };
        if !b.dynamic {
            let mut mc = Box::new(MemoryController::new(2 * b.geo.units_per_block));
            q.hd = Hd::create(&mut mc, &b.geo, rq);
            q.own = Some(mc);
            q.peak_bits = q.bitmap_bits(b);
        }
        q
    }

    /// Bits of bitmap this QP holds now.
    pub fn bitmap_bits(&self, b: &Bitmaps) -> u32 {
        self.hd.as_ref().map_or(0, |h| h.bits(&b.geo))
    }

    /// The most bits of bitmap this QP held at once.
    pub fn peak_bits(&self) -> u32 {
        self.peak_bits
    }

    /// Sender agent: stamps a request with the last-packet bit (`more`:
    /// the send queue holds more after it; Head needs no field, see the
    /// module doc).
    pub fn stamp(&self, pkt: &mut Packet, more: bool) {
        if pkt.kind == PacketKind::Request && pkt.last && !more {
            pkt.mp_flags |= LAST;
        }
    }

    /// See `crate::order::Ordering::on_packet`.
    pub fn on_packet(&mut self, b: &mut Bitmaps, qp: &mut Qp, cx: &mut Ctx, pkt: &Packet) -> bool {
        if pkt.mp_flags & (SACK | NACK) != 0
            && matches!(pkt.kind, PacketKind::Ack | PacketKind::Nack)
        {
            return sender_agent(qp, cx, pkt);
        }
        let expected = match qp.expected_request_psn() {
            Some(e) if pkt.kind == PacketKind::Request && fits_wire(pkt.psn) => e,
            _ => return qp.on_packet(cx, pkt),
        };
        let psn = Psn::from_wire(pkt.psn, expected);
        if pkt.mp_flags & LAST != 0 {
            if let Some(h) = &mut self.hd {
                h.last_seq = Some(h.last_seq.map_or(psn, |l| l.max(psn)));
            }
        }
        let ahead = psn.diff(expected);
        if ahead <= 0 {
            let wake = qp.on_packet(cx, pkt);
            return self.flush(b, qp, cx) | wake;
        }
        cx.out_of_order(ahead as u32);
        let mc = match &mut self.own {
            Some(m) => &mut **m,
            None => &mut b.mc,
        };
        if self.hd.is_none() {
            let Some(mut h) = Hd::create(mc, &b.geo, expected) else {
                cx.stats.eunomia_untracked_dropped += 1;
                return self.nack(cx, expected, pkt);
            };
            cx.stats.eunomia_bitmaps_made += 1;
            if pkt.mp_flags & LAST != 0 {
                h.last_seq = Some(psn);
            }
            self.hd = Some(h);
        }
        let Some(h) = &mut self.hd else {
            unreachable!("made above")
        };
        match h.track(mc, &b.geo, psn) {
            Track::New => {
                self.peak_bits = self.peak_bits.max(h.bits(&b.geo));
                self.held.hold(expected, psn, pkt, cx);
                reply(cx, PacketKind::Ack, SACK, expected, pkt);
                cx.stats.eunomia_sacks_sent += 1;
            }
            Track::Again => cx.duplicate(),
            Track::BeyondCap => {
                cx.stats.eunomia_beyond_cap_dropped += 1;
                return self.nack(cx, expected, pkt);
            }
            Track::NoMemory => {
                cx.stats.eunomia_untracked_dropped += 1;
                return self.nack(cx, expected, pkt);
            }
        }
        false
    }

    /// Drops `pkt`, NACKing the gap at `expected` unless it was already.
    fn nack(&mut self, cx: &mut Ctx, expected: Psn, pkt: &Packet) -> bool {
        if self.nacked != Some(expected) {
            self.nacked = Some(expected);
            reply(cx, PacketKind::Nack, NACK, expected, pkt);
            cx.stats.eunomia_nacks_sent += 1;
        }
        false
    }

    /// After the engine took a packet in order: hands it what is now in
    /// order, moves the head, and frees a finished connection's bitmap.
    fn flush(&mut self, b: &mut Bitmaps, qp: &mut Qp, cx: &mut Ctx) -> bool {
        let wake = self.held.release(qp, cx);
        let Some(e) = qp.expected_request_psn() else {
            return wake;
        };
        if self.nacked.is_some_and(|n| e.gt(n)) {
            self.nacked = None;
        }
        let Some(h) = &mut self.hd else {
            return wake;
        };
        let mc = match &mut self.own {
            Some(m) => &mut **m,
            None => &mut b.mc,
        };
        h.advance_to(mc, &b.geo, e);
        let done = h.marked() == 0 && h.last_seq.is_some_and(|l| h.head.gt(l));
        if b.dynamic && done {
            if let Some(h) = self.hd.take() {
                h.free(mc, &b.geo);
                cx.stats.eunomia_bitmaps_freed += 1;
            }
        }
        wake
    }

    /// Returns this QP's bitmap to the controller (the QP is destroyed).
    pub fn release(&mut self, b: &mut Bitmaps) {
        if let (Some(h), None) = (self.hd.take(), &self.own) {
            h.free(&mut b.mc, &b.geo);
        }
    }
}

/// Queues the receiver agent's answer to `pkt`: an ACK or NACK of the
/// gap at `expected` naming `pkt`'s PSN, flagged `flag` (SACK or NACK).
fn reply(cx: &mut Ctx, kind: PacketKind, flag: u8, expected: Psn, pkt: &Packet) {
    let p = cx.ctrl_packet(CtrlFields {
        kind,
        psn: expected.wire(),
        sack_psn: pkt.psn,
        verb: pkt.verb,
        ecn_echo: false,
        sent_at: pkt.sent_at,
    });
    cx.ctrl.push_back(Packet {
        mp_flags: flag,
        ..p
    });
}

/// The sender agent's reaction to the receiver agent's SACK or NACK.
fn sender_agent(qp: &mut Qp, cx: &mut Ctx, pkt: &Packet) -> bool {
    let sack = pkt.mp_flags & SACK != 0;
    if let Some(r) = qp.engine.on_order_ack(cx, pkt, sack) {
        return r;
    }
    if sack {
        // Go-back-N: ignored.
        return false;
    }
    // Go-back-N's recovery: a plain NACK of the gap.
    let plain = Packet {
        mp_flags: 0,
        sack_psn: pkt.psn,
        ..*pkt
    };
    qp.on_packet(cx, &plain)
}
