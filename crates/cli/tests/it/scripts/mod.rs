//! Runs one of the docs' Python scripts (docs/eunomia/*.py) through this
//! binary, as the tests of those scripts need: with `--jobs 2`, this
//! build's `rdmalab` and a scratch `--out` folder removed afterwards.

use std::path::Path;
use std::process::Command;

/// The standard output of `python3 docs/<script> ARGS --jobs 2 --bin ..
/// --out ..`, after checking that the script succeeded.
pub fn run(script: &str, args: &[&str]) -> String {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let stem = script.replace(['/', '.'], "-");
    let out = std::env::temp_dir().join(format!("rdmalab-{stem}-{}", std::process::id()));
    let r = Command::new("python3")
        .arg(repo.join("docs").join(script))
        .args(args)
        .args(["--jobs", "2", "--bin", env!("CARGO_BIN_EXE_rdmalab")])
        .arg("--out")
        .arg(&out)
        .output()
        .expect("python3 runs (the docs' scripts need it)");
    let _ = std::fs::remove_dir_all(&out);
    let text = String::from_utf8_lossy(&r.stdout).into_owned();
    assert!(
        r.status.success(),
        "{}\n{}",
        text,
        String::from_utf8_lossy(&r.stderr)
    );
    text
}
