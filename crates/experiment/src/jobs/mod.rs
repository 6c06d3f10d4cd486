//! Collective jobs (AI training traffic): a [`Job`] is a plan of
//! collectives (`workload::collective`'s: one collective, or a trace's in
//! order) run closed-loop on a set of hosts for a number of iterations,
//! by the fabric application in `executor.rs`. This file holds the job,
//! adds jobs to a network, and reads back what they did as rows ([`Row`]:
//! one per collective and iteration, what `collectives.csv` and the
//! summaries are made of; `output.rs` writes them). Touches the network
//! through its public API only.

mod executor;
pub mod output;

pub use executor::{Iteration, JobApp};

use engine::time::{NS, SEC};
use engine::Time;
use fabric::{AppId, Network};
use workload::collective::Plan;

/// One job: what to run (besides its plan), where and when.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    pub name: String,
    /// Rank `r` runs on host `hosts[r]`.
    pub hosts: Vec<u32>,
    pub iterations: u32,
    /// Between a rank's iterations.
    pub compute: Time,
    /// When every rank starts its first iteration.
    pub start: Time,
}

/// Adds each job, with its plan, as an application of `net`; returns
/// their ids, in order. `log` keeps every transfer's times (tests).
pub fn add(net: &mut Network, jobs: Vec<(Job, Plan)>, log: bool) -> Result<Vec<AppId>, String> {
    let mut ids = Vec::with_capacity(jobs.len());
    for (i, (job, plan)) in jobs.into_iter().enumerate() {
        let start = job.start;
        let app = JobApp::new(job, plan, i as u32, log);
        ids.push(net.add_app(Box::new(app), start)?);
    }
    Ok(ids)
}

/// One collective of one iteration of one job, as `collectives.csv` has
/// it.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub job: String,
    pub iteration: u32,
    pub collective: &'static str,
    pub algorithm: &'static str,
    pub ranks: u32,
    pub bytes: u64,
    pub start: Time,
    /// None: the run ended before the collective did.
    pub end: Option<Time>,
    /// nccl-tests' bus bandwidth factor of the collective over its ranks.
    pub bus_factor: f64,
}

impl Row {
    pub fn time(&self) -> Option<Time> {
        self.end.map(|e| e - self.start)
    }

    /// The time in whole nanoseconds, as the end's less the start's (so
    /// that the columns add up).
    pub fn time_ns(&self) -> Option<u64> {
        self.end.map(|e| e / NS - self.start / NS)
    }

    /// Algorithm bandwidth: the buffer over the time, in Gb/s.
    pub fn algbw_gbps(&self) -> Option<f64> {
        let t = self.time()?.max(1);
        Some(self.bytes as f64 * 8.0 * SEC as f64 / t as f64 / 1e9)
    }

    /// Bus bandwidth as nccl-tests defines it: the algorithm bandwidth
    /// times the collective's factor ([`workload::collective::Collective::bus_factor`]).
    pub fn busbw_gbps(&self) -> Option<f64> {
        self.algbw_gbps().map(|a| a * self.bus_factor)
    }
}

/// A job's results: its rows, its iterations' times, and when it
/// completed.
#[derive(Clone, Debug, PartialEq)]
pub struct JobResult {
    pub name: String,
    /// Its collective and algorithm; "trace" and "simai" for a plan of
    /// several collectives.
    pub collective: &'static str,
    pub algorithm: &'static str,
    pub ranks: u32,
    /// The buffer per rank; a trace's: its collectives' summed.
    pub bytes: u64,
    /// Iterations asked for.
    pub iterations: u32,
    /// Each started iteration's start and end (None: not finished).
    pub iteration_spans: Vec<(Time, Option<Time>)>,
    pub rows: Vec<Row>,
    /// From its start to its last iteration's end (None: not finished).
    pub completion: Option<Time>,
    /// Why it stopped early, if it did.
    pub error: Option<String>,
}

/// What job `id` of `net` did.
pub fn result(net: &Network, id: AppId) -> Option<JobResult> {
    let app = net.app::<JobApp>(id)?;
    let (job, segs) = (app.job(), &app.plan().segments);
    let rows: Vec<Row> = app
        .segments()
        .iter()
        .enumerate()
        .filter(|(_, span)| span.start < Time::MAX)
        .map(|(i, span)| {
            let s = segs[i % segs.len()];
            Row {
                job: job.name.clone(),
                iteration: (i / segs.len()) as u32,
                collective: s.collective.name(),
                algorithm: s.algorithm.name(),
                ranks: s.ranks,
                bytes: s.bytes,
                start: span.start,
                end: span.end,
                bus_factor: s.collective.bus_factor(s.ranks),
            }
        })
        .collect();
    let its = app.iterations();
    let completion = match its.last() {
        Some(last) if app.done() => last.end.map(|e| e - job.start),
        _ => None,
    };
    let (collective, algorithm) = match segs[..] {
        [s] => (s.collective.name(), s.algorithm.name()),
        _ => ("trace", "simai"),
    };
    Some(JobResult {
        name: job.name.clone(),
        collective,
        algorithm,
        ranks: app.plan().ranks,
        bytes: segs.iter().map(|s| s.bytes).sum(),
        iterations: job.iterations,
        iteration_spans: its.iter().map(|i| (i.start, i.end)).collect(),
        rows,
        completion,
        error: app.error().map(str::to_string),
    })
}
