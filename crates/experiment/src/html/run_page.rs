//! The report of one run, from its directory: the headline numbers of
//! `summary.json`, slowdown by flow size (its `slowdown_by_size`), the CDF
//! of slowdown (`flows.csv`), every time series of `series.csv` (one chart
//! per kind: queue bytes, utilisation, throughput, sending rate, ECN
//! marking, ordering memory), PFC paused time and drops by reason; with
//! collective jobs, their section (`jobs_section.rs`) after the flows'. A
//! series or chart whose every value is zero is not drawn but named in a
//! note. Reads only those files.

use super::svg::{bar_chart, line_chart, num, Bars, Chart, Line, Scale};
use super::{esc, finished_flows, page, read, table};
use crate::report::size_bucket_label;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The most points of the CDF and of each time series drawn (more are
/// thinned evenly; the note under the chart says so).
const MAX_POINTS: usize = 1500;

/// The headline table: label, path in `summary.json`, and a divisor with
/// its unit (1: as written).
const HEADLINE: [(&str, &str, f64); 31] = [
    ("simulated time (ms)", "/sim_time_ns", 1e6),
    ("flows", "/flows", 1.0),
    ("flows finished", "/flows_finished", 1.0),
    ("FCT mean (us)", "/fct_ns/mean", 1e3),
    ("FCT p50 (us)", "/fct_ns/p50", 1e3),
    ("FCT p99 (us)", "/fct_ns/p99", 1e3),
    ("slowdown mean", "/slowdown/mean", 1.0),
    ("slowdown p50", "/slowdown/p50", 1.0),
    ("slowdown p95", "/slowdown/p95", 1.0),
    ("slowdown p99", "/slowdown/p99", 1.0),
    ("slowdown max", "/slowdown/max", 1.0),
    ("slowdown mean, flows < 1 BDP", "/slowdown_small/mean", 1.0),
    ("slowdown p99, flows < 1 BDP", "/slowdown_small/p99", 1.0),
    ("slowdown mean, flows >= 1 BDP", "/slowdown_large/mean", 1.0),
    ("slowdown p99, flows >= 1 BDP", "/slowdown_large/p99", 1.0),
    ("BDP (bytes)", "/bdp_bytes", 1.0),
    ("total goodput (Gb/s)", "/total_goodput_gbps", 1.0),
    (
        "payload delivered over the run (Gb/s)",
        "/delivered_gbps",
        1.0,
    ),
    ("injected packets", "/injected_packets", 1.0),
    ("delivered packets", "/delivered_packets", 1.0),
    ("dropped packets", "/dropped_packets", 1.0),
    ("in flight at the end", "/in_flight_packets", 1.0),
    ("PFC pause frames", "/pause_frames", 1.0),
    ("PFC resume frames", "/resume_frames", 1.0),
    ("ECN marked", "/ecn_marked", 1.0),
    ("congestion notifications sent", "/cnps_sent", 1.0),
    ("retransmitted packets", "/retransmitted_packets", 1.0),
    ("timeouts", "/timeouts", 1.0),
    ("out-of-order fraction", "/reordering/ooo_fraction", 1.0),
    ("packet-hops", "/packet_hops", 1.0),
    ("events", "/events", 1.0),
];

fn f(s: &Value, p: &str) -> f64 {
    s.pointer(p).and_then(Value::as_f64).unwrap_or(f64::NAN)
}

/// A headline number: n/a when absent or null (a statistic of no values).
fn headline(s: &Value, p: &str, div: f64) -> String {
    match s.pointer(p).and_then(Value::as_f64) {
        Some(x) => num(x / div),
        None => "n/a".into(),
    }
}

/// Every scalar of a JSON value, as (dotted path, text), in key order.
fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    let join = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match v {
        Value::Object(m) => m.iter().for_each(|(k, x)| flatten(&join(k), x, out)),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, x)| flatten(&join(&i.to_string()), x, out)),
        Value::String(s) => out.push((prefix.to_string(), s.clone())),
        Value::Null => out.push((prefix.to_string(), "null".into())),
        other => out.push((prefix.to_string(), other.to_string())),
    }
}

/// Evenly thinned to at most `MAX_POINTS` (first and last kept); the
/// stride taken.
fn thin<T: Copy>(v: &[T]) -> (Vec<T>, usize) {
    if v.len() <= MAX_POINTS {
        return (v.to_vec(), 1);
    }
    let stride = v.len().div_ceil(MAX_POINTS);
    let mut out: Vec<T> = v.iter().step_by(stride).copied().collect();
    if !(v.len() - 1).is_multiple_of(stride) {
        out.push(v[v.len() - 1]);
    }
    (out, stride)
}

/// A series' name and its points (time in us, value).
type Named = (String, Vec<(f64, f64)>);

