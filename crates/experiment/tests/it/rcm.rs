//! The VOQ switch model and RCM (`[switch] model = "voq"`,
//! `[switch.rcm]`) in whole scenarios: round-robin fairness across the
//! inputs of an output; the paper's victim flow (Fig 7: a four-to-one
//! incast whose PFC back-pressure blocks a flow that shares its first-hop
//! switch, unless RCM throttles the incast there); RCC throttles only
//! flows that were harmful (in a CAM or named by a notification); SAR
//! never detours a harmful flow; no drops with PFC; same seed, same
//! results. Conservation is checked on every run (`common`).

use crate::common;
use common::*;
use experiment::Outcome;

/// Hosts: s1 s2 sv (h0, h1, h4 under tA), s3 s4 (h2, h3 under tY), d0
/// (h5 under tB), dv (h6 under tC). The incast s1..s4 -> d0 meets at tB
/// from two inputs (X and tY), so each input gets 50 Gb/s; the victim
/// sv -> dv shares tA and tA's uplink to X with s1 and s2 and, at X,
/// leaves by another output. `uplinks` = 2 adds a second path tA - X2 -
/// {tB, tC} for SAR.
fn victim(rcm: &str, uplinks: u32) -> String {
    let second = if uplinks == 2 {
        r#"{ name = "X2", kind = "switch" },"#
    } else {
        ""
    };
    let second_links = if uplinks == 2 {
        r#"{ a = "tA", b = "X2", gbps = 100, delay_ns = 1000 },
  { a = "X2", b = "tB", gbps = 100, delay_ns = 1000 },
  { a = "X2", b = "tC", gbps = 100, delay_ns = 1000 },"#
    } else {
        ""
    };
    format!(
        r#"
seed = 1
[topology]
kind = "edges"
nodes = [
  {{ name = "s1", kind = "host" }}, {{ name = "s2", kind = "host" }},
  {{ name = "s3", kind = "host" }}, {{ name = "s4", kind = "host" }},
  {{ name = "sv", kind = "host" }}, {{ name = "d0", kind = "host" }}, {{ name = "dv", kind = "host" }},
  {{ name = "tA", kind = "switch" }}, {{ name = "tY", kind = "switch" }},
  {{ name = "X", kind = "switch" }}, {{ name = "tB", kind = "switch" }}, {{ name = "tC", kind = "switch" }},
  {second}
]
links = [
  {{ a = "s1", b = "tA", gbps = 100, delay_ns = 1000 }},
  {{ a = "s2", b = "tA", gbps = 100, delay_ns = 1000 }},
  {{ a = "sv", b = "tA", gbps = 100, delay_ns = 1000 }},
  {{ a = "s3", b = "tY", gbps = 100, delay_ns = 1000 }},
  {{ a = "s4", b = "tY", gbps = 100, delay_ns = 1000 }},
  {{ a = "tA", b = "X", gbps = 100, delay_ns = 1000 }},
  {{ a = "X", b = "tB", gbps = 100, delay_ns = 1000 }},
  {{ a = "tY", b = "tB", gbps = 100, delay_ns = 1000 }},
  {{ a = "X", b = "tC", gbps = 100, delay_ns = 1000 }},
  {{ a = "tB", b = "d0", gbps = 100, delay_ns = 1000 }},
  {{ a = "tC", b = "dv", gbps = 100, delay_ns = 1000 }},
  {second_links}
]
[switch]
model = "voq"
ecn = false
[switch.rcm]
{rcm}
[transport]
cc = "none"
[[flows]]
src = 0
dst = 5
bytes = 5_000_000
[[flows]]
src = 1
dst = 5
bytes = 5_000_000
[[flows]]
src = 2
dst = 5
bytes = 5_000_000
[[flows]]
src = 3
dst = 5
bytes = 5_000_000
[[flows]]
src = 4
dst = 6
bytes = 2_000_000
start_us = 100
"#
    )
}

fn gbps(o: &Outcome, i: usize) -> f64 {
    Outcome::goodput_bps(&o.flows()[i]).expect("finished") / 1e9
}

/// A flow ID's (source host, destination host).
fn ends(id: u64) -> (u64, u64) {
    ((id >> 32) & 0xffff, id & 0xffff_ffff)
}

