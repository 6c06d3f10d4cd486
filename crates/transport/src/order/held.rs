//! Request packets an ordering layer holds for its engine ([`HeldPackets`]):
//! keyed in PSN order, each with its payload on the real-bytes path, and
//! handed to the engine as the engine's expected PSN reaches them. The
//! ideal layer holds what arrives ahead of the engine; Eunomia's layer
//! holds what its bitmap tracked (see `crate::order::eunomia` for why).
//!
//! May use `crate::qp`, `crate::rc`, `crate::packet` and `crate::psn`.

use std::collections::BTreeMap;

use crate::packet::Packet;
use crate::psn::Psn;
use crate::qp::Qp;
use crate::rc::Ctx;

/// One QP's held packets.
#[derive(Debug, Default)]
pub(crate) struct HeldPackets {
    /// The PSN the keys count from: the engine's expected PSN when the
    /// store last went from empty to holding (every held PSN lies less
    /// than 2^23 above it, so the keys sort in PSN order).
    anchor: Psn,
    held: BTreeMap<u32, Held>,
}

/// A held packet and, on the real-bytes path, its payload.
#[derive(Debug)]
struct Held {
    pkt: Packet,
    payload: Vec<u8>,
}

impl HeldPackets {
    /// Whether `psn` is held.
    pub fn contains(&self, psn: Psn) -> bool {
        !self.held.is_empty() && self.held.contains_key(&psn.since(self.anchor))
    }

    /// Holds `pkt` (PSN `psn`, ahead of the engine's `expected`), with the
    /// payload in `cx.dma`.
    pub fn hold(&mut self, expected: Psn, psn: Psn, pkt: &Packet, cx: &mut Ctx) {
        if self.held.is_empty() {
            self.anchor = expected;
        }
        let payload = cx.dma.rx_payload().to_vec();
        self.held
            .insert(psn.since(self.anchor), Held { pkt: *pkt, payload });
        cx.stats.ordering_held += 1;
        let n = self.held.len() as u64;
        cx.stats.ordering_max_held = cx.stats.ordering_max_held.max(n);
    }

    /// Hands the engine the held packets that are now in order, and drops
    /// those it has passed (their retransmitted copies arrived first).
    pub fn release(&mut self, qp: &mut Qp, cx: &mut Ctx) -> bool {
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