/// The time series of `series.csv` (absent: none), by name in file order.
fn series(dir: &Path) -> Result<Vec<Named>, String> {
    let path = dir.join("series.csv");
    if !path.is_file() {
        return Ok(Vec::new());
    }
    let mut r = csv::Reader::from_path(&path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let mut out: Vec<Named> = Vec::new();
    for rec in r.records() {
        let rec = rec.map_err(|e| format!("{}: {e}", path.display()))?;
        let bad = || {
            format!(
                "{}: line {:?} is not time_ns,series,value",
                path.display(),
                rec
            )
        };
        let t: f64 = rec.get(0).and_then(|s| s.parse().ok()).ok_or_else(bad)?;
        let name = rec.get(1).ok_or_else(bad)?;
        let v: f64 = rec.get(2).and_then(|s| s.parse().ok()).ok_or_else(bad)?;
        match out.last_mut() {
            Some((n, pts)) if n == name => pts.push((t / 1e3, v)),
            _ => out.push((name.to_string(), vec![(t / 1e3, v)])),
        }
    }
    Ok(out)
}

/// What a series kind is, for its chart's title and axis.
fn kind_title(kind: &str) -> (&str, &str) {
    match kind {
        "queue_bytes" => ("Queue length", "bytes"),
        "util" => ("Link utilisation", "fraction of the link rate"),
        "throughput_gbps" => ("Flow throughput", "Gb/s"),
        "rate_gbps" => ("Sending rate (congestion control)", "Gb/s"),
        "ecn_mark_ratio" => ("ECN marking ratio", "marked / decided"),
        k if k.starts_with("ordering_") => ("Ordering layer NIC memory", "bytes"),
        _ => ("Series", "value"),
    }
}

/// The chart of the mean FCT per window of start time (summary.json's
/// `fct_over_time`): flat at the end when the run is long enough.
fn fct_over_time(windows: &[Value]) -> String {
    let points: Vec<(f64, f64)> = windows
        .iter()
        .filter_map(|w| {
            let mid = (f(w, "/from_us") + f(w, "/to_us")) / 2.0;
            Some((mid, w.pointer("/fct_mean_ns")?.as_f64()? / 1e3))
        })
        .collect();
    line_chart(&Chart {
        id: "fct-over-time",
        title: "Mean FCT over time",
        x_label: "flow start (us)",
        y_label: "mean FCT (us)",
        x: Scale::Linear,
        y: Scale::auto(points.iter().map(|p| p.1)),
        lines: vec![Line {
            name: "finished flows".into(),
            points,
            errors: Vec::new(),
        }],
        band: false,
        note: format!(
            "the finished flows that started in each of {} windows (fct_over_time.csv), drawn at the window's middle",
            windows.len()
        ),
    })
}

/// The report of the run whose outputs are in `dir`.
pub fn render(dir: &Path) -> Result<String, String> {
    let sp = dir.join("summary.json");
    let s: Value = serde_json::from_str(&read(&sp)?)
        .map_err(|e| format!("{}: not a run's summary ({e})", sp.display()))?;
    crate::out_dir::check_run(dir, &s)?;
    let name = s.get("scenario").and_then(Value::as_str).unwrap_or("run");
    let seed = s.get("seed").and_then(Value::as_u64).unwrap_or(0);
    let mut b = format!(
        "<h1>rdmalab report: {} (seed {seed})</h1>\n<p>rdmalab {}, {} hosts, {} switches, {} links; the run ended {}. Made from summary.json, flows.csv{} of this directory.</p>\n",
        esc(name),
        esc(s.get("version").and_then(Value::as_str).unwrap_or("?")),
        num(f(&s, "/hosts")),
        num(f(&s, "/switches")),
        num(f(&s, "/links")),
        esc(s.get("end_state").and_then(Value::as_str).unwrap_or("?")),
        [("collectives.csv", ", collectives.csv"), ("series.csv", ", series.csv")]
            .iter()
            .filter(|(f, _)| dir.join(f).is_file())
            .map(|(_, t)| *t)
            .collect::<String>()
    );

    b.push_str("<h2>Headline numbers</h2>\n");
    let rows: Vec<Vec<String>> = HEADLINE
        .iter()
        .map(|&(l, p, div)| vec![l.to_string(), headline(&s, p, div)])
        .collect();
    b.push_str(&table("headline", &["quantity", "value"], &rows));
    if s.get("measured").is_some() {
        b.push_str(&format!(
            "<p class=\"note\" id=\"measured\">FCT and slowdown statistics count the {} flows that start after the warm-up of {} us ({} finished, {} unfinished); they offered {} Gb/s and got {} Gb/s delivered.</p>\n",
            num(f(&s, "/measured/flows")),
            num(f(&s, "/measured/warmup_us")),
            num(f(&s, "/measured/flows_finished")),
            num(f(&s, "/measured/flows_unfinished")),
            headline(&s, "/measured/offered_gbps", 1.0),
            num(f(&s, "/measured/delivered_gbps")),
        ));
    }
    let mut all = Vec::new();
    flatten("", &s, &mut all);
    let rows: Vec<Vec<String>> = all.into_iter().map(|(k, v)| vec![k, v]).collect();
    b.push_str("<details><summary>Every number of summary.json</summary>\n");
    b.push_str(&table("summary-all", &["key", "value"], &rows));
    b.push_str("</details>\n");

    b.push_str("<h2>Flow completion</h2>\n<div class=\"charts\">\n");
    let buckets = s
        .get("slowdown_by_size")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let label = |x: &Value| {
        let lo = x.get("lo_bytes").and_then(Value::as_u64).unwrap_or(0);
        size_bucket_label(lo, x.get("hi_bytes").and_then(Value::as_u64))
    };
    let kept: Vec<&Value> = buckets
        .iter()
        .filter(|x| f(x, "/slowdown/count") > 0.0)
        .collect();
    let cats: Vec<String> = kept.iter().map(|x| label(x)).collect();
    let col = |name: &str, p: &str| Line {
        name: name.into(),
        points: kept
            .iter()
            .enumerate()
            .map(|(i, x)| (i as f64, f(x, p)))
            .collect(),
        errors: Vec::new(),
    };
    let stats = vec![
        col("mean", "/slowdown/mean"),
        col("p95", "/slowdown/p95"),
        col("p99", "/slowdown/p99"),
    ];
    b.push_str(&bar_chart(&Bars {
        id: "slowdown-by-size",
        title: "FCT slowdown by flow size",
        x_label: "flow size",
        y_label: "slowdown (FCT / ideal FCT)",
        categories: cats.clone(),
        y: Scale::auto(stats.iter().flat_map(|l| l.points.iter().map(|p| p.1))),
        series: stats,
        note: if kept.is_empty() {
            "no flow finished".into()
        } else {
            "finished flows by size bucket (summary.json slowdown_by_size; slowdowns under 1 count as 1)".into()
        },
    }));
    if let Some(Value::Array(windows)) = s.get("fct_over_time") {
        b.push_str(&fct_over_time(windows));
    }
    let mut sd: Vec<f64> = finished_flows(dir)?.into_iter().map(|f| f.1).collect();
    sd.sort_by(f64::total_cmp);
    let n = sd.len();
    let cdf: Vec<(f64, f64)> = sd
        .iter()
        .enumerate()
        .map(|(i, &v)| (v, (i + 1) as f64 / n as f64))
        .collect();
    let (cdf, stride) = thin(&cdf);
    b.push_str(&line_chart(&Chart {
        id: "slowdown-cdf",
        title: "CDF of slowdown",
        x_label: "slowdown (log scale)",
        y_label: "fraction of finished flows",
        x: Scale::Log,
        y: Scale::Linear,
        lines: vec![Line {
            name: "finished flows".into(),
            points: cdf,
            errors: Vec::new(),
        }],
        band: false,
        note: format!(
            "{n} finished flows (flows.csv){}",
            if stride > 1 {
                format!(", one point in {stride} drawn")
            } else {
                String::new()
            }
        ),
    }));
    let rows: Vec<Vec<String>> = kept
        .iter()
        .zip(&cats)
        .map(|(x, c)| {
            let mut r = vec![c.clone()];
            for p in ["count", "mean", "p50", "p95", "p99"] {
                r.push(num(f(x, &format!("/slowdown/{p}"))));
            }
            r
        })
        .collect();
    b.push_str("</div>\n");
    b.push_str(&table(
        "slowdown-table",
        &["flow size", "flows", "mean", "p50", "p95", "p99"],
        &rows,
    ));
    b.push_str(&super::jobs_section::render(dir, &s)?);

    b.push_str("<h2>Time series</h2>\n");
    let ts = series(dir)?;
    if ts.is_empty() {
        b.push_str("<p class=\"note\" id=\"no-series\">No time series: the scenario has no <code>[output]</code> section with <code>sample_us</code> and <code>ports</code>, <code>flows</code>, <code>ecn_ports</code> or <code>ordering_memory</code> (README, \"Time series\").</p>\n");
    } else {
        let mut kinds: BTreeMap<String, Vec<Named>> = BTreeMap::new();
        let mut zero: Vec<String> = Vec::new();
        for (name, pts) in ts {
            if pts.iter().all(|p| p.1 == 0.0) {
                zero.push(name);
                continue;
            }
            let kind = name.split(':').next().unwrap_or(&name).to_string();
            let kind = if kind.starts_with("ordering_") {
                "ordering_memory".to_string()
            } else {
                kind
            };
            kinds.entry(kind).or_default().push((name, pts));
        }
        b.push_str("<div class=\"charts\">\n");
        for (kind, list) in &kinds {
            let (title, unit) = kind_title(kind);
            let mut most = 1;
            let lines = list
                .iter()
                .map(|(name, pts)| {
                    let (p, st) = thin(pts);
                    most = most.max(st);
                    Line {
                        name: name.clone(),
                        points: p,
                        errors: Vec::new(),
                    }
                })
                .collect();
            b.push_str(&line_chart(&Chart {
                id: &format!("series-{kind}"),
                title,
                x_label: "time (us)",
                y_label: unit,
                x: Scale::Linear,
                y: Scale::Linear,
                lines,
                band: false,
                note: if most > 1 {
                    format!("series.csv, one sample in {most} drawn")
                } else {
                    "series.csv".into()
                },
            }));
        }
        b.push_str("</div>\n");
        if !zero.is_empty() {
            b.push_str(&format!(
                "<p class=\"note\" id=\"zero-series\">Zero throughout, not drawn: {}.</p>\n",
                esc(&zero.join(", "))
            ));
        }
    }

    b.push_str("<h2>PFC and drops</h2>\n<div class=\"charts\">\n");
    let mut zero: Vec<&str> = Vec::new();
    let pct = |p: &str| f(&s, p) * 100.0;
    let paused = [
        (
            "mean",
            [
                pct("/pfc_pause/switch_paused_fraction_mean"),
                pct("/pfc_pause/host_paused_fraction_mean"),
            ],
        ),
        (
            "max",
            [
                pct("/pfc_pause/switch_paused_fraction_max"),
                pct("/pfc_pause/host_paused_fraction_max"),
            ],
        ),
    ];
    if paused.iter().all(|(_, v)| v.iter().all(|&x| x == 0.0)) {
        zero.push("PFC paused time");
    } else {
        let series: Vec<Line> = paused
            .iter()
            .map(|(name, v)| Line {
                name: (*name).into(),
                points: vec![(0.0, v[0]), (1.0, v[1])],
                errors: Vec::new(),
            })
            .collect();
        b.push_str(&bar_chart(&Bars {
            id: "pfc-paused",
            title: "PFC paused time",
            x_label: "",
            y_label: "% of the run paused",
            categories: vec!["switch ports".into(), "host ports".into()],
            y: Scale::Linear,
            series,
            note: format!(
                "{} pause and {} resume frames; ports ever paused: {} switch, {} host",
                num(f(&s, "/pause_frames")),
                num(f(&s, "/resume_frames")),
                num(f(&s, "/pfc_pause/switch_ports_paused")),
                num(f(&s, "/pfc_pause/host_ports_paused"))
            ),
        }));
    }
    let drops: Vec<(String, f64)> = s
        .get("drops")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_f64().unwrap_or(0.0)))
                .collect()
        })
        .unwrap_or_default();
    let total: f64 = drops.iter().map(|d| d.1).sum();
    if total == 0.0 {
        zero.push("drops");
    } else {
        b.push_str(&bar_chart(&Bars {
            id: "drops",
            title: "Drops by reason",
            x_label: "",
            y_label: "packets dropped",
            categories: drops.iter().map(|d| d.0.clone()).collect(),
            y: Scale::Linear,
            series: vec![Line {
                name: "drops".into(),
                points: drops
                    .iter()
                    .enumerate()
                    .map(|(i, d)| (i as f64, d.1))
                    .collect(),
                errors: Vec::new(),
            }],
            note: format!("{} packets dropped", num(total)),
        }));
    }
    b.push_str("</div>\n");
    if !zero.is_empty() {
        b.push_str(&format!(
            "<p class=\"note\" id=\"zero-charts\">Zero throughout, not drawn: {}.</p>\n",
            esc(&zero.join(", "))
        ));
    }
    if let Some(ports) = s.get("ecn_ports").and_then(Value::as_array) {
        b.push_str("<h2>ECN by port</h2>\n");
        let rows: Vec<Vec<String>> = ports
            .iter()
            .map(|p| {
                let mut r = vec![p
                    .get("port")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_string()];
                for k in ["data_packets", "ecn_marked", "mark_ratio", "tx_gbps"] {
                    r.push(num(f(p, &format!("/{k}"))));
                }
                r
            })
            .collect();
        b.push_str(&table(
            "ecn-ports",
            &["port", "data packets", "marked", "ratio", "Gb/s"],
            &rows,
        ));
    }
    Ok(page(&format!("rdmalab: {name} (seed {seed})"), &b))
}
