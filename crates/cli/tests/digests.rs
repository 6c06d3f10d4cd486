//! Every example scenario and every benchmark run, run as a user runs them
//! (`rdmalab run FILE --out DIR`, `rdmalab bench --scenario S --mode M
//! --out DIR`), must write exactly the bytes whose SHA-256 digests are
//! committed in `scenarios/digests.sha256`. A change that moves an output
//! shows up here; its commit says which outputs moved and why, and
//! refreshes the file with
//!
//! ```sh
//! RDMALAB_BLESS=1 cargo test --release -p rdmalab --test digests
//! ```
//!
//! The file is in `sha256sum` format: after the runs it names, `cd DIR &&
//! sha256sum -c .../digests.sha256` checks them by hand.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Each run: the output directory's name and the program's arguments.
fn runs() -> Vec<(String, Vec<String>)> {
    let mut runs = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("scenarios"))
        .expect("scenarios/")
        .map(|e| e.expect("scenarios/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    for f in files {
        let name = f.file_stem().unwrap().to_string_lossy().into_owned();
        let file = f.to_string_lossy().into_owned();
        runs.push((name, vec!["run".into(), file, "--quiet".into()]));
    }
    for s in ["p128", "ws128", "a2a128", "p1024"] {
        for m in ["line-rate", "dcqcn"] {
            runs.push((
                format!("bench-{s}-{m}"),
                ["bench", "--scenario", s, "--mode", m]
                    .map(String::from)
                    .to_vec(),
            ));
        }
    }
    runs
}

/// `sha256sum` lines of every file `rdmalab ARGS --out DIR/NAME` writes.
fn digest_run(dir: &Path, name: &str, args: &[String]) -> Vec<String> {
    let out = dir.join(name);
    let status = Command::new(env!("CARGO_BIN_EXE_rdmalab"))
        .args(args)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("start rdmalab");
    assert!(
        status.status.success(),
        "rdmalab {args:?} failed: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    let mut files: Vec<PathBuf> = std::fs::read_dir(&out)
        .expect("output directory")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{name} wrote no files");
    files
        .iter()
        .map(|f| {
            let bytes = std::fs::read(f).expect("read output");
            let hex: String = Sha256::digest(&bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            format!("{hex}  {name}/{}", f.file_name().unwrap().to_string_lossy())
        })
        .collect()
}

#[test]
fn every_scenario_and_bench_run_writes_the_committed_bytes() {
    let dir = std::env::temp_dir().join(format!("rdmalab-digests-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let runs = runs();
    // Longest first (the benchmarks), spread over the machine's cores.
    let queue = Mutex::new(runs.iter().rev().collect::<Vec<_>>());
    let lines = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let Some((name, args)) = queue.lock().unwrap().pop() else {
                    break;
                };
                let got = digest_run(&dir, name, args);
                lines.lock().unwrap().extend(got);
            });
        }
    });
    let mut lines = lines.into_inner().unwrap();
    lines.sort_by(|a, b| a[66..].cmp(&b[66..]));
    let got = lines.join("\n") + "\n";
    let path = repo().join("scenarios/digests.sha256");
    if std::env::var_os("RDMALAB_BLESS").is_some() {
        std::fs::write(&path, &got).expect("write scenarios/digests.sha256");
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    std::fs::remove_dir_all(&dir).ok();
    if got != want {
        let want_lines: Vec<&str> = want.lines().collect();
        let moved: Vec<&str> = got
            .lines()
            .filter(|l| !want_lines.contains(l))
            .map(|l| &l[66..])
            .collect();
        let gone: Vec<&str> = want_lines
            .iter()
            .filter(|l| !got.lines().any(|g| g == **l))
            .map(|l| l.get(66..).unwrap_or(l))
            .collect();
        panic!(
            "outputs differ from scenarios/digests.sha256\n  changed or new: {moved:?}\n  \
             no longer written or changed: {gone:?}\nIf the change is meant, say which outputs \
             moved and why in the commit, and refresh the file with \
             RDMALAB_BLESS=1 cargo test --release -p rdmalab --test digests"
        );
    }
}
