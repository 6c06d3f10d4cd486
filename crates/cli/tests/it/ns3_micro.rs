//! The DCQCN micro-scenarios beside ns-3 (docs/ns3_validation.md,
//! "Micro-scenarios"): `scripts/ns3_micro.py compare --check` runs ours on
//! each and compares with ns-3's outputs committed in docs/ns3/micro/ (ns-3
//! itself is not run), and must print docs/ns3/micro/compare.txt line for
//! line, so a change that moves our side of any number fails here.

use std::path::Path;
use std::process::Command;

#[test]
fn micro_scenarios_match_their_committed_comparison() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = std::env::temp_dir().join(format!("rdmalab-ns3-micro-{}", std::process::id()));
    let r = Command::new("python3")
        .arg(repo.join("scripts/ns3_micro.py"))
        .args(["compare", env!("CARGO_BIN_EXE_rdmalab"), "--check", "--out"])
        .arg(&out)
        .output()
        .expect("python3 runs (scripts/ns3_micro.py needs it)");
    let _ = std::fs::remove_dir_all(&out);
    assert!(
        r.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&r.stdout),
        String::from_utf8_lossy(&r.stderr)
    );
}
