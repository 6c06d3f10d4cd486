//! Cache hints for the window loop (`run.rs`): a node's first events read
//! its ports, its wire and queue heads and, at a host, the arriving
//! packets, all last touched a window ago; three stages ask for them a
//! group or more ahead. Reads only; changes nothing.

use crate::link::frame::Frame;
use crate::link::port::End;
use crate::link::Links;
use crate::net::arena::Arena;
use crate::net::event::Ev;
use crate::switch::queues::Queues;
use engine::Time;

impl Links {
    /// How many of a node's first events the prefetch stages look at.
    pub(crate) const PREFETCH_EVENTS: usize = 16;

    /// How many of the frames on a host's wire `prefetch_packets` asks
    /// for: an A2A128 host gets 21-22 in most windows (data and ACKs), up
    /// to 39; with 16, the arrivals past the 16th found their packets out
    /// of cache (13% of `run_until`'s samples, 3% with 32).
    pub(crate) const PREFETCH_FRAMES: usize = 32;

    pub(crate) fn prefetch_ports(&self, events: &[(Time, Ev)]) {
        use engine::prefetch::prefetch;
        for &(_, ev) in events.iter().take(Self::PREFETCH_EVENTS) {
            match ev {
                Ev::Arrive(p) => {
                    prefetch(&self.ports[p as usize]);
                    prefetch(&self.ports[p as usize ^ 1]);
                }
                Ev::TxDone(p) => prefetch(&self.ports[p as usize]),
                _ => {}
            }
        }
    }

    pub(crate) fn prefetch_slots(&self, queues: &Queues, events: &[(Time, Ev)]) {
        use engine::prefetch::prefetch_ptr;
        for &(_, ev) in events.iter().take(Self::PREFETCH_EVENTS) {
            match ev {
                Ev::Arrive(p) => {
                    if let Some(w) = self.ports[p as usize].wire.front() {
                        prefetch_ptr(w);
                    }
                }
                Ev::TxDone(p) => {
                    if let Some(h) = queues.peek(&self.ports[p as usize], p) {
                        prefetch_ptr(h);
                    }
                }
                _ => {}
            }
        }
    }

    /// The packets arriving at a host in the window (its wire's frames due
    /// before `end`) and the first one after it.
    pub(crate) fn prefetch_packets(&self, arena: &Arena, events: &[(Time, Ev)], end: Time) {
        for &(_, ev) in events.iter().take(Self::PREFETCH_EVENTS) {
            if let Ev::Arrive(p) = ev {
                let port = &self.ports[p as usize];
                if let End::Host(_) = port.peer {
                    // Through the first frame due after the window: the
                    // window's last arrival reads that one's QP index, and
                    // at a host that gets a few frames a window (WS128),
                    // that read was half of the stall on them.
                    let mut more = true;
                    let frames = port.wire.iter().take_while(|(t, _)| {
                        let go = more;
                        more = *t < end;
                        go
                    });
                    for (_, frame) in frames.take(Self::PREFETCH_FRAMES) {
                        if let Frame::Packet(hdr) = frame {
                            arena.prefetch(hdr.idx);
                        }
                    }
                }
            }
        }
    }
}
