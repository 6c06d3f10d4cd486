//! A switch's ingress pipeline: route (the routing table's equal-cost
//! next hops), load balance (`lb/`; for the schemes that read queues, the
//! hops' deferred transmission ends run first), admit (the MMU, which may
//! PAUSE the upstream or refuse with a counted drop, or under DIBS a
//! record that `deflect.rs` handles after the event), enqueue at the
//! egress port (or depart at once through an idle one). In the hooked
//! instance of the loop, a balancer that acts at ToRs
//! (`Balancer::at_tors`) takes the packet first, and one that acts at
//! every hop (`Balancer::every_hop`) is shown it once admitted, a
//! trimming switch cuts a data packet its queue cannot take to its headers
//! (`trim.rs`), and a queueing discipline that admits its class itself
//! (the VOQ model, `queues/voq/`) takes it. Touches the switch, its egress queues, its
//! ports and the counters.

use crate::net::arena::Hdr;
use crate::net::at::AtSwitch;
use crate::net::event::Ev;
use crate::observe::counters::DropReason;
use crate::switch::lb::{Balancer, Sight};
use crate::switch::mmu::Refusal;
use crate::switch::Refused;
use engine::Time;

impl AtSwitch {
    /// A packet entered switch `s` on port `in_port` (its `in_local`-th
    /// port): route, load balance, admit, enqueue (or depart at once).
    /// `HOOKS` (`Network::hooks`): the balancer acts beyond picking a hop
    /// (ConWeave sees every packet first, CONGA every admitted one), SRPT
    /// queues the data class, DIBS records refused packets; the loop is
    /// compiled for each value, so the default's hop has no trace of them.
    #[inline(always)]
    pub(crate) fn forward<const HOOKS: bool>(
        &mut self,
        now: Time,
        s: u32,
        in_port: u32,
        in_local: u16,
        mut hdr: Hdr,
    ) {
        hdr.in_port = in_local as u8;
        if HOOKS && self.lb_at_tor(now, s, in_port, hdr) {
            return;
        }
        let (sw, links, core) = self.parts();
        let hops = sw.routes.hops(s, hdr.flow, hdr.dst, hdr.idx, in_port);
        let out = match hops.len() {
            0 => {
                core.counters.drop(DropReason::NoRoute, hdr.wire());
                core.arena.free(hdr.idx);
                return;
            }
            1 => hops[0],
            // ECMP inlined; the others one call away, the header by value
            // (a reference would keep it out of registers in the whole
            // inlined hop).
            _ => match &mut sw.lb {
                Balancer::Ecmp(e) => e.pick(s, &hdr, hops),
                lb if !(core.calm && lb.reads_queues()) => {
                    lb.pick(s, hdr, hops, Sight::new(&links.ports, &sw.queues, now))
                }
                _ => self.pick_on_queues(s, hdr, in_port, now),
            },
        };
        // A trimming switch cuts a data packet its queue or buffer cannot
        // take to its headers.
        if HOOKS && self.sw().trimmer.on && hdr.is_data() {
            hdr = self.trim_if_full(s, out, hdr);
        }
        // A discipline that admits its class itself (the VOQ model) takes
        // it.
        if HOOKS && hdr.class() == self.sw().queues.admits_class {
            self.forward_voq(now, s, in_port, out, hdr);
            return;
        }
        if self.admit::<HOOKS>(now, s, in_port, out, hdr) {
            if HOOKS {
                let (sw, links, _) = self.parts();
                let sight = Sight::new(&links.ports, &sw.queues, now);
                sw.lb.hop(s, in_port, out, hdr, sight);
            }
            // The packet came off the wire of `in_port`'s partner.
            self.enqueue::<HOOKS>(now, out, s, hdr, (now, Ev::Arrive(in_port ^ 1)));
        }
    }

    /// The MMU's admission of `hdr` (which came in on `in_port`, its
    /// `hdr.in_port`-th) toward port `out`: true if admitted (the upstream
    /// may be PAUSEd), false if dropped (counted, freed) or, with `HOOKS`
    /// under DIBS, recorded for `deflect.rs`.
    #[inline(always)]
    pub(crate) fn admit<const HOOKS: bool>(
        &mut self,
        now: Time,
        s: u32,
        in_port: u32,
        out: u32,
        hdr: Hdr,
    ) -> bool {
        let class = hdr.class();
        let sw = self.sw();
        let queues = &sw.queues;
        let queued = || queues.bytes(out, class);
        let r =
            sw.nodes[s as usize]
                .mmu
                .admit(hdr.in_port as usize, class, hdr.wire() as u64, queued);
        self.admitted::<HOOKS>(now, s, in_port, out, hdr, r)
    }