#[test]
fn a_burst_through_another_input_takes_half_the_port() {
    // Four long flows enter tB by its link from tA, a 250 KB burst (20 us
    // at 100 Gb/s) by host b's link: the round robin gives each input half
    // of tB's port toward d.
    let text = r#"
[topology]
kind = "edges"
nodes = [
  { name = "s1", kind = "host" }, { name = "s2", kind = "host" },
  { name = "s3", kind = "host" }, { name = "s4", kind = "host" },
  { name = "b", kind = "host" }, { name = "d", kind = "host" },
  { name = "tA", kind = "switch" }, { name = "tB", kind = "switch" },
]
links = [
  { a = "s1", b = "tA", gbps = 100, delay_ns = 1000 },
  { a = "s2", b = "tA", gbps = 100, delay_ns = 1000 },
  { a = "s3", b = "tA", gbps = 100, delay_ns = 1000 },
  { a = "s4", b = "tA", gbps = 100, delay_ns = 1000 },
  { a = "tA", b = "tB", gbps = 100, delay_ns = 1000 },
  { a = "b", b = "tB", gbps = 100, delay_ns = 1000 },
  { a = "d", b = "tB", gbps = 100, delay_ns = 1000 },
]
[switch]
model = "voq"
ecn = false
[transport]
cc = "none"
[[traffic]]
pattern = "incast"
receiver = 5
senders = [0, 1, 2, 3]
bytes = 3_000_000
[[flows]]
src = 4
dst = 5
bytes = 250_000
start_us = 150
"#;
    let o = run_toml(text);
    assert_eq!(o.counters().total_dropped_packets(), 0);
    let burst = o
        .flows()
        .iter()
        .position(|f| f.flow.src == 4)
        .expect("burst");
    let g = gbps(&o, burst);
    assert!((40.0..=60.0).contains(&g), "burst {g:.1} Gb/s");
}

/// Lossy VOQ switches drop what finds its input's queues full, counted
/// as `buffer_full` (conservation holds: `run_toml` checks it), and IRN
/// recovers every flow.
#[test]
fn a_lossy_voq_switch_drops_at_full_input_queues() {
    let text = victim("enabled = false", 1)
        .replace("ecn = false", "ecn = false\npfc = false")
        .replace("cc = \"none\"", "cc = \"none\"\nkind = \"irn\"");
    let o = run_toml(&text);
    let dropped = o.counters().dropped(fabric::DropReason::BufferFull);
    assert!(dropped > 0);
    assert_eq!(o.counters().total_dropped_packets(), dropped);
    assert!(o.flows().iter().all(|f| f.fct().is_some()));
}

#[test]
fn rcm_frees_the_victim_of_the_incast() {
    let off = run_toml(&victim("enabled = false", 1));
    let on = run_toml(&victim("enabled = true", 1));
    let (v_off, v_on) = (gbps(&off, 4), gbps(&on, 4));
    assert!(v_off <= 30.0, "victim without RCM: {v_off:.1} Gb/s");
    assert!(v_on >= 40.0, "victim with RCM: {v_on:.1} Gb/s");
    for o in [&off, &on] {
        assert_eq!(o.counters().total_dropped_packets(), 0, "PFC: no drops");
        assert!(o.flows().iter().all(|f| f.fct().is_some()));
    }
    // The incast keeps its share of d0 (four flows at about 25 Gb/s).
    for i in 0..4 {
        assert!(gbps(&on, i) >= 20.0, "incast flow {i}: {:.1}", gbps(&on, i));
    }
    let s = on.net.rcm_stats().expect("on");
    assert!(
        s.congested_notifications > 0 && s.throttled_packets > 0,
        "{s:?}"
    );
    assert!(off.net.rcm_stats().is_none());
    let j = summary(&on);
    assert!(j.rcm.is_some() && summary(&off).rcm.is_none());
}

#[test]
fn rcc_throttles_only_harmful_flows_and_sar_never_detours_them() {
    for uplinks in [1, 2] {
        let o = run_toml(&victim("enabled = true", uplinks));
        assert_eq!(o.counters().total_dropped_packets(), 0);
        let [harmful, throttled, detoured] = o.net.rcm_audit();
        assert!(!throttled.is_empty(), "uplinks {uplinks}: RCC acted");
        for id in throttled {
            assert!(
                harmful.contains(id),
                "{:?} throttled, never harmful",
                ends(*id)
            );
        }
        assert_eq!(o.net.rcm_violations(), (0, 0), "uplinks {uplinks}");
        // The incast flows are harmful at X's port toward tB (the only
        // flows through it): SAR never moves them.
        if uplinks == 2 {
            assert!(!detoured.is_empty(), "SAR moved a flow to X2");
        }
        for id in detoured {
            assert_ne!(ends(*id).1, 5, "an incast flow was detoured");
        }
    }
}

#[test]
fn rcm_runs_are_deterministic() {
    let a = run_toml(&victim("enabled = true", 2));
    let b = run_toml(&victim("enabled = true", 2));
    assert_eq!(summary(&a), summary(&b));
    let fct = |o: &Outcome| o.flows().iter().map(|f| f.fct()).collect::<Vec<_>>();
    assert_eq!(fct(&a), fct(&b));
}

/// The per-port state series of `rcm_victim.toml` (with `rcm_ports`
/// added): tA's uplink is an edge (or inner) point of the region at some
/// sample, with its window cut.
#[test]
fn rcm_state_series_show_the_region() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/rcm_victim.toml");
    let text =
        std::fs::read_to_string(path).unwrap() + "rcm_ports = [[\"tA\", \"X\"], [\"X\", \"tB\"]]\n";
    let o = run_toml(&text);
    let point = series_values(&o, "rcm_point:tA->X", 0.0, 10.0);
    assert!(point.iter().any(|&p| p == 2.0 || p == 3.0), "{point:?}");
    let wc = series_values(&o, "rcm_wc_bytes:tA->X", 0.0, 10.0);
    assert!(wc.iter().any(|&w| w < 16_000.0), "{wc:?}");
    let fb = series_values(&o, "rcm_in_fb:X->tB", 0.0, 10.0);
    assert!(!fb.is_empty());
}

