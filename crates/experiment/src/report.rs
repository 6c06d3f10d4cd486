//! Outputs of a run: `flows.csv` (one row per flow, the information of
//! ns-3's fct.txt with names people read), `summary.json` (the scenario,
//! seed, version and every headline number), and the readable summary on
//! stdout. Files hold only simulated quantities, so the same scenario and
//! seed always give byte-identical files.

use crate::run::Outcome;
use engine::stats::Summary;
use engine::time::{to_ns_f64, NS};
use fabric::DropReason;
use serde::Serialize;
use std::io::Write;
use std::path::Path;
use transport::Verb;

#[derive(Serialize)]
pub struct FlowRow {
    pub flow_id: usize,
    pub src: u32,
    pub dst: u32,
    pub size_bytes: u64,
    pub start_ns: u64,
    pub fct_ns: Option<u64>,
    pub ideal_fct_ns: u64,
    pub slowdown: Option<String>,
    pub verb: &'static str,
    pub class: String,
}

#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Stat {
    pub count: usize,
    pub mean: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

impl From<Summary> for Stat {
    fn from(s: Summary) -> Stat {
        let r = |x: f64| (x * 1e4).round() / 1e4;
        Stat {
            count: s.count,
            mean: r(s.mean),
            p50: r(s.p50),
            p95: r(s.p95),
            p99: r(s.p99),
            p999: r(s.p999),
            max: r(s.max),
        }
    }
}

#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct SummaryJson {
    pub scenario: String,
    pub seed: u64,
    pub version: &'static str,
    pub hosts: u32,
    pub switches: usize,
    pub links: usize,
    pub end_state: String,
    pub sim_time_ns: u64,
    pub flows: usize,
    pub flows_finished: usize,
    pub fct_ns: Stat,
    pub slowdown: Stat,
    /// Sum of finished flows' payload over the span from the first start to
    /// the last finish.
    pub total_goodput_gbps: f64,
    pub injected_packets: u64,
    pub delivered_packets: u64,
    pub dropped_packets: u64,
    pub drops: std::collections::BTreeMap<&'static str, u64>,
    pub in_flight_packets: u64,
    pub conservation_ok: bool,
    pub pause_frames: u64,
    pub resume_frames: u64,
    pub ecn_marked: u64,
    pub packet_hops: u64,
    pub events: u64,
    pub retransmitted_packets: u64,
    pub timeouts: u64,
    pub peak_packets_in_arena: usize,
}

fn verb_name(v: Verb) -> &'static str {
    match v {
        Verb::Write => "write",
        Verb::Read => "read",
        Verb::Send => "send",
    }
}

pub fn flow_rows(o: &Outcome) -> Vec<FlowRow> {
    o.flows()
        .iter()
        .enumerate()
        .map(|(i, f)| FlowRow {
            flow_id: i,
            src: f.flow.src,
            dst: f.flow.dst,
            size_bytes: f.flow.bytes,
            start_ns: f.flow.start / NS,
            fct_ns: f.fct().map(|t| t / NS),
            ideal_fct_ns: f.ideal / NS,
            slowdown: f.slowdown().map(|s| format!("{s:.4}")),
            verb: verb_name(f.flow.verb),
            class: o
                .classes
                .get(f.flow.class as usize)
                .cloned()
                .unwrap_or_default(),
        })
        .collect()
}

