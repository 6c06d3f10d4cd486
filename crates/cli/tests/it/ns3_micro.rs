//! The DCQCN micro-scenarios beside ns-3 (docs/ns3_validation.md,
//! "Micro-scenarios"): `scripts/ns3_micro.py compare RDMALAB NAME --check`
//! runs ours on one scenario (8 seeds; nic2 40) and compares with ns-3's outputs
//! committed in docs/ns3/micro/ (ns-3 itself is not run); it must print
//! that scenario's section of docs/ns3/micro/compare.txt line for line, so
//! a change that moves our side of any number fails here. One test a
//! scenario, so that each stays short and they run side by side.

use std::path::Path;
use std::process::Command;

fn check(name: &str) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = std::env::temp_dir().join(format!("rdmalab-ns3-micro-{}-{name}", std::process::id()));
    let r = Command::new("python3")
        .arg(repo.join("scripts/ns3_micro.py"))
        .args([
            "compare",
            env!("CARGO_BIN_EXE_rdmalab"),
            name,
            "--check",
            "--out",
        ])
        .arg(&out)
        .output()
        .expect("python3 runs (scripts/ns3_micro.py needs it)");
    let _ = std::fs::remove_dir_all(&out);
    assert!(
        r.status.success(),
        "{name}:\n{}\n{}",
        String::from_utf8_lossy(&r.stdout),
        String::from_utf8_lossy(&r.stderr)
    );
}

#[test]
fn single() {
    check("single");
}

#[test]
fn pair() {
    check("pair");
}

#[test]
fn incast4() {
    check("incast4");
}

#[test]
fn join() {
    check("join");
}

#[test]
fn twohop() {
    check("twohop");
}

#[test]
fn nic2() {
    check("nic2");
}

#[test]
fn reverse() {
    check("reverse");
}

#[test]
fn short() {
    check("short");
}

#[test]
fn pod() {
    check("pod");
}

/// Every micro-scenario the script knows has its test above and its
/// section in the committed comparison.
#[test]
fn every_scenario_has_a_test_and_a_section() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script = std::fs::read_to_string(repo.join("scripts/ns3_micro.py")).unwrap();
    let compare = std::fs::read_to_string(repo.join("docs/ns3/micro/compare.txt")).unwrap();
    let body = script
        .split("SCENARIOS = {")
        .nth(1)
        .expect("the SCENARIOS table");
    let names: Vec<&str> = body
        .lines()
        .take_while(|l| !l.starts_with('}'))
        .filter_map(|l| l.strip_prefix("    \"")?.split('"').next())
        .collect();
    let tested = [
        "single", "pair", "incast4", "join", "twohop", "nic2", "reverse", "short", "pod",
    ];
    assert_eq!(
        names, tested,
        "scripts/ns3_micro.py's scenarios and the tests here"
    );
    for n in names {
        assert!(
            compare.contains(&format!("== {n}:")),
            "{n} has no section in compare.txt"
        );
    }
}
