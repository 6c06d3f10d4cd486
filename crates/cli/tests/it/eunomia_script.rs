//! `docs/eunomia/run.py`, the script behind docs/eunomia.md's tables, run
//! on a tiny input (10 us of arrivals) so that it cannot rot: every figure
//! it knows runs through this binary, and every table comes out whole,
//! one row per run, with numbers where numbers belong.

use crate::scripts;

#[test]
fn the_eunomia_script_prints_every_table_whole() {
    let text = scripts::run("eunomia/run.py", &["--duration-us", "10"]);
    // Rows per table: fig1 2 loads x 2 fabrics x (2 balancers x 2
    // orderings + 3 per-packet ones x 3) + 2 MP-RDMA; from the same runs,
    // Figs 11-12 2 x 2 x (ECMP, ConWeave, 3 per-packet + Eunomia) and Fig
    // 13 2 loads x the 9 lossless schemes without the ideal layer; fig2
    // 5 x 2; fig4 3 loads x up to 4 sizes; fig14 3 x 3.
    let tables: Vec<&str> = text.split("### ").skip(1).collect();
    assert_eq!(tables.len(), 6, "{text}");
    // Table lines but the header (`|---|` lines do not start with "| ").
    let rows = |t: &str| t.lines().filter(|l| l.starts_with("| ")).count() - 1;
    assert_eq!(rows(tables[0]), 54, "{}", tables[0]);
    assert_eq!(rows(tables[1]), 20, "{}", tables[1]);
    assert_eq!(rows(tables[2]), 18, "{}", tables[2]);
    assert_eq!(rows(tables[3]), 10, "{}", tables[3]);
    assert!((3..=12).contains(&rows(tables[4])), "{}", tables[4]);
    assert_eq!(rows(tables[5]), 9, "{}", tables[5]);
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
    // Fig 13 repeats Fig 1's switch-port column for the same runs.
    for scheme in ["ecmp", "drill", "drill + eunomia", "mprdma"] {
        let cell = |t: &str, first: &str, col: usize| -> f64 {
            let row = t
                .lines()
                .find(|l| l.starts_with(first))
                .unwrap_or_else(|| panic!("no row {first}"));
            let c = row.split('|').nth(col).unwrap().trim();
            c.trim_end_matches('%').parse().unwrap()
        };
        let fig1 = cell(tables[0], &format!("| 0.8 | lossless | {scheme} |"), 12);
        let fig13 = cell(tables[2], &format!("| 0.8 | {scheme} |"), 3);
        assert!((fig1 - fig13).abs() < 1e-3, "{scheme}: {fig1} {fig13}");
    }
}
