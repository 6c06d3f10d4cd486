//! What collective jobs leave in a run's outputs: `collectives.csv` (one
//! row per job and iteration, the columns nccl-tests' users read), each
//! job's block of `summary.json` ([`JobSummary`]: its iteration times and
//! completion time) and its line of the readable summary. A run without
//! jobs writes none of them. Touches only the results it is given.

use super::{JobResult, Row};
use engine::time::NS;
use serde::Serialize;

/// The header of `collectives.csv`.
pub const COLUMNS: [&str; 11] = [
    "job",
    "iteration",
    "collective",
    "algorithm",
    "ranks",
    "bytes",
    "start_ns",
    "end_ns",
    "time_ns",
    "algbw_gbps",
    "busbw_gbps",
];

/// `collectives.csv`: every job's iterations, jobs in `[[jobs]]` order;
/// the end, time and bandwidths of an iteration the run did not finish
/// are empty. Bandwidths in Gb/s (bits; nccl-tests prints GB/s, bytes).
pub fn csv(results: &[JobResult]) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(COLUMNS)?;
    let opt = |x: Option<String>| x.unwrap_or_default();
    for r in results {
        for row in &r.rows {
            w.write_record([
                row.job.clone(),
                row.iteration.to_string(),
                row.collective.into(),
                row.algorithm.into(),
                row.ranks.to_string(),
                row.bytes.to_string(),
                (row.start / NS).to_string(),
                opt(row.end.map(|e| (e / NS).to_string())),
                opt(row.time_ns().map(|t| t.to_string())),
                opt(row.algbw_gbps().map(|b| format!("{b:.4}"))),
                opt(row.busbw_gbps().map(|b| format!("{b:.4}"))),
            ])?;
        }
    }
    w.into_inner().map_err(|e| e.into_error().into())
}

/// A job in `summary.json`.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct JobSummary {
    pub name: String,
    pub collective: &'static str,
    pub algorithm: &'static str,
    pub ranks: u32,
    pub bytes: u64,
    /// Iterations asked for.
    pub iterations: u32,
    /// Each started iteration's time (null: not finished by the end).
    pub iteration_time_ns: Vec<Option<u64>>,
    /// From the job's start to its last iteration's end (null: not
    /// finished).
    pub completion_time_ns: Option<u64>,
    /// The mean bus bandwidth of its finished iterations, Gb/s.
    pub busbw_gbps_mean: Option<f64>,
    /// Why it stopped early, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl JobSummary {
    pub fn of(r: &JobResult) -> JobSummary {
        let bus: Vec<f64> = r.rows.iter().filter_map(Row::busbw_gbps).collect();
        JobSummary {
            name: r.name.clone(),
            collective: r.collective,
            algorithm: r.algorithm,
            ranks: r.ranks,
            bytes: r.bytes,
            iterations: r.iterations,
            iteration_time_ns: (r.iteration_spans.iter())
                .map(|&(s, e)| e.map(|e| e / NS - s / NS))
                .collect(),
            completion_time_ns: r.completion.map(|t| t / NS),
            busbw_gbps_mean: (!bus.is_empty())
                .then(|| (bus.iter().sum::<f64>() / bus.len() as f64 * 1e4).round() / 1e4),
            error: r.error.clone(),
        }
    }

    /// The readable summary's line over several jobs: how many completed
    /// and their completion times (lowest, median, highest: the CDF's
    /// ends and middle) and bus bandwidths; None for fewer than two.
    pub fn render_all(jobs: &[JobSummary]) -> Option<String> {
        if jobs.len() < 2 {
            return None;
        }
        let mut done: Vec<f64> = (jobs.iter())
            .filter_map(|j| j.completion_time_ns)
            .map(|t| t as f64 / 1e3)
            .collect();
        done.sort_by(f64::total_cmp);
        let mut s = format!("{} of {} completed", done.len(), jobs.len());
        if let (Some(first), Some(last)) = (done.first(), done.last()) {
            let median = done[(done.len() - 1) / 2];
            s += &format!(", completion (us) min {first:.2} median {median:.2} max {last:.2}");
        }
        let bus: Vec<f64> = jobs.iter().filter_map(|j| j.busbw_gbps_mean).collect();
        if let (Some(lo), Some(hi)) = (
            bus.iter().copied().reduce(f64::min),
            bus.iter().copied().reduce(f64::max),
        ) {
            s += &format!(", busbw (Gb/s) min {lo:.2} max {hi:.2}");
        }
        Some(s)
    }

    /// Its line of the readable summary.
    pub fn render(&self) -> String {
        let times: Vec<f64> = self
            .iteration_time_ns
            .iter()
            .flatten()
            .map(|&t| t as f64 / 1e3)
            .collect();
        let mut s = format!(
            "{} {}, {} ranks, {} B: {} of {} iterations",
            self.collective,
            self.algorithm,
            self.ranks,
            self.bytes,
            times.len(),
            self.iterations
        );
        if let (Some(min), Some(max)) = (
            times.iter().copied().reduce(f64::min),
            times.iter().copied().reduce(f64::max),
        ) {
            let mean = times.iter().sum::<f64>() / times.len() as f64;
            s += &format!(", iteration (us) mean {mean:.2} min {min:.2} max {max:.2}");
            // Over time: the first finished iteration's and the last's.
            if let [first, .., last] = times[..] {
                s += &format!(" first {first:.2} last {last:.2}");
            }
        }
        if let Some(b) = self.busbw_gbps_mean {
            s += &format!(", busbw {b:.2} Gb/s");
        }
        match self.completion_time_ns {
            Some(t) => s += &format!(", completed in {:.2} us", t as f64 / 1e3),
            None => s += ", not completed",
        }
        if let Some(e) = &self.error {
            s += &format!(" (stopped: {e})");
        }
        s
    }
}
