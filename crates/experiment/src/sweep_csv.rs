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
pub const COLUMNS: [(&str, &str); 22] = [
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
];

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

/// The table `rdmalab sweep` and `rdmalab merge` print: one line per run.
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
    out
}
