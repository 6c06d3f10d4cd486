//! Results tables of docs/ that are the output of the command next to
//! them (`scripts/doc_tables.py`): the cheap ones are re-run through this
//! build and must match the doc line for line, so a change that moves
//! them fails here until the doc is re-run.

use std::path::Path;
use std::process::Command;

fn check(table: &str) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let r = Command::new("python3")
        .arg(repo.join("scripts/doc_tables.py"))
        .args([env!("CARGO_BIN_EXE_rdmalab"), "--check", table])
        .output()
        .expect("python3 runs (scripts/doc_tables.py needs it)");
    assert!(
        r.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&r.stdout),
        String::from_utf8_lossy(&r.stderr)
    );
}

/// docs/faults.md's reordering table (five runs, under a second).
#[test]
fn faults_reorder_table_matches_a_fresh_run() {
    check("faults-reorder");
}

/// docs/load_balancing.md's one flow over four uplinks (five runs).
#[test]
fn lb_one_flow_table_matches_a_fresh_run() {
    check("lb-one-flow");
}

/// docs/mprdma.md's ECN mis-configuration table (six runs, under a second).
#[test]
fn mprdma_ecn_misconfig_table_matches_a_fresh_run() {
    check("mprdma-ecn-misconfig");
}

/// docs/mprdma.md's link down/up tables (eight seeds, a few seconds).
#[test]
fn mprdma_link_updown_tables_match_a_fresh_run() {
    check("mprdma-link-updown");
}

/// docs/collectives.md's algorithms against their alpha-beta formulas
/// (nine runs, about a second).
#[test]
fn collectives_alpha_beta_table_matches_a_fresh_run() {
    check("collectives-alpha-beta");
}

/// docs/visor.md's RDMAvisor Fig 5 in the simulator (18 runs, 1.5 s
/// on a quiet machine): the table with the cited QP-cache parameters.
#[test]
fn visor_fig5_table_matches_a_fresh_run() {
    check("visor-fig5");
}

/// docs/ns3_validation.md's P128 table: `bench` beside ns-3's FCT file
/// (one run, under a second).
#[test]
fn ns3_p128_table_matches_a_fresh_run() {
    check("ns3-p128");
}

/// docs/rcm.md's Fig 6 table (14 small runs, under 2 s).
#[test]
fn rcm_fig6_table_matches_a_fresh_run() {
    check("rcm-fig6");
}

/// docs/rcm.md's Fig 7 table (12 small runs, under 2 s).
#[test]
fn rcm_fig7_table_matches_a_fresh_run() {
    check("rcm-fig7");
}
