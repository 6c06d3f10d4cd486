//! Unit tests of `cdf.rs` (moved from the file: the library has
//! `test = false`, so `cargo test` does not compile it twice).

use engine::Rng;
use engine::StreamKind;
use workload::cdf::*;

fn err(text: &str) -> String {
    Cdf::parse(text, "t.cdf").unwrap_err().to_string()
}

#[test]
fn quantile_interpolates_linearly() {
    let c = Cdf::parse("# head\n0 0\n100 0.5\n300 1\n", "t").unwrap();
    assert_eq!(c.quantile(0.0), 0.0);
    assert_eq!(c.quantile(0.25), 50.0);
    assert_eq!(c.quantile(0.5), 100.0);
    assert_eq!(c.quantile(0.75), 200.0);
    assert_eq!(c.quantile(1.0), 300.0);
    assert_eq!(c.mean(), 50.0 * 0.5 + 200.0 * 0.5);
}

#[test]
fn point_masses() {
    // Equal sizes with increasing probability: a step.
    let c = Cdf::parse("1460 0\n1460 0.5\n2920 1\n", "t").unwrap();
    assert_eq!(c.quantile(0.3), 1460.0);
    assert_eq!(c.quantile(0.75), 2190.0);
    // A first row with p > 0: a point mass at the first size.
    let c = Cdf::parse("52 0.25\n152 1\n", "t").unwrap();
    assert_eq!(c.quantile(0.1), 52.0);
    assert_eq!(c.quantile(0.25), 52.0);
    assert_eq!(c.mean(), 52.0 * 0.25 + 102.0 * 0.75);
    // A single row is a constant.
    let c = Cdf::parse("4096 1\n", "t").unwrap();
    assert_eq!(c.quantile(0.7), 4096.0);
    assert_eq!(c.mean(), 4096.0);
}

#[test]
fn zero_samples_become_one() {
    let c = Cdf::parse("0 0\n0 1\n", "t").unwrap();
    let mut rng = Rng::new(1, StreamKind::Workload, 0);
    assert!((0..100).all(|_| c.sample(&mut rng) == 1));
}

#[test]
fn last_probability_within_tolerance_is_one() {
    let c = Cdf::parse("0 0\n10 0.9999999999\n", "t").unwrap();
    assert_eq!(c.rows()[1].1, 1.0);
}

#[test]
fn errors_name_origin_line_and_problem() {
    assert_eq!(
        err("# c\n0 0\nabc 1\n"),
        "t.cdf:3: size 'abc' is not a finite number"
    );
    assert_eq!(
        err("0 0\n10 zz\n"),
        "t.cdf:2: probability 'zz' is not a finite number"
    );
    assert_eq!(
        err("0 0\n10 0.5\n5 1\n"),
        "t.cdf:3: size 5 is smaller than the previous row's 10"
    );
    assert_eq!(
        err("0 0\n10 0.5\n20 0.4\n30 1\n"),
        "t.cdf:3: probability 0.4 is smaller than the previous row's 0.5"
    );
    assert_eq!(
        err("0 -0.1\n"),
        "t.cdf:1: probability -0.1 is outside [0, 1]"
    );
    assert_eq!(
        err("0 0\n10 1.5\n"),
        "t.cdf:2: probability 1.5 is outside [0, 1]"
    );
    assert_eq!(
        err("# only\n\n"),
        "t.cdf:2: no 'size_bytes cumulative_probability' rows"
    );
    assert_eq!(
        err(""),
        "t.cdf:1: no 'size_bytes cumulative_probability' rows"
    );
    assert_eq!(
        err("0 0\n10 0.9\n"),
        "t.cdf:2: the last probability is 0.9, must be 1"
    );
    assert_eq!(
        err("0 0 7\n"),
        "t.cdf:1: expected 2 columns 'size_bytes cumulative_probability', found 3"
    );
    assert_eq!(err("-5 0\n1 1\n"), "t.cdf:1: size -5 is negative");
    assert_eq!(err("inf 1\n"), "t.cdf:1: size 'inf' is not a finite number");
}

#[test]
fn load_reports_missing_file() {
    let e = Cdf::load("/nonexistent/x.cdf").unwrap_err();
    assert!(e.to_string().starts_with("/nonexistent/x.cdf: cannot read"));
    assert!(std::error::Error::source(&e).is_some());
}
