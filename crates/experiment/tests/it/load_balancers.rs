//! The packet- and flowlet-level load balancers (`[switch] load_balancer`):
//! spray, DRILL and power of two spread one long flow over a leaf's
//! uplinks; LetFlow moves a flow only after an idle gap longer than its
//! timeout; CONGA moves new flowlets off a slow uplink but keeps a flow
//! within its gap on its path; each scheme runs by its name, a seed fixes
//! its run, and its results do not hang on how the event loop batches
//! (windows, deferred transmission ends). Bad names and parameters are in
//! `bad_input.rs`; CONGA's feedback tables are checked in the fabric
//! crate (`switch/lb/conga/tests.rs`).

use crate::common;
use common::*;
use experiment::{run, Outcome, Scenario};
use fabric::{LoadBalancer, Network};
use std::path::Path;

/// Bytes each uplink of `leaf` sent, by spine order.
fn uplink_bytes(o: &Outcome, leaf: &str) -> Vec<u64> {
    let nodes = &o.net.topology().nodes;
    let ports = o.net.ports();
    (0..ports.len())
        .filter(|&p| {
            nodes[ports[p].node as usize].name == leaf
                && nodes[ports[p ^ 1].node as usize].name.starts_with("spine")
        })
        .map(|p| ports[p].tx_bytes)
        .collect()
}

/// One 8 MB flow from leaf0 to leaf1 over four spines: hosts at 100 Gb/s,
/// uplinks at `fabric_gbps`. At 25 Gb/s the flow needs all four (at 100
/// Gb/s a lone flow never queues, and the queue-aware schemes rightly keep
/// it on the path they remember).
fn one_long_flow(lb: &str, fabric_gbps: u32, extra: &str) -> String {
    format!(
        r#"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 4
hosts_per_leaf = 1
host_gbps = 100
fabric_gbps = {fabric_gbps}
[switch]
load_balancer = "{lb}"
{extra}
[[flows]]
src = 0
dst = 1
bytes = 8_000_000
"#
    )
}

/// Each uplink's share of leaf0's uplink bytes is within `tolerance` of
/// an equal share.
fn assert_spread(lb: &str, tolerance: f64) {
    let o = run_toml(&one_long_flow(lb, 25, ""));
    assert!(o.flows()[0].finish.is_some(), "{lb}: the flow finishes");
    let up = uplink_bytes(&o, "leaf0");
    assert_eq!(up.len(), 4);
    let total: u64 = up.iter().sum();
    assert!(total >= 8_000_000, "{lb}: {up:?}");
    let share = total as f64 / 4.0;
    for &b in &up {
        assert!(
            (b as f64 - share).abs() <= tolerance * share,
            "{lb}: uplink bytes {up:?}, not within {tolerance} of {share}"
        );
    }
}

#[test]
fn spray_spreads_one_flow_evenly() {
    assert_spread("spray", 0.10);
}

#[test]
fn drill_spreads_one_flow_evenly() {
    assert_spread("drill", 0.10);
}

#[test]
fn power_of_two_spreads_one_flow_roughly() {
    assert_spread("power_of_two", 0.20);
}

#[test]
fn ecmp_keeps_one_flow_on_one_uplink() {
    let o = run_toml(&one_long_flow("ecmp", 25, ""));
    let up = uplink_bytes(&o, "leaf0");
    assert_eq!(up.iter().filter(|&&b| b > 0).count(), 1, "{up:?}");
}

/// One flow of 40 packets from leaf0 to leaf1 (four spines) whose host
/// link runs at 50 Mb/s: its packets reach leaf0 167.7 us apart (1048
/// bytes each), idle in between.
fn gapped_flow(gap_us: f64, seed: u64) -> Outcome {
    let text = format!(
        r#"
seed = {seed}
[topology]
kind = "leaf_spine"
leaves = 2
spines = 4
hosts_per_leaf = 1
host_gbps = 0.05
fabric_gbps = 100
[switch]
load_balancer = "letflow"
[switch.letflow]
gap_us = {gap_us}
[transport]
rto_us = 100_000
[[flows]]
src = 0
dst = 1
bytes = 40_000
"#
    );
    let o = run_toml(&text);
    assert!(o.flows()[0].finish.is_some(), "the flow finishes");
    o
}

#[test]
fn letflow_moves_a_flow_only_after_a_gap_longer_than_its_timeout() {
    for seed in 1..=3 {
        // Gaps of 167.7 us: within a 190 us timeout the flow is one
        // flowlet and keeps one uplink...
        let up = uplink_bytes(&gapped_flow(190.0, seed), "leaf0");
        assert_eq!(up.iter().filter(|&&b| b > 0).count(), 1, "{up:?}");
        // ...beyond a 150 us one, each packet starts a flowlet on a random
        // uplink: 40 draws of 4 cover more than one.
        let up = uplink_bytes(&gapped_flow(150.0, seed), "leaf0");
        assert!(up.iter().filter(|&&b| b > 0).count() > 1, "{up:?}");
    }
}

