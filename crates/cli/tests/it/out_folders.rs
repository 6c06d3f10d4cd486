//! Output folders never mix two runs: a run into a folder used before
//! removes the files the earlier run owned there (and only those), the
//! report refuses a file that its run did not write, a sweep removes an
//! earlier sweep's runs, and a run and a sweep never share a folder.

use crate::binary::rdmalab;
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rdmalab-outdirs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A two-host scenario that finishes at once, sampling series.csv when
/// `series`.
fn scenario(dir: &Path, name: &str, series: bool) -> String {
    let mut text = String::from(
        "[topology]\nkind = \"leaf_spine\"\nleaves = 1\nspines = 1\nhosts_per_leaf = 2\n\
         host_gbps = 100\nfabric_gbps = 100\n\n[[traffic]]\npattern = \"permutation\"\nbytes = 20_000\n",
    );
    if series {
        text.push_str("\n[output]\nsample_us = 1\nflows = [0]\n");
    }
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

fn ok(args: &[&str]) -> String {
    let (code, out, err) = rdmalab(args);
    assert_eq!(code, Some(0), "rdmalab {args:?}: {err}");
    out
}

fn fails(args: &[&str]) -> String {
    let (code, _, err) = rdmalab(args);
    assert_eq!(code, Some(1), "rdmalab {args:?} should fail: {err}");
    err
}

/// The case: a run with a series, then one without into the same
/// folder. The old series.csv and report.html go, a file of the user's
/// stays, and the report of the new run draws no series.
#[test]
fn a_second_run_into_a_folder_leaves_nothing_of_the_first() {
    let dir = scratch("rerun");
    let (with, without) = (
        scenario(&dir, "with.toml", true),
        scenario(&dir, "without.toml", false),
    );
    let out = dir.join("out");
    let o = out.to_str().unwrap();
    ok(&["run", &with, "--quiet", "--out", o, "--report"]);
    assert!(out.join("series.csv").is_file() && out.join("report.html").is_file());
    let first_series = std::fs::read(out.join("series.csv")).unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    ok(&["run", &without, "--quiet", "--out", o]);
    for gone in ["series.csv", "report.html"] {
        assert!(
            !out.join(gone).exists(),
            "{gone} of the first run is still there"
        );
    }
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "mine"
    );
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(summary.contains("\"run_id\""), "{summary}");
    ok(&["report", o]);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(!html.contains("series.csv"), "the report reads a series");
    // A series.csv that this run did not write (put back by hand, or left
    // by a run that was cut short) is refused by name, as is an edited
    // flows.csv.
    std::fs::write(out.join("series.csv"), &first_series).unwrap();
    let err = fails(&["report", o]);
    assert!(
        err.contains("series.csv") && err.contains("not written by run"),
        "{err}"
    );
    std::fs::remove_file(out.join("series.csv")).unwrap();
    let flows = out.join("flows.csv");
    let mut text = std::fs::read_to_string(&flows).unwrap();
    text.push_str("99,0,1,1,0,,1,,,write,,0,0,0,1,\n");
    std::fs::write(&flows, text).unwrap();
    let err = fails(&["report", o]);
    assert!(
        err.contains("flows.csv") && err.contains("changed since"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A sweep into a folder used by another sweep removes that sweep's runs
/// (a file of the user's inside one stays), and merge and the report
/// refuse a run's folder whose summary is another run's.
#[test]
fn a_sweep_replaces_an_earlier_sweep_and_checks_its_runs() {
    let dir = scratch("sweeps");
    let s = scenario(&dir, "s.toml", false);
    let out = dir.join("out");
    let o = out.to_str().unwrap();
    ok(&[
        "sweep",
        &s,
        "--seeds",
        "1..2",
        "--vary",
        "topology.host_gbps=100,50",
        "--out",
        o,
    ]);
    let old = out.join("seed1_topology.host_gbps=50");
    assert!(old.join("summary.json").is_file());
    std::fs::write(old.join("notes.txt"), "mine").unwrap();
    ok(&[
        "sweep",
        &s,
        "--seeds",
        "1",
        "--vary",
        "topology.host_gbps=25",
        "--out",
        o,
    ]);
    assert!(
        !old.join("summary.json").exists(),
        "an earlier sweep's run is still there"
    );
    assert!(old.join("notes.txt").is_file(), "a user's file was deleted");
    assert!(!out.join("seed2_topology.host_gbps=100").exists());
    // Another run's summary (same seed, other overrides) in a run's folder.
    let new = out.join("seed1_topology.host_gbps=25");
    let other = dir.join("other");
    ok(&["run", &s, "--quiet", "--out", other.to_str().unwrap()]);
    std::fs::copy(other.join("summary.json"), new.join("summary.json")).unwrap();
    for cmd in ["report", "merge"] {
        let err = fails(&[cmd, o]);
        assert!(
            err.contains("seed1_topology.host_gbps=25") && err.contains("another run"),
            "{cmd}: {err}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A run into a sweep's folder, and a sweep into a run's, are refused
/// before anything runs, naming what is there.
#[test]
fn a_run_and_a_sweep_never_share_a_folder() {
    let dir = scratch("share");
    let s = scenario(&dir, "s.toml", false);
    let (run, sweep) = (dir.join("run"), dir.join("sweep"));
    let (r, w) = (run.to_str().unwrap(), sweep.to_str().unwrap());
    ok(&["run", &s, "--quiet", "--out", r]);
    ok(&["sweep", &s, "--out", w]);
    let err = fails(&["sweep", &s, "--out", r]);
    assert!(
        err.contains("summary.json") && err.contains("a run's"),
        "{err}"
    );
    let err = fails(&["run", &s, "--quiet", "--out", w]);
    assert!(
        err.contains("plan.json") && err.contains("a sweep's"),
        "{err}"
    );
    let err = fails(&[
        "bench",
        "--scenario",
        "p128",
        "--mode",
        "line-rate",
        "--flows",
        "2",
        "--out",
        w,
    ]);
    assert!(err.contains("plan.json"), "{err}");
    assert!(sweep.join("plan.json").is_file() && run.join("summary.json").is_file());
    std::fs::remove_dir_all(&dir).ok();
}
