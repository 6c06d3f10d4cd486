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
//! May use `crate::qp`, `crate::rc`, `crate::packet`, `crate::psn` and
//! `crate::order::held`.

use super::held::HeldPackets;
use crate::packet::{Packet, PacketKind};
use crate::psn::{fits_wire, Psn};
use crate::qp::Qp;
use crate::rc::Ctx;

/// One QP's held packets.
#[derive(Debug, Default)]
pub(crate) struct IdealBuffer {
    held: HeldPackets,
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
            return self.held.release(qp, cx) | wake;
        }
        if self.held.contains(psn) {
            cx.duplicate();
            return false;
        }
        cx.out_of_order(ahead as u32);
        self.held.hold(expected, psn, pkt, cx);
        false
    }
}
