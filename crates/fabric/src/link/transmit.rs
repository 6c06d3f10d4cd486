//! Sending on a port: `kick` starts the next frame of an idle port (a
//! control frame, PFC or RCM, first, then a switch's queued packet through
//! its egress pipeline, `switch/egress.rs`, or a host's NIC through its
//! driver), `transmit` serialises a frame and puts it on the wire or loses
//! it (link down; random loss and reordering in `impair.rs`), `send_pfc`
//! queues a PAUSE or RESUME. Touches the port, its wire and the counters.

use crate::link::frame::{Ctrl, Frame};
use crate::link::port::{End, TxEnd};
use crate::net::event::Ev;
use crate::net::Network;
use crate::observe::counters::DropReason;
use engine::Time;

impl Network {
    /// Starts the next transmission on an idle port, if there is one.
    pub(crate) fn kick(&mut self, now: Time, p: u32) {
        let port = &mut self.links.ports[p as usize];
        if now < port.busy_until {
            if port.tx_end == TxEnd::None {
                let at = port.busy_until;
                self.schedule_end(p, at);
            }
            return;
        }
        if let Some(ctrl) = port.ctrl_out.pop_front() {
            self.transmit(now, p, Frame::Control(ctrl));
            return;
        }
        match port.owner {
            End::Switch(s, _) => self.send_next(now, p, s),
            End::Host(h) => {
                let paused = port.paused;
                self.host_transmit(now, h, paused);
            }
        }
    }

    /// Serialises a frame on port `p` and puts it on the wire (or loses it).
    #[inline(always)]
    pub(crate) fn transmit(&mut self, now: Time, p: u32, frame: Frame) {
        let port = &mut self.links.ports[p as usize];
        let bytes = frame.wire_bytes(self.cfg.pfc_frame_bytes);
        let done = now + port.tx_time(bytes);
        port.busy_until = done;
        // A host port polls its NIC when the frame is done, if the NIC has
        // anything that could go then; if not, its next input kicks the
        // port (`transport::driver::after_input`).
        let poll = match port.owner {
            End::Host(h) => self.hosts.nodes[h as usize].nic.may_transmit(),
            End::Switch(..) => false,
        };
        // A transmission end still pending is stale now (the port was
        // idle, so it was due at or before this instant): it will do
        // nothing, so only the one asked for here, if any, is pending. A
        // deferred one has no event to run as a no-op: count it here.
        if port.tx_end == TxEnd::Deferred {
            self.core.counters.events += 1;
            self.core.deferred_ends += 1;
        }
        port.tx_end = TxEnd::None;
        if poll || port.has_work() {
            self.schedule_end(p, done);
        }
        let port = &mut self.links.ports[p as usize];
        if let Frame::Packet(hdr) = frame {
            self.core.counters.packet_hops += 1;
            port.tx_packets += 1;
            port.tx_bytes += bytes as u64;
            if !port.up {
                self.core.counters.drop(DropReason::LinkDown, bytes);
                self.core.arena.free(hdr.idx);
                return;
            }
            // Random loss and reordering: one predictable test, the work
            // out of line.
            if port.impaired && self.impair(now, p, hdr, done) {
                return;
            }
        }
        let port = &mut self.links.ports[p as usize];
        let arrival = done + port.delay;
        port.wire.push_back((arrival, frame));
        if port.wire.len() == 1 {
            // The arrival is the peer's event, due after the window (it is
            // at least a link delay away), so it goes to the calendar. Over
            // a link of no delay a frame that takes no time to send arrives
            // at this very picosecond (the window's last, windows being 1 ps
            // long then): the calendar runs it in a window of its own,
            // after this one.
            self.core.q.schedule(arrival, Ev::Arrive(p));
        }
    }

    /// Queues a PAUSE or RESUME of `class` on port `p` and kicks it. Cold:
    /// a few hundred per bench run against millions of hops, and the
    /// window loop around its call sites (buffer release, admission)
    /// measured 0.2% fewer instructions per hop with it marked so.
    #[cold]
    pub(crate) fn send_pfc(&mut self, now: Time, p: u32, class: u8, pause: bool) {
        debug_assert!(!self.core.calm, "a calm switch sends no PAUSE or RESUME");
        let port = &mut self.links.ports[p as usize];
        port.ctrl_out.push_back(Ctrl::pfc(class, pause));
        if pause {
            port.pause_sent += 1;
            self.core.counters.pause_frames += 1;
        } else {
            port.resume_sent += 1;
            self.core.counters.resume_frames += 1;
        }
        self.kick(now, p);
    }
}
