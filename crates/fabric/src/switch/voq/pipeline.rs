//! The VOQ model in the switch pipelines (see `mod.rs`): a packet of the
//! model's class that a switch routed joins its input's VOQ toward its
//! output (`forward_voq`, from the ingress pipeline's hooked instance:
//! the input's admission and PFC, RCM's detection, the crossbar), the
//! crossbar moves VOQ heads into an output queue in round-robin order
//! over the inputs, under RCC's window when RCM controls the output
//! (`voq_fill`), a free port sends its output queue's head (`kick_voq`,
//! from `kick`), and a down link's
//! queues are drained (`drain_voq`). Touches the model's queues, the
//! ports' queue counts, RCM (through `switch/rcm/`) and the egress
//! pipeline's marking and sending.

use crate::link::frame::Frame;
use crate::net::arena::Hdr;
use crate::net::Network;
use crate::observe::counters::DropReason;
use crate::switch::lb::Sight;
use engine::Time;

impl Network {
    /// Admitted by the route: `hdr` entered switch `s` by `in_port` (its
    /// `in_local`-th) for output `out`. Lossy: dropped if the input's
    /// queues are full. Lossless: the input pauses its upstream at its
    /// threshold (the headroom above it takes what is still coming).
    #[inline(never)]
    pub(crate) fn forward_voq(&mut self, now: Time, s: u32, in_port: u32, out: u32, hdr: Hdr) {
        let wire = hdr.wire() as u64;
        let (class, i) = (self.voq.class, in_port as usize);
        let in_bytes = self.voq.in_bytes[i] + wire;
        if in_bytes > self.voq.queue {
            let reason = if self.voq.pfc {
                DropReason::HeadroomOverflow
            } else {
                DropReason::BufferFull
            };
            self.counters.drop(reason, hdr.wire());
            self.arena.free(hdr.idx);
            return;
        }
        self.voq.in_bytes[i] = in_bytes;
        let in_local = hdr.in_port as usize;
        self.voq.voqs[out as usize][in_local].push_back(hdr);
        self.ports[out as usize].queues[class].bytes += wire;
        if self.voq.pfc && !self.voq.in_paused[i] && in_bytes >= self.voq.xoff[i] {
            self.voq.in_paused[i] = true;
            self.send_pfc(now, in_port, class as u8, true);
        }
        // A balancer that sees every admitted packet (CONGA) sees it.
        self.lb
            .hop(s, in_port, out, hdr, Sight::new(&self.ports, now));
        if self.rcm.on {
            self.rcm_arrival(now, s, in_port, in_local, out, hdr);
        }
        self.voq_fill(now, out);
    }

    /// The crossbar toward output `o`: moves VOQ heads into its output
    /// queue while it has room, one input after the other from the
    /// round robin's place (an input whose head RCC holds is passed
    /// over), then starts the port if it is free. If RCC held everything
    /// left and the output queue is empty, a wake-up at the window's end.
    pub(crate) fn voq_fill(&mut self, now: Time, o: u32) {
        let oi = o as usize;
        let n = self.voq.voqs[oi].len();
        loop {
            let start = self.voq.rr[oi] as usize;
            let mut moved = false;
            // The first input whose head RCC held: it moves if no other
            // input's can.
            let mut held = None;
            for k in 0..n {
                let i = (start + k) % n;
                let Some(&hdr) = self.voq.voqs[oi][i].front() else {
                    continue;
                };
                if self.voq.oq_bytes[oi] + hdr.wire() as u64 > self.voq.queue {
                    // No room: the output queue's departures call again.
                    break;
                }
                if self.rcm.on && !self.rcc_admits(now, o, &hdr) {
                    held = held.or(Some(i));
                    continue;
                }
                if let Some(h) = held {
                    let head = self.voq.voqs[oi][h][0];
                    self.rcc_held(now, o, &head);
                }
                self.voq.voqs[oi][i].pop_front();
                self.voq_move(now, o, hdr);
                self.voq.rr[oi] = ((i + 1) % n) as u16;
                moved = true;
                break;
            }
            if let (false, Some(i)) = (moved, held) {
                // Only harmful flows wait: RCC keeps the port busy.
                let hdr = self.voq.voqs[oi][i].pop_front().expect("held head");
                self.voq_move(now, o, hdr);
                self.voq.rr[oi] = ((i + 1) % n) as u16;
                moved = true;
            }
            if !moved {
                break;
            }
        }
        let class = self.voq.class;
        let port = &mut self.ports[oi];
        if self.voq.oq[oi].is_empty() {
            port.backlogged &= !(1 << class);
        } else {
            port.backlogged |= 1 << class;
            if port.has_work() {
                self.kick(now, o);
            }
        }
    }

