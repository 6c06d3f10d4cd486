//! The report of a sweep, from its directory (`plan.json`, each run's
//! `summary.json` and `flows.csv`): first slowdown against flow size, one
//! line per variant (a combination of the varied keys' values), the mean
//! over seeds with the seeds' range as a band; then every headline metric
//! of `sweep.csv` against each varied key, one line (a numeric key) or bar
//! (a categorical one: load balancer, congestion control) per variant of
//! the other varied keys, the mean over seeds with the seeds' range as
//! error bars; metrics zero in every run are named, not drawn; then the
//! table over seeds (each metric's mean and range per combination), then the
//! table of runs. Axes are log where values span more than a decade.
//! Reads the directory through `crate::plan` and `finished_flows`.

use super::svg::{bar_chart, line_chart, num, Bars, Chart, Line, Scale};
use super::{esc, finished_flows, page, table};
use crate::plan::{self, PlanRun};
use crate::sweep_csv::{self, COLUMNS};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The value `run` gives `key` (its last override of it).
fn value_of<'a>(run: &'a PlanRun, key: &str) -> Option<&'a str> {
    run.overrides
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// A value as shown: TOML strings without their quotes.
fn shown(v: &str) -> String {
    v.trim_matches('"').to_string()
}

/// Safe for an element id.
fn ident(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// A metric of `sweep.csv`: its column and its path in `summary.json`.
type Metric = (&'static str, &'static str);

/// Flow-size bins per decade of the slowdown-against-size chart.
const BINS_PER_DECADE: f64 = 4.0;

/// The variant of `run`: its values of the varied keys but the one at
/// `skip`, as `key=value, ...` ("all runs" when there are none).
fn variant(p: &plan::Plan, run: &PlanRun, skip: Option<usize>) -> String {
    let parts: Vec<String> = p
        .vary
        .iter()
        .enumerate()
        .filter(|(j, _)| Some(*j) != skip)
        .map(|(_, (k, _))| format!("{k}={}", shown(value_of(run, k).unwrap_or("?"))))
        .collect();
    if parts.is_empty() {
        "all runs".into()
    } else {
        parts.join(", ")
    }
}

/// The variants of the plan's runs (see [`variant`]), in plan order.
fn variants(p: &plan::Plan, skip: Option<usize>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in &p.runs {
        let v = variant(p, r, skip);
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// Mean, lowest and highest of `v` (not empty).
fn spread(v: &[f64]) -> (f64, f64, f64) {
    sweep_csv::spread(v).unwrap_or((f64::NAN, f64::NAN, f64::NAN))
}

/// The chart of slowdown against flow size: per variant and size bin
/// (a quarter decade), each finished run's mean slowdown of the bin's
/// flows; the line is their mean over seeds, the band their range.
fn slowdown_by_size(dir: &Path, m: &plan::Merged) -> Result<String, String> {
    let p = &m.plan;
    let finished: Vec<&str> = m.rows.iter().map(|(l, _)| l.as_str()).collect();
    let mut lines = Vec::new();
    let mut flows = 0;
    for name in variants(p, None) {
        // bin -> each run's mean slowdown in it
        let mut bins: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
        for r in p.runs.iter().filter(|r| variant(p, r, None) == name) {
            if !finished.contains(&r.label.as_str()) {
                continue;
            }
            let mut sums: BTreeMap<i64, (f64, usize)> = BTreeMap::new();
            for (size, slowdown) in finished_flows(&dir.join(&r.label))? {
                if size >= 1.0 && slowdown.is_finite() {
                    let bin = (size.log10() * BINS_PER_DECADE).floor() as i64;
                    let e = sums.entry(bin).or_default();
                    e.0 += slowdown;
                    e.1 += 1;
                    flows += 1;
                }
            }
            for (bin, (sum, n)) in sums {
                bins.entry(bin).or_default().push(sum / n as f64);
            }
        }
        let mut line = Line {
            name,
            ..Line::default()
        };
        for (bin, per_run) in bins {
            let (mean, lo, hi) = spread(&per_run);
            let centre = 10f64.powf((bin as f64 + 0.5) / BINS_PER_DECADE);
            line.points.push((centre, mean));
            line.errors.push((lo, hi));
        }
        lines.push(line);
    }
    if flows == 0 {
        return Ok(
            "<p class=\"note\" id=\"sweep-slowdown-by-size\">No finished flow in any run.</p>\n"
                .into(),
        );
    }
    let y = Scale::auto(
        lines
            .iter()
            .flat_map(|l| l.errors.iter().flat_map(|e| [e.0, e.1])),
    );
    Ok(line_chart(&Chart {
        id: "sweep-slowdown-by-size",
        title: "Slowdown against flow size",
        x_label: "flow size (bytes, log scale)",
        y_label: "mean slowdown (FCT / ideal FCT)",
        x: Scale::Log,
        y,
        lines,
        band: true,
        note: format!(
            "{flows} finished flows of the runs' flows.csv, in bins of a quarter decade of size (drawn at the bin's centre); line: the mean over seeds ({}) of each run's mean slowdown in the bin; band: the seeds' lowest and highest",
            p.seeds.len()
        ),
    }))
}

/// The table over seeds: per combination of the varied values, each
/// metric of `sweep_csv::OVER_SEEDS` as its mean over the seeds and their
/// range.
fn over_seeds(rows: &[(String, Value)]) -> String {
    let mut head = vec!["variant", "seeds"];
    head.extend(sweep_csv::OVER_SEEDS.iter().map(|m| m.0));
    let body: Vec<Vec<String>> = sweep_csv::by_variant(rows)
        .into_iter()
        .map(|(name, runs)| {
            let mut r = vec![name, runs.len().to_string()];
            for (_, path, div) in sweep_csv::OVER_SEEDS {
                let v: Vec<f64> = runs
                    .iter()
                    .filter_map(|s| sweep_csv::over_seeds_value(s, path, div))
                    .collect();
                r.push(sweep_csv::spread(&v).map_or("n/a".into(), |(m, lo, hi)| {
                    format!("{} [{}, {}]", num(m), num(lo), num(hi))
                }));
            }
            r
        })
        .collect();
    format!(
        "<h2>Over seeds</h2>\n<p class=\"note\">Each metric's mean over the seeds, their lowest and highest in brackets; FCT and slowdown over the counted flows where the scenario has a warm-up (<code>[output] warmup_us</code>), unfinished flows of those.</p>\n{}",
        table("over-seeds", &head, &body)
    )
}

/// The report of the sweep whose directory is `dir`.
pub fn render(dir: &Path) -> Result<String, String> {
    let m = plan::merge(dir)?;
    let p = &m.plan;
    let by_label: BTreeMap<&str, &Value> = m.rows.iter().map(|(l, v)| (l.as_str(), v)).collect();
    let present: Vec<Metric> = COLUMNS
        .iter()
        .copied()
        .filter(|(name, _)| !matches!(*name, "seed" | "flows" | "warmup_us"))
        .filter(|(_, path)| {
            m.rows
                .iter()
                .any(|(_, v)| sweep_csv::get(v, path).is_some())
        })
        .collect();
    // A metric zero in every run draws flat lines: named, not drawn.
    let (zero, metrics): (Vec<Metric>, Vec<Metric>) = present.into_iter().partition(|(_, path)| {
        m.rows
            .iter()
            .filter_map(|(_, v)| sweep_csv::get(v, path))
            .all(|x| x == 0.0)
    });
    let mut b = format!(
        "<h1>rdmalab sweep report: {}</h1>\n<p>rdmalab {}, {} runs ({} finished), seeds {}{}.</p>\n",
        esc(&p.scenario),
        esc(&p.version),
        p.runs.len(),
        m.rows.len(),
        esc(&p
            .seeds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")),
        esc(&p
            .set
            .iter()
            .map(|(k, v)| format!("; {k} = {v}"))
            .collect::<String>())
    );
    if !m.missing.is_empty() {
        let names: Vec<String> = m
            .missing
            .iter()
            .map(|r| format!("{} ({})", r.index, r.label))
            .collect();
        b.push_str(&format!(
            "<p class=\"note\" id=\"missing\">Missing runs (no summary.json yet): {}</p>\n",
            esc(&names.join(", "))
        ));
    }
    b.push_str("<h2>Slowdown against flow size</h2>\n<div class=\"charts\">\n");
    b.push_str(&slowdown_by_size(dir, &m)?);
    b.push_str("</div>\n");
    let seeds_note = |what: &str| {
        format!(
            "{what}: mean over the seeds ({}); error bars: their lowest and highest",
            p.seeds.len()
        )
    };
    if p.vary.is_empty() {
        b.push_str("<h2>Headline metrics by seed</h2>\n<div class=\"charts\">\n");
        for (name, path) in &metrics {
            let points: Vec<(f64, f64)> = p
                .runs
                .iter()
                .filter_map(|r| {
                    let v = by_label.get(r.label.as_str())?;
                    Some((r.seed as f64, sweep_csv::get(v, path)?))
                })
                .collect();
            b.push_str(&line_chart(&Chart {
                id: &format!("sweep-{}-by-seed", ident(name)),
                title: name,
                x_label: "seed",
                y_label: name,
                x: Scale::Linear,
                y: Scale::auto(points.iter().map(|p| p.1)),
                lines: vec![Line {
                    name: (*name).into(),
                    points,
                    errors: Vec::new(),
                }],
                band: false,
                note: "one point per run (nothing varied but the seed)".into(),
            }));
        }
        b.push_str("</div>\n");
    }
    for (ki, (key, values)) in p.vary.iter().enumerate() {
        let numeric: Option<Vec<f64>> = values.iter().map(|v| v.parse::<f64>().ok()).collect();
        let variants = variants(p, Some(ki));
        b.push_str(&format!(
            "<h2>Against {}</h2>\n<div class=\"charts\">\n",
            esc(key)
        ));
        for (name, path) in &metrics {
            // Per variant, a point per value of the key: (index, mean)
            // with the seeds' (lowest, highest).
            let lines: Vec<Line> = variants
                .iter()
                .map(|vname| {
                    let mut line = Line {
                        name: vname.clone(),
                        ..Line::default()
                    };
                    for (xi, xv) in values.iter().enumerate() {
                        let seen: Vec<f64> = p
                            .runs
                            .iter()
                            .filter(|r| value_of(r, key) == Some(xv.as_str()))
                            .filter(|r| variant(p, r, Some(ki)) == *vname)
                            .filter_map(|r| by_label.get(r.label.as_str()))
                            .filter_map(|v| sweep_csv::get(v, path))
                            .collect();
                        if seen.is_empty() {
                            continue;
                        }
                        let (mean, lo, hi) = spread(&seen);
                        line.points.push((xi as f64, mean));
                        line.errors.push((lo, hi));
                    }
                    line
                })
                .collect();
            let y = Scale::auto(
                lines
                    .iter()
                    .flat_map(|l| l.errors.iter().flat_map(|e| [e.0, e.1])),
            );
            let id = format!("sweep-{}-by-{}", ident(name), ident(key));
            let title = format!("{name} against {key}");
            b.push_str(&match &numeric {
                // A numeric key: lines over its values.
                Some(xs) => line_chart(&Chart {
                    id: &id,
                    title: &title,
                    x_label: key,
                    y_label: name,
                    x: Scale::auto(xs.iter().copied()),
                    y,
                    lines: lines
                        .into_iter()
                        .map(|l| Line {
                            points: l.points.iter().map(|&(i, v)| (xs[i as usize], v)).collect(),
                            ..l
                        })
                        .collect(),
                    band: false,
                    note: seeds_note("points"),
                }),
                // A categorical one: a group of bars per value.
                None => bar_chart(&Bars {
                    id: &id,
                    title: &title,
                    x_label: key,
                    y_label: name,
                    categories: values.iter().map(|v| shown(v)).collect(),
                    y,
                    series: lines,
                    note: seeds_note("bars"),
                }),
            });
        }
        b.push_str("</div>\n");
    }
    if !zero.is_empty() {
        let names: Vec<&str> = zero.iter().map(|z| z.0).collect();
        b.push_str(&format!(
            "<p class=\"note\" id=\"zero-metrics\">Zero in every run, not drawn: {}.</p>\n",
            esc(&names.join(", "))
        ));
    }
    b.push_str(&over_seeds(&m.rows));
    b.push_str("<h2>Runs</h2>\n");
    let mut head = vec!["label"];
    head.extend(COLUMNS.iter().map(|c| c.0));
    let rows: Vec<Vec<String>> = m
        .rows
        .iter()
        .map(|(label, v)| {
            let mut r = vec![label.clone()];
            for (_, path) in COLUMNS {
                r.push(
                    v.pointer(path)
                        .and_then(Value::as_f64)
                        .map_or(String::new(), num),
                );
            }
            r
        })
        .collect();
    b.push_str("<div class=\"wide\">");
    b.push_str(&table("runs", &head, &rows));
    b.push_str("</div>\n");
    Ok(page(&format!("rdmalab sweep: {}", p.scenario), &b))
}
