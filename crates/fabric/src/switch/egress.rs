//! A switch's egress pipeline, for a packet its free port takes from its
//! queues (`send_next`, from `kick`): pop (`queues/`), release the buffer
//! (which may RESUME the ingress port's upstream; under the VOQ model the
//! input was released when the packet reached its output queue, and the
//! crossbar refills that queue after), mark (`mark.rs`), send (which
//! stamps HPCC's telemetry, `int.rs`) (`link/transmit.rs`); and a down
//! port's queues dropped (`drop_queued`, from `link/random_failures.rs`).
//! Touches the switch's MMU, its queues and markers, and the egress port.

use crate::link::frame::Frame;
use crate::link::port::End;
use crate::net::arena::Hdr;
use crate::net::Network;
use crate::observe::counters::DropReason;
use crate::switch::queues::Drained;
use engine::Time;

impl Network {
    /// Free port `p` of switch `s` sends its next queued packet, if it
    /// has one it may send.
    #[inline(always)]
    pub(crate) fn send_next(&mut self, now: Time, p: u32, s: u32) {
        let port = &mut self.links.ports[p as usize];
        let Some(class) = port.eligible_class() else {
            return;
        };
        match self.sw.queues.pop(port, p, class) {
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
        let (mut hdr, qlen) = self
            .sw
            .queues
            .pop_held(&mut self.links.ports[p as usize], p);
        if self.sw.queues.admits_class == self.sw.queues.held_class {
            // The VOQ model: no MMU buffer to release.
            if self.sw.markers[p as usize].mark(&mut hdr, qlen) {
                self.core.counters.ecn_marked += 1;
            }
            self.transmit(now, p, Frame::Packet(hdr));
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
        if self.sw.markers[p as usize].mark(&mut hdr, qlen) {
            self.core.counters.ecn_marked += 1;
        }
        let sw = &mut self.sw.nodes[s as usize];
        if sw.mmu.release(in_local, class, wire as u64) {
            let in_port = sw.ports[in_local];
            self.send_pfc(now, in_port, class as u8, false);
        }
        self.transmit(now, p, Frame::Packet(hdr));
    }

    /// Drops every packet queued at switch port `p` (its link went down),
    /// releasing their buffer: the MMU's (a RESUME sent upstream if due;
    /// `drop_drained`) or a VOQ input's.
    #[cold]
    #[inline(never)]
    pub(crate) fn drop_queued(&mut self, now: Time, p: u32) {
        let End::Switch(s, _) = self.links.ports[p as usize].owner else {
            return;
        };
        while let Some(d) = self.sw.queues.drain(&mut self.links.ports[p as usize], p) {
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
        self.core.counters.drop(DropReason::LinkDown, hdr.wire());
        self.core.arena.free(hdr.idx);
    }
}
