//! Recurring random link failures (`action = "random_failures"`): the set
//! of down links changes at each interval and has the right size, flows
//! still finish when paths remain, the run is deterministic, the flows
//! hit are reported, and bad schedules are refused naming the key.

use crate::common;
use common::*;
use engine::time::US;
use experiment::Scenario;
use fabric::{DropReason, RunState};
use std::path::Path;

const FABRIC: &str = r#"
seed = 3
[topology]
kind = "leaf_spine"
leaves = 4
spines = 4
hosts_per_leaf = 4
host_gbps = 100
fabric_gbps = 100
[transport]
rto_us = 200
[[traffic]]
pattern = "poisson"
cdf = "websearch"
load = 0.3
duration_us = 1000
"#;

fn with_failures(extra: &str) -> String {
    format!(
        "{FABRIC}[[faults]]\naction = \"random_failures\"\nfraction = 0.125\ninterval_us = 100\nat_us = 50\nstop_us = 650\n{extra}"
    )
}

#[test]
fn down_set_changes_each_interval_with_the_right_size() {
    let text = with_failures("");
    let sc = Scenario::parse(&text, "t.toml").expect("parses");
    let mut net = experiment::build(&sc, Path::new("t.toml"), None)
        .expect("builds")
        .net;
    let links = net.switch_links();
    assert_eq!(links.len(), 16);
    assert!(net.randomly_failed_links().is_empty());
    let mut sets = Vec::new();
    for k in 0..6 {
        // Just after the k-th failure event (at 50 + 100 k us).
        let t = (50 + 100 * k) * US + 1;
        assert_ne!(net.run_until(t, u64::MAX), RunState::Done);
        let down = net.randomly_failed_links();
        assert_eq!(down.len(), 2, "interval {k}: {down:?}");
        assert!(down.iter().all(|l| links.contains(l)));
        sets.push(down);
    }
    let changes = sets.windows(2).filter(|w| w[0] != w[1]).count();
    assert!(changes >= 4, "the set barely changes: {sets:?}");
    net.run_until(651 * US, u64::MAX);
    assert!(net.randomly_failed_links().is_empty(), "all back at stop");
}

#[test]
fn flows_finish_deterministically_and_hits_are_reported() {
    let text = with_failures("");
    let a = run_toml(&text);
    let b = run_toml(&text);
    assert!(
        a.flows().iter().all(|f| f.fct().is_some()),
        "every flow finishes"
    );
    let (sa, sb) = (summary(&a), summary(&b));
    assert_eq!(
        serde_json::to_string(&sa).unwrap(),
        serde_json::to_string(&sb).unwrap(),
        "deterministic"
    );
    assert!(a.counters().dropped(DropReason::LinkDown) > 0);
    let hit = sa
        .flows_hit_by_failures
        .expect("reported with random failures");
    assert!(hit > 0 && hit <= a.flows().len(), "{hit}");
    // Every flow finished, so the slowdown of the hit ones covers them all,
    // and it is a subset's: within the overall range.
    let st = sa.slowdown_hit_by_failures.as_ref().expect("with failures");
    assert_eq!(st.count, hit);
    assert!(
        st.mean.unwrap() >= 1.0 && st.max.unwrap() <= sa.slowdown.max.unwrap(),
        "{st:?}"
    );
    let plain = summary(&run_toml(FABRIC));
    assert_eq!(plain.flows_hit_by_failures, None);
    assert!(plain.slowdown_hit_by_failures.is_none());
    // Another seed draws other links.
    let c = run_toml_seed(&text, Some(4));
    assert_ne!(
        serde_json::to_string(&summary(&c)).unwrap(),
        serde_json::to_string(&sa).unwrap()
    );
}

/// The links down just after the first failure event of a schedule failing
/// `fraction` of the 8x8 leaf-spine's 64 switch-to-switch links (Eunomia's
/// fabric).
fn failed_at_first_event(fraction: f64) -> usize {
    let text = format!(
        "seed = 1\n[topology]\nkind = \"leaf_spine\"\nleaves = 8\nspines = 8\nhosts_per_leaf = 2\n\
         [[traffic]]\npattern = \"poisson\"\ncdf = \"websearch\"\nload = 0.1\nduration_us = 20\n\
         [[faults]]\naction = \"random_failures\"\nfraction = {fraction}\ninterval_us = 100000\nat_us = 10\nstop_us = 1000000\n"
    );
    let sc = Scenario::parse(&text, "t.toml").expect("parses");
    let mut net = experiment::build(&sc, Path::new("t.toml"), None)
        .expect("builds")
        .net;
    assert_eq!(net.switch_links().len(), 64);
    net.run_until(11 * US, u64::MAX);
    net.randomly_failed_links().len()
}

#[test]
fn fractions_apart_fail_different_counts() {
    // Eunomia Fig 19's 1%, 2%, 5% and 10% of 64 links: rounded to the
    // nearest, 1% and 2% were both one link.
    let counts: Vec<usize> = [0.01, 0.02, 0.05, 0.1]
        .into_iter()
        .map(failed_at_first_event)
        .collect();
    assert_eq!(counts, vec![1, 2, 4, 7]);
}

#[test]
fn bad_schedules_name_their_key() {
    let cases = [
        ("fraction = 0.125", "fraction = 0", "faults[0].fraction"),
        ("fraction = 0.125", "fraction = 1.5", "faults[0].fraction"),
        (
            "interval_us = 100",
            "interval_us = 0",
            "faults[0].interval_us",
        ),
        ("stop_us = 650", "stop_us = 20", "faults[0].stop_us"),
        ("stop_us = 650", "", "faults[0].stop_us"),
        (
            "fraction = 0.125",
            "fraction = 0.1\nlink = [\"leaf0\", \"spine0\"]",
            "faults[0].link",
        ),
    ];
    for (from, to, key) in cases {
        let text = with_failures("").replace(from, to);
        let err = Scenario::parse(&text, "t.toml")
            .map_err(|e| e.to_string())
            .and_then(|sc| {
                experiment::build(&sc, Path::new("t.toml"), None)
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            })
            .expect_err(to);
        assert!(err.contains(key), "{to}: {err}");
    }
}
