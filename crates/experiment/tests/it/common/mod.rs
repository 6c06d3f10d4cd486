//! Helpers shared by the experiment integration tests: build and run a
//! scenario given as TOML text, and check conservation on every run.

use experiment::{report, run, Outcome, Scenario};
use std::path::Path;

#[allow(dead_code)]
pub fn run_toml(text: &str) -> Outcome {
    run_toml_seed(text, None)
}

pub fn run_toml_seed(text: &str, seed: Option<u64>) -> Outcome {
    let sc = Scenario::parse(text, "test.toml").expect("scenario parses");
    let built = experiment::build(&sc, Path::new("test.toml"), seed).expect("scenario builds");
    let o = run(built, |_| {});
    o.net
        .check_conservation()
        .expect("every injected packet is delivered, dropped or in flight");
    o
}

#[allow(dead_code)]
pub fn summary(o: &Outcome) -> report::SummaryJson {
    report::summary(o, "test", 0, &any_ran())
}

/// What ran, for tests that look at other parts of the summary: the
/// built-in example's setup and no text.
#[allow(dead_code)]
pub fn any_ran() -> experiment::ran::Ran {
    let sc = Scenario::parse(experiment::EXAMPLE, "example.toml").expect("the example parses");
    experiment::ran::Ran::new(&sc, "", &[])
}

/// The values of series `name` sampled in [from_ms, to_ms).
#[allow(dead_code)]
pub fn series_values(o: &Outcome, name: &str, from_ms: f64, to_ms: f64) -> Vec<f64> {
    let ts = o
        .net
        .series()
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no series {name}"));
    ts.points
        .iter()
        .filter(|(t, _)| (from_ms..to_ms).contains(&(*t as f64 / 1e9)))
        .map(|&(_, v)| v)
        .collect()
}

#[allow(dead_code)]
pub fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}
