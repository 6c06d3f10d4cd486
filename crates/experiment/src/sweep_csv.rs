//! A sweep's `sweep.csv` and the table `rdmalab sweep` prints, made from the
//! runs' summaries as JSON values: the same function serves a sweep that
//! has its summaries in memory (serialised) and `rdmalab merge`, which
//! reads them back from each run's `summary.json`, so both write the same
//! bytes (a float read back from JSON is the float written). Touches no
//! file.

use serde_json::Value;

/// The columns of `sweep.csv` after `label`, each with the path of its
/// value in `summary.json` (absent values, such as the failure columns of a
/// run without failures, are empty cells).
pub const COLUMNS: [(&str, &str); 26] = [
    ("seed", "/seed"),
    ("flows", "/flows"),
    ("flows_finished", "/flows_finished"),
    ("slowdown_mean", "/slowdown/mean"),
    ("slowdown_p99", "/slowdown/p99"),
    ("fct_mean_ns", "/fct_ns/mean"),
    ("total_goodput_gbps", "/total_goodput_gbps"),
    ("dropped_packets", "/dropped_packets"),
    ("pause_frames", "/pause_frames"),
    ("slowdown_small_mean", "/slowdown_small/mean"),
    ("slowdown_small_p99", "/slowdown_small/p99"),
    ("slowdown_large_mean", "/slowdown_large/mean"),
    ("slowdown_large_p99", "/slowdown_large/p99"),
    ("retransmitted_packets", "/retransmitted_packets"),
    ("timeouts", "/timeouts"),
    ("ooo_fraction", "/reordering/ooo_fraction"),
    ("reorder_retx", "/reordering/reorder_retx"),
    (
        "switch_paused_fraction_mean",
        "/pfc_pause/switch_paused_fraction_mean",
    ),
    (
        "host_paused_fraction_mean",
        "/pfc_pause/host_paused_fraction_mean",
    ),
    ("flows_hit_by_failures", "/flows_hit_by_failures"),
    ("slowdown_hit_mean", "/slowdown_hit_by_failures/mean"),
    ("slowdown_hit_p99", "/slowdown_hit_by_failures/p99"),
    ("delivered_gbps", "/delivered_gbps"),
    ("warmup_us", "/measured/warmup_us"),
    ("flows_counted", "/measured/flows"),
    ("flows_counted_unfinished", "/measured/flows_unfinished"),
];

/// The metrics of the table over seeds ([`seeds_table`]): name, path in
/// `summary.json`, divisor.
pub const OVER_SEEDS: [(&str, &str, f64); 5] = [
    ("fct_mean_us", "/fct_ns/mean", 1e3),
    ("slowdown_mean", "/slowdown/mean", 1.0),
    ("slowdown_p99", "/slowdown/p99", 1.0),
    ("delivered_gbps", "/delivered_gbps", 1.0),
    ("unfinished", "", 1.0),
];

/// Flows that did not finish: of the counted ones with a warm-up, else of
/// all.
pub fn unfinished(s: &Value) -> Option<f64> {
    get(s, "/measured/flows_unfinished")
        .or_else(|| Some(get(s, "/flows")? - get(s, "/flows_finished")?))
}

/// A metric of [`OVER_SEEDS`] of one run.
pub fn over_seeds_value(s: &Value, path: &str, div: f64) -> Option<f64> {
    if path.is_empty() {
        unfinished(s)
    } else {
        get(s, path).map(|x| x / div)
    }
}

/// The runs grouped by their overrides (every run of one combination of
/// `--vary` values: its seeds), in the order first seen: the group's
/// overrides as `key=value ...` and its runs' summaries.
pub fn by_variant(rows: &[(String, Value)]) -> Vec<(String, Vec<&Value>)> {
    let mut out: Vec<(String, Vec<&Value>)> = Vec::new();
    for (_, s) in rows {
        let name = match s.get("overrides").and_then(Value::as_array) {
            Some(o) if !o.is_empty() => o
                .iter()
                .filter_map(|kv| Some(format!("{}={}", kv.get(0)?.as_str()?, kv.get(1)?.as_str()?)))
                .collect::<Vec<_>>()
                .join(" "),
            _ => "all runs".into(),
        };
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => v.push(s),
            None => out.push((name, vec![s])),
        }
    }
    out
}

