//! Measurement in steady state: `[output] warmup_us` (a run's FCT
//! statistics count only the flows that start at or after it, so the
//! fabric's fill from empty is left out) and `[output] fct_window_us` (the
//! mean FCT per window of start time, `fct_over_time.csv`, so a reader
//! sees whether the headline is flat at the end or still climbing). Also
//! what the counted flows offered and what of them was delivered, and how
//! many did not finish, to read beside their FCTs: a scheme that leaves
//! flows unfinished looks better by FCT than it is. Reads a run's flows;
//! touches no file.

use engine::stats::Summary;
use engine::time::{to_ns_f64, Time, US};
use fabric::FlowResult;
use serde::Serialize;

/// The most windows `fct_window_us` may cut a run's flow starts into.
pub const MAX_FCT_WINDOWS: u64 = 100_000;

/// Which flows a run's statistics count, and the windows of its FCT over
/// time (`None`: no `fct_over_time`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Measure {
    pub warmup: Time,
    pub window: Option<Time>,
}

impl Measure {
    /// A flow is counted when it starts at or after the warm-up.
    pub fn counts(&self, f: &FlowResult) -> bool {
        f.flow.start >= self.warmup
    }
}

/// The counted flows (summary.json's `measured`, present with `warmup_us`).
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Measured {
    pub warmup_us: f64,
    /// Flows that start at or after the warm-up (flows.csv: `start_ns >=
    /// warmup_us * 1000`), and of them those that finished and not.
    pub flows: usize,
    pub flows_finished: usize,
    pub flows_unfinished: usize,
    /// Their bytes over the span of their starts (the warm-up to the last
    /// start): the load they offered.
    pub offered_gbps: Option<f64>,
    /// Their bytes delivered (flows.csv's `delivered_bytes`) over the
    /// warm-up to the run's end.
    pub delivered_gbps: f64,
}

/// One window of start time (`fct_over_time.csv`, summary.json's
/// `fct_over_time`): the flows that started in it, how many finished,
/// and the finished ones' mean FCT and slowdown.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct FctWindow {
    pub from_us: f64,
    pub to_us: f64,
    pub flows: usize,
    pub flows_finished: usize,
    pub fct_mean_ns: Option<f64>,
    pub slowdown_mean: Option<f64>,
}

fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

/// The `measured` block of a run whose flows are `flows` and which ended
/// at `end` (None without a warm-up).
pub fn measured(m: &Measure, flows: &[FlowResult], end: Time) -> Option<Measured> {
    if m.warmup == 0 {
        return None;
    }
    let counted: Vec<&FlowResult> = flows.iter().filter(|f| m.counts(f)).collect();
    let finished = counted.iter().filter(|f| f.finish.is_some()).count();
    let bytes: u64 = counted.iter().map(|f| f.flow.bytes).sum();
    let last_start = counted.iter().map(|f| f.flow.start).max();
    let offered = last_start
        .filter(|&t| t > m.warmup)
        .map(|t| round4(bytes as f64 * 8.0 / to_ns_f64(t - m.warmup)));
    let delivered: u64 = counted.iter().map(|f| f.delivered).sum();
    Some(Measured {
        warmup_us: m.warmup as f64 / US as f64,
        flows: counted.len(),
        flows_finished: finished,
        flows_unfinished: counted.len() - finished,
        offered_gbps: offered,
        delivered_gbps: round4(
            delivered as f64 * 8.0 / to_ns_f64(end.saturating_sub(m.warmup).max(1)),
        ),
    })
}

/// The windows of start time from 0 to the last flow's start (every
/// flow, the warm-up's too: the climb is what they show).
pub fn over_time(m: &Measure, flows: &[FlowResult]) -> Option<Vec<FctWindow>> {
    let w = m.window?;
    let last = flows.iter().map(|f| f.flow.start).max()?;
    let n = (last / w + 1) as usize;
    let mut fct: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut slow: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut started = vec![0usize; n];
    for f in flows {
        let i = (f.flow.start / w) as usize;
        started[i] += 1;
        if let (Some(t), Some(s)) = (f.fct(), f.slowdown()) {
            fct[i].push(to_ns_f64(t));
            slow[i].push(s.max(1.0));
        }
    }
    let mean = |v: &[f64]| (!v.is_empty()).then(|| round4(Summary::of(v).mean));
    Some(
        (0..n)
            .map(|i| FctWindow {
                from_us: (i as u64 * w) as f64 / US as f64,
                to_us: ((i as u64 + 1) * w) as f64 / US as f64,
                flows: started[i],
                flows_finished: fct[i].len(),
                fct_mean_ns: mean(&fct[i]),
                slowdown_mean: mean(&slow[i]),
            })
            .collect(),
    )
}

/// `fct_over_time.csv`: a header, then one line per window (empty cells
/// for a window of no finished flow).
pub fn csv(windows: &[FctWindow]) -> String {
    let cell = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
    let mut out = String::from("from_us,to_us,flows,flows_finished,fct_mean_ns,slowdown_mean\n");
    for w in windows {
        out.push_str(&format!(
            "{},{},{},{},{},{}\n",
            w.from_us,
            w.to_us,
            w.flows,
            w.flows_finished,
            cell(w.fct_mean_ns),
            cell(w.slowdown_mean)
        ));
    }
    out
}

/// The readable summary's line: each window's mean FCT in us (`-` where
/// no flow finished), the warm-up's windows in brackets.
pub fn line(m_warmup_us: Option<f64>, windows: &[FctWindow]) -> String {
    let width = windows.first().map_or(0.0, |w| w.to_us - w.from_us);
    let vals: Vec<String> = windows
        .iter()
        .map(|w| {
            let v = w
                .fct_mean_ns
                .map_or("-".to_string(), |x| format!("{:.1}", x / 1e3));
            match m_warmup_us {
                Some(wu) if w.to_us <= wu => format!("({v})"),
                _ => v,
            }
        })
        .collect();
    format!("mean per {width} us of start: {}", vals.join(" "))
}