#[test]
fn letflow_never_moves_a_continuous_flow() {
    // The 8 MB flow at line rate through 100 Gb/s uplinks has no gap: one
    // flowlet, one uplink, even with a timeout of one microsecond. (Through
    // 25 Gb/s uplinks PFC pauses the sender: gaps of a few microseconds,
    // far below the default 100 us.)
    for (fabric, gap) in [(100, ""), (100, "[switch.letflow]\ngap_us = 1"), (25, "")] {
        let o = run_toml(&one_long_flow("letflow", fabric, gap));
        let up = uplink_bytes(&o, "leaf0");
        assert_eq!(
            up.iter().filter(|&&b| b > 0).count(),
            1,
            "{fabric} {gap}: {up:?}"
        );
    }
}

/// Every scheme by its name: a permutation over a leaf-spine with queues
/// (25 Gb/s uplinks), PFC pausing, go-back-N.
fn permutation(lb: &str) -> String {
    format!(
        r#"
seed = 7
[topology]
kind = "leaf_spine"
leaves = 4
spines = 4
hosts_per_leaf = 4
host_gbps = 100
fabric_gbps = 25
[switch]
load_balancer = "{lb}"
buffer_mb = 1
[[traffic]]
pattern = "permutation"
bytes = 300_000
[output]
sample_us = 20
"#
    )
}

/// Runs `text`, set up by `setup`; conservation holds.
fn outcome(text: &str, setup: impl FnOnce(&mut Network)) -> Outcome {
    let sc = Scenario::parse(text, "test.toml").unwrap();
    let mut built = experiment::build(&sc, Path::new("test.toml"), None).unwrap();
    setup(&mut built.net);
    let o = run(built, |_| {});
    o.net.check_conservation().unwrap();
    o
}

/// What a run leaves: each flow's completion, the series, the counters.
fn results(o: &Outcome) -> String {
    let flows: Vec<_> = o.flows().iter().map(|f| (f.flow, f.finish)).collect();
    let series: Vec<_> = o.net.series().iter().map(|s| format!("{s:?}")).collect();
    let c = o.counters();
    let counts = (c.pause_frames, c.resume_frames, c.ecn_marked);
    format!("{flows:?}\n{}\n{counts:?}", series.join("\n"))
}

#[test]
fn every_scheme_runs_by_name_and_a_seed_fixes_its_run() {
    let mut finishes = Vec::new();
    for &(name, lb) in LoadBalancer::NAMES {
        assert_eq!(lb.name(), name);
        let text = permutation(name);
        let o = outcome(&text, |_| {});
        assert!(
            o.flows().iter().all(|f| f.finish.is_some()),
            "{name}: every flow finishes"
        );
        assert_eq!(results(&o), results(&outcome(&text, |_| {})), "{name}");
        finishes.push(results(&o));
    }
    // The schemes do choose differently.
    finishes.sort();
    finishes.dedup();
    assert_eq!(finishes.len(), LoadBalancer::NAMES.len());
}

#[test]
fn schemes_that_read_queues_see_them_whatever_the_loop_batches() {
    // Queue-aware schemes read their candidates' queues: those must be the
    // same whether a calm switch defers its transmission ends or not, and
    // whether windows hold one picosecond or a link delay.
    for lb in ["drill", "power_of_two", "letflow", "spray", "conga"] {
        let text = permutation(lb);
        let base = outcome(&text, |_| {});
        assert!(base.net.deferred_ends() > 1000, "{lb}: ends were deferred");
        let base = results(&base);
        let no_defer = outcome(&text, |net| net.set_deferred_ends(false));
        assert_eq!(base, results(&no_defer), "{lb}: deferred ends");
        let one_ps = outcome(&text, |net| net.set_window(1));
        assert_eq!(base, results(&one_ps), "{lb}: 1 ps windows");
    }
}

#[test]
fn drill_parameters_change_its_choices() {
    // DRILL(1, 0) is a random hop per packet, DRILL(16, 8) sees every hop
    // of a four-spine leaf; each runs to the end, differently.
    let mut seen = Vec::new();
    for (d, m) in [(2, 1), (1, 0), (2, 0), (3, 4), (16, 8)] {
        let text = permutation("drill").replace(
            "buffer_mb = 1\n",
            &format!("buffer_mb = 1\n[switch.drill]\nd = {d}\nm = {m}\n"),
        );
        let o = outcome(&text, |_| {});
        assert!(
            o.flows().iter().all(|f| f.finish.is_some()),
            "DRILL({d}, {m}): every flow finishes"
        );
        seen.push(results(&o));
    }
    assert_eq!(seen[0], results(&outcome(&permutation("drill"), |_| {})));
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 5);
}

