//! The event loop: [`Network::run_until`] runs the global events
//! (applications' starts and fabric timers, flow starts among them;
//! faults; samples) alone and everything else in windows of the
//! lookahead, node by node (`window.rs`); the deferred transmission ends
//! of calm switches (`AtSwitch::finish_deferred`); the packets a switch
//! refused during an event, handed to DIBS after it (`switch/deflect.rs`);
//! the one dispatch of a node's events to its node's view (`handle`), a
//! frame's arrival at the end of its wire (`arrive`: applied to the port,
//! handed to the switch's ingress or the host's driver) and the one
//! `kick` of a free port (by its owner). Touches the event queues, the
//! window's state and the wire; what an event does belongs to `link/`,
//! `switch/` and `host/`.

use crate::link::frame::{CtrlKind, Frame};
use crate::link::port::{End, TxEnd};
use crate::net::arena::Hdr;
use crate::net::at::AtHost;
use crate::net::at::AtSwitch;
use crate::net::event::{node_of, Ev, Global};
use crate::net::parallel::Step;
use crate::net::window::{precedes, ByNode};
use crate::net::{Network, NodeRole, RunState};
use crate::observe::counters::DropReason;
use crate::observe::pfc_log::PfcEvent;
use engine::Time;

impl Network {
    /// Runs until every flow and application is done, simulated time
    /// passes `until`, or `budget` events have been processed.
    pub fn run_until(&mut self, until: Time, budget: u64) -> RunState {
        if !self.peers.is_empty() {
            return self.run_sharded(until, budget);
        }
        self.run_steps(until, budget, None)
    }

    /// The loop: each step a global event or a window. On one thread
    /// (`sync` None) what decides the next step is this network's; in a
    /// shard, every shard's summed at the step's start (`parallel.rs`),
    /// and the step ends at the barrier. One loop for both, so that the
    /// window's code is inlined once, as it was before shards existed.
    pub(crate) fn run_steps(
        &mut self,
        until: Time,
        budget: u64,
        mut sync: Option<&mut Step<'_>>,
    ) -> RunState {
        let mut n = 0;
        let has_work = self.hosts.has_work();
        loop {
            let (all_done, next, last_finish) = match sync.as_deref_mut() {
                None => (
                    self.hosts.all_done(),
                    self.core.q.peek_time(),
                    self.hosts.last_finish(),
                ),
                Some(step) => {
                    let r = self.begin_step(step);
                    n += r.events;
                    (r.all_done, r.next, r.last_finish)
                }
            };
            if all_done && has_work {
                self.core.now = last_finish;
                return RunState::Done;
            }
            if n >= budget {
                return RunState::Budget;
            }
            let global = self.core.globals.peek_time();
            let events = if let Some(tg) = global.filter(|&tg| next.is_none_or(|t| tg <= t)) {
                if tg > until {
                    return RunState::TimeLimit;
                }
                let (_, g) = self.core.globals.pop().expect("peeked");
                self.core.now = self.core.now.max(tg);
                match sync.as_deref_mut() {
                    None => {
                        self.run_global(tg, g, true);
                        1
                    }
                    Some(step) => self.global_in_shard(tg, g, step.me == 0),
                }
            } else {
                let Some(t0) = next else {
                    return if all_done {
                        RunState::Done
                    } else {
                        RunState::Stuck
                    };
                };
                if t0 > until {
                    return RunState::TimeLimit;
                }
                let end = self.window_end_from(t0, global, until);
                // The loop compiled with the hooks or without: those of a
                // balancer that acts beyond picking a hop, of SRPT and of
                // DIBS cost a run without them nothing.
                if self.sw.hooks {
                    self.run_window::<true>(end)
                } else {
                    self.run_window::<false>(end)
                }
            };
            match sync.as_deref_mut() {
                None => n += events,
                Some(step) => self.end_step(step, events),
            }
        }
    }

    /// Runs a global event; `count`: as an event in the counters (a
    /// sharded run counts it in one shard).
    #[inline(never)]
    pub(crate) fn run_global(&mut self, tg: Time, g: Global, count: bool) {
        self.core.counters.events += count as u64;
        match g {
            Global::AppStart(a) => self.at_host().app_start(tg, a),
            Global::AppTimer(a, token) => self.at_host().app_fabric_timer(tg, a, token),
            Global::Fault(i) => self.apply_fault(tg, i),
            Global::Failures(i) => self.apply_failures(tg, i),
            Global::Sample => self.sample(tg),
        }
    }

    /// The end of the window that starts at `t0`: a lookahead later, but
    /// not past the next global event or `until`.
    pub(crate) fn window_end_from(&self, t0: Time, global: Option<Time>, until: Time) -> Time {
        t0.saturating_add(self.core.lookahead)
            .min(global.unwrap_or(Time::MAX))
            .min(until.saturating_add(1))
    }

