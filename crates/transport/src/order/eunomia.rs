//! Eunomia's agents for one QP ([`BitmapQp`]), over a hybrid-dynamic
//! bitmap (`ordering = "eunomia"`) or over a static bitmap of fixed size
//! (`ordering = "static_bitmap"`, §5.7's comparison: the same agents, one
//! row never grown, allocated for the life of a connection).
//!
//! Sender agent (§3.2). Every request packet carries the metadata: Head,
//! the connection's first PSN, and the last-packet bit. Head is what RC
//! connection setup already gave the receiver (its expected first PSN),
//! and the receiver agent takes it from there, so no field of ours holds
//! it (a data packet's `ipsn` is its index in the message, SRPT's
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
//! The last packet of a WRITE (§3.5 "WRITE", Appendix A). A WRITE without
//! immediate makes no completion at the responder: the application learns
//! of the data from a flag in its last packet, so that packet must not be
//! placed before everything before it. SEND, WRITE with immediate and READ
//! are ordered by the in-order completion below. The packet held is the
//! one with the [`LAST`] bit that ends a WRITE: the connection's last
//! packet, as the paper says (a flow's QP posts all its messages at once,
//! so it is the flow's last packet); a WRITE's last packet with more
//! posted behind it goes as any other. With `last_packet = "sender_hold"`
//! (the paper's design) the sender agent does not send it until the
//! cumulative ACK covers every earlier PSN ([`BitmapQp::holds`], asked by
//! the NIC before it builds a packet; the ACK wakes the QP, a rewind or a
//! timeout resends what is before it first, and the QP's READ responses
//! still go); it costs about one RTT, counted in `eunomia_sender_held`
//! and `eunomia_sender_hold_ps`. The packet before it carries [`ACK_REQ`]
//! (BTH's AckReq), and the receiver agent answers it with an ACK once the
//! engine took it, so that a responder coalescing ACKs (`ack_every`)
//! does not leave the hold to a timeout. With `"receiver_hold"` (the
//! appendix's proposal) the sender holds nothing and the receiver keeps
//! an out-of-order last packet in host memory until everything before it
//! is placed: what the layer does with every tracked packet (below); its
//! cost is the extra PCIe crossing of those bytes, counted (in both modes)
//! in `eunomia_receiver_held` and `eunomia_receiver_held_bytes`.
//!
//! Receiver agent (§3.3, §3.5). A request at or below the engine's
//! expected PSN goes to the engine as without a layer. A request ahead of
//! it is tracked: Eunomia's bitmap is created on the connection's first
//! out-of-order packet (its head the engine's expected PSN, which the
//! carried Head equals for a first packet: RC connection setup gives the
//! receiver the same first PSN), the PSN is marked, and a SACK goes back.
//! A static bitmap is made at the connection's first request packet at or
//! ahead of the expected PSN (in order or not: the NIC reserves it for a
//! connection that has work in flight), so NIC memory counts only live
//! connections. The NIC places a tracked packet's payload in host memory at once (§3.5.2:
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
//! nothing marked, the connection is complete and its bitmap (and
//! metadata) freed (§3.5.3), Eunomia's and a static one alike; a later
//! request makes one again.
//!
//! May use `crate::qp`, `crate::rc`, `crate::packet`, `crate::psn`,
//! `crate::api`'s counters and `crate::order::{hd, held, mc}`.

use super::hd::{Geometry, Hd, Track};
use super::held::HeldPackets;
use super::mc::MemoryController;
use crate::api::NicStats;
use crate::packet::{Packet, PacketKind, Verb};
use crate::psn::{fits_wire, Psn};
use crate::qp::Qp;
use crate::rc::ctx::CtrlFields;
use crate::rc::Ctx;
use engine::Time;

/// `mp_flags` bit on a request: the connection's last packet (so far).
pub const LAST: u8 = 1 << 3;
/// `mp_flags` bit on an ACK: Eunomia's SACK of `sack_psn`.
pub const SACK: u8 = 1 << 4;
/// `mp_flags` bit on a NACK: `sack_psn` could not be tracked.
pub const NACK: u8 = 1 << 5;
/// `mp_flags` bit on a request: acknowledge it even when ACKs are
/// coalesced (the sender agent holds the packet after it).
pub const ACK_REQ: u8 = 1 << 6;

