//! Unit tests of `builtin.rs` (moved from the file: the library has
//! `test = false`, so `cargo test` does not compile it twice).

use workload::builtin::*;
use workload::cdf::Cdf;
use workload::error::WorkloadError;

/// The `mean_bytes(linear-interp)=X` figure in a file's header line.
fn header_mean(text: &str) -> f64 {
    let key = "mean_bytes(linear-interp)=";
    let head = text.lines().next().unwrap();
    let at = head.find(key).expect("header has a mean") + key.len();
    let num: String = head[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    num.parse().unwrap()
}

#[test]
fn every_data_file_is_a_builtin() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/workloads");
    let mut on_disk: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter_map(|n| n.strip_suffix(".cdf").map(str::to_string))
        .collect();
    on_disk.sort();
    assert_eq!(on_disk, Cdf::builtin_names());
    assert_eq!(FILES.len(), NAMES.len());
    for ((n, _), m) in FILES.iter().zip(NAMES) {
        assert_eq!(n, m);
    }
}

#[test]
fn builtin_means_match_the_header_lines() {
    for name in Cdf::builtin_names() {
        let cdf = Cdf::builtin(name).unwrap();
        let want = header_mean(builtin_text(name).unwrap());
        // Headers print one decimal: the exact mean must round to it.
        assert!(
            (cdf.mean() - want).abs() <= 0.05 + 1e-6,
            "{name}: mean {} vs header {want}",
            cdf.mean()
        );
    }
    assert_eq!(Cdf::builtin("websearch").unwrap().mean(), 1_711_250.0);
    assert!((Cdf::builtin("fbhdp").unwrap().mean() - 120_420.75).abs() < 1e-6);
}

#[test]
fn builtin_row_counts_and_maxima_match_the_data_readme() {
    let expect = [
        ("websearch", 12, 30_000_000.0),
        ("fbhdp", 20, 10_000_000.0),
        ("fbhdp2015_conweave", 461, 10_000_000.0),
        ("alistorage", 9, 2_000_000.0),
        ("googlerpc", 843, 15_158_197.0),
        ("enterprise", 136, 1_773_379_248.0),
        ("datamining", 9, 973_333_820.0),
    ];
    for (name, rows, max) in expect {
        let c = Cdf::builtin(name).unwrap();
        assert_eq!(c.rows().len(), rows, "{name}");
        assert_eq!(c.max(), max, "{name}");
        assert_eq!(c.name(), format!("builtin:{name}"));
    }
}

#[test]
fn unknown_builtin_is_an_error() {
    let e = Cdf::builtin("websearch.cdf").unwrap_err();
    assert!(matches!(e, WorkloadError::UnknownBuiltin { .. }));
}
