//! What the run's outputs say when a quantity has no data (no flow
//! finished: `n/a` in the summary, `null` in summary.json, never 0), the
//! rate of flows a stop time cut, and flows.csv's exact ideal FCT beside
//! HPCC's: the program run as a user runs it.

use crate::binary;
use binary::rdmalab;

use serde_json::Value;
use std::path::PathBuf;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rdmalab-values-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn example() -> String {
    format!(
        "{}/../../scenarios/example.toml",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// The example stopped after 5 us: every flow still running.
#[test]
fn no_finished_flow_reads_n_a_and_null_never_zero() {
    let dir = scratch("cut");
    let out = dir.to_str().unwrap();
    let (code, stdout, stderr) =
        rdmalab(&["run", "--quiet", "--set", "stop_ms=0.005", "--out", out]);
    assert_eq!(code, Some(0), "{stderr}");
    let line = |k: &str| {
        stdout
            .lines()
            .find(|l| l.trim_start().starts_with(k))
            .unwrap_or_else(|| panic!("no {k} line: {stdout}"))
            .to_string()
    };
    assert!(line("flows finished").ends_with("0 / 48"), "{stdout}");
    for k in ["FCT (us)", "slowdown ", "total goodput"] {
        let l = line(k);
        assert!(l.contains("n/a (no flow finished)"), "{l}");
        assert!(!l.contains("0.00 "), "{l}");
    }
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    for p in [
        "/fct_ns/mean",
        "/fct_ns/p99",
        "/slowdown/mean",
        "/slowdown/max",
        "/slowdown_small/mean",
        "/slowdown_by_size/0/slowdown/p99",
        "/total_goodput_gbps",
    ] {
        assert_eq!(s.pointer(p), Some(&Value::Null), "{p}: {s}");
    }
    // The cut flows' rate is reported from the bytes they moved.
    let moved = s["delivered_gbps"].as_f64().expect("delivered_gbps");
    assert!(moved > 100.0, "{moved}");
    assert!(
        line("total goodput").contains(&format!("{moved:.2} Gb/s of payload delivered")),
        "{stdout}"
    );
    // slowdown_by_size.csv: empty cells, not 0.
    let table = std::fs::read_to_string(dir.join("slowdown_by_size.csv")).unwrap();
    assert!(table.lines().nth(1).unwrap().ends_with(",0,,,,"), "{table}");
    std::fs::remove_dir_all(&dir).unwrap();
    // The sweep's table too.
    let (code, stdout, stderr) = rdmalab(&[
        "sweep",
        &example(),
        "--set",
        "stop_ms=0.005",
        "--vary",
        "switch.pfc=true,false",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let row = stdout.lines().nth(1).unwrap();
    assert_eq!(row.matches("n/a").count(), 3, "{stdout}");
}

/// flows.csv keeps its columns in their order and adds the exact ideal
/// last: flows below one packet have an HPCC slowdown below 1 (a full MTU
/// counted per hop) and an exact one of 1 or a little above (alone on
/// their paths but for ECMP collisions).
#[test]
fn flows_below_one_packet_have_an_exact_slowdown_column() {
    let dir = scratch("small");
    let out = dir.to_str().unwrap();
    let (code, _, stderr) = rdmalab(&[
        "run",
        "--quiet",
        "--set",
        "traffic.0.bytes=100",
        "--set",
        "traffic.1.bytes=500",
        "--out",
        out,
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let csv = std::fs::read_to_string(dir.join("flows.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "flow_id,src,dst,size_bytes,start_ns,fct_ns,ideal_fct_ns,slowdown,goodput_gbps,verb,\
         class,ooo_packets,ood_max,reorder_retx,ideal_fct_exact_ns,slowdown_exact,delivered_bytes"
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 48);
    // The permutation's 100-byte flows are alone on their paths.
    for r in rows.iter().filter(|r| r[3] == "100") {
        let (ideal, exact): (u64, u64) = (r[6].parse().unwrap(), r[14].parse().unwrap());
        assert!(exact < ideal, "{r:?}");
        assert!(r[7].parse::<f64>().unwrap() < 1.0, "{r:?}");
        let exact = r[15].parse::<f64>().unwrap();
        assert!((1.0..1.01).contains(&exact), "{r:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// summary.json records what ran (the scenario text's SHA-256 and the
/// overrides) and the readable summary starts with the setup: topology,
/// transport, congestion control, ordering, load balancer and PFC.
#[test]
fn the_summary_records_what_ran() {
    use sha2::{Digest, Sha256};
    let dir = scratch("ran");
    let (plain, set) = (dir.join("plain"), dir.join("set"));
    let file = example();
    let (code, stdout, err) = rdmalab(&["run", &file, "--quiet", "--out", plain.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let first: Vec<&str> = stdout.lines().take(4).collect();
    assert!(
        first[1].contains("topology")
            && first[1].contains("leaf_spine: 4 leaves, 2 spines, 8 hosts per leaf"),
        "{stdout}"
    );
    assert!(
        first[2].contains("transport")
            && first[2].contains("roce, congestion control none, ordering none"),
        "{stdout}"
    );
    assert!(
        first[3].contains("switches") && first[3].contains("load balancer ecmp, PFC on (lossless)"),
        "{stdout}"
    );
    assert!(!stdout.contains("overrides"), "{stdout}");
    let summary = |d: &PathBuf| -> Value {
        serde_json::from_slice(&std::fs::read(d.join("summary.json")).unwrap()).unwrap()
    };
    let s = summary(&plain);
    let text = std::fs::read(&file).unwrap();
    let hex: String = Sha256::digest(&text)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(s["scenario_sha256"], hex.as_str());
    assert_eq!(s["overrides"], serde_json::json!([]));
    assert_eq!(s["setup"]["congestion_control"], "none");
    assert_eq!(s["setup"]["pfc"], true);
    let (code, stdout, err) = rdmalab(&[
        "run",
        &file,
        "--quiet",
        "--set",
        "switch.pfc=false",
        "--set",
        "transport.cc=dcqcn",
        "--out",
        set.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        stdout.contains("congestion control dcqcn") && stdout.contains("PFC off (lossy)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("overrides              switch.pfc=false transport.cc=dcqcn"),
        "{stdout}"
    );
    let t = summary(&set);
    assert_eq!(
        t["overrides"],
        serde_json::json!([["switch.pfc", "false"], ["transport.cc", "dcqcn"]])
    );
    assert_ne!(t["scenario_sha256"], s["scenario_sha256"]);
    assert_ne!(t["run_id"], s["run_id"]);
    assert_eq!(t["setup"]["pfc"], false);
    std::fs::remove_dir_all(&dir).ok();
}
