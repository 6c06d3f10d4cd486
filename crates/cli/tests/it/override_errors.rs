//! Errors under `--set` and `--vary`: a key from the file is named with its
//! line in the file (the overrides once made it the line of the edited
//! text), a key an override set is named with that override, and a sweep
//! checks every run before it runs any, listing the bad ones.

use crate::binary::rdmalab;
use std::path::PathBuf;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rdmalab-overrides-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A 4-host incast whose `[transport]` section is at the end: `rto_us`
/// is on line 23, `leaves` on line 6.
fn scenario(rto: &str, leaves: &str) -> String {
    format!(
        "# line 1\n# 2\n# 3\n[topology]\nkind = \"leaf_spine\"\nleaves = {leaves}\nspines = 1\n\
         hosts_per_leaf = 2\nhost_gbps = 100\nfabric_gbps = 100\n\n[switch]\npfc = true\n\
         buffer_mb = 9\n\n[[traffic]]\npattern = \"incast\"\nreceiver = 0\nfan_in = 3\n\
         bytes = 20_000\n\n[transport]\nrto_us = {rto}\n"
    )
}

fn error(args: &[&str]) -> String {
    let (code, _, err) = rdmalab(args);
    assert_eq!(code, Some(1), "rdmalab {args:?}: {err}");
    err
}

#[test]
fn a_key_of_the_file_keeps_its_line_under_overrides() {
    let dir = scratch("lines");
    let bad_rto = dir.join("rto.toml");
    std::fs::write(&bad_rto, scenario("-1", "2")).unwrap();
    let bad_leaves = dir.join("leaves.toml");
    std::fs::write(&bad_leaves, scenario("100", "\"two\"")).unwrap();
    let (rto, leaves) = (bad_rto.to_str().unwrap(), bad_leaves.to_str().unwrap());
    for set in [
        &[][..],
        &["--set", "switch.pfc=false"],
        &["--set", "traffic.0.fan_in=2"],
    ] {
        let err = error(&[&["run", rto, "--quiet"][..], set].concat());
        assert!(
            err.contains("transport.rto_us") && err.contains("(line 23)"),
            "{set:?}: {err}"
        );
        let err = error(&[&["run", leaves, "--quiet"][..], set].concat());
        assert!(
            err.contains("topology.leaves") && err.contains("(line 6)"),
            "{set:?}: {err}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_key_an_override_set_names_the_override() {
    let dir = scratch("named");
    let file = dir.join("ok.toml");
    std::fs::write(&file, scenario("100", "2")).unwrap();
    let f = file.to_str().unwrap();
    for (set, key) in [
        ("transport.rto_us=-1", "transport.rto_us"),
        ("topology.leaves=x", "topology.leaves"),
        ("switch.pfcc=1", "switch.pfcc"),
        // Found when the network is built, not when the file is read.
        ("traffic.0.receiver=9", "traffic[0].receiver"),
    ] {
        let err = error(&[
            "run",
            f,
            "--quiet",
            "--set",
            "switch.pfc=false",
            "--set",
            set,
        ]);
        assert!(
            err.contains(key) && err.contains(&format!("(from the override {set})")),
            "{set}: {err}"
        );
        assert!(!err.contains("(line "), "{set}: {err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_sweep_checks_every_run_before_running_any() {
    let dir = scratch("sweep");
    let file = dir.join("ok.toml");
    std::fs::write(&file, scenario("100", "2")).unwrap();
    let (f, out) = (file.to_str().unwrap(), dir.join("out"));
    let plan = dir.join("plan.json");
    let vary = [
        "--vary",
        "traffic.0.receiver=0,9",
        "--vary",
        "transport.rto_us=100,-1",
        "--seeds",
        "1..2",
    ];
    for dest in [
        ["--out", out.to_str().unwrap()],
        ["--plan", plan.to_str().unwrap()],
    ] {
        let err = error(&[&["sweep", f][..], &vary, &dest].concat());
        assert!(
            err.contains("6 of 8 runs cannot run; nothing was run"),
            "{err}"
        );
        for bad in [2, 3, 4, 5, 6, 7] {
            assert!(
                err.contains(&format!("\n  run {bad} (seed")),
                "run {bad}: {err}"
            );
        }
        assert!(
            !err.contains("run 0 (") && !err.contains("run 1 ("),
            "{err}"
        );
        assert!(
            err.contains("(from the override traffic.0.receiver=9)"),
            "{err}"
        );
        assert!(
            err.contains("(from the override transport.rto_us=-1)"),
            "{err}"
        );
    }
    assert!(!out.exists() && !plan.exists(), "a bad sweep wrote files");
    std::fs::remove_dir_all(&dir).ok();
}
