//! Collective jobs (AI training traffic): a [`Job`] is a collective
//! (`workload::collective`'s plan) run closed-loop on a set of hosts for
//! a number of iterations, by the fabric application in `executor.rs`.
//! This file holds the job, adds jobs to a network, and reads back what
//! they did as rows ([`Row`]: one per job and iteration, what
//! `collectives.csv` and the summaries are made of; `output.rs` writes
//! them). Touches the network through its public API only.

mod executor;
pub mod output;

pub use executor::{Iteration, JobApp};

use engine::time::{NS, SEC};
use engine::Time;
use fabric::{AppId, Network};
use workload::collective::{Plan, Spec};

/// One job: what to run, where and when.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    pub name: String,
    pub spec: Spec,
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

/// One iteration of one job, as `collectives.csv` has it.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub job: String,
    pub iteration: u32,
    pub collective: &'static str,
    pub algorithm: &'static str,
    pub ranks: u32,
    pub bytes: u64,
    pub start: Time,
    /// None: the run ended before the iteration did.
    pub end: Option<Time>,
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
    pub fn busbw_gbps(&self, factor: f64) -> Option<f64> {
        self.algbw_gbps().map(|a| a * factor)
    }
}

/// A job's results: its rows, its bus factor, and when it completed.
#[derive(Clone, Debug, PartialEq)]
pub struct JobResult {
    pub name: String,
    /// Iterations asked for.
    pub iterations: u32,
    pub rows: Vec<Row>,
    pub bus_factor: f64,
    /// From its start to its last iteration's end (None: not finished).
    pub completion: Option<Time>,
    /// Why it stopped early, if it did.
    pub error: Option<String>,
}

/// What job `id` of `net` did.
pub fn result(net: &Network, id: AppId) -> Option<JobResult> {
    let app = net.app::<JobApp>(id)?;
    let (job, spec) = (app.job(), app.job().spec);
    let rows: Vec<Row> = app
        .iterations()
        .iter()
        .enumerate()
        .map(|(i, it)| Row {
            job: job.name.clone(),
            iteration: i as u32,
            collective: spec.collective.name(),
            algorithm: spec.algorithm.name(),
            ranks: spec.ranks,
            bytes: spec.bytes,
            start: it.start,
            end: it.end,
        })
        .collect();
    let completion = match rows.last() {
        Some(last) if app.done() => last.end.map(|e| e - job.start),
        _ => None,
    };
    Some(JobResult {
        name: job.name.clone(),
        iterations: job.iterations,
        bus_factor: spec.collective.bus_factor(spec.ranks),
        rows,
        completion,
        error: app.error().map(str::to_string),
    })
}
