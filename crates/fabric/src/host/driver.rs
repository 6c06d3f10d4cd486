//! The simulator's side of a host's NIC: the host as the environment of
//! the transport's one drive loop (`transport::driver`, through its `Io`:
//! the NIC and its wake-ups, the port, the event queue, the applications
//! its completions go to, `app/`), and the entry points the rest of the
//! fabric calls: a free port (`kick`), a frame arriving (`arrive`: a
//! packet delivered, a PFC frame applied to the port), a wake-up or timer
//! event (`nic_wake`, `host_timer`: the NIC's timers and the
//! applications'), an application's posts (`after_nic_input`).
//! Touches the host and its NIC through the transport's public API only;
//! hands what it sends and receives to the pcap capture when one is on
//! (`observe/capture.rs`), carries HPCC's hop records between the
//! arena and the NIC when switches stamp them (the NIC pairs a data
//! packet's with the ACK that answers it: `Nic::int_received`,
//! `Nic::int_sent`), and runs the loop through the QP-context cache when
//! one is modelled (`cached.rs`). All three are out of line, behind the
//! network's one flag `host_hooks`.
//!
//! The loop's functions are generic and inline here: the per-packet path
//! compiles as when this file held its own copy of the loop.

use crate::link::frame::Frame;
use crate::link::port::End;
use crate::net::arena::Hdr;
use crate::net::at::AtHost;
use crate::net::event::Ev;
use engine::Time;
use transport::driver::{self, Io, Wake, Wakeups};
use transport::{Completion, Nic, Packet};

impl Io for AtHost {
    type Id = u32;

    #[inline(always)]
    fn nic(&mut self, h: u32) -> (&mut Nic, &mut Wakeups) {
        let host = &mut self.hosts().nodes[h as usize];
        (&mut host.nic, &mut host.wakeups)
    }

    /// Into the arena, onto the host's port.
    #[inline(always)]
    fn send(&mut self, now: Time, h: u32, pkt: Packet) {
        let hdr = self.core().arena.alloc(pkt);
        self.core().counters.injected_packets += 1;
        self.core().counters.injected_bytes += pkt.wire as u64;
        // The hooks read the packet back from the arena: only `hdr` stays
        // live across the test.
        if self.hosts().host_hooks {
            self.sent_hooks(now, h, hdr);
        }
        self.transmit(now, h, Frame::Packet(hdr));
    }

    /// Kicks the host's port (which may send a PFC frame first).
    #[inline(always)]
    fn ready(&mut self, now: Time, h: u32) {
        let p = self.hosts().nodes[h as usize].port;
        self.kick(now, p);
    }

    #[inline(always)]
    fn call_at(&mut self, at: Time, h: u32, why: Wake) {
        let ev = match why {
            Wake::Transmit => Ev::NicWake(h),
            Wake::Timer => Ev::Timer(h),
        };
        self.core().schedule(at, ev);
    }

    #[inline(always)]
    fn completion(&mut self, now: Time, h: u32, c: Completion) {
        self.app_completion(now, h, c);
    }
}

impl AtHost {
    /// Starts the next transmission on host `h`'s idle port `p`, if there
    /// is one: a control frame first, then what the NIC sends (the
    /// classes paused by the switch aside).
    pub(crate) fn kick(&mut self, now: Time, p: u32) {
        let (_, links, core, _) = self.parts();
        let port = &mut links.ports[p as usize];
        if core.still_busy(port, p, now) {
            return;
        }
        let End::Host(h) = port.owner else {
            unreachable!("a host kicks its own port")
        };
        if let Some(ctrl) = port.ctrl_out.pop_front() {
            self.transmit(now, h, Frame::Control(ctrl));
            return;
        }
        let paused = port.paused;
        if self.read_hosts().host_hooks && self.qp_cached(h) {
            return self.cached_transmit(now, h, paused);
        }
        driver::transmit(self, now, h, paused);
    }

