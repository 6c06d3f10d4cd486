//! The ideal ordering layer ([`IdealBuffer`]): an unbounded reorder buffer
//! per QP that holds request packets (WRITE/SEND data, READ and atomic
//! requests) arriving above the engine's expected PSN and hands them to
//! the engine in PSN order as the gap fills (Eunomia §2: the ordering a
//! NIC with unlimited memory would give).
//!
//! What passes untouched: ACKs, NACKs, CNPs and read (N)ACKs; requests at
//! or below the expected PSN (in order, or duplicates the engine answers
//! as it always does); READ responses at the requester (their expected
//! PSN is the requester's `snd_una`, which ACKs of earlier requests also
//! move: left to the engine, which recovers them as without a layer); and
//! everything of an engine that orders its own packets (it reports no
//! expected PSN).
//!
//! A held packet is counted on arrival as out of order (the NIC's
//! reordering counters mean "what the fabric did"); a second copy of a
//! held PSN, or a held packet that the engine's expected PSN passed (its
//! retransmitted copy arrived first, after a loss), is a duplicate. A real
//! loss leaves the engine without a gap to NACK: its sender's timeout
//! recovers it, and the held packets behind it follow the retransmission.
//!
//! The real-bytes path (`Nic::on_packet_with`) gives the payload beside
//! the header: a held packet keeps a copy, placed when the packet is
//! handed on (into the memory of the call that fills its gap).
//!
//! May use `crate::qp`, `crate::rc`, `crate::packet` and `crate::psn`.

use std::collections::BTreeMap;

use crate::packet::{Packet, PacketKind};
use crate::psn::{fits_wire, Psn};
use crate::qp::Qp;
use crate::rc::Ctx;

/// One QP's held packets.
#[derive(Debug, Default)]
pub(crate) struct IdealBuffer {
    /// The PSN the keys count from: the engine's expected PSN when the
    /// buffer last went from empty to holding (every held PSN lies less
    /// than 2^23 above it, so the keys sort in PSN order).
    anchor: Psn,
    /// Held packets by `psn.since(anchor)`.
    held: BTreeMap<u32, Held>,
}

/// A held packet and, on the real-bytes path, its payload.
#[derive(Debug)]
struct Held {
    pkt: Packet,
    payload: Vec<u8>,
}

impl IdealBuffer {
    /// See `crate::order::Ordering::on_packet`.
    pub fn on_packet(&mut self, qp: &mut Qp, cx: &mut Ctx, pkt: &Packet) -> bool {
        let expected = match qp.expected_request_psn() {
            Some(e) if pkt.kind == PacketKind::Request && fits_wire(pkt.psn) => e,
            _ => return qp.on_packet(cx, pkt),
        };
        let psn = Psn::from_wire(pkt.psn, expected);
        let ahead = psn.diff(expected);
        if ahead <= 0 {
            let wake = qp.on_packet(cx, pkt);
            return self.release(qp, cx) | wake;
        }
        if self.held.is_empty() {
            self.anchor = expected;
        }
        let key = psn.since(self.anchor);
        if self.held.contains_key(&key) {
            cx.duplicate();
            return false;
        }
        cx.out_of_order(ahead as u32);
        let payload = cx.dma.rx_payload().to_vec();
        self.held.insert(key, Held { pkt: *pkt, payload });
        cx.stats.ordering_held += 1;
        let n = self.held.len() as u64;
        cx.stats.ordering_max_held = cx.stats.ordering_max_held.max(n);
        false
    }

    /// Hands the engine the held packets that are now in order, and drops
    /// those it has passed.
    fn release(&mut self, qp: &mut Qp, cx: &mut Ctx) -> bool {
        let mut wake = false;
        while let Some(entry) = self.held.first_entry() {
            let Some(expected) = qp.expected_request_psn() else {
                break;
            };
            let behind = (self.anchor + *entry.key()).diff(expected);
            if behind > 0 {
                break;
            }
            let h = entry.remove();
            if behind < 0 {
                cx.duplicate();
                continue;
            }
            // Counted as out of order when it arrived: the engine's
            // in-order count of it is not kept.
            let in_order = cx.stats.ood.buckets[0];
            wake |= cx.with_payload(&h.payload, |cx| qp.on_packet(cx, &h.pkt));
            cx.stats.ood.buckets[0] = in_order;
        }
        wake
    }
}
