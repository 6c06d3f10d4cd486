//! Sending on a port: `transmit` serialises a frame and puts it on the
//! wire (or loses it: link down; random loss and reordering in
//! `impair.rs`); the transmission end it asks for is the event core's
//! (`Core::schedule_end`). What a free port sends next is its node's
//! choice (`AtSwitch::kick`, `AtHost::kick`). Touches the port, its wire,
//! the counters and the arena.

use crate::link::frame::Frame;
use crate::link::port::{Port, TxEnd};
use crate::link::Links;
use crate::net::core::Core;
use crate::net::event::Ev;
use crate::observe::counters::DropReason;
use engine::Time;

impl Links {
    /// Serialises a frame on port `p` and puts it on the wire (or loses
    /// it). `poll`: the port's host has a NIC that could send when the
    /// frame is done (a switch port: false).
    #[inline(always)]
    pub(crate) fn transmit(
        &mut self,
        core: &mut Core,
        now: Time,
        p: u32,
        frame: Frame,
        poll: bool,
    ) {
        let port = &mut self.ports[p as usize];
        let bytes = frame.wire_bytes(self.pfc_frame_bytes);
        let done = now + port.tx_time(bytes);
        port.busy_until = done;
        // A transmission end still pending is stale now (the port was
        // idle, so it was due at or before this instant): it will do
        // nothing, so only the one asked for here, if any, is pending. A
        // deferred one has no event to run as a no-op: count it here.
        if port.tx_end == TxEnd::Deferred {
            core.counters.events += 1;
            core.deferred_ends += 1;
        }
        port.tx_end = TxEnd::None;
        // A host port polls its NIC when the frame is done, if the NIC has
        // anything that could go then; if not, its next input kicks the
        // port (`transport::driver::after_input`).
        if poll || port.has_work() {
            core.schedule_end(port, p, done);
        }
        let port = &mut self.ports[p as usize];
        if let Frame::Packet(hdr) = frame {
            core.counters.packet_hops += 1;
            port.tx_packets += 1;
            port.tx_bytes += bytes as u64;
            if !port.up {
                core.counters.drop(DropReason::LinkDown, bytes);
                core.arena.free(hdr.idx);
                return;
            }
            // Random loss and reordering: one predictable test, the work
            // out of line.
            if port.impaired && self.impair(core, p, hdr, done) {
                return;
            }
        }
        let port = &mut self.ports[p as usize];
        let arrival = done + port.delay;
        port.wire.push_back((arrival, frame));
        if port.wire.len() == 1 {
            // The arrival is the peer's event, due after the window (it is
            // at least a link delay away), so it goes to the calendar. Over
            // a link of no delay a frame that takes no time to send arrives
            // at this very picosecond (the window's last, windows being 1 ps
            // long then): the calendar runs it in a window of its own,
            // after this one.
            core.q.schedule(arrival, Ev::Arrive(p));
        }
    }
}

impl Core {
    /// Whether port `p` is still sending at `now` (a kick then has nothing
    /// to start); if so, its transmission end is asked for, unless one is.
    #[inline(always)]
    pub(crate) fn still_busy(&mut self, port: &mut Port, p: u32, now: Time) -> bool {
        if now < port.busy_until {
            if port.tx_end == TxEnd::None {
                let at = port.busy_until;
                self.schedule_end(port, p, at);
            }
            return true;
        }
        false
    }

    /// Asks for port `p`'s transmission end at `at` (its `busy_until`):
    /// deferred at a calm switch, an event otherwise.
    #[inline(always)]
    pub(crate) fn schedule_end(&mut self, port: &mut Port, p: u32, at: Time) {
        if self.calm && at < self.window_end {
            port.tx_end = TxEnd::Deferred;
        } else {
            port.tx_end = TxEnd::Scheduled;
            self.schedule(at, Ev::TxDone(p));
        }
    }
}