    /// Runs every event due before `end` (see `window.rs`), node by node;
    /// returns how many. `HOOKS`: see `Network::forward`. A shard's
    /// calendar holds only its own nodes' events (`shard.rs`); it notes
    /// each node's share of the packets alive.
    #[inline(never)]
    pub(crate) fn run_window<const HOOKS: bool>(&mut self, end: Time) -> u64 {
        let mut w = std::mem::replace(&mut self.core.window, ByNode::new(0));
        let deferred_before = self.core.deferred_ends;
        w.clear();
        let (port_node, host_node) = (&self.core.port_node, &self.core.host_node);
        let shard = &self.core.shard;
        self.core.q.drain_before(end, |t, ev| {
            let node = node_of(port_node, host_node, ev);
            debug_assert!(shard
                .as_ref()
                .is_none_or(|s| s.owner[node as usize] == s.id));
            w.push(node, t, ev)
        });
        w.sort();
        self.core.window_end = end;
        let mut n = w.len() as u64;
        let mut latest = self.core.now;
        let (events, groups) = (w.events(), w.groups());
        let mut i = 0;
        for (g, &(node, group_end)) in groups.iter().enumerate() {
            let group_end = group_end as usize;
            // A node's first events read its ports, its wire and queue
            // heads and, at a host, the arriving packets, all last touched
            // a window ago and out of L2 since. A pipeline over the groups
            // asks for each in turn, a group apart, each stage reading what
            // the one before brought in.
            let span = |k: usize| {
                let &(_, end) = groups.get(k)?;
                let start = if k == 0 { 0 } else { groups[k - 1].1 as usize };
                Some(&events[start..end as usize])
            };
            if let Some(evs) = span(g + 3) {
                self.links.prefetch_ports(evs);
            }
            if let Some(evs) = span(g + 2) {
                self.links.prefetch_slots(&self.sw.queues, evs);
            }
            if let Some(evs) = span(g + 1) {
                self.links.prefetch_packets(&self.core.arena, evs, end);
            }
            self.core.window_node = node;
            if self.core.shard.is_some() {
                self.core.arena.begin_segment();
            }
            self.core.calm = match self.core.roles[node as usize] {
                NodeRole::Switch(s) if self.core.defer_ends => {
                    let sw = &mut self.sw.nodes[s as usize];
                    sw.mmu.calm(sw.window_port_bytes, sw.window_bytes)
                }
                _ => false,
            };
            while i < group_end || self.core.local.peek().is_some() {
                let (now, ev) = match self.core.local.peek() {
                    Some(l) if i == group_end || precedes(l, &events[i]) => {
                        n += 1;
                        self.core.local.pop()
                    }
                    _ => {
                        i += 1;
                        events[i - 1]
                    }
                };
                latest = latest.max(now);
                self.core.counters.events += 1;
                self.handle::<HOOKS>(now, ev);
                // Deflection's work, out of the hop (only in the hooked
                // instance: empty without DIBS).
                if HOOKS && !self.sw.deflector.refused.is_empty() {
                    self.at_switch().deflect_refused(now);
                }
            }
            if self.core.calm {
                let NodeRole::Switch(s) = self.core.roles[node as usize] else {
                    unreachable!("only a switch is calm")
                };
                self.at_switch().finish_deferred(s);
            }
            if self.core.shard.is_some() {
                self.core.note_segment(node);
            }
        }
        self.core.window_end = 0;
        self.core.now = latest.max(self.core.deferred_latest);
        self.core.window = w;
        n + (self.core.deferred_ends - deferred_before)
    }

    /// The one dispatch of a node's event to the node's pipeline, which
    /// borrows only its parts (`AtSwitch`, `AtHost`).
    #[inline(always)]
    pub(crate) fn handle<const HOOKS: bool>(&mut self, now: Time, ev: Ev) {
        match ev {
            Ev::TxDone(p) => {
                let port = &mut self.links.ports[p as usize];
                // Stale: the port started another frame at the instant
                // this one was due (and that frame has its own end, if it
                // needs one).
                if now >= port.busy_until {
                    port.tx_end = TxEnd::None;
                    self.kick(now, p);
                }
            }
            Ev::Arrive(p) => self.arrive::<HOOKS>(now, p),
            Ev::NicWake(h) => self.at_host().nic_wake(now, h),
            Ev::Timer(h) => self.at_host().host_timer(now, h),
            Ev::SwitchTimer(p) => self.at_switch().switch_timer(now, p),
            Ev::Late(p) => self.arrive_late::<HOOKS>(now, p),
        }
    }

    /// The earliest late packet of a reordered direction lands (see
    /// `link/impair.rs`).
    #[inline(never)]
    fn arrive_late<const HOOKS: bool>(&mut self, now: Time, p: u32) {
        let hdr = self.links.take_late(now, p);
        let port = &self.links.ports[p as usize];
        let (up, peer) = (port.up, port.peer);
        self.land::<HOOKS>(now, p, up, peer, hdr);
    }

