//! The event loop runs conservative windows node by node (fabric's
//! `window.rs`). A window of one picosecond holds the events of one time
//! value, which is the plain global time order; the default window is the
//! shortest link delay. Both must give the same flow results and time
//! series: a node that ran ahead of causality inside a window, or a tie
//! order that hangs on where windows end, would show up here.

use experiment::{run, Scenario};
use std::path::Path;

/// What a run leaves that does not depend on when it stops: its events
/// past the last completion run to the end of the window, so the totals
/// differ by design (by a microsecond of traffic).
fn results(file: &str, window: Option<u64>) -> (String, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let sc = Scenario::parse(&text, file).unwrap();
    let mut built = experiment::build(&sc, &path, None).unwrap();
    if let Some(ps) = window {
        built.net.set_window(ps);
    }
    let o = run(built, |_| {});
    o.net.check_conservation().unwrap();
    let flows: Vec<_> = o.flows().iter().map(|f| (f.flow, f.finish)).collect();
    let series: Vec<_> = o.net.series().iter().map(|s| format!("{s:?}")).collect();
    (format!("{flows:?}"), series.join("\n"))
}

#[test]
fn one_picosecond_windows_give_the_same_results() {
    // PFC pauses and same-picosecond incast ties; ECN marking draws and
    // DCQCN; MP-RDMA's multipath with the synchronise flag; a link failure
    // and recovery with sampled series.
    for file in [
        "incast_pfc.toml",
        "dcqcn_fairness.toml",
        "mprdma_sync.toml",
        "link_failure.toml",
    ] {
        let (flows, series) = results(file, None);
        let (flows_1ps, series_1ps) = results(file, Some(1));
        assert_eq!(flows, flows_1ps, "{file}: flow results");
        assert_eq!(series, series_1ps, "{file}: time series");
    }
}
