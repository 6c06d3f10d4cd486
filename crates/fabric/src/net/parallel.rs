//! The sharded event loop (`shard.rs` says what a shard is): every shard's
//! copy of the network runs on its own thread the loop `run.rs` runs on
//! one, in step. Each step is one global event or one window, the same in
//! every shard; between steps, a barrier. Before it, each shard posts the
//! frames its cut ports sent and reports its earliest event, its events
//! run, its finished flows and its packets alive; after it, each takes the
//! frames sent to it and sums the reports, so that every shard makes the
//! same choice for the next step as the one loop would (a global event or
//! a window, its end, whether the run is done, out of budget or stuck).
//!
//! Reports and mail are double-buffered by the step's parity: a shard
//! writes this step's while others may still read the last one's, so one
//! barrier a step suffices.

use crate::net::event::Global;
use crate::net::shard::Mail;
use crate::net::{Network, RunState};
use engine::Time;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// What a shard tells the others after a step.
#[derive(Clone, Default)]
struct Report {
    /// Its earliest pending event, or frame sent to another shard.
    next: Option<Time>,
    /// Events the step ran here.
    events: u64,
    /// Flows finished here, and the last one's finish.
    done: usize,
    last_finish: Time,
    /// The latest event time handled here.
    now: Time,
    /// Packets made here less those ended here (summed: the packets
    /// alive), and how the step changed them: each node's share of a
    /// window, or a global event's (`Arena::end_segment`).
    live: i64,
    segments: Vec<(u32, i64, i64)>,
}

/// A barrier that spins (a step is a few microseconds of work: a sleeping
/// barrier's wake-up would cost more), yielding after a while so that more
/// threads than cores still progress.
struct SpinBarrier {
    n: usize,
    count: AtomicUsize,
    generation: AtomicUsize,
}

impl SpinBarrier {
    fn wait(&self) {
        let g = self.generation.load(Ordering::Acquire);
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.count.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == g {
            if spins < 2000 {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// What the shards share: the barrier, the reports and the mail.
struct Lockstep {
    n: usize,
    barrier: SpinBarrier,
    /// By shard, then parity.
    reports: Vec<[Mutex<Report>; 2]>,
    /// By sender * n + receiver, then parity.
    mail: Vec<[Mutex<Mail>; 2]>,
}

impl Lockstep {
    fn new(n: usize) -> Lockstep {
        Lockstep {
            n,
            barrier: SpinBarrier {
                n,
                count: AtomicUsize::new(0),
                generation: AtomicUsize::new(0),
            },
            reports: (0..n).map(|_| Default::default()).collect(),
            mail: (0..n * n).map(|_| Default::default()).collect(),
        }
    }

    /// The reports of parity `par` summed (the earliest of the events;
    /// the segments by node), and the most packets alive at once in the
    /// step, as one thread would have them: a window runs node by node.
    fn total(&self, par: usize) -> (Report, i64) {
        let mut t = Report::default();
        for r in &self.reports {
            let r = r[par].lock().expect("a shard panicked");
            t.next = match (t.next, r.next) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            t.events += r.events;
            t.done += r.done;
            t.last_finish = t.last_finish.max(r.last_finish);
            t.now = t.now.max(r.now);
            t.live += r.live;
            t.segments.extend_from_slice(&r.segments);
        }
        // Stable: a global event's segments (all node 0) in shard order.
        t.segments.sort_by_key(|s| s.0);
        let mut alive = t.live - t.segments.iter().map(|s| s.1).sum::<i64>();
        let mut peak = t.live;
        for &(_, delta, rise) in &t.segments {
            peak = peak.max(alive + rise);
            alive += delta;
        }
        (t, peak)
    }
}

impl Network {
    /// `run_until` on the shards' threads (this network is shard 0); the
    /// shards are merged back into this one when the run ends (any state
    /// but `Budget`).
    pub(crate) fn run_sharded(&mut self, until: Time, budget: u64) -> RunState {
        let mut peers = std::mem::take(&mut self.peers);
        let sync = Lockstep::new(peers.len() + 1);
        let state = std::thread::scope(|s| {
            for (k, p) in peers.iter_mut().enumerate() {
                let sync = &sync;
                s.spawn(move || p.lockstep(sync, k + 1, until, budget));
            }
            self.lockstep(&sync, 0, until, budget)
        });
        if state == RunState::Budget {
            let mut totals = self.core.counters.clone();
            for p in &peers {
                totals.add(&p.core.counters);
            }
            self.core.shard.as_mut().expect("sharded").totals = totals;
        }
        self.peers = peers;
        if state != RunState::Budget {
            self.gather();
        }
        state
    }

    /// This shard's report after a step, with the earliest frame it sent.
    fn report(&mut self, events: u64, sent: Option<Time>) -> Report {
        let next = match (self.core.q.peek_time(), sent) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let f = &self.hosts.flows;
        Report {
            next,
            events,
            done: f.done,
            last_finish: f.last_finish,
            now: self.core.now,
            live: self.core.arena.made_less_ended(),
            segments: std::mem::take(&mut self.core.shard.as_mut().expect("sharded").segments),
        }
    }

    /// Posts this step's mail and report, and waits for the other shards.
    fn end_step(&mut self, sync: &Lockstep, me: usize, par: usize, events: u64, out: &mut [Mail]) {
        let sent = self.post_mail(out);
        for (to, m) in out.iter_mut().enumerate() {
            if to != me {
                std::mem::swap(
                    &mut *sync.mail[me * sync.n + to][par]
                        .lock()
                        .expect("a shard panicked"),
                    m,
                );
            }
        }
        *sync.reports[me][par].lock().expect("a shard panicked") = self.report(events, sent);
        sync.barrier.wait();
    }

    /// The loop of `run_until` (`run.rs`), run by shard `me` in step with
    /// the others.
    fn lockstep(&mut self, sync: &Lockstep, me: usize, until: Time, budget: u64) -> RunState {
        let mut out: Vec<Mail> = (0..sync.n).map(|_| Mail::default()).collect();
        let mut step = 0usize;
        self.end_step(sync, me, 0, 0, &mut out);
        let mut n = 0;
        let flows = self.hosts.flows.records.len();
        let has_work = self.hosts.has_work();
        loop {
            let last = step & 1;
            step += 1;
            let par = step & 1;
            for from in (0..sync.n).filter(|&f| f != me) {
                let mut m = sync.mail[from * sync.n + me][last]
                    .lock()
                    .expect("a shard panicked");
                self.take_mail(&mut m);
            }
            let (r, peak) = sync.total(last);
            self.core.shard.as_mut().expect("sharded").step += 1;
            n += r.events;
            self.core.now = r.now;
            self.core.arena.note_peak(peak.max(0) as usize);
            let all_done = r.done == flows;
            if all_done && has_work {
                self.core.now = r.last_finish;
                return RunState::Done;
            }
            if n >= budget {
                return RunState::Budget;
            }
            let global = self.core.globals.peek_time();
            let events = if let Some(tg) = global.filter(|&tg| r.next.is_none_or(|t| tg <= t)) {
                if tg > until {
                    return RunState::TimeLimit;
                }
                let (_, g): (Time, Global) = self.core.globals.pop().expect("peeked");
                self.core.now = self.core.now.max(tg);
                self.global_in_shard(tg, g);
                (me == 0) as u64
            } else {
                let Some(t0) = r.next else {
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
                if self.sw.hooks {
                    self.run_window::<true>(end)
                } else {
                    self.run_window::<false>(end)
                }
            };
            self.end_step(sync, me, par, events, &mut out);
        }
    }
}