    /// A frame reaching the end of port `p`'s wire: a control frame is
    /// applied to the receiving port (PFC) or handed to RCM
    /// (`switch/rcm/`), a packet lands (`land`). The wire's next arrival
    /// is asked for, and a host that gets a packet next asks for its QP.
    /// `HOOKS`: see `AtSwitch::forward`.
    pub(crate) fn arrive<const HOOKS: bool>(&mut self, now: Time, p: u32) {
        let port = &mut self.links.ports[p as usize];
        let (_, frame) = port.wire.pop_front().expect("arrival without a frame");
        let (up, peer) = (port.up, port.peer);
        if let Some(&(t, next)) = port.wire.front() {
            self.core.schedule(t, Ev::Arrive(p));
            // A host reads the packet and then its QP, last touched long
            // ago. The packets arriving in the window were asked for a
            // group ago (`prefetch_packets`); through the next one, ask for
            // its QP.
            if let (Frame::Packet(h1), End::Host(host)) = (next, peer) {
                if let Some(qp) = self.core.arena.dst_qp(h1.idx) {
                    self.hosts.nodes[host as usize].nic.prefetch_qp(qp);
                }
            }
        }
        let rx = p ^ 1;
        match frame {
            Frame::Control(ctrl) => match ctrl.kind() {
                CtrlKind::RcmNote { .. } => self.at_switch().rcm_receive(now, rx, p),
                CtrlKind::Pause { class } => self.arrive_pfc(now, p, peer, class, true),
                CtrlKind::Resume { class } => self.arrive_pfc(now, p, peer, class, false),
            },
            Frame::Packet(hdr) => self.land::<HOOKS>(now, p, up, peer, hdr),
        }
    }

    /// A PFC frame off port `p`'s wire reaches `peer`'s port `p ^ 1`
    /// (and the pcap trace, at a host). Inline in `arrive`: out of line
    /// (`#[inline(never)]`, cold or not, or left to the compiler, which
    /// did not inline it) measured +0.8-1.3% instructions per hop, the
    /// compiler laying out the window loop around it differently.
    #[inline(always)]
    fn arrive_pfc(&mut self, now: Time, p: u32, peer: End, class: u8, pause: bool) {
        let rx = p ^ 1;
        if self.core.calm {
            self.at_switch().catch_up(rx, (now, Ev::Arrive(p)));
        }
        if let (true, End::Host(h)) = (self.observe.capturing, peer) {
            self.at_host().capture_pfc(now, h, p, class, pause);
        }
        if self.observe.pfc_log.is_some() {
            self.log_pfc(now, rx, class, pause);
        }
        if self.links.ports[rx as usize].apply_pfc(now, class, pause) {
            self.kick(now, rx);
        }
    }

    /// Records a PFC frame port `rx` received (`[output] pfc`): out of
    /// line, so that the arrival keeps its layout (bench/instructions.sh:
    /// p128 line-rate 128 2,204,476,861 instructions against 2,206,364,508
    /// without the record; ws128 line-rate 100 1,214,992,623 against
    /// 1,213,519,333, +0.12%; the push inline cost +0.37% on p128).
    #[cold]
    #[inline(never)]
    fn log_pfc(&mut self, at: Time, port: u32, class: u8, pause: bool) {
        if let Some(log) = &mut self.observe.pfc_log {
            log.push(PfcEvent {
                at,
                port,
                class,
                pause,
            });
        }
    }

    /// A packet off port `p`'s wire (or out of its late heap,
    /// `link/impair.rs`) reaches `peer`: dropped if the link (`up`) went
    /// down, else delivered to the host (`host/driver.rs`) or forwarded
    /// by the switch (`switch/ingress.rs`).
    #[inline(always)]
    fn land<const HOOKS: bool>(&mut self, now: Time, p: u32, up: bool, peer: End, hdr: Hdr) {
        if !up {
            self.core.counters.drop(DropReason::LinkDown, hdr.wire());
            self.core.arena.free(hdr.idx);
            return;
        }
        match peer {
            End::Host(h) => self.at_host().deliver(now, h, hdr),
            End::Switch(s, in_local) => {
                self.at_switch()
                    .forward::<HOOKS>(now, s, p ^ 1, in_local, hdr)
            }
        }
    }

    /// Starts the next transmission on idle port `p`, by its node.
    pub(crate) fn kick(&mut self, now: Time, p: u32) {
        match self.links.ports[p as usize].owner {
            End::Switch(..) => self.at_switch().kick(now, p),
            End::Host(_) => self.at_host().kick(now, p),
        }
    }

    /// A switch's pipeline's view.
    #[inline(always)]
    pub(crate) fn at_switch(&mut self) -> &mut AtSwitch {
        AtSwitch::of(self)
    }

    /// A host's pipeline's view.
    #[inline(always)]
    pub(crate) fn at_host(&mut self) -> &mut AtHost {
        AtHost::of(self)
    }
}
