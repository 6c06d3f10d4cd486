//! Output folders, so that one never mixes two runs. A run's folder
//! (`run --out`, `bench --out`, a sweep's `<label>/`) holds the files of
//! [`RUN_FILES`]: writing a run there first removes those an earlier run
//! left (a run that writes no series must not leave the last one's
//! `series.csv` beside its own files), and never touches another file. A
//! sweep's folder holds [`SWEEP_FILES`] and its runs' folders; a sweep
//! first removes an earlier sweep's. A folder is a run's or a sweep's,
//! never both. The run's identity is `run_id` in its `summary.json`, and
//! `files` there holds the SHA-256 of every other file it wrote, so a
//! reader ([`check_run`], the report) refuses a file of another run.
//! Touches only the folders it is given and the files named here.

use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

/// The run's record, written last: its identity and its files' digests.
pub const SUMMARY_FILE: &str = "summary.json";
/// The HTML report's name in a run's or a sweep's folder.
pub const REPORT_FILE: &str = "report.html";
/// The sweep's list of runs (`crate::plan`).
pub const PLAN_FILE: &str = "plan.json";
/// Every file a run writes into its folder (some only when asked).
pub const RUN_FILES: [&str; 9] = [
    SUMMARY_FILE,
    "flows.csv",
    "slowdown_by_size.csv",
    "series.csv",
    "fct_over_time.csv",
    "collectives.csv",
    "pfc.csv",
    "trace.pcap",
    REPORT_FILE,
];
/// Every file a sweep writes into its folder besides its runs' folders.
pub const SWEEP_FILES: [&str; 3] = [PLAN_FILE, "sweep.csv", REPORT_FILE];

/// Files only a run's folder has, and only a sweep's.
const RUN_MARKS: [&str; 2] = [SUMMARY_FILE, "flows.csv"];
const SWEEP_MARKS: [&str; 2] = [PLAN_FILE, "sweep.csv"];

/// SHA-256 in hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The files of `marks` that `dir` holds.
fn present(dir: &Path, marks: &[&str]) -> Vec<String> {
    marks
        .iter()
        .filter(|m| dir.join(m).exists())
        .map(|m| m.to_string())
        .collect()
}

/// Creates `dir` for a run's files (before the run, so that a path that
/// cannot be one fails at once), refusing a sweep's folder.
pub fn open_run(dir: &Path) -> Result<(), String> {
    create(dir)?;
    match present(dir, &SWEEP_MARKS)[..] {
        [] => Ok(()),
        ref found => Err(format!(
            "--out {}: a sweep's folder ({} there); a run writes only into a run's folder: give another --out",
            dir.display(),
            found.join(", ")
        )),
    }
}

/// Creates `dir` for a sweep's files (or one run of its plan), refusing
/// a run's folder.
pub fn open_sweep(dir: &Path) -> Result<(), String> {
    create(dir)?;
    match present(dir, &RUN_MARKS)[..] {
        [] => Ok(()),
        ref found => Err(format!(
            "--out {}: a run's folder ({} there); a sweep writes only into a sweep's folder: give another --out",
            dir.display(),
            found.join(", ")
        )),
    }
}

/// Removes what an earlier sweep wrote into `dir`: its [`SWEEP_FILES`]
/// and its runs' files (in every subfolder named as a run, `seed<N>...`;
/// the subfolder too once empty).
pub fn clear_sweep(dir: &Path) -> Result<(), String> {
    let failed = |p: &Path, e: std::io::Error| format!("{}: cannot remove: {e}", p.display());
    remove(dir, &SWEEP_FILES).map_err(|(p, e)| failed(&p, e))?;
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("{}: cannot list: {e}", dir.display()))?;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let is_run = name
            .strip_prefix("seed")
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()));
        if is_run && e.path().is_dir() {
            clear_run(&e.path()).map_err(|(p, e)| failed(&p, e))?;
            // Only an empty folder goes: a file of the user's keeps it.
            std::fs::remove_dir(e.path()).ok();
        }
    }
    Ok(())
}

/// Removes the [`RUN_FILES`] an earlier run left in `dir` (before a run's
/// files are written there).
pub fn clear_run(dir: &Path) -> Result<(), (std::path::PathBuf, std::io::Error)> {
    remove(dir, &RUN_FILES)
}

fn remove(dir: &Path, names: &[&str]) -> Result<(), (std::path::PathBuf, std::io::Error)> {
    for n in names {
        let p = dir.join(n);
        match std::fs::remove_file(&p) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err((p, e)),
            _ => {}
        }
    }
    Ok(())
}

fn create(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("--out {}: cannot create the directory: {e}", dir.display()))
}

/// Checks that the run files in `dir` are those of the run whose summary
/// is `summary`: each one there is listed in its `files` with the same
/// digest, and each listed one is there.
pub fn check_run(dir: &Path, summary: &Value) -> Result<(), String> {
    let sp = dir.join(SUMMARY_FILE);
    let id = summary
        .get("run_id")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            format!(
                "{}: no run_id (written by an older rdmalab?): run it again",
                sp.display()
            )
        })?;
    let files: BTreeMap<&str, &str> = summary
        .get("files")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)))
                .collect()
        })
        .ok_or_else(|| format!("{}: no files (written by an older rdmalab?)", sp.display()))?;
    for name in RUN_FILES
        .iter()
        .filter(|&&n| n != SUMMARY_FILE && n != REPORT_FILE)
    {
        let p = dir.join(name);
        let bytes = match engine::input::read_bytes(&p) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => match files.get(name) {
                Some(_) => return Err(format!("{}: missing (run {id} wrote it)", p.display())),
                None => continue,
            },
            Err(e) => return Err(format!("{}: cannot read: {e}", p.display())),
        };
        match files.get(name) {
            None => {
                return Err(format!(
                    "{}: not written by run {id} (its summary.json does not list it): another run's; remove it or run again",
                    p.display()
                ))
            }
            Some(&digest) if digest != sha256_hex(&bytes) => {
                return Err(format!(
                    "{}: changed since run {id} wrote it (its SHA-256 is not the one in summary.json)",
                    p.display()
                ))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// A run's identity: the first 16 hex digits of the SHA-256 of the
/// program's version, the seed and what ran (the scenario's text after
/// overrides, or a benchmark's name). The same run gives the same
/// identity, so its files stay byte-identical.
pub fn run_id(what_ran: &str, seed: u64) -> String {
    let mut h = sha256_hex(
        format!(
            "rdmalab {}\nseed {seed}\n{what_ran}",
            env!("CARGO_PKG_VERSION")
        )
        .as_bytes(),
    );
    h.truncate(16);
    h
}
