//! The simulator's driver of a host's NIC: what it sends when its port is
//! free (`host_transmit`), a packet delivered to it (`deliver`), its
//! wake-ups and timers (`nic_wake`, `nic_timer`), and what it asks for
//! after each input (timers, completions: `drain_nic_events`). Touches the
//! host and its NIC through the transport's public API only.

use crate::link::frame::Frame;
use crate::net::arena::Hdr;
use crate::net::event::Ev;
use crate::net::Network;
use engine::Time;
use transport::{Event, Transmit};

impl Network {
    /// Host `h`'s port `p` is free (and the classes in `paused` are
    /// paused by the switch): the NIC sends a packet, names when it may,
    /// or has nothing.
    #[inline(always)]
    pub(crate) fn host_transmit(&mut self, now: Time, p: u32, h: u32, paused: u8) {
        let host = &mut self.hosts[h as usize];
        match host.nic.poll_transmit(now, paused) {
            Transmit::Packet(pkt) => {
                let hdr = self.arena.alloc(pkt);
                self.counters.injected_packets += 1;
                self.counters.injected_bytes += pkt.wire as u64;
                self.transmit(now, p, Frame::Packet(hdr));
                // Sending may arm the retransmission timer.
                self.drain_nic_events(now, h);
            }
            Transmit::At(t) => {
                if host.wakeups.transmit_at(t) {
                    self.schedule(t.max(now), Ev::NicWake(h));
                }
            }
            Transmit::Idle => {}
        }
    }

    /// A packet reaches host `h`: out of the arena, into the NIC.
    #[inline(always)]
    pub(crate) fn deliver(&mut self, now: Time, h: u32, hdr: Hdr) {
        let mut pkt = self.arena.get(&hdr);
        pkt.ce = hdr.ce();
        self.arena.free(hdr.idx);
        self.counters.delivered_packets += 1;
        self.counters.delivered_bytes += pkt.wire as u64;
        if pkt.is_data() && !self.flow_rx_bytes.is_empty() {
            if let Some(&f) = self.hosts[h as usize].qp_flow.get(pkt.dst_qp as usize) {
                self.flow_rx_bytes[f as usize] += pkt.payload as u64;
            }
        }
        self.hosts[h as usize].nic.on_packet(now, &pkt);
        self.after_nic_input(now, h);
    }

    /// Host `h`'s NIC asked to be polled again at `now` (its rate
    /// limiter); a wake-up it no longer wants (a later one replaced it) does
    /// nothing.
    #[inline(always)]
    pub(crate) fn nic_wake(&mut self, now: Time, h: u32) {
        let host = &mut self.hosts[h as usize];
        if host.wakeups.transmit_due(now) {
            let port = host.port;
            self.kick(now, port);
        }
    }

    /// One of host `h`'s NIC timers is due (`drain_nic_events` asked for
    /// it): the NIC runs it, as an input of its own.
    #[inline(always)]
    pub(crate) fn nic_timer(&mut self, now: Time, h: u32) {
        let host = &mut self.hosts[h as usize];
        host.wakeups.timer_due(now);
        host.nic.handle_timeout(now);
        self.after_nic_input(now, h);
    }

    /// Drains what the NIC asked for (timers, completions) and lets it send.
    pub(crate) fn after_nic_input(&mut self, now: Time, h: u32) {
        self.drain_nic_events(now, h);
        let port = self.hosts[h as usize].port;
        self.kick(now, port);
    }

    /// Hands the NIC's completions to the application and asks for a
    /// Timer event if its next timer is due before every one pending.
    pub(crate) fn drain_nic_events(&mut self, now: Time, h: u32) {
        while let Some(ev) = self.hosts[h as usize].nic.poll_event() {
            match ev {
                Event::Completion(c) => self.complete(now, c),
            }
        }
        let host = &mut self.hosts[h as usize];
        if let Some(t) = host.wakeups.timer_at(&host.nic, now) {
            self.schedule(t, Ev::Timer(h));
        }
    }
}
