//! The report of a sweep, from its directory (`plan.json` and each run's
//! `summary.json`): every headline metric of `sweep.csv` against each
//! varied key, one line per variant (a combination of the other varied
//! keys' values), the mean over seeds with the seeds' range as error bars;
//! then the table of runs. Reads the directory through `crate::plan`.

use super::svg::{line_chart, num, Chart, Line, Scale};
use super::{esc, page, table};
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

/// The report of the sweep whose directory is `dir`.
pub fn render(dir: &Path) -> Result<String, String> {
    let m = plan::merge(dir)?;
    let p = &m.plan;
    let by_label: BTreeMap<&str, &Value> = m.rows.iter().map(|(l, v)| (l.as_str(), v)).collect();
    let metrics: Vec<(&str, &str)> = COLUMNS
        .iter()
        .copied()
        .filter(|(name, _)| !matches!(*name, "seed" | "flows"))
        .filter(|(_, path)| {
            m.rows
                .iter()
                .any(|(_, v)| sweep_csv::get(v, path).is_some())
        })
        .collect();
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
    let seeds_note = format!(
        "points: mean over the seeds ({}); error bars: their lowest and highest",
        p.seeds.len()
    );
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
                y: Scale::Linear,
                lines: vec![Line {
                    name: (*name).into(),
                    points,
                    errors: Vec::new(),
                }],
                note: "one point per run (nothing varied but the seed)".into(),
            }));
        }
        b.push_str("</div>\n");
    }
    for (ki, (key, values)) in p.vary.iter().enumerate() {
        let numeric: Option<Vec<f64>> = values.iter().map(|v| v.parse::<f64>().ok()).collect();
        let (x_scale, xs): (Scale, Vec<f64>) = match numeric {
            Some(xs) => (Scale::Linear, xs),
            None => (
                Scale::Categories(values.iter().map(|v| shown(v)).collect()),
                (0..values.len()).map(|i| i as f64).collect(),
            ),
        };
        // Variants: the other varied keys' values, in plan order.
        let variant = |r: &PlanRun| -> String {
            let parts: Vec<String> = p
                .vary
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != ki)
                .map(|(_, (k, _))| format!("{k}={}", shown(value_of(r, k).unwrap_or("?"))))
                .collect();
            if parts.is_empty() {
                "all runs".into()
            } else {
                parts.join(", ")
            }
        };
        let mut variants: Vec<String> = Vec::new();
        for r in &p.runs {
            let v = variant(r);
            if !variants.contains(&v) {
                variants.push(v);
            }
        }
        b.push_str(&format!(
            "<h2>Against {}</h2>\n<div class=\"charts\">\n",
            esc(key)
        ));
        for (name, path) in &metrics {
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
                            .filter(|r| variant(r) == *vname)
                            .filter_map(|r| by_label.get(r.label.as_str()))
                            .filter_map(|v| sweep_csv::get(v, path))
                            .collect();
                        if seen.is_empty() {
                            continue;
                        }
                        let mean = seen.iter().sum::<f64>() / seen.len() as f64;
                        let lo = seen.iter().copied().fold(f64::INFINITY, f64::min);
                        let hi = seen.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                        line.points.push((xs[xi], mean));
                        line.errors.push((lo, hi));
                    }
                    line
                })
                .collect();
            b.push_str(&line_chart(&Chart {
                id: &format!("sweep-{}-by-{}", ident(name), ident(key)),
                title: &format!("{name} against {key}"),
                x_label: key,
                y_label: name,
                x: x_scale.clone(),
                y: Scale::Linear,
                lines,
                note: seeds_note.clone(),
            }));
        }
        b.push_str("</div>\n");
    }
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