    /// What an admission's result `r` does: a refusal is recorded for DIBS
    /// (with `HOOKS`) or dropped (counted, freed); an admission may PAUSE
    /// the upstream of `in_port`. True if admitted.
    #[inline(always)]
    pub(crate) fn admitted<const HOOKS: bool>(
        &mut self,
        now: Time,
        s: u32,
        in_port: u32,
        out: u32,
        hdr: Hdr,
        r: Result<crate::switch::mmu::Admitted, crate::switch::mmu::Refusal>,
    ) -> bool {
        let class = hdr.class();
        match r {
            // DIBS: recorded, deflected or dropped after the event
            // (`deflect.rs`).
            Err(refusal) if HOOKS && self.sw().deflector.on => {
                let r = Refused {
                    s,
                    in_local: hdr.in_port as u16,
                    out,
                    hdr,
                    refusal,
                };
                self.sw().deflector.refused.push(r);
                false
            }
            Err(r) => {
                let reason = match r {
                    Refusal::HeadroomOverflow => DropReason::HeadroomOverflow,
                    Refusal::BufferFull => DropReason::BufferFull,
                    Refusal::EgressThreshold => DropReason::EgressThreshold,
                };
                self.core().counters.drop(reason, hdr.wire());
                self.core().arena.free(hdr.idx);
                false
            }
            Ok(a) => {
                if a.send_pause {
                    self.send_pfc(now, in_port, class as u8, true);
                }
                true
            }
        }
    }

    /// An admitted packet joins port `out`'s queues (`queues/`; with
    /// `HOOKS`, the discipline's if it holds the class) or departs at
    /// once, during event `ev` at switch `s`.
    #[inline(always)]
    pub(crate) fn enqueue<const HOOKS: bool>(
        &mut self,
        now: Time,
        out: u32,
        s: u32,
        hdr: Hdr,
        ev: (Time, Ev),
    ) {
        if self.core().calm {
            self.catch_up(out, ev);
        }
        // A packet the idle port would take at once skips its queue:
        // what `kick` does after the pop, without the queue's lines
        // (in a large run, the queue's tail slot is the costliest
        // load of a hop).
        let class = hdr.class();
        if self.links().ports[out as usize].takes_at_once(now, class) {
            // Its class's queue is empty.
            self.depart(now, out, s, hdr, 0);
        } else {
            let (sw, links, core) = self.parts();
            let port = &mut links.ports[out as usize];
            sw.queues.push::<HOOKS>(port, out, hdr, &core.arena);
            self.kick(now, out);
        }
    }

    /// The pick of a load balancer that reads queues, at a calm switch:
    /// the deferred transmission ends of the next hops due before the
    /// packet's arrival (by `in_port` at `now`) run first, as they would
    /// with every end an event, so that the queues it reads are as they
    /// are.
    #[inline(never)]
    fn pick_on_queues(&mut self, s: u32, hdr: Hdr, in_port: u32, now: Time) -> u32 {
        // The packet came off the wire of `in_port`'s partner.
        let ev = (now, Ev::Arrive(in_port ^ 1));
        let (flow, dst, idx) = (hdr.flow, hdr.dst, hdr.idx);
        for i in 0..self.sw().routes.hops(s, flow, dst, idx, in_port).len() {
            let p = self.sw().routes.hops(s, flow, dst, idx, in_port)[i];
            self.catch_up(p, ev);
        }
        let (sw, links, _) = self.parts();
        let hops = sw.routes.hops(s, flow, dst, idx, in_port);
        sw.lb
            .pick(s, hdr, hops, Sight::new(&links.ports, &sw.queues, now))
    }

    /// `hdr`, a data packet at switch `s` for port `out`, or its trimmed
    /// header if its queue is past the threshold or the MMU would refuse
    /// it.
    #[inline(never)]
    pub(crate) fn trim_if_full(&mut self, s: u32, out: u32, hdr: Hdr) -> Hdr {
        let sw = self.sw();
        let queued = sw.queues.bytes(out, hdr.class());
        let room = sw.nodes[s as usize]
            .mmu
            .lossy_room(hdr.wire() as u64, queued);
        if !sw.trimmer.wants(&hdr, queued, room) {
            return hdr;
        }
        let t = sw.trimmer.trim(out, hdr);
        self.core().arena.trim(hdr.idx, transport::uet::TRIMMED);
        t
    }
}
