//! Running a built scenario to its end, with a progress callback, and
//! collecting the results every output is made from. A run without a stop
//! time that makes no progress for a long simulated span (every remaining
//! flow stuck behind a dead link or total loss) ends, naming the stuck
//! flows, instead of running forever.

use crate::build::Built;
use engine::time::SEC;
use engine::Time;
use fabric::{Counters, FlowResult, Network, RunState};
use std::time::Instant;

/// Progress seen by the callback every few hundred thousand events.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub sim_time: Time,
    pub events: u64,
    pub flows_done: usize,
    pub flows: usize,
}

/// What a finished run left behind.
pub struct Outcome {
    pub net: Network,
    pub classes: Vec<String>,
    pub state: RunState,
    pub end_time: Time,
    /// Wall-clock seconds of the event loop (not written to files: outputs
    /// must be identical run to run).
    pub loop_wall_s: f64,
    /// Set when the run was ended for making no progress: which flows were
    /// stuck, and for how long. The outcome is still complete up to then.
    pub stalled: Option<String>,
    /// The collective jobs' applications, in `[[jobs]]` order.
    pub jobs: Vec<fabric::AppId>,
}

const CHUNK: u64 = 200_000;

/// A run without a stop time ends when, for this many times the largest
/// retransmission timeout of simulated time (and at least
/// [`MIN_STALL_SPAN`]), no flow finished and no packet was delivered to
/// any host, once every flow has started and every fault has happened.
pub const STALL_RTOS: Time = 64;
/// The shortest no-progress span that ends a run (10 ms).
pub const MIN_STALL_SPAN: Time = 10 * engine::time::MS;

/// Watches a run's counters between chunks for progress.
struct Watch {
    span: Time,
    /// Nothing is stuck before every flow and job started and every fault
    /// happened.
    quiet_from: Time,
    last: (usize, u64),
    since: Time,
    /// The last check saw no progress: run in short spans of simulated
    /// time until the limit is reached or progress resumes.
    suspect: bool,
    /// The end of the last short span.
    cursor: Time,
}

impl Watch {
    fn new(net: &Network, max_rto: Time, quiet_until: Time) -> Watch {
        let starts = net.flows().iter().map(|f| f.flow.start).max().unwrap_or(0);
        Watch {
            span: max_rto.saturating_mul(STALL_RTOS).max(MIN_STALL_SPAN),
            quiet_from: starts.max(quiet_until),
            last: (0, 0),
            since: 0,
            suspect: false,
            cursor: 0,
        }
    }

    /// Where the next chunk stops: `until`, or while no progress is seen,
    /// a short span further (so that a stall is reported after about the
    /// limit, not after a whole chunk of timer events). Runs that progress
    /// between chunks never get here, so their windows are unchanged.
    fn chunk_until(&mut self, now: Time, until: Time) -> Time {
        if !self.suspect {
            return until;
        }
        self.cursor = self.cursor.max(now).saturating_add(self.span / 8);
        self.cursor.min(until)
    }

    /// After a chunk: the stuck flows' description if the run is stalled.
    fn check(&mut self, net: &Network, jobs: &[fabric::AppId]) -> Option<String> {
        let now = net.now();
        let seen = (net.flows_done(), net.counters().delivered_packets);
        if seen != self.last || now < self.quiet_from {
            self.last = seen;
            // The change happened at the latest now: count from there.
            self.since = now.max(self.quiet_from);
            self.suspect = false;
            return None;
        }
        self.suspect = true;
        let idle = now.saturating_sub(self.since);
        if idle < self.span {
            return None;
        }
        let stuck: Vec<String> = net
            .flows()
            .iter()
            .enumerate()
            .filter(|(_, f)| f.finish.is_none())
            .map(|(i, f)| format!("flow {i} (host {} -> host {})", f.flow.src, f.flow.dst))
            .collect();
        let shown = stuck
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        let more = if stuck.len() > 10 {
            format!(" and {} more", stuck.len() - 10)
        } else {
            String::new()
        };
        let jobs: Vec<&str> = jobs
            .iter()
            .filter_map(|&id| net.app::<crate::jobs::JobApp>(id))
            .filter(|j| !j.done())
            .map(|j| j.job().name.as_str())
            .collect();
        let jobs = if jobs.is_empty() {
            String::new()
        } else {
            format!("; jobs not completed: {}", jobs.join(", "))
        };
        Some(format!(
            "no progress for {:.3} ms of simulated time (no flow finished, no packet \
             delivered; a dead link without another path, or total loss?): {} of {} flows \
             stuck: {shown}{more}{jobs}; give stop_ms to end such a run at a fixed time",
            idle as f64 / engine::time::MS as f64,
            stuck.len(),
            net.flows().len(),
        ))
    }
}

pub fn run(built: Built, mut progress: impl FnMut(Progress)) -> Outcome {
    let Built {
        mut net,
        classes,
        stop,
        max_rto,
        quiet_until,
        jobs,
    } = built;
    let until = stop.unwrap_or(Time::MAX);
    let mut watch = stop
        .is_none()
        .then(|| Watch::new(&net, max_rto, quiet_until));
    let mut stalled = None;
    let t0 = Instant::now();
    let state = loop {
        let chunk_until = match watch.as_mut() {
            Some(w) => w.chunk_until(net.now(), until),
            None => until,
        };
        let mut s = net.run_until(chunk_until, CHUNK);
        if s == RunState::TimeLimit && chunk_until < until {
            // Only the short span ended.
            s = RunState::Budget;
        }
        progress(Progress {
            sim_time: net.now(),
            events: net.counters().events,
            flows_done: net.flows_done(),
            flows: net.flows().len(),
        });
        if s != RunState::Budget {
            break s;
        }
        if let Some(msg) = watch.as_mut().and_then(|w| w.check(&net, &jobs)) {
            stalled = Some(msg);
            break RunState::Stuck;
        }
    };
    let loop_wall_s = t0.elapsed().as_secs_f64();
    let end_time = match state {
        RunState::TimeLimit => until,
        _ => net.now(),
    };
    Outcome {
        net,
        classes,
        state,
        end_time,
        loop_wall_s,
        stalled,
        jobs,
    }
}

impl Outcome {
    pub fn counters(&self) -> &Counters {
        self.net.counters()
    }

    pub fn flows(&self) -> &[FlowResult] {
        self.net.flows()
    }

    /// Goodput of a finished flow in bits per second (payload over FCT).
    pub fn goodput_bps(f: &FlowResult) -> Option<f64> {
        f.fct()
            .map(|t| f.flow.bytes as f64 * 8.0 * SEC as f64 / t.max(1) as f64)
    }
}