/// The NIC-wide part of a bitmap layer.
#[derive(Debug)]
pub(crate) struct Bitmaps {
    /// Eunomia's memory controller (a static bitmap's QPs own theirs).
    pub mc: MemoryController,
    pub geo: Geometry,
    /// Eunomia (bitmaps made on demand, grown, and freed); else static.
    pub dynamic: bool,
    /// Static bitmaps live now and the most at once (Eunomia's memory
    /// controller counts its own).
    pub live: u64,
    pub peak_live: u64,
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
    /// The sender agent holds this PSN (a WRITE's last packet) since then.
    holding: Option<(Psn, Time)>,
    /// The receiver agent owes an ACK once the engine passes this PSN (a
    /// request flagged [`ACK_REQ`], under coalesced ACKs).
    ack_at: Option<Psn>,
}

impl BitmapQp {
    /// The agents of a QP; a static bitmap gets the storage of its one
    /// row (its bitmap is made when a connection starts).
    pub fn new(b: &Bitmaps) -> BitmapQp {
        let own = (!b.dynamic).then(|| Box::new(MemoryController::new(2 * b.geo.units_per_block)));
        BitmapQp {
            hd: None,
            held: HeldPackets::default(),
            nacked: None,
            own,
            peak_bits: 0,
            holding: None,
            ack_at: None,
        }
    }

    /// Bits of bitmap this QP holds now.
    pub fn bitmap_bits(&self, b: &Bitmaps) -> u32 {
        self.hd.as_ref().map_or(0, |h| h.bits(&b.geo))
    }

    /// The most bits of bitmap this QP held at once.
    pub fn peak_bits(&self) -> u32 {
        self.peak_bits
    }

    /// Sender agent, `last_packet = "sender_hold"`: true while the
    /// requester's next packet is a WRITE's last (see the module doc) and
    /// an earlier PSN is not acknowledged; the hold is timed from the
    /// first time it is asked.
    pub fn holds(&mut self, qp: &Qp, now: Time) -> bool {
        if !qp.engine.req_has_data() {
            return false;
        }
        match qp.engine.last_write() {
            Some((psn, una)) if psn.gt(una) => {
                self.holding.get_or_insert((psn, now));
                true
            }
            _ => false,
        }
    }

