//! Runs this build's `rdmalab` for the CLI tests: its exit status and
//! what it printed.

use std::process::Command;

/// `rdmalab ARGS`: (exit status, standard output, standard error).
pub fn rdmalab(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rdmalab"))
        .args(args)
        .output()
        .expect("start rdmalab");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}
