//! Acceptance tests of the lossless RoCEv2 fabric (issue: simulator core):
//! line rate on an idle path, incast with and without PFC, go-back-N under
//! random loss, faults, and conservation on every run.

use crate::common;
use common::*;
use engine::time::{NS, SEC};
use fabric::DropReason;

const ONE_FLOW: &str = r#"
[topology]
kind = "testbed"
paths = 1
hosts_per_tor = 1
host_gbps = 100
fabric_gbps = 100
[[flows]]
src = 0
dst = 1
bytes = 20_000_000
"#;

#[test]
fn one_long_flow_reaches_line_rate_and_ideal_fct() {
    let o = run_toml(ONE_FLOW);
    let f = &o.flows()[0];
    let fct = f.fct().expect("flow finishes");
    let goodput = 20e6 * 8.0 / (fct as f64 / SEC as f64);
    let net_line_rate = 100e9 * 1000.0 / 1048.0;
    assert!(
        goodput >= 0.97 * net_line_rate,
        "goodput {goodput:.3e} below 97% of {net_line_rate:.3e}"
    );
    let err = (fct as f64 - f.ideal as f64).abs() / f.ideal as f64;
    assert!(
        err < 0.01,
        "fct {} ns vs ideal {} ns",
        fct / NS,
        f.ideal / NS
    );
    assert_eq!(o.counters().total_dropped_packets(), 0);
    assert_eq!(o.counters().pause_frames, 0);
}

fn incast(pfc: bool, buffer_mb: f64) -> String {
    format!(
        r#"
[topology]
kind = "leaf_spine"
leaves = 3
spines = 2
hosts_per_leaf = 16
host_gbps = 100
fabric_gbps = 100
[switch]
pfc = {pfc}
buffer_mb = {buffer_mb}
[transport]
rto_us = 500
[[traffic]]
pattern = "incast"
receiver = 0
senders = [{senders}]
bytes = 500_000
"#,
        senders = (1..=32)
            .map(|i| (i + 8).to_string())
            .collect::<Vec<_>>()
            .join(",")
    )
}

#[test]
fn incast_with_pfc_never_drops_and_pauses() {
    let o = run_toml(&incast(true, 9.0));
    let c = o.counters();
    assert_eq!(c.total_dropped_packets(), 0, "{:?}", c.dropped_packets);
    assert!(c.pause_frames > 0, "no PAUSE frames under a 32-to-1 incast");
    assert!(c.resume_frames > 0);
    assert!(o.flows().iter().all(|f| f.finish.is_some()));
    // PAUSE frames are sent by switch ports toward the senders' side.
    let paused_ports = o.net.ports().iter().filter(|p| p.pause_sent > 0).count();
    assert!(paused_ports > 0);
}

#[test]
fn incast_without_pfc_drops_and_go_back_n_recovers() {
    let o = run_toml(&incast(false, 0.5));
    let c = o.counters();
    let buffer_drops = c.dropped(DropReason::BufferFull) + c.dropped(DropReason::EgressThreshold);
    assert!(buffer_drops > 0, "a 0.5 MB buffer under 32-to-1 must drop");
    assert_eq!(c.pause_frames, 0);
    assert!(
        o.flows().iter().all(|f| f.finish.is_some()),
        "every flow completes"
    );
    let s = summary(&o);
    assert!(s.retransmitted_packets > 0);
}

fn lossy(loss: f64) -> String {
    format!(
        r#"
[topology]
kind = "testbed"
paths = 1
hosts_per_tor = 1
host_gbps = 100
fabric_gbps = 100
[transport]
rto_us = 500
[[flows]]
src = 0
dst = 1
bytes = 5_000_000
[[faults]]
link = ["tor0", "spine0"]
direction = "forward"
action = "loss"
loss = {loss}
"#
    )
}