    /// Sender agent, on a data packet `qp` just built: stamps a request
    /// with the last-packet bit (`qp` has nothing more to send; Head needs
    /// no field, see the module doc); with `hold` (under `sender_hold`:
    /// the time and the counters), ends the hold of the packet it held
    /// and asks for the ACK that will release the next one.
    pub fn on_send(&mut self, qp: &Qp, pkt: &mut Packet, hold: Option<(Time, &mut NicStats)>) {
        if pkt.kind != PacketKind::Request {
            return;
        }
        if pkt.last && !qp.engine.req_has_data() {
            pkt.mp_flags |= LAST;
        }
        let Some((now, stats)) = hold else {
            return;
        };
        if let Some((psn, since)) = self.holding {
            if psn.wire() == pkt.psn {
                self.holding = None;
                stats.eunomia_sender_held += 1;
                stats.eunomia_sender_hold_ps += now - since;
            }
        }
        if qp.engine.last_write().is_some_and(|(psn, una)| psn.gt(una)) {
            pkt.mp_flags |= ACK_REQ;
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
        let ahead = psn.diff(expected);
        if pkt.mp_flags & ACK_REQ != 0 && ahead >= 0 && cx.cfg.ack_every > 1 {
            self.ack_at = Some(psn);
        }
        if ahead <= 0 {
            if ahead == 0 && !b.dynamic && self.hd.is_none() {
                // A static bitmap's connection starts (module doc).
                self.make(b, expected, cx);
            }
            self.note_last(pkt, psn);
            let wake = qp.on_packet(cx, pkt);
            return self.flush(b, qp, cx, pkt) | wake;
        }
        cx.out_of_order(ahead as u32);
        if self.hd.is_none() && !self.make(b, expected, cx) {
            cx.stats.eunomia_untracked_dropped += 1;
            return self.nack(cx, expected, pkt);
        }
        self.note_last(pkt, psn);
        let mc = match &mut self.own {
            Some(m) => &mut **m,
            None => &mut b.mc,
        };
        let Some(h) = &mut self.hd else {
            unreachable!("made above")
        };
        match h.track(mc, &b.geo, psn) {
            Track::New => {
                self.peak_bits = self.peak_bits.max(h.bits(&b.geo));
                if pkt.mp_flags & LAST != 0 && pkt.verb == Verb::Write {
                    cx.stats.eunomia_receiver_held += 1;
                    cx.stats.eunomia_receiver_held_bytes += u64::from(pkt.payload);
                }
                self.held.hold(expected, psn, pkt, cx);
                reply(cx, PacketKind::Ack, SACK, expected, pkt.psn, pkt);
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

    /// Makes the connection's bitmap, its head at `expected`; false if the
    /// memory controller has no room for it.
    fn make(&mut self, b: &mut Bitmaps, expected: Psn, cx: &mut Ctx) -> bool {
        let mc = match &mut self.own {
            Some(m) => &mut **m,
            None => &mut b.mc,
        };
        let Some(h) = Hd::create(mc, &b.geo, expected) else {
            return false;
        };
        cx.stats.eunomia_bitmaps_made += 1;
        if !b.dynamic {
            b.live += 1;
            b.peak_live = b.peak_live.max(b.live);
            self.peak_bits = self.peak_bits.max(h.bits(&b.geo));
        }
        self.hd = Some(h);
        true
    }

    /// Last Seq: the highest PSN seen with the last-packet bit.
    fn note_last(&mut self, pkt: &Packet, psn: Psn) {
        if pkt.mp_flags & LAST != 0 {
            if let Some(h) = &mut self.hd {
                h.last_seq = Some(h.last_seq.map_or(psn, |l| l.max(psn)));
            }
        }
    }

    /// Drops `pkt`, NACKing the gap at `expected` unless it was already.
    fn nack(&mut self, cx: &mut Ctx, expected: Psn, pkt: &Packet) -> bool {
        if self.nacked != Some(expected) {
            self.nacked = Some(expected);
            reply(cx, PacketKind::Nack, NACK, expected, pkt.psn, pkt);
            cx.stats.eunomia_nacks_sent += 1;
        }
        false
    }

    /// After the engine took `pkt` in order: hands it what is now in
    /// order, owes no more ACK it passed, moves the head, and frees a
    /// finished connection's bitmap.
    fn flush(&mut self, b: &mut Bitmaps, qp: &mut Qp, cx: &mut Ctx, pkt: &Packet) -> bool {
        let wake = self.held.release(qp, cx);
        let Some(e) = qp.expected_request_psn() else {
            return wake;
        };
        if self.nacked.is_some_and(|n| e.gt(n)) {
            self.nacked = None;
        }
        if self.ack_at.is_some_and(|a| e.gt(a)) {
            self.ack_at = None;
            // Flags nothing: a plain cumulative ACK, for the engine.
            reply(cx, PacketKind::Ack, 0, e, e.wire(), pkt);
        }
        let Some(h) = &mut self.hd else {
            return wake;
        };
        let mc = match &mut self.own {
            Some(m) => &mut **m,
            None => &mut b.mc,
        };
        h.advance_to(mc, &b.geo, e);
        if h.marked() == 0 && h.last_seq.is_some_and(|l| h.head.gt(l)) {
            self.release(b);
            cx.stats.eunomia_bitmaps_freed += 1;
        }
        wake
    }

    /// Returns this QP's bitmap to its memory (the connection completed,
    /// or the QP is destroyed).
    pub fn release(&mut self, b: &mut Bitmaps) {
        let Some(h) = self.hd.take() else {
            return;
        };
        let mc = match &mut self.own {
            Some(m) => &mut **m,
            None => &mut b.mc,
        };
        h.free(mc, &b.geo);
        if !b.dynamic {
            b.live -= 1;
        }
    }
}

/// Queues the receiver agent's answer to `pkt`: an ACK or NACK of the
/// gap at `expected` naming `sack_psn`, flagged `flag` (SACK, NACK, or
/// nothing for a plain ACK).
fn reply(cx: &mut Ctx, kind: PacketKind, flag: u8, expected: Psn, sack_psn: u32, pkt: &Packet) {
    let p = cx.ctrl_packet(CtrlFields {
        kind,
        psn: expected.wire(),
        sack_psn,
        verb: pkt.verb,
        ecn_echo: false,
        sent_at: pkt.sent_at,
    });
    cx.ctrl.push_back(Packet {
        mp_flags: flag,
        ..p
    });
}

/// The sender agent's reaction to the receiver agent's SACK or NACK
/// (the engine's [`crate::engine::EngineOps::on_order_ack`]).
fn sender_agent(qp: &mut Qp, cx: &mut Ctx, pkt: &Packet) -> bool {
    qp.on_order_ack(cx, pkt, pkt.mp_flags & SACK != 0)
}
