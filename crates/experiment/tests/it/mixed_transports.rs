//! Flows of different engines on one fabric (a per-flow
//! `transport`): MP-RDMA moves its load off the path a single-path flow
//! congests and keeps the other paths full (MP-RDMA paper §5.2.2).

use crate::common;
use common::*;

#[test]
fn mprdma_moves_off_the_path_a_single_path_flow_congests() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/mprdma_congestion_aware.toml"
    ))
    .expect("scenario file")
    .replace("stop_ms = 30", "stop_ms = 16");
    let o = run_toml(&text);
    let s = summary(&o);
    assert_eq!(s.nic_state["mprdma"].qps, 2);
    assert_eq!(s.nic_state["roce"].qps, 2);
    // 4 KB payloads over 4048-byte frames: a full 10G path carries 9.88 Gb/s.
    let path = 10.0 * 4000.0 / 4048.0;
    let alone = mean(&series_values(&o, "throughput_gbps:flow0", 3.0, 10.0));
    let mp = mean(&series_values(&o, "throughput_gbps:flow0", 12.0, 16.0));
    let sp = mean(&series_values(&o, "throughput_gbps:flow1", 12.0, 16.0));
    eprintln!("MP-RDMA alone {alone:.2} Gb/s; with the single-path flow {mp:.2} + {sp:.2}");
    assert!(alone > 3.9 * path, "alone {alone}");
    // The single-path flow keeps its whole path; MP-RDMA the other three.
    assert!(sp > 0.97 * path, "single-path flow {sp}");
    assert!(mp > 2.9 * path && mp < 3.1 * path, "MP-RDMA {mp}");
    for k in 0..4 {
        let u = mean(&series_values(
            &o,
            &format!("util:tor0->spine{k}"),
            12.0,
            16.0,
        ));
        assert!(u > 0.97, "path {k} utilisation {u}");
    }
}

#[test]
fn unknown_per_flow_transport_is_a_named_error() {
    let text = r#"
[topology]
kind = "testbed"
paths = 2
hosts_per_tor = 1
[[flows]]
src = 0
dst = 1
bytes = 1000
transport = "tcp"
"#;
    let e = experiment::scenario::Scenario::parse(text, "t.toml").unwrap_err();
    assert_eq!(e.key, "flows[0].transport", "{e}");
}

/// MP-RDMA chosen per flow on a RoCE fabric still gets its summary block.
#[test]
fn mprdma_block_reports_per_flow_mprdma() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/mprdma_congestion_aware.toml"
    ))
    .expect("scenario file")
    .replace("stop_ms = 30", "stop_ms = 2")
    .replace("kind = \"mprdma\"", "kind = \"roce\"")
    .replace(
        "bytes = 1_000_000_000\n\n",
        "bytes = 1_000_000_000\ntransport = \"mprdma\"\n\n",
    );
    let s = summary(&run_toml(&text));
    assert_eq!(s.nic_state["mprdma"].qps, 2);
    let m = s.mprdma.expect("an mprdma block");
    assert!(m.state_bytes_per_qp > 0 && m.ood_p99 > 0, "{m:?}");
}