/// Mean, lowest and highest of `v` (None when empty).
pub fn spread(v: &[f64]) -> Option<(f64, f64, f64)> {
    if v.is_empty() {
        return None;
    }
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((mean, lo, hi))
}

/// The table over seeds `rdmalab sweep` and `merge` print after the runs'
/// when a combination has more than one seed: per combination of the
/// varied values, each metric's mean over the seeds and their range
/// `[lowest, highest]`.
pub fn seeds_table(rows: &[(String, Value)]) -> Option<String> {
    let groups = by_variant(rows);
    if groups.iter().all(|(_, v)| v.len() < 2) {
        return None;
    }
    let mut out = String::from("over seeds: mean [lowest, highest]\n");
    for (name, runs) in &groups {
        out.push_str(&format!("{name} ({} seeds)\n", runs.len()));
        for (metric, path, div) in OVER_SEEDS {
            let v: Vec<f64> = runs
                .iter()
                .filter_map(|s| over_seeds_value(s, path, div))
                .collect();
            let cell = spread(&v).map_or("n/a".into(), |(m, lo, hi)| {
                format!("{m:.3} [{lo:.3}, {hi:.3}]")
            });
            out.push_str(&format!("  {metric:<16} {cell}\n"));
        }
    }
    Some(out)
}

/// A JSON number as Rust prints it: integers as integers, floats in their
/// shortest exact form (`0.5`, `3`), as `f64`'s `Display` does.
pub fn number(v: &Value) -> Option<String> {
    match v {
        Value::Number(n) => Some(match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u.to_string(),
            (None, Some(i)) => i.to_string(),
            _ => n.as_f64()?.to_string(),
        }),
        _ => None,
    }
}

/// A number of a summary as `f64` (None when absent or not a number).
pub fn get(s: &Value, path: &str) -> Option<f64> {
    s.pointer(path).and_then(Value::as_f64)
}

/// `sweep.csv`: a header, then one line per run (label and summary), in
/// the order given.
pub fn csv(rows: &[(String, Value)]) -> String {
    let mut out = String::from("label");
    for (name, _) in COLUMNS {
        out.push(',');
        out.push_str(name);
    }
    out.push('\n');
    for (label, s) in rows {
        out.push_str(label);
        for (_, path) in COLUMNS {
            out.push(',');
            if let Some(x) = s.pointer(path).and_then(number) {
                out.push_str(&x);
            }
        }
        out.push('\n');
    }
    out
}

/// The table `rdmalab sweep` and `rdmalab merge` print: one line per run,
/// then the table over seeds ([`seeds_table`]) when there is one.
pub fn table(rows: &[(String, Value)]) -> String {
    // The first column as wide as the longest label, so the others align.
    let w = rows.iter().map(|(l, _)| l.len()).max().unwrap_or(0).max(3);
    let mut out = format!(
        "{:<w$} {:>9} {:>9} {:>9} {:>10} {:>8} {:>8}\n",
        "run", "finished", "sd_mean", "sd_p99", "goodput", "drops", "pauses"
    );
    for (label, s) in rows {
        let u = |p: &str| s.pointer(p).and_then(Value::as_u64).unwrap_or(0);
        // A statistic of no values (null) reads n/a, never 0.
        let f =
            |p: &str, digits: usize| get(s, p).map_or("n/a".into(), |x| format!("{x:.digits$}"));
        out.push_str(&format!(
            "{:<w$} {:>4}/{:<4} {:>9} {:>9} {:>10} {:>8} {:>8}\n",
            label,
            u("/flows_finished"),
            u("/flows"),
            f("/slowdown/mean", 3),
            f("/slowdown/p99", 3),
            f("/total_goodput_gbps", 2),
            u("/dropped_packets"),
            u("/pause_frames"),
        ));
    }
    if let Some(t) = seeds_table(rows) {
        out.push_str(&t);
    }
    out
}
