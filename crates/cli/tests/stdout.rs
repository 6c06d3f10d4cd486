//! The command line when its reader goes away (`rdmalab bench | head`)
//! and when `--flows` is out of range: the program itself, run as a user
//! runs it.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// Runs the program with its standard output a pipe whose reading end is
/// already closed, as after `| head` has taken its lines.
fn with_closed_stdout(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rdmalab"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start rdmalab");
    drop(child.stdout.take());
    child.wait_with_output().expect("wait for rdmalab")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rdmalab-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn a_closed_pipe_ends_bench_quietly_with_the_sigpipe_status() {
    // Every scenario in both modes, each in a process of its own: the
    // first one's line finds no reader, and no other run starts.
    let out = with_closed_stdout(&["bench", "--flows", "2"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "stderr: {stderr}");
    assert!(stderr.is_empty(), "stderr: {stderr}");
}

#[test]
fn a_closed_pipe_still_lets_run_write_its_files() {
    let dir = scratch("run");
    let out = with_closed_stdout(&["run", "--quiet", "--out", dir.to_str().expect("utf-8")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "stderr: {stderr}");
    assert!(stderr.is_empty(), "stderr: {stderr}");
    let summary = std::fs::read_to_string(dir.join("summary.json")).expect("summary.json");
    assert!(summary.contains("\"flows_finished\""), "{summary}");
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn no_flows_is_refused_by_name() {
    let out = Command::new(env!("CARGO_BIN_EXE_rdmalab"))
        .args([
            "bench",
            "--scenario",
            "p128",
            "--mode",
            "line-rate",
            "--flows",
            "0",
        ])
        .output()
        .expect("run rdmalab");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    assert!(stderr.contains("'--flows"), "stderr: {stderr}");
    assert!(out.stdout.is_empty());
}
