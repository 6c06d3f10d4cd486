//! The event loop: [`Network::run_until`] runs the global events
//! (applications' starts and fabric timers, flow starts among them;
//! faults; samples) alone and everything else in windows of the
//! lookahead, node by node (`window.rs`); the deferred transmission ends
//! of calm switches (`catch_up`); the packets a switch refused during an
//! event, handed to DIBS after it (`switch/deflect.rs`); and the one
//! dispatch of a node's events to its components (`handle`). Touches the queues and the window's
//! state; what an event does belongs to `link/`, `switch/` and `host/`.

use crate::link::port::TxEnd;
use crate::net::event::{node_of, Ev, Global};
use crate::net::window::{precedes, ByNode};
use crate::net::{Network, NodeRole, RunState};
use engine::Time;

impl Network {
    /// Runs until every flow and application is done, simulated time
    /// passes `until`, or `budget` events have been processed.
    pub fn run_until(&mut self, until: Time, budget: u64) -> RunState {
        let mut n = 0;
        loop {
            if self.all_done() && self.has_work() {
                self.core.now = self.last_finish();
                return RunState::Done;
            }
            if n >= budget {
                return RunState::Budget;
            }
            let next = self.core.q.peek_time();
            let global = self.core.globals.peek_time();
            if let Some(tg) = global.filter(|&tg| next.is_none_or(|t| tg <= t)) {
                if tg > until {
                    return RunState::TimeLimit;
                }
                let (_, g) = self.core.globals.pop().expect("peeked");
                self.core.now = self.core.now.max(tg);
                n += 1;
                self.core.counters.events += 1;
                match g {
                    Global::AppStart(a) => self.app_start(tg, a),
                    Global::AppTimer(a, token) => self.app_fabric_timer(tg, a, token),
                    Global::Fault(i) => self.apply_fault(tg, i),
                    Global::Failures(i) => self.apply_failures(tg, i),
                    Global::Sample => self.sample(tg),
                }
                continue;
            }
            let Some(t0) = next else {
                return if self.all_done() {
                    RunState::Done
                } else {
                    RunState::Stuck
                };
            };
            if t0 > until {
                return RunState::TimeLimit;
            }
            let end = t0
                .saturating_add(self.core.lookahead)
                .min(global.unwrap_or(Time::MAX))
                .min(until.saturating_add(1));
            // The loop compiled with the hooks or without: those of a
            // balancer that acts beyond picking a hop, of SRPT and of DIBS
            // cost a run without them nothing.
            n += if self.sw.hooks {
                self.run_window::<true>(end)
            } else {
                self.run_window::<false>(end)
            };
        }
    }

    /// Runs every event due before `end` (see `window.rs`), node by node;
    /// returns how many. `HOOKS`: see `Network::forward`.
    pub(crate) fn run_window<const HOOKS: bool>(&mut self, end: Time) -> u64 {
        let mut w = std::mem::replace(&mut self.core.window, ByNode::new(0));
        let deferred_before = self.core.deferred_ends;
        w.clear();
        let (port_node, host_node) = (&self.core.port_node, &self.core.host_node);
        self.core.q.drain_before(end, |t, ev| {
            w.push(node_of(port_node, host_node, ev), t, ev)
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
                self.prefetch_ports(evs);
            }
            if let Some(evs) = span(g + 2) {
                self.prefetch_slots(evs);
            }
            if let Some(evs) = span(g + 1) {
                self.prefetch_packets(evs, end);
            }
            self.core.window_node = node;
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
                    self.deflect_refused(now);
                }
            }
            if self.core.calm {
                self.finish_deferred(node);
            }
        }
        self.core.window_end = 0;
        self.core.now = latest.max(self.core.deferred_latest);
        self.core.window = w;
        n + (self.core.deferred_ends - deferred_before)
    }

    /// Runs the calm switch's deferred transmission ends left at the end
    /// of its share of the window (all due in it).
    #[inline(never)]
    pub(crate) fn finish_deferred(&mut self, node: u32) {
        let NodeRole::Switch(s) = self.core.roles[node as usize] else {
            unreachable!("only a switch is calm")
        };
        // Anything at the window's end comes after every end due in it.
        let end = (self.core.window_end, Ev::NicWake(0));
        for k in 0..self.sw.nodes[s as usize].ports.len() {
            let p = self.sw.nodes[s as usize].ports[k];
            self.catch_up(p, end);
        }
        self.core.calm = false;
    }

    /// Runs port `p`'s deferred transmission ends due before event `ev`
    /// (the one running): a calm switch's ports depend on one another only
    /// through the MMU's sums (`Mmu::calm`), so each may run late, as long
    /// as it runs before anything reads or changes its port.
    #[inline(always)]
    pub(crate) fn catch_up(&mut self, p: u32, ev: (Time, Ev)) {
        while self.links.ports[p as usize].tx_end == TxEnd::Deferred {
            let at = self.links.ports[p as usize].busy_until;
            if !precedes(&(at, Ev::TxDone(p)), &ev) {
                break;
            }
            self.links.ports[p as usize].tx_end = TxEnd::None;
            self.core.counters.events += 1;
            self.core.deferred_ends += 1;
            self.core.deferred_latest = self.core.deferred_latest.max(at);
            self.kick(at, p);
        }
    }

    /// Asks for port `p`'s transmission end at `at` (its `busy_until`).
    #[inline(always)]
    pub(crate) fn schedule_end(&mut self, p: u32, at: Time) {
        if self.core.calm && at < self.core.window_end {
            self.links.ports[p as usize].tx_end = TxEnd::Deferred;
        } else {
            self.links.ports[p as usize].tx_end = TxEnd::Scheduled;
            self.core.schedule(at, Ev::TxDone(p));
        }
    }

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
            Ev::NicWake(h) => self.nic_wake(now, h),
            Ev::Timer(h) => self.host_timer(now, h),
            Ev::SwitchTimer(p) => self.switch_timer(now, p),
            Ev::Late(p) => self.arrive_late::<HOOKS>(now, p),
        }
    }
}
