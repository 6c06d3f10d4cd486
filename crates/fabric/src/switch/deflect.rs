//! DIBS deflection (Zarifis et al., "DIBS: Just-in-time congestion
//! mitigation for data centers", EuroSys'14), for lossy switches with
//! `Deflection::Dibs`: a packet the MMU refuses for its egress queue
//! (egress threshold or full buffer) goes out a random other port of the
//! switch that has room instead: not the port it came in on, not a down
//! link, not toward a host other than its destination. A packet is
//! deflected at most `max_deflections` times in its life (counted in a
//! side table by arena slot, touched only when deflecting); past that, or
//! with no port with room, it is dropped as it would have been.
//!
//! Out of the hop: the ingress pipeline only records a refused packet (a
//! push, under one branch on `Deflector::on`, in the refusal arm that a
//! run without deflection never takes), and the window loop, after the
//! event, calls [`Network::deflect_refused`] when something was recorded.
//! An out-of-line call in the refusal arm itself, never executed, made the
//! event loop 16% slower (docs/faults.md). Touches the deflection state,
//! the switch's MMU and ports, the egress queues and the counters; the
//! state (`Deflector`, `Refused`) is `mod.rs`'s.

use crate::link::port::End;
use crate::net::at::AtSwitch;
use crate::net::event::Ev;
use crate::observe::counters::{Counters, DropReason};
use crate::switch::mmu::Refusal;
use crate::switch::Refused;
use crate::switch::Switches;
use engine::Time;

impl AtSwitch {
    /// Deflects, or drops (counted), the packets refused during the event
    /// just run, at its time `now`.
    #[cold]
    #[inline(never)]
    pub(crate) fn deflect_refused(&mut self, now: Time) {
        let mut refused = std::mem::take(&mut self.sw().deflector.refused);
        for &r in &refused {
            let deflectable = r.refusal != Refusal::HeadroomOverflow;
            if deflectable && self.deflect(now, r) {
                continue;
            }
            let reason = match r.refusal {
                Refusal::HeadroomOverflow => DropReason::HeadroomOverflow,
                Refusal::BufferFull => DropReason::BufferFull,
                Refusal::EgressThreshold => DropReason::EgressThreshold,
            };
            self.core().counters.drop(reason, r.hdr.wire());
            self.core().arena.free(r.hdr.idx);
        }
        refused.clear();
        self.sw().deflector.refused = refused;
    }

    /// Sends refused packet `r` out another port of its switch with room;
    /// false if it may not be deflected again or no port has room.
    fn deflect(&mut self, now: Time, r: Refused) -> bool {
        let Refused {
            s,
            in_local,
            out,
            hdr,
            ..
        } = r;
        let p = self.core().arena.get(&hdr);
        let id = (p.src, p.src_qp, p.psn, p.sent_at);
        let slot = hdr.idx as usize;
        let d = &mut self.sw().deflector;
        if d.counts.len() <= slot {
            d.counts.resize(slot + 1, Default::default());
        }
        let times = if d.counts[slot].0 == id {
            d.counts[slot].1
        } else {
            0
        };
        if times >= d.max {
            return false;
        }
        let (class, size) = (hdr.class(), hdr.wire() as u64);
        let (sws, links, _) = self.parts();
        let sw = &sws.nodes[s as usize];
        // Reservoir sampling over the ports with room: uniform, one pass.
        let mut chosen = None;
        let mut seen = 0;
        for (local, &q) in sw.ports.iter().enumerate() {
            let port = &links.ports[q as usize];
            let allowed = local != in_local as usize
                && q != out
                && port.up
                && match port.peer {
                    End::Host(h) => h == hdr.dst,
                    End::Switch(..) => true,
                };
            if allowed && sw.mmu.lossy_room(size, sws.queues.bytes(q, class)) {
                seen += 1;
                if sws.deflector.rngs[s as usize].below(seen) == 0 {
                    chosen = Some(q);
                }
            }
        }
        let Some(q) = chosen else {
            return false;
        };
        let queued = self.sw().queues.bytes(q, class);
        let admitted =
            self.sw().nodes[s as usize]
                .mmu
                .admit(in_local as usize, class, size, || queued);
        debug_assert!(admitted.is_ok(), "lossy_room said yes");
        let d = &mut self.sw().deflector;
        d.counts[slot] = (id, times + 1);
        d.most = d.most.max(times + 1);
        self.core().counters.deflected += 1;
        // It came off the wire of its ingress port's partner (a lossy
        // switch is never calm, so this catches up nothing).
        let in_port = self.sw().nodes[s as usize].ports[in_local as usize];
        self.enqueue::<true>(now, q, s, hdr, (now, Ev::Arrive(in_port ^ 1)));
        true
    }
}

impl Switches {
    /// Packets deflected so far, if deflection is on.
    pub(crate) fn deflected(&self, counters: &Counters) -> Option<u64> {
        self.deflector.on.then_some(counters.deflected)
    }

    /// The most times one packet was deflected (0 without deflection).
    pub(crate) fn most_deflections(&self) -> u8 {
        self.deflector.most
    }
}
