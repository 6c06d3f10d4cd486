//! The event loop runs conservative windows node by node (fabric's
//! `window.rs`). A window of one picosecond holds the events of one time
//! value, which is the plain global time order; the default window is the
//! shortest link delay. Both must give the same flow results and time
//! series: a node that ran ahead of causality inside a window, or a tie
//! order that hangs on where windows end, would show up here.

use experiment::{run, Outcome, Scenario};
use fabric::Network;
use std::path::Path;

/// What a run leaves that does not depend on when it stops: its events
/// past the last completion run to the end of the window, so the totals
/// differ by design (by a microsecond of traffic).
fn results(file: &str, window: Option<u64>) -> (String, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(file);
    results_of(&std::fs::read_to_string(&path).unwrap(), &path, window)
}

fn results_of(text: &str, path: &Path, window: Option<u64>) -> (String, String) {
    let o = outcome(text, path, |net| {
        if let Some(ps) = window {
            net.set_window(ps);
        }
    });
    flows_and_series(&o)
}

/// Runs a scenario to its end, set up by `setup`; conservation holds.
fn outcome(text: &str, path: &Path, setup: impl FnOnce(&mut Network)) -> Outcome {
    let sc = Scenario::parse(text, "test.toml").unwrap();
    let mut built = experiment::build(&sc, path, None).unwrap();
    setup(&mut built.net);
    let o = run(built, |_| {});
    o.net.check_conservation().unwrap();
    o
}

/// Each flow's completion, and the sampled series.
fn flows_and_series(o: &Outcome) -> (String, String) {
    let flows: Vec<_> = o.flows().iter().map(|f| (f.flow, f.finish)).collect();
    let series: Vec<_> = o.net.series().iter().map(|s| format!("{s:?}")).collect();
    (format!("{flows:?}"), series.join("\n"))
}

#[test]
fn one_picosecond_windows_give_the_same_results() {
    // PFC pauses and same-picosecond incast ties; drops in a lossy fabric;
    // go-back-N and IRN under random loss; ECN marking draws and DCQCN;
    // MP-RDMA with the synchronise flag, with lossy paths and with a link
    // that goes down and up; a link failure with sampled series; the
    // built-in example.
    for file in [
        "incast_pfc.toml",
        "incast_lossy.toml",
        "lossy_path.toml",
        "dcqcn_fairness.toml",
        "mprdma_sync.toml",
        "mprdma_lossy_paths.toml",
        "mprdma_link_updown.toml",
        "link_failure.toml",
        "example.toml",
    ] {
        let (flows, series) = results(file, None);
        let (flows_1ps, series_1ps) = results(file, Some(1));
        assert_eq!(flows, flows_1ps, "{file}: flow results");
        assert_eq!(series, series_1ps, "{file}: time series");
    }
}

/// An incast with DCQCN over links of the given delay.
fn incast(delay_ns: u64) -> String {
    format!(
        r#"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 8
delay_ns = {delay_ns}
[switch]
pfc = true
buffer_mb = 1
[transport]
cc = "dcqcn"
[[traffic]]
pattern = "incast"
receiver = 0
senders = [8, 9, 10, 11, 12, 13, 14, 15, 1, 2]
bytes = 200_000
[output]
sample_us = 5
"#
    )
}

#[test]
fn long_and_zero_delay_links() {
    // 10 us windows hold many events of a node; links of no delay make
    // windows of one picosecond, with frames that arrive when sent.
    for delay_ns in [10_000, 0] {
        let text = incast(delay_ns);
        let path = Path::new("test.toml");
        let (flows, series) = results_of(&text, path, None);
        assert!(
            !flows.contains("None"),
            "{delay_ns} ns: every flow finished"
        );
        assert_eq!(
            (flows, series),
            results_of(&text, path, Some(1)),
            "{delay_ns} ns"
        );
    }
}

/// Flow results, series and counters of a run, with calm switches
/// deferring their ports' transmission ends or not; and how many were.
fn with_deferred_ends(text: &str, path: &Path, on: bool) -> (String, u64) {
    let o = outcome(text, path, |net| net.set_deferred_ends(on));
    let (flows, series) = flows_and_series(&o);
    let c = o.counters();
    let counts = (c.events, c.pause_frames, c.resume_frames, c.ecn_marked);
    (
        format!("{flows}\n{series}\n{counts:?}"),
        o.net.deferred_ends(),
    )
}

#[test]
fn deferred_transmission_ends_give_the_same_results() {
    // PFC pausing and resuming (calm comes and goes); DCQCN's ECN draws;
    // a link whose rate drops mid-run (MP-RDMA, lossy: never calm); link
    // failures with sampled series; the built-in example; long links.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut cases: Vec<(String, String)> = [
        "incast_pfc.toml",
        "dcqcn_fairness.toml",
        "mprdma_ood.toml",
        "link_failure.toml",
        "example.toml",
    ]
    .iter()
    .map(|f| (f.to_string(), std::fs::read_to_string(dir.join(f)).unwrap()))
    .collect();
    cases.push(("incast 10 us".into(), incast(10_000)));
    let mut deferred = 0;
    for (name, text) in cases {
        let path = dir.join("test.toml");
        let (on, n) = with_deferred_ends(&text, &path, true);
        let (off, none) = with_deferred_ends(&text, &path, false);
        assert_eq!(none, 0, "{name}");
        assert_eq!(on, off, "{name}");
        deferred += n;
    }
    assert!(deferred > 10_000, "only {deferred} ends were deferred");
}