#[test]
fn go_back_n_under_one_percent_loss_completes_far_slower() {
    let clean = run_toml(&lossy(0.0));
    let lossy = run_toml(&lossy(0.01));
    let g = |o: &experiment::Outcome| {
        experiment::Outcome::goodput_bps(&o.flows()[0]).expect("finishes")
    };
    let (g0, g1) = (g(&clean), g(&lossy));
    assert!(lossy.counters().dropped(DropReason::LinkLoss) > 0);
    assert!(
        g1 < 0.7 * g0,
        "go-back-N at 1% loss should be far below lossless: {g1:.3e} vs {g0:.3e}"
    );
    eprintln!(
        "go-back-N goodput: lossless {:.2} Gb/s, 1% loss {:.2} Gb/s",
        g0 / 1e9,
        g1 / 1e9
    );
}

#[test]
fn link_down_reroutes_and_degraded_link_slows() {
    let base = r#"
[topology]
kind = "testbed"
paths = 2
hosts_per_tor = 1
host_gbps = 10
fabric_gbps = 10
[transport]
rto_us = 200
[[flows]]
src = 0
dst = 1
bytes = 2_000_000
"#;
    let down = format!(
        "{base}[[faults]]\nlink = [\"tor0\", \"spine0\"]\naction = \"down\"\nat_us = 100\n[[faults]]\nlink = [\"tor0\", \"spine1\"]\naction = \"down\"\nat_us = 100\n[[faults]]\nlink = [\"tor0\", \"spine1\"]\naction = \"up\"\nat_us = 600\n"
    );
    let o = run_toml(&down);
    let f = &o.flows()[0];
    let fct = f.fct().expect("flow completes after the path returns");
    assert!(fct > 600_000 * NS, "both paths were down until 600 us");
    let slow = format!(
        "{base}[[faults]]\nlink = [\"tor0\", \"spine0\"]\naction = \"rate\"\ngbps = 1\n[[faults]]\nlink = [\"tor0\", \"spine1\"]\naction = \"rate\"\ngbps = 1\n"
    );
    let o2 = run_toml(&slow);
    let fct2 = o2.flows()[0].fct().unwrap();
    // At 1 Gb/s the 2 MB flow needs at least 16 ms.
    assert!(fct2 > 16_000_000 * NS, "{fct2}");
}

/// An "ecn" fault re-sets one port's RED marking: a 2-to-1 incast marks
/// nothing with the default thresholds on an 8 MB buffer, and marks once
/// the bottleneck uplink is told to mark above 10 KB.
#[test]
fn ecn_fault_sets_one_ports_marking() {
    let base = r#"
[topology]
kind = "testbed"
paths = 1
hosts_per_tor = 2
[switch]
ecn_table = [{ gbps = 0, kmin_kb = 100000, kmax_kb = 100000, pmax = 1.0 }]
[[flows]]
src = 0
dst = 2
bytes = 2_000_000
[[flows]]
src = 1
dst = 2
bytes = 2_000_000
"#;
    assert_eq!(run_toml(base).counters().ecn_marked, 0);
    let marked = run_toml(&format!(
        "{base}[[faults]]\nlink = [\"tor0\", \"spine0\"]\naction = \"ecn\"\nkmin_kb = 10\nkmax_kb = 10\npmax = 1.0\n"
    ));
    assert!(
        marked.counters().ecn_marked > 100,
        "{}",
        marked.counters().ecn_marked
    );
    let bad = format!(
        "{base}[[faults]]\nlink = [\"tor0\", \"spine0\"]\naction = \"ecn\"\nkmin_kb = 10\n"
    );
    let e = experiment::scenario::Scenario::parse(&bad, "t.toml")
        .and_then(|sc| experiment::build(&sc, std::path::Path::new("t.toml"), None).map(|_| ()))
        .unwrap_err();
    assert!(
        e.to_string().contains("needs kmin_kb, kmax_kb and pmax"),
        "{e}"
    );
}