pub fn summary(o: &Outcome, scenario: &str, seed: u64) -> SummaryJson {
    let net = &o.net;
    let c = o.counters();
    let done: Vec<_> = o.flows().iter().filter(|f| f.finish.is_some()).collect();
    let fcts: Vec<f64> = done.iter().filter_map(|f| f.fct()).map(to_ns_f64).collect();
    let slow: Vec<f64> = done
        .iter()
        .filter_map(|f| f.slowdown())
        .map(|s| s.max(1.0))
        .collect();
    let goodput = if done.is_empty() {
        0.0
    } else {
        let first = done.iter().map(|f| f.flow.start).min().unwrap_or(0);
        let last = done.iter().filter_map(|f| f.finish).max().unwrap_or(0);
        let bytes: u64 = done.iter().map(|f| f.flow.bytes).sum();
        bytes as f64 * 8.0 / to_ns_f64(last.saturating_sub(first).max(1))
    };
    let (mut retx, mut timeouts) = (0, 0);
    for h in 0..net.host_count() {
        retx += net.nic(h).stats().retransmitted_packets;
        timeouts += net.nic(h).stats().timeouts;
    }
    let (in_flight, _) = net.in_flight();
    SummaryJson {
        scenario: scenario.to_string(),
        seed,
        version: env!("CARGO_PKG_VERSION"),
        hosts: net.host_count(),
        switches: net.topology().switch_count(),
        links: net.topology().links.len(),
        end_state: format!("{:?}", o.state),
        sim_time_ns: o.end_time / NS,
        flows: o.flows().len(),
        flows_finished: done.len(),
        fct_ns: Summary::of(&fcts).into(),
        slowdown: Summary::of(&slow).into(),
        total_goodput_gbps: (goodput * 1e4).round() / 1e4,
        injected_packets: c.injected_packets,
        delivered_packets: c.delivered_packets,
        dropped_packets: c.total_dropped_packets(),
        drops: DropReason::ALL
            .iter()
            .map(|&r| (r.name(), c.dropped(r)))
            .collect(),
        in_flight_packets: in_flight,
        conservation_ok: net.check_conservation().is_ok(),
        pause_frames: c.pause_frames,
        resume_frames: c.resume_frames,
        ecn_marked: c.ecn_marked,
        packet_hops: c.packet_hops,
        events: c.events,
        retransmitted_packets: retx,
        timeouts,
        peak_packets_in_arena: net.peak_packets(),
    }
}

/// Writes `flows.csv` and `summary.json` into `dir` (created if missing).
/// Each file is written to a temporary name and renamed into place, so an
/// interrupted run never leaves a half-written file under the real name.
pub fn write_outputs(o: &Outcome, s: &SummaryJson, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut w = csv::Writer::from_writer(Vec::new());
    for row in flow_rows(o) {
        w.serialize(row).map_err(std::io::Error::other)?;
    }
    let csv = w
        .into_inner()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    write_atomic(&dir.join("flows.csv"), &csv)?;
    let mut json = serde_json::to_vec_pretty(s).map_err(std::io::Error::other)?;
    json.push(b'\n');
    write_atomic(&dir.join("summary.json"), &json)
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

/// The readable summary printed on stdout.
pub fn render(s: &SummaryJson) -> String {
    let mut out = String::new();
    let mut line = |k: &str, v: String| out.push_str(&format!("  {k:<22} {v}\n"));
    line("scenario", format!("{} (seed {})", s.scenario, s.seed));
    line(
        "fabric",
        format!(
            "{} hosts, {} switches, {} links",
            s.hosts, s.switches, s.links
        ),
    );
    line(
        "simulated time",
        format!("{:.3} ms ({})", s.sim_time_ns as f64 / 1e6, s.end_state),
    );
    line(
        "flows finished",
        format!("{} / {}", s.flows_finished, s.flows),
    );
    line(
        "FCT (us)",
        format!(
            "mean {:.2}  p50 {:.2}  p99 {:.2}  max {:.2}",
            s.fct_ns.mean / 1e3,
            s.fct_ns.p50 / 1e3,
            s.fct_ns.p99 / 1e3,
            s.fct_ns.max / 1e3
        ),
    );
    line(
        "slowdown",
        format!(
            "mean {:.3}  p50 {:.3}  p95 {:.3}  p99 {:.3}",
            s.slowdown.mean, s.slowdown.p50, s.slowdown.p95, s.slowdown.p99
        ),
    );
    line("total goodput", format!("{:.2} Gb/s", s.total_goodput_gbps));
    let drops: Vec<String> = s
        .drops
        .iter()
        .filter(|(_, &n)| n > 0)
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    line(
        "drops",
        if drops.is_empty() {
            "none".into()
        } else {
            drops.join(", ")
        },
    );
    line(
        "PFC",
        format!(
            "{} pause, {} resume frames",
            s.pause_frames, s.resume_frames
        ),
    );
    line("ECN marked", s.ecn_marked.to_string());
    line(
        "retransmissions",
        format!(
            "{} packets, {} timeouts",
            s.retransmitted_packets, s.timeouts
        ),
    );
    line("packet-hops", s.packet_hops.to_string());
    line(
        "conservation",
        if s.conservation_ok {
            "ok".into()
        } else {
            "VIOLATED".into()
        },
    );
    out
}
