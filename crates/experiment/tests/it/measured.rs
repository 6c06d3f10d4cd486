//! Measurement in steady state: `[output] warmup_us` leaves the flows that
//! start before it out of every FCT statistic (and says how many it
//! counted, how many of them did not finish, what they offered and got
//! delivered) while flows.csv keeps every flow; `[output] fct_window_us`
//! writes the mean FCT per window of start time; a sweep's table and
//! report give each metric's spread over the seeds.

use crate::common;
use experiment::{report, sweep_csv, Scenario};
use std::path::Path;

/// Six flows from host 0 to host 3, one every 10 us: the first two
/// before a 15 us warm-up.
fn scenario(output: &str, stop: &str) -> String {
    let mut t = format!(
        "{stop}\n[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\n\n[output]\n{output}\n"
    );
    for i in 0..6 {
        t.push_str(&format!(
            "[[flows]]\nsrc = 0\ndst = 3\nbytes = {}\nstart_us = {}\n",
            10_000 * (i + 1),
            10 * i
        ));
    }
    t
}

fn run(text: &str, dir: &Path) -> report::SummaryJson {
    let o = common::run_toml(text);
    let sc = Scenario::parse(text, "t.toml").unwrap();
    let ran = experiment::ran::Ran::new(&sc, text, &[]);
    let s = report::summary(&o, "t", 1, &ran);
    report::write_outputs(&o, &s, dir).unwrap();
    s
}

fn tmp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("rdmalab-measured-{name}-{}", std::process::id()))
}

#[test]
fn warmup_counts_only_flows_that_start_after_it() {
    let dir = tmp("warmup");
    let all = run(&scenario("", ""), &dir.join("all"));
    let s = run(&scenario("warmup_us = 15", ""), &dir.join("warm"));
    assert_eq!(all.fct_ns.count, 6);
    assert!(all.measured.is_none(), "no warm-up, no block");
    assert_eq!(s.flows, 6, "flows counts every flow");
    assert_eq!(s.flows_finished, 6);
    assert_eq!(s.fct_ns.count, 4, "the two flows before 15 us left out");
    assert_eq!(s.slowdown.count, 4);
    let by_size: usize = s.slowdown_by_size.iter().map(|b| b.slowdown.count).sum();
    assert_eq!(by_size, 4);
    let m = s.measured.as_ref().unwrap();
    assert_eq!((m.flows, m.flows_finished, m.flows_unfinished), (4, 4, 0));
    assert_eq!(m.warmup_us, 15.0);
    // 30+40+50+60 KB offered over the 35 us from the warm-up to the last
    // start.
    let offered = 180_000.0 * 8.0 / 35_000.0;
    assert!((m.offered_gbps.unwrap() - offered).abs() < 1e-3, "{m:?}");
    assert!(m.delivered_gbps > 0.0);
    // The mean FCT is the counted flows' (the later flows are larger).
    assert!(s.fct_ns.mean.unwrap() > all.fct_ns.mean.unwrap());
    let flows = std::fs::read_to_string(dir.join("warm/flows.csv")).unwrap();
    assert_eq!(flows.lines().count(), 7, "flows.csv lists every flow");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn unfinished_counted_flows_are_shown() {
    let dir = tmp("unfinished");
    let s = run(&scenario("warmup_us = 15", "stop_ms = 0.052"), &dir);
    let m = s.measured.unwrap();
    assert_eq!(m.flows, 4);
    assert!(
        m.flows_unfinished >= 1,
        "the flow started at 50 us cannot finish by 52 us: {m:?}"
    );
    assert_eq!(m.flows_finished + m.flows_unfinished, 4);
    assert_eq!(s.fct_ns.count, m.flows_finished);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn fct_over_time_has_a_window_per_span_of_starts() {
    let dir = tmp("windows");
    let s = run(&scenario("fct_window_us = 20", ""), &dir);
    let w = s.fct_over_time.as_ref().unwrap();
    // Starts 0..50 us in windows of 20 us: [0,20) [20,40) [40,60).
    assert_eq!(w.len(), 3);
    assert_eq!(w.iter().map(|x| x.flows).collect::<Vec<_>>(), vec![2, 2, 2]);
    assert!(w.iter().all(|x| x.flows_finished == 2));
    // Larger flows start later, so each window's mean FCT is longer.
    assert!(w[0].fct_mean_ns < w[1].fct_mean_ns && w[1].fct_mean_ns < w[2].fct_mean_ns);
    let csv = std::fs::read_to_string(dir.join("fct_over_time.csv")).unwrap();
    assert!(
        csv.starts_with("from_us,to_us,flows,flows_finished,fct_mean_ns,slowdown_mean\n0,20,2,2,")
    );
    assert_eq!(csv.lines().count(), 4);
    let text = experiment::summary_text::render(&s);
    assert!(
        text.contains("FCT over time (us)     mean per 20 us of start:"),
        "{text}"
    );
    let html = experiment::html::render_dir(&dir).unwrap();
    assert!(html.contains("id=\"fct-over-time\""));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_warmup_and_window_name_their_key() {
    for (out, key) in [
        ("warmup_us = -1", "output.warmup_us"),
        ("warmup_us = nan", "output.warmup_us"),
        ("fct_window_us = 0", "output.fct_window_us"),
        ("fct_window_us = 0.0001", "output.fct_window_us"),
    ] {
        let text = scenario(out, "");
        let err = match Scenario::parse(&text, "bad.toml") {
            Err(e) => e.to_string(),
            Ok(sc) => match experiment::build(&sc, Path::new("bad.toml"), None) {
                Err(e) => e.to_string(),
                Ok(_) => panic!("{out} should be refused"),
            },
        };
        assert!(err.contains(key), "{out}: {err}");
    }
}

/// A summary as sweep.csv reads it.
fn row(over: &str, seed: u64, fct: f64, flows_finished: u64) -> (String, serde_json::Value) {
    (
        format!("seed{seed}_{over}"),
        serde_json::json!({
            "seed": seed, "overrides": [["k", over]], "flows": 10,
            "flows_finished": flows_finished, "fct_ns": {"mean": fct},
            "slowdown": {"mean": 1.0, "p99": 2.0}, "delivered_gbps": 5.0,
        }),
    )
}

#[test]
fn sweep_table_gives_each_variant_its_spread_over_seeds() {
    let rows = vec![
        row("a", 1, 1000.0, 10),
        row("a", 2, 3000.0, 8),
        row("b", 1, 5000.0, 10),
        row("b", 2, 5000.0, 10),
    ];
    let t = sweep_csv::table(&rows);
    assert!(
        t.contains("k=a (2 seeds)\n  fct_mean_us      2.000 [1.000, 3.000]\n"),
        "{t}"
    );
    assert!(
        t.contains("  unfinished       1.000 [0.000, 2.000]\n"),
        "{t}"
    );
    assert!(
        t.contains("k=b (2 seeds)\n  fct_mean_us      5.000 [5.000, 5.000]\n"),
        "{t}"
    );
    let one_seed = sweep_csv::table(&rows[..1]);
    assert!(!one_seed.contains("over seeds"), "no spread of one seed");
}
