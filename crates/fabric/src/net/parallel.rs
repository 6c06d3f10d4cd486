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

/// A shard's side of the loop (`Network::run_steps`): the shared state,
/// its place, the step it is at and its outgoing mail.
pub(crate) struct Step<'a> {
    sync: &'a Lockstep,
    pub me: usize,
    step: usize,
    out: Vec<Mail>,
}

/// What every shard decides the next step from.
pub(crate) struct Summed {
    pub all_done: bool,
    pub next: Option<Time>,
    pub last_finish: Time,
    /// Events the last step ran, over every shard.
    pub events: u64,
}

impl Network {
    /// `run_until` on the shards' threads (this network is shard 0); the
    /// shards are merged back into this one when the run ends (any state
    /// but `Budget`).
    pub(crate) fn run_sharded(&mut self, until: Time, budget: u64) -> RunState {
        let mut peers = std::mem::take(&mut self.peers);
        let sync = Lockstep::new(peers.len() + 1);
        let run = |net: &mut Network, me: usize| {
            let mut step = Step {
                sync: &sync,
                me,
                step: 0,
                out: (0..sync.n).map(|_| Mail::default()).collect(),
            };
            net.end_step(&mut step, 0);
            net.run_steps(until, budget, Some(&mut step))
        };
        let state = std::thread::scope(|s| {
            for (k, p) in peers.iter_mut().enumerate() {
                let run = &run;
                s.spawn(move || run(p, k + 1));
            }
            run(self, 0)
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

    /// A step begins: the mail of the last one taken in, the reports
    /// summed, the peak of packets alive noted.
    #[cold]
    #[inline(never)]
    pub(crate) fn begin_step(&mut self, step: &mut Step) -> Summed {
        let (sync, me) = (step.sync, step.me);
        let last = step.step & 1;
        step.step += 1;
        for from in (0..sync.n).filter(|&f| f != me) {
            let mut m = sync.mail[from * sync.n + me][last]
                .lock()
                .expect("a shard panicked");
            self.take_mail(&mut m);
        }
        let (r, peak) = sync.total(last);
        self.core.shard.as_mut().expect("sharded").step += 1;
        self.core.now = r.now;
        self.core.arena.note_peak(peak.max(0) as usize);
        Summed {
            all_done: r.done == self.hosts.flows.records.len(),
            next: r.next,
            last_finish: r.last_finish,
            events: r.events,
        }
    }

    /// A step ends: this shard's mail and report posted, then the barrier.
    #[cold]
    #[inline(never)]
    pub(crate) fn end_step(&mut self, step: &mut Step, events: u64) {
        let (sync, me, par) = (step.sync, step.me, step.step & 1);
        let sent = self.post_mail(&mut step.out);
        for (to, m) in step.out.iter_mut().enumerate() {
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
}
