//! `[output] from_us` / `until_us`: a sampling window records exactly the
//! samples a run without it records in that window (same times, same
//! values: the rates' first interval is primed), and nothing outside it.

use experiment::{run, Scenario};
use std::path::Path;

fn series(extra: &str) -> Vec<engine::stats::TimeSeries> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/dcqcn_fairness.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let text = text.replace("sample_us = 100\n", &format!("sample_us = 100\n{extra}"));
    let sc = Scenario::parse(&text, "test.toml").unwrap();
    let built = experiment::build(&sc, &path, None).unwrap();
    run(built, |_| {}).net.series().to_vec()
}

#[test]
fn a_window_keeps_the_samples_of_the_whole_run_inside_it() {
    let whole = series("");
    // Not on a sample time: the window's first sample is the next one.
    let (from, until) = (1_250.0, 3_000.0);
    let part = series(&format!("from_us = {from}\nuntil_us = {until}\n"));
    assert_eq!(whole.len(), part.len());
    let us = engine::time::US as f64;
    for (w, p) in whole.iter().zip(&part) {
        assert_eq!(w.name, p.name);
        let inside: Vec<_> = w
            .points
            .iter()
            .filter(|(t, _)| (*t as f64) >= from * us && (*t as f64) <= until * us)
            .copied()
            .collect();
        assert!(!inside.is_empty(), "{}: the window holds samples", w.name);
        assert!(inside.len() < w.points.len(), "{}: and not all", w.name);
        assert_eq!(inside, p.points, "{}", w.name);
    }
}

#[test]
fn a_window_that_ends_before_it_starts_is_refused_by_name() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/dcqcn_fairness.toml");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "sample_us = 100\n",
        "sample_us = 100\nfrom_us = 500\nuntil_us = 400\n",
    );
    let sc = Scenario::parse(&text, "test.toml").unwrap();
    let err = experiment::build(&sc, &path, None)
        .err()
        .expect("refused")
        .to_string();
    assert!(err.contains("output.until_us"), "{err}");
}

/// A run with no known end (no `stop_ms`, no `until_us`) cannot be
/// refused before it starts: its series stop at the most they may hold
/// (`MAX_SAMPLED_VALUES`), and the run says when.
#[test]
fn series_with_no_known_end_stop_at_their_bound() {
    // 12 ports, 2 series each, every 10 ns: the bound is reached after
    // 8.3 ms, and the flow (20 MB at 10 Gb/s) lasts 16 ms.
    let ports: Vec<String> = [
        ("leaf0", "h0"),
        ("leaf0", "h1"),
        ("leaf1", "h2"),
        ("leaf1", "h3"),
    ]
    .into_iter()
    .chain(
        ["leaf0", "leaf1"]
            .into_iter()
            .flat_map(|l| [(l, "spine0"), (l, "spine1")]),
    )
    .flat_map(|(a, b)| [format!("[\"{a}\", \"{b}\"]"), format!("[\"{b}\", \"{a}\"]")])
    .collect();
    let text = format!(
        "[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\n\
         host_gbps = 10\nfabric_gbps = 10\n\n[[flows]]\nsrc = 0\ndst = 3\nbytes = 20000000\n\n\
         [output]\nsample_us = 0.01\nports = [{}]\n",
        ports.join(", ")
    );
    let sc = Scenario::parse(&text, "test.toml").unwrap();
    let built = match experiment::build(&sc, Path::new("test.toml"), None) {
        Ok(b) => b,
        Err(e) => panic!("{e}"),
    };
    let o = run(built, |_| {});
    let values: u64 = o.net.series().iter().map(|s| s.points.len() as u64).sum();
    assert!(values <= fabric::MAX_SAMPLED_VALUES, "{values} values");
    assert!(values > fabric::MAX_SAMPLED_VALUES - 64, "{values} values");
    let stopped = o.net.sampling_stopped().expect("sampling stopped");
    assert!(
        stopped < o.end_time,
        "stopped at {stopped}, the run ended at {}",
        o.end_time
    );
}
