//! ConWeave in the switch pipeline: the hook the ingress pipeline calls
//! at every switch when the balancer acts at ToRs (`lb_at_tor`), the
//! source ToR's choice of uplink and tagging, the destination ToR's holds
//! and releases, the control packets between them (replies and NOTIFYs:
//! real packets in the arena, addressed to the data's source host, so the
//! fabric routes them to its ToR, which consumes them), and the flush
//! deadlines (`Ev::SwitchTimer`). Touches the balancer's state, the arena,
//! the switch's MMU and ports through the ingress pipeline's `admit` and
//! `enqueue`, and the event queue.
//!
//! A control packet's header carries the data's flow identity and, as its
//! destination, the data's source host: no host sends a packet to itself
//! (`add_flow` refuses such flows), so that pair marks it. It is a control
//! packet of the NIC's control class and size, charged to the buffer
//! through the ingress port of the data that made it.

use super::rx::Verdict;
use super::tx::NO_UPLINK;
use super::{flow_key, Control, ConweaveStats, Flag, Tag};
use crate::link::port::End;
use crate::net::arena::Hdr;
use crate::net::at::AtSwitch;
use crate::net::event::Ev;
use crate::observe::counters::DropReason;
use crate::switch::lb::Balancer;
use crate::switch::Switches;
use crate::topo::paths;
use engine::Time;
use transport::{Packet, PacketKind};

#[cfg(test)]
use super::{Handed, Handoff};

impl AtSwitch {
    /// Sets ConWeave up once the network is built: each host's ToR, and
    /// every transmission end an event. ToRs create packets (replies,
    /// NOTIFYs) that no link brought in, which the calm test's window
    /// budget (`switch/budget.rs`) does not count, so a ToR deemed calm
    /// could still have to pause; with every end an event the results are
    /// those deferral would give anyway, at some speed.
    pub(crate) fn init_tors(&mut self) {
        let (_, links, core) = self.parts();
        let host_tor = core
            .host_port
            .iter()
            .map(|&p| match links.ports[p as usize ^ 1].owner {
                End::Switch(s, _) => s,
                // Refused before (`ConweaveParams::check_topology`).
                End::Host(_) => u32::MAX,
            })
            .collect();
        if let Balancer::Conweave(cw) = &mut self.sw().lb {
            cw.host_tor = host_tor;
        }
        self.core().defer_ends = false;
    }

    /// A packet entered switch `s` on port `in_port`: true if ConWeave
    /// took it (a data packet at its source or destination ToR, a control
    /// packet at its ToR), false if it goes through the pipeline as ECMP
    /// would send it.
    #[inline(never)]
    pub(crate) fn lb_at_tor(&mut self, now: Time, s: u32, in_port: u32, hdr: Hdr) -> bool {
        let Balancer::Conweave(cw) = &self.sw().lb else {
            return false;
        };
        let src = hdr.flow & 0xffff;
        let tor = |h: u32| cw.host_tor[h as usize];
        if !hdr.is_data() {
            // A control packet is addressed to the host whose ToR consumes
            // it, its source's: the address filters, the kind decides.
            if src == hdr.dst && tor(src) == s && self.core().arena.is_switch_control(hdr.idx) {
                self.consume_control(now, s, hdr);
                return true;
            }
            return false;
        }
        let (src_tor, dst_tor) = (tor(src), tor(hdr.dst));
        if src_tor == dst_tor {
            false
        } else if s == src_tor {
            self.at_source(now, s, in_port, hdr, dst_tor)
        } else if s == dst_tor {
            self.at_destination(now, s, in_port, hdr)
        } else {
            false
        }
    }

    /// The source ToR: the flow's epoch and uplink, the packet's tag, and
    /// on to the uplink.
    fn at_source(&mut self, now: Time, s: u32, in_port: u32, hdr: Hdr, dst_tor: u32) -> bool {
        let rtt = self.tor_rtt(hdr.flow & 0xffff, hdr.dst);
        let sw = self.sw();
        let Balancer::Conweave(cw) = &mut sw.lb else {
            return false;
        };
        let hops = sw.routes.hops(s, hdr.flow, hdr.dst, hdr.idx, in_port);
        if hops.is_empty() {
            return false;
        }
        let tor = &mut cw.tors[s as usize];
        let st = tor.tx.entry(flow_key(&hdr)).or_default();
        // An uplink gone from the routes (a failure) counts as none.
        if !hops.contains(&st.uplink) {
            st.uplink = NO_UPLINK;
        }
        let (rng, paused) = (&mut tor.rng, &tor.paused);
        let draw = || {
            let n = hops.len() as u64;
            let a = hops[rng.below(n) as usize];
            let b = hops[rng.below(n) as usize];
            let free = |u: u32| {
                paused
                    .get(&((dst_tor as u64) << 32 | u as u64))
                    .is_none_or(|&until| until <= now)
            };
            if free(a) {
                (a, true)
            } else if free(b) {
                (b, true)
            } else {
                (a, false)
            }
        };
        let sent = st.on_data(now, &cw.p, rtt, draw);
        cw.stats.reroutes += u64::from(sent.rerouted_flow);
        let out = sent.tag.uplink;
        *cw.tag_mut(hdr.idx) = sent.tag;
        if self.admit::<true>(now, s, in_port, out, hdr) {
            self.enqueue::<true>(now, out, s, hdr, (now, Ev::Arrive(in_port ^ 1)));
        }
        true
    }

