//! A switch's egress pipeline, for a packet its free port takes from its
//! queues (`send_next`, from `kick`): pop (`queues/`), release the buffer
//! (which may RESUME the ingress port's upstream; under the VOQ model the
//! input was released when the packet reached its output queue, and the
//! crossbar refills that queue after), mark (`mark.rs`), send (which
//! stamps HPCC's telemetry, `int.rs`) (`link/transmit.rs`); and a down
//! port's queues dropped (`drop_queued`, from `link/random_failures.rs`).
//! Also the switch's side of its ports: `kick` (a free port sends a
//! control frame first, PFC or RCM's, then its queues' next packet),
//! `send_pfc`, and the deferred transmission ends of a calm switch
//! (`catch_up`, `finish_deferred`).
//! Touches the switch's MMU, its queues and markers, and the egress port.

use crate::link::frame::{Ctrl, Frame};
use crate::link::port::{End, TxEnd};
use crate::net::arena::Hdr;
use crate::net::at::AtSwitch;
use crate::net::event::Ev;
use crate::net::window::precedes;
use crate::observe::counters::DropReason;
use crate::switch::int;
use crate::switch::queues::Drained;
use engine::Time;

impl AtSwitch {
    /// Starts the next transmission on the switch's idle port `p`, if
    /// there is one.
    pub(crate) fn kick(&mut self, now: Time, p: u32) {
        let (_, links, core) = self.parts();
        let port = &mut links.ports[p as usize];
        if core.still_busy(port, p, now) {
            return;
        }
        if let Some(ctrl) = port.ctrl_out.pop_front() {
            links.transmit(core, now, p, Frame::Control(ctrl), false);
            return;
        }
        match port.owner {
            End::Switch(s, _) => self.send_next(now, p, s),
            End::Host(_) => unreachable!("a switch kicks its own ports"),
        }
    }

    /// Queues a PAUSE or RESUME of `class` on port `p` and kicks it. Cold:
    /// a few hundred per bench run against millions of hops, and the
    /// window loop around its call sites (buffer release, admission)
    /// measured 0.2% fewer instructions per hop with it marked so.
    #[cold]
    pub(crate) fn send_pfc(&mut self, now: Time, p: u32, class: u8, pause: bool) {
        debug_assert!(!self.core().calm, "a calm switch sends no PAUSE or RESUME");
        let port = &mut self.links().ports[p as usize];
        port.ctrl_out.push_back(Ctrl::pfc(class, pause));
        if pause {
            port.pause_sent += 1;
            self.core().counters.pause_frames += 1;
        } else {
            port.resume_sent += 1;
            self.core().counters.resume_frames += 1;
        }
        self.kick(now, p);
    }

    /// Runs the calm switch `s`'s deferred transmission ends left at the
    /// end of its share of the window (all due in it).
    #[inline(never)]
    pub(crate) fn finish_deferred(&mut self, s: u32) {
        // Anything at the window's end comes after every end due in it.
        let end = (self.core().window_end, Ev::NicWake(0));
        for k in 0..self.sw().nodes[s as usize].ports.len() {
            let p = self.sw().nodes[s as usize].ports[k];
            self.catch_up(p, end);
        }
        self.core().calm = false;
    }

    /// Runs port `p`'s deferred transmission ends due before event `ev`
    /// (the one running): a calm switch's ports depend on one another only
    /// through the MMU's sums (`Mmu::calm`), so each may run late, as long
    /// as it runs before anything reads or changes its port.
    #[inline(always)]
    pub(crate) fn catch_up(&mut self, p: u32, ev: (Time, Ev)) {
        while self.links().ports[p as usize].tx_end == TxEnd::Deferred {
            let at = self.links().ports[p as usize].busy_until;
            if !precedes(&(at, Ev::TxDone(p)), &ev) {
                break;
            }
            self.links().ports[p as usize].tx_end = TxEnd::None;
            self.core().counters.events += 1;
            self.core().deferred_ends += 1;
            self.core().deferred_latest = self.core().deferred_latest.max(at);
            self.kick(at, p);
        }
    }

