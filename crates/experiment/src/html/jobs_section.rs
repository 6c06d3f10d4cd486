//! The collective jobs' part of a run's report, from `summary.json`'s
//! `jobs` block and `collectives.csv`: each job's iteration times over
//! the run (an iteration at its end), its bus bandwidth (the mean over
//! its collectives, their lowest and highest as a bar), the CDF of the
//! jobs' completion times, and a table. Nothing for a run without jobs.
//! Reads only those two files.

use super::svg::{bar_chart, line_chart, num, Bars, Chart, Line, Scale};
use super::table;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// A collective's row of `collectives.csv`: its job, iteration, end and
/// bus bandwidth (None: not finished).
struct Row {
    job: String,
    iteration: u64,
    end_ns: Option<f64>,
    busbw: Option<f64>,
}

fn rows(dir: &Path) -> Result<Vec<Row>, String> {
    let path = dir.join("collectives.csv");
    let bad = |e: csv::Error| format!("{}: {e}", path.display());
    let mut r = csv::Reader::from_path(&path).map_err(bad)?;
    let head = r.headers().map_err(bad)?.clone();
    let col = |name: &str| {
        head.iter()
            .position(|h| h == name)
            .ok_or_else(|| format!("{}: no {name} column", path.display()))
    };
    let (job, it, end, bus) = (
        col("job")?,
        col("iteration")?,
        col("end_ns")?,
        col("busbw_gbps")?,
    );
    let mut v = Vec::new();
    for rec in r.records() {
        let rec = rec.map_err(bad)?;
        let num = |i: usize| rec.get(i).and_then(|s| s.parse::<f64>().ok());
        v.push(Row {
            job: rec.get(job).unwrap_or_default().to_string(),
            iteration: num(it).unwrap_or(0.0) as u64,
            end_ns: num(end),
            busbw: num(bus),
        });
    }
    Ok(v)
}

/// The section's HTML (empty without jobs).
pub fn render(dir: &Path, s: &Value) -> Result<String, String> {
    let Some(jobs) = s.get("jobs").and_then(Value::as_array) else {
        return Ok(String::new());
    };
    let rows = rows(dir)?;
    let name = |j: &Value| {
        j.get("name")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string()
    };
    let mut b = String::from("<h2>Collective jobs</h2>\n<div class=\"charts\">\n");

    // Iteration time against the iteration's end: its last collective's.
    let mut ends: BTreeMap<(String, u64), f64> = BTreeMap::new();
    for r in &rows {
        if let Some(e) = r.end_ns {
            let x = ends.entry((r.job.clone(), r.iteration)).or_insert(e);
            *x = x.max(e);
        }
    }
    let lines: Vec<Line> = jobs
        .iter()
        .map(|j| {
            let n = name(j);
            let times = j.get("iteration_time_ns").and_then(Value::as_array);
            let points = times
                .into_iter()
                .flatten()
                .enumerate()
                .filter_map(|(i, t)| {
                    let end = ends.get(&(n.clone(), i as u64))?;
                    Some((end / 1e3, t.as_f64()? / 1e3))
                })
                .collect();
            Line {
                name: n,
                points,
                errors: Vec::new(),
            }
        })
        .collect();
    let finished: usize = lines.iter().map(|l| l.points.len()).sum();
    b.push_str(&line_chart(&Chart {
        id: "job-iterations",
        title: "Iteration time over the run",
        x_label: "iteration end (us)",
        y_label: "iteration time (us)",
        x: Scale::Linear,
        y: Scale::auto(lines.iter().flat_map(|l| l.points.iter().map(|p| p.1))),
        lines,
        band: false,
        note: format!("{finished} finished iterations (summary.json jobs, collectives.csv)"),
    }));

    // Bus bandwidth per job: the mean over its collectives, lowest to highest.
    let names: Vec<String> = jobs.iter().map(name).collect();
    let (mut points, mut errors) = (Vec::new(), Vec::new());
    for (i, n) in names.iter().enumerate() {
        let bus: Vec<f64> = rows
            .iter()
            .filter(|r| &r.job == n)
            .filter_map(|r| r.busbw)
            .collect();
        if bus.is_empty() {
            continue;
        }
        let mean = bus.iter().sum::<f64>() / bus.len() as f64;
        let (lo, hi) = bus
            .iter()
            .fold((f64::MAX, f64::MIN), |(l, h), &x| (l.min(x), h.max(x)));
        points.push((i as f64, mean));
        errors.push((lo, hi));
    }
    b.push_str(&bar_chart(&Bars {
        id: "job-busbw",
        title: "Bus bandwidth per job",
        x_label: "job",
        y_label: "bus bandwidth (Gb/s)",
        categories: names.clone(),
        y: Scale::Linear,
        series: vec![Line {
            name: "busbw".into(),
            points,
            errors,
        }],
        note: "mean over each job's finished collectives (collectives.csv), bar: lowest to highest"
            .into(),
    }));

    // The jobs' completion times as a CDF.
    let mut done: Vec<f64> = jobs
        .iter()
        .filter_map(|j| j.get("completion_time_ns").and_then(Value::as_f64))
        .map(|t| t / 1e3)
        .collect();
    done.sort_by(f64::total_cmp);
    let k = done.len();
    b.push_str(&line_chart(&Chart {
        id: "job-completion-cdf",
        title: "CDF of job completion time",
        x_label: "completion time from the job's start (us)",
        y_label: "fraction of jobs",
        x: Scale::auto(done.iter().copied()),
        y: Scale::Linear,
        lines: vec![Line {
            name: "jobs".into(),
            points: done
                .iter()
                .enumerate()
                .map(|(i, &t)| (t, (i + 1) as f64 / jobs.len() as f64))
                .collect(),
            errors: Vec::new(),
        }],
        band: false,
        note: format!("{k} of {} jobs completed (summary.json jobs)", jobs.len()),
    }));
    b.push_str("</div>\n");

    let cell = |j: &Value, p: &str, div: f64| {
        j.pointer(p)
            .and_then(Value::as_f64)
            .map_or("-".to_string(), |v| num(v / div))
    };
    let table_rows: Vec<Vec<String>> = jobs
        .iter()
        .map(|j| {
            let text = |p: &str| {
                j.pointer(p)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            let its = j.get("iteration_time_ns").and_then(Value::as_array);
            let ended = its.into_iter().flatten().filter(|t| t.is_number()).count();
            vec![
                name(j),
                text("/collective"),
                text("/algorithm"),
                cell(j, "/ranks", 1.0),
                cell(j, "/bytes", 1.0),
                format!("{ended} of {}", cell(j, "/iterations", 1.0)),
                cell(j, "/busbw_gbps_mean", 1.0),
                cell(j, "/completion_time_ns", 1e3),
            ]
        })
        .collect();
    b.push_str(&table(
        "jobs-table",
        &[
            "job",
            "collective",
            "algorithm",
            "ranks",
            "bytes",
            "iterations",
            "busbw mean (Gb/s)",
            "completion (us)",
        ],
        &table_rows,
    ));
    Ok(b)
}
