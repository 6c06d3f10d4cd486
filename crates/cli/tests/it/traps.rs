//! Known traps are warned at run time, on stderr and in summary.json's
//! `warnings`, with the doc that explains them: HPCC under a per-packet
//! load balancer, and an ordering layer's hold of each WRITE's last
//! packet. A setup without them warns of nothing.

use crate::binary::rdmalab;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rdmalab-traps-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The example with `sets`: its stderr and summary.json's warnings.
fn run(dir: &Path, sets: &[&str]) -> (String, Vec<String>) {
    let mut args = vec!["run", "--quiet", "--out", dir.to_str().unwrap()];
    for s in sets {
        args.extend(["--set", s]);
    }
    let (code, _, err) = rdmalab(&args);
    assert_eq!(code, Some(0), "{sets:?}: {err}");
    let s: Value =
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    let w = s
        .get("warnings")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|x| x.as_str().unwrap().to_string()).collect())
        .unwrap_or_default();
    (err, w)
}

#[test]
fn traps_are_warned_with_their_doc_and_nothing_else_is() {
    let dir = scratch("run");
    let (err, w) = run(&dir, &["switch.load_balancer=drill", "transport.cc=hpcc"]);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("\"hpcc\" under switch.load_balancer = \"drill\"")
            && w[0].contains("docs/cc.md"),
        "{w:?}"
    );
    assert_eq!(err.trim(), format!("warning: {}", w[0]));
    let (err, w) = run(&dir, &["transport.ordering=eunomia"]);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("one round trip more per WRITE") && w[0].contains("docs/eunomia.md"),
        "{w:?}"
    );
    assert_eq!(err.trim(), format!("warning: {}", w[0]));
    for quiet in [
        &["transport.cc=hpcc"][..],
        &["switch.load_balancer=drill", "transport.cc=dcqcn"],
        &[
            "transport.ordering=eunomia",
            "transport.eunomia.last_packet=receiver_hold",
        ],
    ] {
        let (err, w) = run(&dir, quiet);
        assert!(err.is_empty() && w.is_empty(), "{quiet:?}: {err} {w:?}");
        let summary = std::fs::read_to_string(dir.join("summary.json")).unwrap();
        assert!(!summary.contains("\"warnings\""), "{quiet:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A sweep warns once per trap, before it runs anything.
#[test]
fn a_sweep_warns_once_per_trap() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/example.toml");
    let (code, _, err) = rdmalab(&[
        "sweep",
        example,
        "--seeds",
        "1..2",
        "--set",
        "transport.cc=hpcc",
        "--vary",
        "switch.load_balancer=ecmp,drill",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(err.matches("warning: ").count(), 1, "{err}");
    assert!(
        err.contains("under switch.load_balancer = \"drill\""),
        "{err}"
    );
}