/// The window loop's claim holds for the VOQ model and RCM too: windows of
/// one picosecond (the global time order) give the same flows.
#[test]
fn one_picosecond_windows_give_the_same_rcm_results() {
    for file in ["rcm_victim.toml", "rcm_burst.toml"] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios")
            .join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let run_with = |window: Option<u64>| {
            let sc = experiment::Scenario::parse(&text, file).unwrap();
            let mut built = experiment::build(&sc, &path, None).unwrap();
            if let Some(ps) = window {
                built.net.set_window(ps);
            }
            let o = experiment::run(built, |_| {});
            o.net.check_conservation().unwrap();
            let flows: Vec<_> = o.flows().iter().map(|f| (f.flow, f.finish)).collect();
            (format!("{flows:?}"), format!("{:?}", o.net.rcm_stats()))
        };
        assert_eq!(run_with(None), run_with(Some(1)), "{file}");
    }
}

/// On a fat tree under web-search traffic with DCQCN (many flows, ECMP,
/// SAR with real choices): no drops, every RCC hold was of a flow harmful
/// at its port, no SAR detour of one, RCM did act, and SAR let detours
/// go (before, a detour lasted for the flow's life).
#[test]
fn rcm_guards_hold_on_a_fat_tree() {
    let text = r#"
seed = 3
stop_ms = 1.5
[topology]
kind = "fat_tree"
k = 6
[switch]
model = "voq"
ecn_table = [{ gbps = 0, kmin_kb = 20, kmax_kb = 80, pmax = 0.2 }]
[switch.rcm]
enabled = true
[transport]
cc = "dcqcn"
[[traffic]]
pattern = "poisson"
cdf = "websearch"
load = 0.6
destinations = "group"
group_size = 18
duration_us = 500
"#;
    let o = run_toml(text);
    assert_eq!(o.counters().total_dropped_packets(), 0);
    assert_eq!(o.net.rcm_violations(), (0, 0));
    let s = o.net.rcm_stats().expect("on");
    assert!(s.throttled_packets > 0 && s.detoured_flows > 0, "{s:?}");
    // SAR lets detours go once the flows' own ports calm down.
    assert!(s.released_detours > 0, "{s:?}");
    let [harmful, throttled, _] = o.net.rcm_audit();
    assert!(throttled.is_subset(harmful));
}

/// `scenarios/NAME`'s text.
fn scenario(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

/// Fig 6 (`rcm_burst.toml`): RCM halves the burst at the last switch
/// (the paper: 50 -> 25 Gb/s) whatever CFR's sampling period, and the
/// burst keeps its half of the port without RCM. When the CAM took every
/// n-th packet, only periods 2, 4, 6 and 8 throttled it (in step with the
/// round robin that alternates the burst with the incast's input).
#[test]
fn rcm_throttles_the_burst_at_every_cam_period() {
    let text = scenario("rcm_burst.toml");
    let burst = |o: &Outcome| mean(&series_values(o, "throughput_gbps:flow4", 0.175, 0.195));
    let off = run_toml(&text.replace("enabled = true", "enabled = false"));
    assert!(burst(&off) >= 45.0, "RCM off: burst {:.1}", burst(&off));
    let mut seen = Vec::new();
    for period in 1..=8 {
        let on = run_toml(&text.replace(
            "enabled = true",
            &format!("enabled = true\ncam_period = {period}"),
        ));
        seen.push((period, burst(&on)));
    }
    assert!(
        seen.iter().all(|&(_, g)| g <= 36.0),
        "burst Gb/s by period: {seen:?}"
    );
}

/// RCC's window at the root of Fig 6 (tB's port toward d): cut when the
/// burst arrives, it grows back while control lasts, and control ends
/// once the burst is gone although the incast keeps tB's queue standing
/// above Qeq (the local flag holds to the end). Before, Wc was only ever
/// cut, to one frame, and held there until the incast ended.
#[test]
fn rcc_window_grows_back_and_control_ends_when_the_burst_drains() {
    let text = scenario("rcm_burst.toml") + "rcm_ports = [[\"tB\", \"d\"]]\n";
    let o = run_toml(&text);
    let wc = series_values(&o, "rcm_wc_bytes:tB->d", 0.150, 0.215);
    let lowest = wc.iter().cloned().fold(f64::MAX, f64::min);
    assert!(lowest < 8_000.0, "the burst cut Wc: {wc:?}");
    let grew = wc.windows(2).any(|w| w[0] < w[1] && w[1] < 16_000.0);
    assert!(grew, "Wc grew back while controlling: {wc:?}");
    let after = series_values(&o, "rcm_wc_bytes:tB->d", 0.230, 0.900);
    let fb = series_values(&o, "rcm_fb:tB->d", 0.230, 0.900);
    assert!(fb.iter().all(|&f| f > 0.0), "the queue stands: {fb:?}");
    assert!(
        after.iter().all(|&w| w == 16_000.0),
        "control ended: {after:?}"
    );
}
