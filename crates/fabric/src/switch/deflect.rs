//! DIBS deflection (SIGCOMM'14), for lossy switches with
//! `Deflection::Dibs`: a packet the MMU refuses for its egress queue
//! (egress threshold or full buffer) goes out a random other port of the
//! switch that has room instead: not the port it came in on, not a down
//! link, not toward a host other than its destination. A packet is
//! deflected at most [`MAX_DEFLECTIONS`] times in its life (counted in a
//! side table by arena slot, touched only when deflecting); past that, or
//! with no port with room, it is dropped as before (the drop of a refused
//! packet lives here too). Runs only on the refusal path, out of line, so
//! a run without deflection pays nothing. Touches the
//! switch's MMU and ports, the deflection state (`Deflector`, in
//! `switch/mod.rs`) and the counters.

use crate::link::port::End;
use crate::net::arena::Hdr;
use crate::net::Network;
use crate::observe::counters::DropReason;
use crate::switch::mmu::Refusal;
use crate::switch::{Deflection, MAX_DEFLECTIONS};
use engine::Time;

impl Network {
    /// The MMU refused `hdr` at port `out` of switch `s` for reason `r`:
    /// deflected if DIBS is on and can, else dropped (counted). Out of
    /// line: the ingress pipeline pays nothing for it.
    #[cold]
    #[inline(never)]
    pub(crate) fn refused(
        &mut self,
        now: Time,
        s: u32,
        in_local: u16,
        out: u32,
        hdr: Hdr,
        r: Refusal,
    ) {
        if self.cfg.deflection == Deflection::Dibs
            && r != Refusal::HeadroomOverflow
            && self.deflect(now, s, in_local, out, hdr)
        {
            return;
        }
        let reason = match r {
            Refusal::HeadroomOverflow => DropReason::HeadroomOverflow,
            Refusal::BufferFull => DropReason::BufferFull,
            Refusal::EgressThreshold => DropReason::EgressThreshold,
        };
        self.counters.drop(reason, hdr.wire());
        self.arena.free(hdr.idx);
    }

    /// Tries to deflect `hdr`, refused at port `out` of switch `s` (it came
    /// in on port `in_port`, the switch's `in_local`-th); true if it went
    /// out another port.
    fn deflect(&mut self, now: Time, s: u32, in_local: u16, out: u32, hdr: Hdr) -> bool {
        let p = self.arena.get(&hdr);
        let id = (p.src, p.src_qp, p.psn, p.sent_at);
        let slot = hdr.idx as usize;
        let d = &mut self.deflector;
        if d.counts.len() <= slot {
            d.counts.resize(slot + 1, Default::default());
        }
        let times = if d.counts[slot].0 == id {
            d.counts[slot].1
        } else {
            0
        };
        if times >= MAX_DEFLECTIONS {
            return false;
        }
        let (class, size) = (hdr.class(), hdr.wire() as u64);
        let sw = &self.switches[s as usize];
        // Reservoir sampling over the ports with room: uniform, one pass.
        let mut chosen = None;
        let mut seen = 0;
        for (local, &q) in sw.ports.iter().enumerate() {
            let port = &self.ports[q as usize];
            let allowed = local != in_local as usize
                && q != out
                && port.up
                && match port.peer {
                    End::Host(h) => h == hdr.dst,
                    End::Switch(..) => true,
                };
            if allowed && sw.mmu.lossy_room(size, port.queues[class].bytes) {
                seen += 1;
                if self.deflector.rngs[s as usize].below(seen) == 0 {
                    chosen = Some(q);
                }
            }
        }
        let Some(q) = chosen else {
            return false;
        };
        let queued = self.ports[q as usize].queues[class].bytes;
        let admitted = self.switches[s as usize]
            .mmu
            .admit(in_local as usize, class, size, || queued);
        debug_assert!(admitted.is_ok(), "lossy_room said yes");
        self.deflector.counts[slot] = (id, times + 1);
        self.counters.deflected += 1;
        if self.ports[q as usize].takes_at_once(now, class) {
            self.depart(now, q, s, hdr, 0);
        } else {
            self.ports[q as usize].push(hdr);
            self.kick(now, q);
        }
        true
    }

    /// Packets deflected so far, if deflection is on.
    pub fn deflected(&self) -> Option<u64> {
        (self.cfg.deflection != Deflection::None).then_some(self.counters.deflected)
    }
}