    /// The destination ToR: answer the source, then pass the packet on to
    /// its host or hold it.
    fn at_destination(&mut self, now: Time, s: u32, in_port: u32, hdr: Hdr) -> bool {
        let sw = self.sw();
        let Balancer::Conweave(cw) = &mut sw.lb else {
            return false;
        };
        let &[out] = sw.routes.hops(s, hdr.flow, hdr.dst, hdr.idx, in_port) else {
            return false;
        };
        let tag = cw.tags[hdr.idx as usize];
        let key = flow_key(&hdr);
        let tor = &mut cw.tors[s as usize];
        let rx = tor.rx.entry(key).or_default();
        let d = rx.on_data(now, &cw.p, &tag);
        if let Some(at) = d.deadline {
            let old = std::mem::replace(&mut rx.deadline, at);
            tor.deadlines.remove(&(old, key));
            tor.deadlines.insert((at, key));
            let timer = Ev::SwitchTimer(self.sw().nodes[s as usize].ports[0]);
            self.core().schedule(at, timer);
        }
        if hdr.ce() {
            self.send_control(now, s, in_port, &hdr, Control::Notify, &tag);
        }
        match tag.flag {
            Flag::Init => self.send_control(now, s, in_port, &hdr, Control::ReplyInit, &tag),
            Flag::Tail => self.send_control(now, s, in_port, &hdr, Control::ReplyTail, &tag),
            Flag::Data => {}
        }
        if d.verdict == Verdict::Hold {
            // Held outside the MMU (as the artifact's VOQs are): admitted
            // when released.
            let Balancer::Conweave(cw) = &mut self.sw().lb else {
                return true;
            };
            cw.tors[s as usize].rx.entry(key).or_default().hold(hdr);
            cw.stats.held_packets += 1;
            return true;
        }
        if self.admit::<true>(now, s, in_port, out, hdr) {
            #[cfg(test)]
            if let Balancer::Conweave(cw) = &mut self.sw().lb {
                cw.hand(&hdr, Handoff::Direct);
            }
            self.enqueue::<true>(now, out, s, hdr, (now, Ev::Arrive(in_port ^ 1)));
        }
        if d.verdict == Verdict::PassThenRelease {
            self.release(now, s, key, Ev::Arrive(in_port ^ 1), false);
        }
        true
    }

    /// Hands a flow's held packets on to its host, in order: after its
    /// TAIL, or (`timer`) at its deadline.
    fn release(&mut self, now: Time, s: u32, key: u64, ev: Ev, timer: bool) {
        let Balancer::Conweave(cw) = &mut self.sw().lb else {
            return;
        };
        let tor = &mut cw.tors[s as usize];
        let Some(rx) = tor.rx.get_mut(&key) else {
            return;
        };
        tor.deadlines.remove(&(rx.deadline, key));
        let held = rx.release();
        if timer {
            cw.stats.timer_flushes += 1;
            cw.stats.timer_flushed_packets += held.len() as u64;
        } else {
            cw.stats.tail_releases += 1;
        }
        // The ToR's port toward the flow's destination host.
        let out = self.core().host_port[key as u32 as usize] ^ 1;
        for h in held {
            // Admitted now, charged to the port it came in on.
            let sw = self.sw();
            let in_port = sw.nodes[s as usize].ports[h.in_port as usize];
            let queues = &sw.queues;
            let queued = || queues.bytes(out, h.class());
            let r = sw.nodes[s as usize].mmu.admit_held(
                h.in_port as usize,
                h.class(),
                h.wire() as u64,
                queued,
            );
            if !self.admitted::<true>(now, s, in_port, out, h, r) {
                continue;
            }
            #[cfg(test)]
            if let Balancer::Conweave(cw) = &mut self.sw().lb {
                cw.hand(
                    &h,
                    if timer {
                        Handoff::Timer
                    } else {
                        Handoff::AfterTail
                    },
                );
            }
            self.enqueue::<true>(now, out, s, h, (now, ev));
        }
    }

    /// A flush deadline at the switch that owns port `p`: the held queues
    /// due go on to their hosts.
    #[inline(never)]
    pub(crate) fn switch_timer(&mut self, now: Time, p: u32) {
        let End::Switch(s, _) = self.links().ports[p as usize].owner else {
            return;
        };
        loop {
            let Balancer::Conweave(cw) = &mut self.sw().lb else {
                return;
            };
            let due = cw.tors[s as usize].deadlines.first().copied();
            match due {
                Some((at, key)) if at <= now => self.release(now, s, key, Ev::SwitchTimer(p), true),
                _ => return,
            }
        }
    }

