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
use crate::link::{FailureState, Links, RandomFailures};
use crate::net::arena::{Arena, Hdr};
use crate::net::at::AtSwitch;
use crate::net::core::Core;
use crate::net::event::Global;
use crate::net::NodeRole;
use crate::observe::counters::DropReason;
use engine::{Rng, StreamKind, Time};

impl Links {
    /// The links joining two switches: what random failures draw from.
    pub(crate) fn switch_links(&self, roles: &[NodeRole]) -> Vec<u32> {
        let switch = |n: u32| matches!(roles[n as usize], NodeRole::Switch(_));
        (0..self.ports.len() as u32 / 2)
            .filter(|&l| {
                switch(self.ports[2 * l as usize].node)
                    && switch(self.ports[2 * l as usize + 1].node)
            })
            .collect()
    }

    /// Adds a failure schedule; its first set fails at `spec.start`.
    pub(crate) fn add_random_failures(
        &mut self,
        core: &mut Core,
        seed: u64,
        spec: RandomFailures,
    ) -> Result<(), String> {
        let links = self.switch_links(&core.roles).len();
        if spec.count == 0 || spec.count as usize > links {
            return Err(format!(
                "{} links to fail at a time: the fabric has {links} switch-to-switch links",
                spec.count
            ));
        }
        if spec.interval == 0 || spec.stop <= spec.start {
            return Err("needs an interval > 0 and a stop after the start".into());
        }
        let i = self.failures.len() as u32;
        self.failures.push(FailureState {
            spec,
            down: Vec::new(),
            rng: Rng::new(seed, StreamKind::Failures, i as u64),
        });
        core.globals
            .push(spec.start.max(core.now), Global::Failures(i));
        Ok(())
    }

    /// Links the failure schedules hold down now, sorted.
    pub(crate) fn randomly_failed_links(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self
            .failures
            .iter()
            .flat_map(|f| f.down.iter().copied())
            .collect();
        v.sort_unstable();
        v
    }

    /// Schedule `i`'s event at `now`: brings its last set back up (returned
    /// first) and draws the next set (returned second, still up: the
    /// caller fails each port in turn, `Network::apply_failures`), whose
    /// end it schedules; none after the schedule's stop.
    pub(crate) fn draw_failures(
        &mut self,
        now: Time,
        i: u32,
        core: &mut Core,
    ) -> (Vec<u32>, Vec<u32>) {
        let back = std::mem::take(&mut self.failures[i as usize].down);
        for &l in &back {
            self.ports[2 * l as usize].up = true;
            self.ports[2 * l as usize + 1].up = true;
        }
        let spec = self.failures[i as usize].spec;
        if now >= spec.stop {
            return (back, Vec::new());
        }
        let mut candidates: Vec<u32> = self
            .switch_links(&core.roles)
            .into_iter()
            .filter(|&l| self.ports[2 * l as usize].up && self.ports[2 * l as usize + 1].up)
            .collect();
        // A partial Fisher-Yates shuffle: the first `count` are the set.
        let n = (spec.count as usize).min(candidates.len());
        let rng = &mut self.failures[i as usize].rng;
        for k in 0..n {
            let j = k + rng.below((candidates.len() - k) as u64) as usize;
            candidates.swap(k, j);
        }
        candidates.truncate(n);
        let next = now.saturating_add(spec.interval).min(spec.stop);
        core.globals.push(next, Global::Failures(i));
        (back, candidates)
    }

    /// Notes the flows of the packets on port `p`'s wire as hit.
    pub(crate) fn note_wire(&mut self, arena: &Arena, p: u32) {
        let port = &self.ports[p as usize];
        let hdrs: Vec<Hdr> = port
            .wire
            .iter()
            .filter_map(|&(_, f)| match f {
                Frame::Packet(hdr) => Some(hdr),
                Frame::Control(_) => None,
            })
            .collect();
        for hdr in hdrs {
            self.note_hit(arena, hdr);
        }
    }

    /// Notes the packet's receiving QP as hit (its flow, if a flow owns
    /// it, is looked up when asked: `Network::flows_hit_by_failures`).
    pub(crate) fn note_hit(&mut self, arena: &Arena, hdr: Hdr) {
        if let Some(qp) = arena.dst_qp(hdr.idx) {
            self.link_down_qps.insert((hdr.dst, qp));
        }
    }
}

impl AtSwitch {
    /// A packet the MMU buffered at switch `s`, dropped with its failed
    /// port: the buffer released (a RESUME upstream if due), the drop
    /// counted and its flow noted.
    pub(crate) fn drop_drained(&mut self, now: Time, s: u32, class: usize, hdr: Hdr) {
        let sw = &mut self.sw().nodes[s as usize];
        let in_local = hdr.in_port as usize;
        if sw.mmu.release(in_local, class, hdr.wire() as u64) {
            let in_port = sw.ports[in_local];
            self.send_pfc(now, in_port, class as u8, false);
        }
        self.core().counters.drop(DropReason::LinkDown, hdr.wire());
        let (_, links, core) = self.parts();
        links.note_hit(&core.arena, hdr);
        self.core().arena.free(hdr.idx);
    }
}