    /// One VOQ head moves into output `o`'s queue: its input's buffer is
    /// released (a RESUME upstream if due) and RCC counts it.
    fn voq_move(&mut self, now: Time, o: u32, hdr: Hdr) {
        let wire = hdr.wire() as u64;
        let oi = o as usize;
        self.voq.oq[oi].push_back(hdr);
        self.voq.oq_bytes[oi] += wire;
        if self.rcm.on {
            self.rcc_moved(now, o, &hdr);
        }
        self.voq_release(now, o, hdr);
    }

    /// `hdr`, which entered by input `hdr.in_port` of output `o`'s switch,
    /// left its input queue.
    fn voq_release(&mut self, now: Time, o: u32, hdr: Hdr) {
        let crate::link::port::End::Switch(s, _) = self.ports[o as usize].owner else {
            unreachable!("a VOQ is a switch's")
        };
        let in_port = self.switches[s as usize].ports[hdr.in_port as usize];
        let i = in_port as usize;
        self.voq.in_bytes[i] -= hdr.wire() as u64;
        let resume = self.voq.xoff[i].saturating_sub(self.voq.resume_offset);
        if self.voq.in_paused[i] && self.voq.in_bytes[i] <= resume {
            self.voq.in_paused[i] = false;
            self.send_pfc(now, in_port, self.voq.class as u8, false);
        }
    }

    /// `kick` found free port `p` of switch `s` with nothing eligible in
    /// its rings: if the highest eligible class is the model's, its output
    /// queue's head is marked and sent, and the crossbar refills it.
    #[inline(never)]
    pub(crate) fn kick_voq(&mut self, now: Time, p: u32) {
        let class = self.voq.class;
        let pi = p as usize;
        if self.ports[pi].eligible_class() != Some(class) {
            return;
        }
        let mut hdr = self.voq.oq[pi].pop_front().expect("backlogged");
        let wire = hdr.wire() as u64;
        self.voq.oq_bytes[pi] -= wire;
        let port = &mut self.ports[pi];
        port.queues[class].bytes -= wire;
        // ECN marks on the output queue (the VOQs are the inputs').
        let qlen = self.voq.oq_bytes[pi];
        if self.voq.oq[pi].is_empty() {
            port.backlogged &= !(1 << class);
        }
        self.mark(p, &mut hdr, qlen);
        self.transmit(now, p, Frame::Packet(hdr));
        self.voq_fill(now, p);
    }

    /// Drops every packet the model holds toward port `p` (its link went
    /// down), releasing their inputs.
    #[cold]
    #[inline(never)]
    pub(crate) fn drain_voq(&mut self, now: Time, p: u32) {
        let (pi, class) = (p as usize, self.voq.class);
        let mut gone: Vec<Hdr> = self.voq.oq[pi].drain(..).collect();
        self.voq.oq_bytes[pi] = 0;
        for hdr in gone.drain(..) {
            self.ports[pi].queues[class].bytes -= hdr.wire() as u64;
            self.counters.drop(DropReason::LinkDown, hdr.wire());
            self.arena.free(hdr.idx);
        }
        self.ports[pi].backlogged &= !(1 << class);
        for i in 0..self.voq.voqs[pi].len() {
            while let Some(hdr) = self.voq.voqs[pi][i].pop_front() {
                self.ports[pi].queues[class].bytes -= hdr.wire() as u64;
                if let Some(h) = self.rcm.held.get_mut(hdr.idx as usize) {
                    *h = false;
                }
                self.voq_release(now, p, hdr);
                self.counters.drop(DropReason::LinkDown, hdr.wire());
                self.arena.free(hdr.idx);
            }
        }
    }
}
