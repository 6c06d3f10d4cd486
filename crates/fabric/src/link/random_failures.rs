//! Recurring random link failures ([`RandomFailures`]): the links they
//! draw from (switch to switch), their global events (each brings the last
//! set back up and fails a new random set), the draining of a failed
//! port's queues (asked of its switch, `switch/egress.rs`; a packet the
//! MMU buffered is dropped here under `link_down`, the buffer released, a
//! RESUME sent upstream if due), the routes recomputed, and the flows that
//! lost a packet to a failed link (queued or on its wire when it failed).
//! Touches the links' ports, the switches' MMUs, the arena and the
//! counters.

use crate::link::frame::Frame;
use crate::link::{FailureState, RandomFailures};
use crate::net::arena::Hdr;
use crate::net::event::Global;
use crate::net::{Network, NodeRole};
use crate::observe::counters::DropReason;
use engine::{Rng, StreamKind, Time};

impl Network {
    /// The links joining two switches: what random failures draw from.
    pub fn switch_links(&self) -> Vec<u32> {
        let switch = |n: u32| matches!(self.core.roles[n as usize], NodeRole::Switch(_));
        (0..self.topo.links.len() as u32)
            .filter(|&l| {
                switch(self.links.ports[2 * l as usize].node)
                    && switch(self.links.ports[2 * l as usize + 1].node)
            })
            .collect()
    }

    /// Adds a failure schedule; its first set fails at `spec.start`.
    pub fn add_random_failures(&mut self, spec: RandomFailures) -> Result<(), String> {
        let links = self.switch_links().len();
        if spec.count == 0 || spec.count as usize > links {
            return Err(format!(
                "{} links to fail at a time: the fabric has {links} switch-to-switch links",
                spec.count
            ));
        }
        if spec.interval == 0 || spec.stop <= spec.start {
            return Err("needs an interval > 0 and a stop after the start".into());
        }
        let i = self.links.failures.len() as u32;
        self.links.failures.push(FailureState {
            spec,
            down: Vec::new(),
            rng: Rng::new(self.cfg.seed, StreamKind::Failures, i as u64),
        });
        self.core
            .globals
            .push(spec.start.max(self.core.now), Global::Failures(i));
        Ok(())
    }

    /// Links the failure schedules hold down now, sorted.
    pub fn randomly_failed_links(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self
            .links
            .failures
            .iter()
            .flat_map(|f| f.down.iter().copied())
            .collect();
        v.sort_unstable();
        v
    }

    /// Schedule `i`'s event: its failed links come back; before its stop,
    /// a new random set fails and the next event is scheduled. Out of the
    /// event loop's code: a rare global event, whose shape otherwise moved
    /// the loop's speed by 1-2%.
    #[inline(never)]
    pub(crate) fn apply_failures(&mut self, now: Time, i: u32) {
        let back = std::mem::take(&mut self.links.failures[i as usize].down);
        for &l in &back {
            self.links.ports[2 * l as usize].up = true;
            self.links.ports[2 * l as usize + 1].up = true;
        }
        let spec = self.links.failures[i as usize].spec;
        let mut failed = Vec::new();
        if now < spec.stop {
            let mut candidates: Vec<u32> = self
                .switch_links()
                .into_iter()
                .filter(|&l| {
                    self.links.ports[2 * l as usize].up && self.links.ports[2 * l as usize + 1].up
                })
                .collect();
            // A partial Fisher-Yates shuffle: the first `count` are the set.
            let n = (spec.count as usize).min(candidates.len());
            let rng = &mut self.links.failures[i as usize].rng;
            for k in 0..n {
                let j = k + rng.below((candidates.len() - k) as u64) as usize;
                candidates.swap(k, j);
            }
            candidates.truncate(n);
            failed = candidates;
            for &l in &failed {
                for p in [2 * l, 2 * l + 1] {
                    self.links.ports[p as usize].up = false;
                    self.drop_queued(now, p);
                    self.note_wire(p);
                }
            }
            let next = now.saturating_add(spec.interval).min(spec.stop);
            self.core.globals.push(next, Global::Failures(i));
        }
        self.links.failures[i as usize].down = failed;
        if self.cfg.reroute_on_failure {
            self.rebuild_routes();
        }
        for &l in &back {
            self.kick(now, 2 * l);
            self.kick(now, 2 * l + 1);
        }
    }

    /// A packet of `class` queued at a port of switch `s` whose link went
    /// down: its buffer released (a RESUME sent upstream if due), dropped
    /// as `link_down`, its flow noted.
    pub(crate) fn drop_drained(&mut self, now: Time, s: u32, class: usize, hdr: Hdr) {
        let sw = &mut self.sw.nodes[s as usize];
        let in_local = hdr.in_port as usize;
        if sw.mmu.release(in_local, class, hdr.wire() as u64) {
            let in_port = sw.ports[in_local];
            self.send_pfc(now, in_port, class as u8, false);
        }
        self.core.counters.drop(DropReason::LinkDown, hdr.wire());
        self.note_hit(hdr);
        self.core.arena.free(hdr.idx);
    }

    /// Notes the flows of the packets on port `p`'s wire, which `arrive`
    /// will drop (its link just went down).
    fn note_wire(&mut self, p: u32) {
        let port = &self.links.ports[p as usize];
        let hdrs: Vec<Hdr> = port
            .wire
            .iter()
            .filter_map(|&(_, f)| match f {
                Frame::Packet(hdr) => Some(hdr),
                Frame::Control(_) => None,
            })
            .collect();
        for hdr in hdrs {
            self.note_hit(hdr);
        }
    }

    /// Notes the flow of a packet lost to a failed link.
    fn note_hit(&mut self, hdr: Hdr) {
        let flow = self
            .core
            .arena
            .dst_qp(hdr.idx)
            .and_then(|qp| self.flow_of_qp(hdr.dst, qp));
        if let Some(f) = flow {
            self.links.link_down_flows.insert(f);
        }
    }

    /// With failure schedules, the flows that lost at least one packet
    /// (data or control, either direction) to a link a schedule failed:
    /// queued at its ports or on its wire when it failed (with
    /// `reroute_on_failure` off, packets sent onto it later are not
    /// counted); None without schedules.
    pub fn flows_hit_by_failures(&self) -> Option<&std::collections::BTreeSet<u32>> {
        (!self.links.failures.is_empty()).then_some(&self.links.link_down_flows)
    }
}
