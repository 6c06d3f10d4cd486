//! Sweeps run elsewhere and the HTML report, through the binary: a plan's
//! runs made one process at a time (in any order) and merged give a
//! directory byte-identical to `rdmalab sweep --out`'s (reports included);
//! merge names what is missing; bad plans, indices and directories get an
//! error naming them; a report is the same bytes however it is made, and
//! fetches nothing. Writes only under the system's temporary directory.

use crate::binary;
use binary::rdmalab;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rdmalab-scale-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn scenario() -> String {
    format!(
        "{}/../../scenarios/incast_pfc.toml",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// Every file under `dir`, by relative path, with its bytes.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, d: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(d).expect("read dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().display().to_string();
                out.insert(rel, std::fs::read(&p).expect("read file"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

const SWEEP: [&str; 6] = [
    "--seeds",
    "1..2",
    "--vary",
    "switch.pfc=true,false",
    "--vary",
    "traffic.0.bytes=20000,60000",
];

#[test]
fn a_plan_run_piece_by_piece_and_merged_equals_the_sweep() {
    let dir = scratch("plan");
    let (whole, pieces, plan) = (dir.join("sweep"), dir.join("pieces"), dir.join("plan.json"));
    let s = scenario();
    let mut args = vec!["sweep", s.as_str()];
    args.extend(SWEEP);
    let (w, p, pl) = (
        whole.to_str().unwrap(),
        pieces.to_str().unwrap(),
        plan.to_str().unwrap(),
    );
    let (code, _, err) = rdmalab(&[&args[..], &["--out", w, "--report", "--jobs", "2"]].concat());
    assert_eq!(code, Some(0), "{err}");
    let (code, out, err) = rdmalab(&[&args[..], &["--plan", pl]].concat());
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("8 runs"), "{out}");
    assert!(!pieces.exists(), "a plan runs nothing");
    // Backwards, one process each, the first one left for later.
    for k in (1..8).rev() {
        let k = k.to_string();
        let (code, _, err) = rdmalab(&["run", "--plan", pl, "--index", &k, "--out", p, "--report"]);
        assert_eq!(code, Some(0), "run {k}: {err}");
    }
    let (code, _, err) = rdmalab(&["merge", p]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("1 of 8 runs missing")
            && err.contains("--index 0 (seed1_switch.pfc=true_traffic.0.bytes=20000)"),
        "{err}"
    );
    let (code, _, err) = rdmalab(&["run", "--plan", pl, "--index", "0", "--out", p, "--report"]);
    assert_eq!(code, Some(0), "{err}");
    let (code, out, err) = rdmalab(&["merge", p, "--report"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("all 8 runs merged"), "{out}");
    let (a, b) = (tree(&whole), tree(&pieces));
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        b.keys().collect::<Vec<_>>(),
        "the same files"
    );
    for (name, bytes) in &a {
        assert!(bytes == &b[name], "{name} differs");
    }
    assert_eq!(a.len(), 8 * 4 + 3, "8 runs of 4 files, plan, csv, report");
    // `report DIR` on the sweep rewrites every report with the same bytes.
    let (code, _, err) = rdmalab(&["report", w]);
    assert_eq!(code, Some(0), "{err}");
    assert!(tree(&whole) == a, "report DIR rewrote other bytes");
    // The plan's sweep.csv is the sweep's: one line per run.
    let csv = String::from_utf8(a["sweep.csv"].clone()).unwrap();
    assert_eq!(csv.lines().count(), 9, "{csv}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_plans_indices_and_directories_are_named() {
    let dir = scratch("bad");
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("p.json");
    let (pl, d) = (plan.to_str().unwrap(), dir.to_str().unwrap());
    let s = scenario();
    let (code, _, err) = rdmalab(&["sweep", &s, "--seeds", "1..2", "--plan", pl]);
    assert_eq!(code, Some(0), "{err}");
    let out = dir.join("o");
    let o = out.to_str().unwrap();
    let (code, _, err) = rdmalab(&["run", "--plan", pl, "--index", "2", "--out", o]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("--index 2: the plan has 2 runs, indices 0 to 1"),
        "{err}"
    );
    assert!(!out.exists(), "nothing written for a bad index");
    let (code, _, err) = rdmalab(&["run", "--plan", pl, "--out", o]);
    assert_eq!(code, Some(2), "--index is required: {err}");
    let (code, _, err) = rdmalab(&["run", &s, "--plan", pl, "--index", "0", "--out", o]);
    assert_eq!(code, Some(2), "a scenario and a plan: {err}");
    // A plan edited by hand (its scenario's text, or a run's seed with the
    // label to match) is refused, naming the file.
    let text = std::fs::read_to_string(&plan).unwrap();
    let edits = [
        text.replace("seed = ", "seed = 9 #"),
        text.replacen("\"seed\": 1", "\"seed\": 7", 1)
            .replacen("seed1", "seed7", 1),
    ];
    for (i, edited) in edits.iter().enumerate() {
        assert_ne!(edited, &text, "edit {i} changed nothing");
        let p = dir.join(format!("edited{i}.json"));
        std::fs::write(&p, edited).unwrap();
        let (code, _, err) = rdmalab(&[
            "run",
            "--plan",
            p.to_str().unwrap(),
            "--index",
            "0",
            "--out",
            o,
        ]);
        assert_eq!(code, Some(1), "edit {i}: {err}");
        assert!(err.contains("does not match its digest"), "edit {i}: {err}");
    }
    assert!(!out.exists(), "nothing written for an edited plan");
    // A summary of only {"seed": 1} is no run's: merge names what it lacks.
    let fake = dir.join("fake");
    std::fs::create_dir_all(fake.join("seed1")).unwrap();
    std::fs::copy(&plan, fake.join("plan.json")).unwrap();
    std::fs::write(fake.join("seed1/summary.json"), "{\"seed\": 1}").unwrap();
    let (code, _, err) = rdmalab(&["merge", fake.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("not a run's summary (no \"scenario\")"),
        "{err}"
    );
    let junk = dir.join("junk.json");
    std::fs::write(&junk, "{\"runs\": 3}").unwrap();
    let (code, _, err) = rdmalab(&[
        "run",
        "--plan",
        junk.to_str().unwrap(),
        "--index",
        "0",
        "--out",
        o,
    ]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("junk.json: not a plan written by `rdmalab sweep --plan`"),
        "{err}"
    );
    // A directory that is not a sweep, and one that is nothing.
    let (code, _, err) = rdmalab(&["merge", d]);
    assert_eq!(code, Some(1));
    assert!(err.contains("not a sweep directory (no plan.json"), "{err}");
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (code, _, err) = rdmalab(&["report", empty.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(err.contains("neither a run's outputs"), "{err}");
    let (code, _, err) = rdmalab(&["report", dir.join("nothing").to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(err.contains("no such directory"), "{err}");
    // A run of a plan into a folder holding another plan is refused (a
    // sweep replaces the plan, as it replaces the runs' files).
    let (code, _, err) = rdmalab(&["sweep", &s, "--seeds", "3", "--out", o]);
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = rdmalab(&["run", "--plan", pl, "--index", "0", "--out", o]);
    assert_eq!(code, Some(1));
    assert!(err.contains("another sweep's plan"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_report_is_the_same_bytes_however_made_and_fetches_nothing() {
    let dir = scratch("report");
    let (a, b) = (dir.join("a"), dir.join("b"));
    let s = scenario();
    for d in [&a, &b] {
        let (code, out, err) = rdmalab(&[
            "run",
            &s,
            "--quiet",
            "--out",
            d.to_str().unwrap(),
            "--report",
            "--set",
            "output.sample_us=5",
            "--set",
            "output.ports=[[\"leaf0\", \"h0\"]]",
        ]);
        assert_eq!(code, Some(0), "{err}");
        assert!(out.contains("report.html"), "{out}");
    }
    let first = std::fs::read(a.join("report.html")).unwrap();
    assert_eq!(first, std::fs::read(b.join("report.html")).unwrap());
    let (code, _, err) = rdmalab(&["report", a.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(first, std::fs::read(a.join("report.html")).unwrap());
    let html = String::from_utf8(first).unwrap();
    for id in [
        "id=\"headline\"",
        "id=\"slowdown-by-size\"",
        "id=\"slowdown-cdf\"",
        "id=\"series-queue_bytes\"",
        "id=\"series-util\"",
        "id=\"pfc-paused\"",
        // Nothing was dropped: the drops are named, not drawn.
        "id=\"zero-charts\"",
    ] {
        assert!(html.contains(id), "{id} missing");
    }
    assert!(!html.contains("id=\"drops\""));
    assert!(!html.contains("http:") && !html.contains("https:") && !html.contains("<script"));
    assert!(
        html.contains("default-src 'none'"),
        "the page forbids fetches"
    );
    // Without --out there is nowhere to write one.
    let (code, _, err) = rdmalab(&["run", &s, "--report"]);
    assert_eq!(code, Some(2), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
