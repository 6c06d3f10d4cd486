//! The VOQ model in the switch pipelines (see `mod.rs`): a packet of the
//! model's class that a switch routed joins its input's VOQ toward its
//! output (`forward_voq`, from the ingress pipeline's hooked instance:
//! RCM's SAR, the input's admission and PFC, RCM's detection, the
//! crossbar), the crossbar moves VOQ heads into an output queue in
//! round-robin order over the inputs, under RCC's window when RCM controls
//! the output (`voq_fill`, also after the egress pipeline sent an output
//! queue's head), and a VOQ's packet dropped with its link releases its
//! input (`voq_drop_input`). Popping and draining are
//! [`Queues`](crate::switch::queues::Queues)'. Touches the model's queues,
//! RCM (through `switch/rcm/`) and the ports' PFC.

use crate::net::arena::Hdr;
use crate::net::at::AtSwitch;
use crate::observe::counters::DropReason;
use crate::switch::lb::Sight;
use engine::Time;

impl AtSwitch {
    /// Admitted by the route: `hdr` entered switch `s` by `in_port` (its
    /// `in_local`-th) for output `out`. Lossy: dropped if the input's
    /// queues are full. Lossless: the input pauses its upstream at its
    /// threshold (the headroom above it takes what is still coming).
    /// RCM's SAR may move it to another output first.
    #[inline(never)]
    pub(crate) fn forward_voq(&mut self, now: Time, s: u32, in_port: u32, out: u32, hdr: Hdr) {
        let out = if self.sw().rcm.on && self.sw().rcm.p.sar {
            let sw = self.sw();
            let hops = sw.routes.hops(s, hdr.flow, hdr.dst, hdr.idx, in_port);
            let (queues, class) = (&sw.queues, sw.queues.voq().class);
            sw.rcm
                .sar(now, s, hops, hdr, out, |p| queues.bytes(p, class))
        } else {
            out
        };
        let wire = hdr.wire() as u64;
        let voq = self.sw().queues.voq_mut();
        let (class, i) = (voq.class, in_port as usize);
        let in_bytes = voq.in_bytes[i] + wire;
        if in_bytes > voq.queue {
            let reason = if voq.pfc {
                DropReason::HeadroomOverflow
            } else {
                DropReason::BufferFull
            };
            self.core().counters.drop(reason, hdr.wire());
            self.core().arena.free(hdr.idx);
            return;
        }
        voq.in_bytes[i] = in_bytes;
        let in_local = hdr.in_port as usize;
        voq.voqs[out as usize][in_local].push_back(hdr);
        let pause = voq.pfc && !voq.in_paused[i] && in_bytes >= voq.xoff[i];
        if pause {
            voq.in_paused[i] = true;
        }
        self.sw().queues.add_bytes(out, class, wire);
        if pause {
            self.send_pfc(now, in_port, class as u8, true);
        }
        // A balancer that sees every admitted packet (CONGA) sees it.
        let (sw, links, _) = self.parts();
        let sight = Sight::new(&links.ports, &sw.queues, now);
        sw.lb.hop(s, in_port, out, hdr, sight);
        if self.sw().rcm.on {
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
        let n = self.sw().queues.voq().voqs[oi].len();
        loop {
            let start = self.sw().queues.voq().rr[oi] as usize;
            let mut moved = false;
            // The first input whose head RCC held: it moves if no other
            // input's can.
            let mut held = None;
            for k in 0..n {
                let i = (start + k) % n;
                let voq = self.sw().queues.voq();
                let Some(&hdr) = voq.voqs[oi][i].front() else {
                    continue;
                };
                if voq.oq_bytes[oi] + hdr.wire() as u64 > voq.queue {
                    // No room: the output queue's departures call again.
                    break;
                }
                if self.sw().rcm.on && !self.rcc_admits(now, o, &hdr) {
                    held = held.or(Some(i));
                    continue;
                }
                if let Some(h) = held {
                    let head = self.sw().queues.voq().voqs[oi][h][0];
                    self.rcc_held(now, o, &head);
                }
                self.sw().queues.voq_mut().voqs[oi][i].pop_front();
                self.voq_move(now, o, hdr);
                self.sw().queues.voq_mut().rr[oi] = ((i + 1) % n) as u16;
                moved = true;
                break;
            }
            if let (false, Some(i)) = (moved, held) {
                // Only harmful flows wait: RCC keeps the port busy.
                let hdr = self.sw().queues.voq_mut().voqs[oi][i]
                    .pop_front()
                    .expect("held head");
                self.voq_move(now, o, hdr);
                self.sw().queues.voq_mut().rr[oi] = ((i + 1) % n) as u16;
                moved = true;
            }
            if !moved {
                break;
            }
        }
        let (sw, links, _) = self.parts();
        let class = sw.queues.held_class;
        let port = &mut links.ports[oi];
        if sw.queues.voq().oq[oi].is_empty() {
            // Nothing waits toward `o` (the loop above moves a VOQ head
            // whenever the output queue has room).
            if sw.rcm.on {
                sw.rcm.drained(o);
            }
            port.backlogged &= !(1 << class);
        } else {
            port.backlogged |= 1 << class;
            if port.has_work() {
                self.kick(now, o);
            }
        }
    }

    /// One VOQ head moves into output `o`'s queue: its input's buffer is
    /// released (a RESUME upstream if due) and RCM sees it (CFR, RCC).
    fn voq_move(&mut self, now: Time, o: u32, hdr: Hdr) {
        let wire = hdr.wire() as u64;
        let oi = o as usize;
        let voq = self.sw().queues.voq_mut();
        voq.oq[oi].push_back(hdr);
        voq.oq_bytes[oi] += wire;
        if self.sw().rcm.on {
            self.rcm_moved(now, o, &hdr);
        }
        self.voq_release(now, o, hdr);
    }

    /// `hdr`, which entered by input `hdr.in_port` of output `o`'s switch,
    /// left its input queue.
    pub(crate) fn voq_release(&mut self, now: Time, o: u32, hdr: Hdr) {
        let crate::link::port::End::Switch(s, _) = self.links().ports[o as usize].owner else {
            unreachable!("a VOQ is a switch's")
        };
        let in_port = self.sw().nodes[s as usize].ports[hdr.in_port as usize];
        let i = in_port as usize;
        let voq = self.sw().queues.voq_mut();
        voq.in_bytes[i] -= hdr.wire() as u64;
        let resume = voq.xoff[i].saturating_sub(voq.resume_offset);
        if voq.in_paused[i] && voq.in_bytes[i] <= resume {
            voq.in_paused[i] = false;
            let class = voq.class as u8;
            self.send_pfc(now, in_port, class, false);
        }
    }

    /// A packet the model held in a VOQ toward port `p`, whose link went
    /// down (`Queues::drain`): its input is released and RCC forgets it.
    #[cold]
    pub(crate) fn voq_drop_input(&mut self, now: Time, p: u32, hdr: Hdr) {
        if let Some(h) = self.sw().rcm.held.get_mut(hdr.idx as usize) {
            *h = false;
        }
        self.voq_release(now, p, hdr);
    }
}