    /// Serialises a frame on host `h`'s port.
    #[inline(always)]
    fn transmit(&mut self, now: Time, h: u32, frame: Frame) {
        let (hosts, links, core, _) = self.parts();
        let host = &hosts.nodes[h as usize];
        let (p, poll) = (host.port, host.nic.may_transmit());
        links.transmit(core, now, p, frame, poll);
    }

    /// A packet reaches host `h`: out of the arena, into the NIC.
    #[inline(always)]
    pub(crate) fn deliver(&mut self, now: Time, h: u32, hdr: Hdr) {
        let mut pkt = self.core().arena.get(&hdr);
        pkt.ce = hdr.ce();
        self.core().counters.delivered_packets += 1;
        self.core().counters.delivered_bytes += pkt.wire as u64;
        if pkt.is_data() {
            self.core().counters.delivered_payload_bytes += pkt.payload as u64;
            if !self.hosts().flows.rx_bytes.is_empty() {
                if let Some(f) = self.hosts().flow_of_qp(h, pkt.dst_qp) {
                    self.hosts().flows.rx_bytes[f as usize] += pkt.payload as u64;
                }
            }
        }
        if self.read_hosts().host_hooks && self.received_hooks(now, h, &pkt, hdr.idx) {
            return;
        }
        self.core().arena.free(hdr.idx);
        driver::deliver(self, now, h, &pkt);
    }

    /// What a host's send does out of line: the pcap record, the hop
    /// records an ACK carries back (HPCC's echo).
    #[inline(never)]
    #[cold]
    fn sent_hooks(&mut self, now: Time, h: u32, hdr: Hdr) {
        if self.observe().capturing {
            self.capture_sent(now, h, hdr);
        }
        if self.core().arena.int_multi() != 0 {
            let pkt = self.core().arena.get(&hdr);
            if let Some(int) = self.hosts().nodes[h as usize].nic.int_sent(&pkt) {
                self.core().arena.set_int(hdr.idx, int);
            }
        }
    }

    /// What a host's receive does out of line (packet `idx`, before it
    /// leaves the arena): the pcap record, HPCC's telemetry; with a
    /// QP-context cache, the packet then leaves the arena for the NIC
    /// through the cache (true: delivered).
    #[inline(never)]
    #[cold]
    fn received_hooks(&mut self, now: Time, h: u32, pkt: &Packet, idx: u32) -> bool {
        if self.observe().capturing {
            self.capture_received(now, h, pkt);
        }
        if self.core().arena.int_multi() != 0 {
            let int = self.core().arena.int_of(idx);
            self.hosts().nodes[h as usize].nic.int_received(pkt, int);
        }
        if !self.qp_cached(h) {
            return false;
        }
        self.core().arena.free(idx);
        self.cached_deliver(now, h, pkt);
        true
    }

    /// Host `h`'s NIC asked to be polled again at `now` (its rate
    /// limiter); a wake-up it no longer wants (an earlier one replaced it)
    /// does nothing.
    #[inline(always)]
    pub(crate) fn nic_wake(&mut self, now: Time, h: u32) {
        driver::wake(self, now, h);
    }

    /// One of host `h`'s timers is due: an application's if one is due
    /// (`app/`), else the NIC's (or a packet the QP-context cache held),
    /// which it runs as an input of its own.
    #[inline(always)]
    pub(crate) fn host_timer(&mut self, now: Time, h: u32) {
        if self.hosts().nodes[h as usize].app_timers.due(now) {
            self.app_timer(now, h);
        } else if self.read_hosts().host_hooks && self.qp_cached(h) {
            self.cached_timer(now, h);
        } else {
            driver::timer(self, now, h);
        }
    }

    /// After the application's posts to host `h`'s NIC.
    pub(crate) fn after_nic_input(&mut self, now: Time, h: u32) {
        if self.read_hosts().host_hooks && self.qp_cached(h) {
            return self.cached_after_input(now, h);
        }
        driver::after_input(self, now, h);
    }
}
