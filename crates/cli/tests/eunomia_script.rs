//! `docs/eunomia/run.py`, the script behind docs/eunomia.md's tables, run
//! on a tiny input (10 us of arrivals) so that it cannot rot: every figure
//! it knows runs through this binary, and every table comes out whole,
//! one row per run, with numbers where numbers belong.

use std::path::Path;
use std::process::Command;

#[test]
fn the_eunomia_script_prints_every_table_whole() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = std::env::temp_dir().join(format!("rdmalab-eunomia-{}", std::process::id()));
    let r = Command::new("python3")
        .arg(repo.join("docs/eunomia/run.py"))
        .args(["--duration-us", "10", "--jobs", "2", "--bin"])
        .arg(env!("CARGO_BIN_EXE_rdmalab"))
        .arg("--out")
        .arg(&out)
        .output()
        .expect("python3 runs (the docs' scripts need it)");
    let _ = std::fs::remove_dir_all(&out);
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(
        r.status.success(),
        "{}\n{}",
        text,
        String::from_utf8_lossy(&r.stderr)
    );
    // Rows per table: fig1 2 loads x 2 fabrics x (2 balancers x 2
    // orderings + 3 per-packet ones x 3) + 2 MP-RDMA; fig2 5 x 2; fig4 3
    // loads x up to 4 sizes; fig14 3 x 3.
    let tables: Vec<&str> = text.split("### ").skip(1).collect();
    assert_eq!(tables.len(), 4, "{text}");
    // Table lines but the header (`|---|` lines do not start with "| ").
    let rows = |t: &str| t.lines().filter(|l| l.starts_with("| ")).count() - 1;
    assert_eq!(rows(tables[0]), 54, "{}", tables[0]);
    assert_eq!(rows(tables[1]), 10, "{}", tables[1]);
    assert!((3..=12).contains(&rows(tables[2])), "{}", tables[2]);
    assert_eq!(rows(tables[3]), 9, "{}", tables[3]);
    assert!(!text.contains("nan"), "{text}");
    // Without the ideal ordering layer DRILL under go-back-N retransmits
    // for reordering at 80% load; with it, never.
    let retx = |scheme: &str| -> f64 {
        let row = tables[0]
            .lines()
            .find(|l| l.starts_with(&format!("| 0.8 | lossless | {scheme} |")))
            .unwrap_or_else(|| panic!("no row {scheme}"));
        row.split('|').nth(10).unwrap().trim().parse().unwrap()
    };
    assert_eq!(retx("drill + ideal"), 0.0);
    assert_eq!(retx("drill + eunomia"), 0.0);
}
