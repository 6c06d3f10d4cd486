//! SRPT scheduling (`[switch] scheduling = "srpt"`) in whole scenarios:
//! under web-search traffic on a lossy fabric it cuts the small flows'
//! slowdown against FIFO; under PFC it never drops and every buffer is
//! released (conservation is checked on every run); `"fifo"` is the
//! default. (The overtaking itself is `switch/srpt/kick.rs`'s test.)

use crate::common;
use common::*;

fn websearch(scheduling: &str, pfc: bool) -> String {
    format!(
        r#"
seed = 1
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 8
host_gbps = 100
fabric_gbps = 100
[switch]
pfc = {pfc}
{scheduling}
[transport]
kind = "irn"
[[traffic]]
pattern = "poisson"
cdf = "websearch"
load = 0.6
duration_us = 3000
"#
    )
}

/// Mean slowdown of the flows below 100 KB.
fn small_slowdown(o: &experiment::Outcome) -> f64 {
    let v: Vec<f64> = o
        .flows()
        .iter()
        .filter(|f| f.flow.bytes < 100_000)
        .map(|f| f.fct().expect("finished") as f64 / f.ideal as f64)
        .collect();
    assert!(v.len() > 50, "{} small flows", v.len());
    mean(&v)
}

#[test]
fn srpt_cuts_small_flows_slowdown_on_a_lossy_fabric() {
    let fifo = run_toml(&websearch("", false));
    let srpt = run_toml(&websearch("scheduling = \"srpt\"", false));
    for o in [&fifo, &srpt] {
        assert!(o.flows().iter().all(|f| f.fct().is_some()));
    }
    let (a, b) = (small_slowdown(&fifo), small_slowdown(&srpt));
    assert!(b * 2.0 < a, "small flows: FIFO {a:.2}, SRPT {b:.2}");
}

#[test]
fn srpt_under_pfc_never_drops() {
    let o = run_toml(&websearch("scheduling = \"srpt\"", true));
    let c = o.counters();
    assert_eq!(c.total_dropped_packets(), 0, "{:?}", c.dropped_packets);
    assert!(c.pause_frames > 0, "the run pauses");
    assert!(o.flows().iter().all(|f| f.fct().is_some()));
}

#[test]
fn fifo_is_the_default() {
    let a = summary(&run_toml(&websearch("", true)));
    let b = summary(&run_toml(&websearch("scheduling = \"fifo\"", true)));
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
}