/// Eunomia's thesis in miniature: DRILL spreads one flow's packets over
/// four uplinks and reorders them; under go-back-N without an ordering
/// layer that triggers retransmissions of packets that were not lost,
/// and with the ideal ordering layer at the receiving NIC it triggers
/// none (the same reordering still arrives: counted before the layer).
#[test]
fn drill_under_go_back_n_retransmits_for_reordering_only_without_the_ideal_layer() {
    let reordering = |ordering: &str| {
        let text = one_long_flow("drill", 25, "").replace(
            "[switch]",
            &format!("[transport]\nordering = \"{ordering}\"\n[switch]"),
        );
        let o = run_toml(&text);
        assert!(
            o.flows()[0].finish.is_some(),
            "{ordering}: the flow finishes"
        );
        assert_eq!(o.counters().total_dropped_packets(), 0, "lossless");
        let s = experiment::report::summary(&o, "t", 0, &common::any_ran());
        (s.reordering, s.ordering)
    };
    let (none, _) = reordering("none");
    let (ideal, _) = reordering("ideal");
    assert!(none.ooo_packets > 0 && none.reorder_retx > 0, "{none:?}");
    assert!(ideal.ooo_packets > 0, "{ideal:?}");
    assert_eq!(ideal.reorder_retx, 0, "{ideal:?}");
    // Eunomia's layer: the same, with its bitmap made, grown within the
    // cap (32 bytes), freed at the end, and its memory reported.
    let (eu, o) = reordering("eunomia");
    let o = o.expect("a bitmap layer");
    assert!(eu.ooo_packets > 0, "{eu:?}");
    assert_eq!(eu.reorder_retx, 0, "{eu:?}");
    assert_eq!(o.tracked_packets, eu.ooo_packets, "{o:?}");
    assert!(
        o.bitmaps_made > 0 && o.bitmaps_made == o.bitmaps_freed,
        "{o:?}"
    );
    assert_eq!(o.end_bitmap_bytes + o.end_metadata_bytes, 0);
    // The metadata (48 bytes) and at least one 2-byte block.
    assert!(o.nic_peak_bytes_max >= 50, "{o:?}");
    assert!((2..=32).contains(&o.qp_peak_bitmap_bytes_max), "{o:?}");
}

/// 120 flows of 60 KB from leaf0's four hosts to leaf1's, one every 10 us
/// (each its own flowlet), over four spines; the leaf0-spine0 link runs at
/// 10 Gb/s, the others at 100.
fn slow_uplink(lb: &str) -> Outcome {
    let mut text = format!(
        r#"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 4
hosts_per_leaf = 4
host_gbps = 100
fabric_gbps = 100
[switch]
load_balancer = "{lb}"
[[faults]]
link = ["leaf0", "spine0"]
action = "rate"
gbps = 10
"#
    );
    for i in 0..120 {
        text += &format!(
            "[[flows]]\nsrc = {}\ndst = {}\nbytes = 60_000\nstart_us = {}\n",
            i % 4,
            4 + (i / 4) % 4,
            i * 10
        );
    }
    let o = run_toml(&text);
    assert!(o.flows().iter().all(|f| f.finish.is_some()), "{lb}");
    o
}

#[test]
fn conga_moves_new_flowlets_off_a_slow_uplink() {
    let ecmp = uplink_bytes(&slow_uplink("ecmp"), "leaf0");
    let conga = uplink_bytes(&slow_uplink("conga"), "leaf0");
    // ECMP hashes about a quarter of the flows onto the slow uplink; CONGA
    // sees its DRE full and sends new flowlets elsewhere.
    assert!(ecmp[0] > 1_000_000, "ecmp {ecmp:?}");
    assert!(conga[0] * 3 < ecmp[0], "conga {conga:?}, ecmp {ecmp:?}");
    assert!(conga[1..].iter().all(|&b| b > 2 * conga[0]), "{conga:?}");
}

#[test]
fn conga_keeps_a_flow_within_its_gap_on_its_path() {
    // One 8 MB flow, no gap of 100 us (PFC pauses it for a few
    // microseconds at a time through 25 Gb/s uplinks): one flowlet, one
    // uplink, however its DRE rises.
    for fabric in [100, 25] {
        let o = run_toml(&one_long_flow("conga", fabric, ""));
        assert!(o.flows()[0].finish.is_some());
        let up = uplink_bytes(&o, "leaf0");
        assert_eq!(up.iter().filter(|&&b| b > 0).count(), 1, "{fabric}: {up:?}");
    }
    // With a 1 us gap, the PFC pauses split it into flowlets that move.
    let o = run_toml(&one_long_flow("conga", 25, "[switch.conga]\ngap_us = 1"));
    let up = uplink_bytes(&o, "leaf0");
    assert!(up.iter().filter(|&&b| b > 0).count() > 1, "{up:?}");
}