    /// Sends a reply or a NOTIFY about the data packet `data` (which came
    /// in on `in_port`, tagged `tag`) from its destination ToR `s` toward
    /// its source host's ToR.
    fn send_control(
        &mut self,
        now: Time,
        s: u32,
        in_port: u32,
        data: &Hdr,
        control: Control,
        tag: &Tag,
    ) {
        let src = data.flow & 0xffff;
        let wire = self.cfg().nic.ctrl_bytes;
        let pkt = Packet {
            src,
            dst: src,
            sport: (data.flow >> 16) as u16,
            kind: PacketKind::SwitchControl,
            priority: self.cfg().nic.ctrl_priority,
            wire,
            ..Packet::default()
        };
        let mut hdr = self.core().arena.alloc(pkt);
        hdr.in_port = data.in_port;
        let (sw, _, core) = self.parts();
        let Balancer::Conweave(cw) = &mut sw.lb else {
            return;
        };
        *cw.tag_mut(hdr.idx) = Tag {
            epoch: tag.epoch,
            control,
            uplink: tag.uplink,
            data_dst: data.dst,
            ..Tag::default()
        };
        let st = &mut cw.stats;
        st.control_packets += 1;
        st.control_bytes += wire as u64;
        if control == Control::Notify {
            st.notifies += 1;
        } else {
            st.replies += 1;
        }
        let hops = sw.routes.hops(s, hdr.flow, hdr.dst, hdr.idx, in_port);
        let out = match hops.len() {
            0 => {
                core.counters.drop(DropReason::NoRoute, wire);
                core.arena.free(hdr.idx);
                return;
            }
            1 => hops[0],
            _ => cw.pick(s, &hdr, hops),
        };
        if self.admit::<true>(now, s, in_port, out, hdr) {
            self.enqueue::<true>(now, out, s, hdr, (now, Ev::Arrive(in_port ^ 1)));
        }
    }

    /// A reply or NOTIFY reached the ToR of the host it is addressed to:
    /// the flow's source state takes it in, and it is gone.
    fn consume_control(&mut self, now: Time, s: u32, hdr: Hdr) {
        if let Balancer::Conweave(cw) = &mut self.sw().lb {
            let tag = cw.tags[hdr.idx as usize];
            let tor = &mut cw.tors[s as usize];
            if tag.control == Control::Notify {
                let dst_tor = cw.host_tor[tag.data_dst as usize];
                let path = (dst_tor as u64) << 32 | tag.uplink as u64;
                tor.paused.insert(path, now + cw.p.path_pause);
            } else {
                let key = (hdr.flow as u64) << 32 | tag.data_dst as u64;
                if let Some(st) = tor.tx.get_mut(&key) {
                    st.on_reply(now, tag.epoch, tag.control == Control::ReplyTail);
                }
            }
            cw.stats.control_consumed_packets += 1;
            cw.stats.control_consumed_bytes += hdr.wire() as u64;
        }
        self.core().arena.free(hdr.idx);
    }

    /// The base RTT between the ToRs of hosts `src` and `dst`: twice the
    /// propagation delay from one to the other along the first shortest
    /// path (the artifact's link delay times the hops, both ways).
    fn tor_rtt(&mut self, src: u32, dst: u32) -> Time {
        let Balancer::Conweave(cw) = &self.sw().lb else {
            return 0;
        };
        let key = (cw.host_tor[src as usize] as u64) << 32 | cw.host_tor[dst as usize] as u64;
        if let Some(&t) = cw.rtt.get(&key) {
            return t;
        }
        let (from, to) = (
            self.core().host_port[src as usize],
            self.core().host_port[dst as usize],
        );
        let mtu = self.cfg().nic.mtu as u64;
        let (sw, links, core) = self.parts();
        let host_links = links.ports[from as usize].delay + links.ports[to as usize].delay;
        let route = paths::path(links, &core.roles, &sw.routes, mtu, from, dst, 0);
        let rtt = 2 * route.0.saturating_sub(host_links);
        if let Balancer::Conweave(cw) = &mut self.sw().lb {
            cw.rtt.insert(key, rtt);
        }
        rtt
    }
}

impl Switches {
    /// What ConWeave did, when it runs.
    pub(crate) fn conweave_stats(&self) -> Option<ConweaveStats> {
        match &self.lb {
            Balancer::Conweave(cw) => Some(cw.stats()),
            _ => None,
        }
    }
}

#[cfg(test)]
impl super::Conweave {
    /// Notes a data packet handed toward its host.
    fn hand(&mut self, hdr: &Hdr, how: Handoff) {
        let tag = self.tags[hdr.idx as usize];
        self.handed.push(Handed {
            key: flow_key(hdr),
            epoch: tag.epoch,
            rerouted: tag.rerouted,
            tail: tag.flag == Flag::Tail,
            how,
        });
    }
}