    /// Free port `p` of switch `s` sends its next queued packet, if it
    /// has one it may send.
    #[inline(always)]
    pub(crate) fn send_next(&mut self, now: Time, p: u32, s: u32) {
        let (sw, links, _) = self.parts();
        let port = &mut links.ports[p as usize];
        let Some(class) = port.eligible_class() else {
            return;
        };
        match sw.queues.pop(port, p, class) {
            Some((hdr, qlen)) => self.depart(now, p, s, hdr, qlen),
            // A backlogged class with an empty ring: the class SRPT or the
            // VOQ model holds outside the rings (tested only here, off the
            // common path).
            None => self.send_held(now, p, s),
        }
    }

    /// `send_next` of the class the discipline holds.
    #[inline(never)]
    fn send_held(&mut self, now: Time, p: u32, s: u32) {
        let (sw, links, core) = self.parts();
        let (mut hdr, qlen) = sw.queues.pop_held(&mut links.ports[p as usize], p);
        if sw.queues.admits_class == sw.queues.held_class {
            // The VOQ model: no MMU buffer to release.
            let marker = &mut sw.markers[p as usize];
            if marker.mark(&mut hdr, qlen) {
                core.counters.ecn_marked += 1;
            }
            if marker.stamps_int {
                self.stamp(now, p, hdr);
            }
            let (_, links, core) = self.parts();
            links.transmit(core, now, p, Frame::Packet(hdr), false);
            self.voq_fill(now, p);
        } else {
            self.depart(now, p, s, hdr, qlen);
        }
    }

    /// A packet leaves switch `s` by its port `p`, whose queue of the
    /// packet's class holds `qlen` bytes after it: the ECN marker
    /// decides, the buffer is released (and the ingress port may RESUME
    /// its upstream), and the packet is serialised. The two first are
    /// independent (the RESUME is a control frame, never marked); marking
    /// first measured 0.1% fewer instructions per hop.
    #[inline(always)]
    pub(crate) fn depart(&mut self, now: Time, p: u32, s: u32, mut hdr: Hdr, qlen: u64) {
        let (class, wire) = (hdr.class(), hdr.wire());
        let in_local = hdr.in_port as usize;
        let (sw, _, core) = self.parts();
        let marker = &mut sw.markers[p as usize];
        if marker.mark(&mut hdr, qlen) {
            core.counters.ecn_marked += 1;
        }
        if marker.stamps_int {
            self.stamp(now, p, hdr);
        }
        let sw = &mut self.sw().nodes[s as usize];
        if sw.mmu.release(in_local, class, wire as u64) {
            let in_port = sw.ports[in_local];
            self.send_pfc(now, in_port, class as u8, false);
        }
        let (_, links, core) = self.parts();
        links.transmit(core, now, p, Frame::Packet(hdr), false);
    }

    /// HPCC's hop record on a data packet about to leave port `p` (not
    /// on a down link, which drops it).
    #[cold]
    #[inline(never)]
    fn stamp(&mut self, now: Time, p: u32, hdr: Hdr) {
        let (sw, links, core) = self.parts();
        let port = &links.ports[p as usize];
        if hdr.is_data() && port.up {
            let queued = sw.queues.queued_bytes(p);
            int::stamp(&mut core.arena, port, queued, now, hdr);
        }
    }

    /// Drops every packet queued at switch port `p` (its link went down),
    /// releasing their buffer: the MMU's (a RESUME sent upstream if due;
    /// `drop_drained`) or a VOQ input's.
    #[cold]
    #[inline(never)]
    pub(crate) fn drop_queued(&mut self, now: Time, p: u32) {
        let End::Switch(s, _) = self.links().ports[p as usize].owner else {
            return;
        };
        loop {
            let (sw, links, _) = self.parts();
            let Some(d) = sw.queues.drain(&mut links.ports[p as usize], p) else {
                break;
            };
            match d {
                Drained::Buffered(class, hdr) => self.drop_drained(now, s, class, hdr),
                Drained::Output(hdr) => self.drop_link_down(hdr),
                Drained::Input(hdr) => {
                    self.voq_drop_input(now, p, hdr);
                    self.drop_link_down(hdr);
                }
            }
        }
    }

    /// Counts `hdr` dropped with its link and frees it.
    fn drop_link_down(&mut self, hdr: Hdr) {
        self.core().counters.drop(DropReason::LinkDown, hdr.wire());
        self.core().arena.free(hdr.idx);
    }
}
