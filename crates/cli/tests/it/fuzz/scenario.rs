//! The scenario parser, checks and builder, and a short run of what they
//! accept, fed mutated example scenarios (`scenarios/*.toml`): every
//! input must end in a scenario or in an error naming the file, never in
//! a panic. A run is cut at 20 us of simulated time, so each input ends
//! quickly whatever it asks for; what a longer run would allocate is the
//! builder's to refuse (issue 39).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use super::mutate::{budget, Mutator};

fn corpus() -> Vec<(PathBuf, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("scenarios/")
        .map(|e| e.expect("scenarios/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("a scenario file");
            (p, text)
        })
        .collect()
}

/// Parses, builds and briefly runs `text` as if it were the file `path`
/// (relative data files resolve as they do for the original): Err is
/// the refusal's message.
fn try_one(path: &Path, text: &str, out: &Path) -> Result<(), String> {
    let file = path.display().to_string();
    let sc = experiment::Scenario::parse(text, &file).map_err(|e| e.to_string())?;
    let mut built = experiment::build(&sc, path, None).map_err(|e| e.to_string())?;
    let cap = 20 * engine::time::US;
    built.stop = Some(built.stop.map_or(cap, |s| s.min(cap)));
    let outcome = experiment::run(built, |_| {});
    let ran = experiment::ran::Ran::new(&sc, text, &[]);
    let s = experiment::report::summary(&outcome, "fuzz", sc.seed, &ran);
    experiment::report::write_outputs(&outcome, &s, out).map_err(|e| e.to_string())
}

#[test]
fn mutated_scenarios_are_refused_by_name_or_run() {
    let b = budget(150);
    let seed = b.seed;
    let corpus = corpus();
    let texts: Vec<String> = corpus.iter().map(|(_, t)| t.clone()).collect();
    let out = std::env::temp_dir().join(format!("rdmalab-fuzz-scenario-{}", std::process::id()));
    let (mut ran, mut refused) = (0u64, 0u64);
    // The slowest input, for the long run's report (not a check: a slow
    // input is worth a look, not a failure).
    let mut slowest = (std::time::Duration::ZERO, 0);
    for i in b.iterations.clone() {
        let mut m = Mutator::new(seed, i);
        let (path, text) = &corpus[m.below(corpus.len())];
        let input = m.toml(text, &texts);
        if b.show {
            eprintln!("iteration {i}: a mutation of {}:\n{input}", path.display());
        }
        let t0 = std::time::Instant::now();
        let got = catch_unwind(AssertUnwindSafe(|| try_one(path, &input, &out)));
        slowest = slowest.max((t0.elapsed(), i));
        match got {
            Ok(Ok(())) => ran += 1,
            Ok(Err(msg)) => {
                refused += 1;
                let file = path.display().to_string();
                assert!(
                    msg.contains(&file),
                    "seed {seed} iteration {i}: the error does not name {file}: {msg}\n{input}"
                );
            }
            Err(_) => panic!(
                "seed {seed} iteration {i}: a panic on this mutation of {}:\n{input}",
                path.display()
            ),
        }
    }
    let _ = std::fs::remove_dir_all(&out);
    eprintln!(
        "fuzz scenario: {} inputs (seed {seed}): {ran} ran, {refused} refused; \
         slowest: iteration {} in {:.2} s",
        b.iterations.end - b.iterations.start,
        slowest.1,
        slowest.0.as_secs_f64()
    );
    if !b.show {
        assert!(
            ran > 0 && refused > 0,
            "the mutations should both keep and break scenarios"
        );
    }
}
