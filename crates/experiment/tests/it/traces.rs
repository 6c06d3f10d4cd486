//! Jobs from SimAI workload files (`[[jobs]] trace`): the example trace
//! runs, each of its collectives of each pass is a row of
//! `collectives.csv` in the trace's order with its group's size, and a
//! rank starts a collective no earlier than the compute before it after
//! its start of the one before.

use engine::time::{NS, US};
use experiment::jobs;
use fabric::RunState;
use std::path::Path;

#[test]
fn the_example_trace_runs_and_its_collectives_are_rows() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/simai_trace.toml");
    let sc = experiment::Scenario::load(&path).unwrap();
    let built = experiment::build(&sc, &path, None).unwrap();
    let o = experiment::run(built, |_| {});
    assert_eq!(o.state, RunState::Done);
    let r = jobs::result(&o.net, o.jobs[0]).unwrap();
    assert!(r.completion.is_some() && r.error.is_none(), "{r:?}");
    assert_eq!((r.collective, r.algorithm, r.ranks), ("trace", "simai", 16));
    let pass: Vec<(&str, &str, u32, u64)> = vec![
        ("all_reduce", "ring", 4, 1_048_576),
        ("reduce_scatter", "ring", 4, 1_048_576),
        ("all_to_all", "pairwise", 2, 524_288),
        ("all_gather", "ring", 2, 262_144),
        ("all_to_all", "pairwise", 2, 524_288),
        ("all_reduce", "ring", 4, 2_097_152),
        ("all_gather", "ring", 4, 1_048_576),
        ("all_reduce", "ring", 4, 2_097_152),
    ];
    let got: Vec<(u32, &str, &str, u32, u64)> = r
        .rows
        .iter()
        .map(|x| (x.iteration, x.collective, x.algorithm, x.ranks, x.bytes))
        .collect();
    let want: Vec<_> = (0..2)
        .flat_map(|i| pass.iter().map(move |&(c, a, n, b)| (i, c, a, n, b)))
        .collect();
    assert_eq!(got, want);
    // The compute before each collective of the first pass (the trace's
    // nanoseconds), counted from the start of the one before.
    // Layer 3's forward, input- and weight-gradient compute (1 ns each)
    // come before its all-gather; layer 1's weight gradient and layer 0's
    // input and weight gradients before the last all-reduce.
    let delays = [
        20_000,
        50_000,
        30_000,
        3,
        30_000,
        30_000,
        25_000,
        25_000 + 1 + 1000,
    ];
    assert_eq!(r.rows[0].start, delays[0] * NS);
    for (k, w) in r.rows[..pass.len()].windows(2).enumerate() {
        let (a, b) = (&w[0], &w[1]);
        assert!(
            b.start >= a.start + delays[k + 1] * NS + US,
            "row {k}: {a:?} {b:?}"
        );
        assert!(b.end.unwrap() > b.start);
    }
    let csv = jobs::output::csv(std::slice::from_ref(&r)).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    assert_eq!(csv.lines().count(), 1 + 16);
    assert!(csv
        .lines()
        .nth(3)
        .unwrap()
        .starts_with("moe16,0,all_to_all,pairwise,2,524288,"));
}
