//! Sweeps: overrides reach the scenario, and parallel runs write exactly
//! the files sequential runs write.

use experiment::sweep::{points, run, scenario_for, Point};
use std::path::Path;

const TEXT: &str = r#"
seed = 2
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
[[traffic]]
pattern = "permutation"
bytes = 200_000
"#;

#[test]
fn overrides_reach_the_scenario_and_bad_keys_are_named() {
    let p = Point {
        seed: 1,
        overrides: vec![
            ("switch.pfc".into(), "false".into()),
            ("traffic.0.bytes".into(), "5000".into()),
        ],
    };
    let sc = scenario_for(TEXT, "t.toml", &p).unwrap();
    assert!(!sc.switch.pfc);
    match &sc.traffic[0].pattern {
        experiment::scenario::TrafficCfg::Permutation { bytes, .. } => assert_eq!(*bytes, 5000),
        other => panic!("{other:?}"),
    }
    let bad = Point {
        seed: 1,
        overrides: vec![("switch.pfcc".into(), "false".into())],
    };
    let e = scenario_for(TEXT, "t.toml", &bad).unwrap_err().to_string();
    assert!(e.contains("pfcc"), "{e}");
    let bad_index = Point {
        seed: 1,
        overrides: vec![("traffic.3.bytes".into(), "1".into())],
    };
    assert!(scenario_for(TEXT, "t.toml", &bad_index).is_err());
}

/// A key of thousands of parts (an attacker's `--set`, `--vary` or plan)
/// is refused by name: nested that deep, the edited scenario overflowed
/// the stack when written out and read back.
#[test]
fn an_absurdly_deep_key_is_refused_not_a_stack_overflow() {
    let key = format!("{}x", "a.".repeat(16_000));
    let deep = Point {
        seed: 1,
        overrides: vec![(key, "1".into())],
    };
    let e = scenario_for(TEXT, "t.toml", &deep).unwrap_err().to_string();
    assert!(e.contains("16001 parts"), "{e}");
}

#[test]
fn parallel_outputs_equal_sequential_outputs() {
    let pts = points(
        &[1, 2],
        &[],
        &[(
            "traffic.0.bytes".into(),
            vec!["100000".into(), "300000".into()],
        )],
    );
    assert_eq!(pts.len(), 4);
    let base = std::env::temp_dir().join(format!("rdmalab-sweep-{}", std::process::id()));
    let (seq, par) = (base.join("seq"), base.join("par"));
    let a = run(TEXT, Path::new("t.toml"), &pts, 1, Some(&seq)).unwrap();
    let b = run(TEXT, Path::new("t.toml"), &pts, 2, Some(&par)).unwrap();
    assert_eq!(a, b);
    for p in &pts {
        for f in ["flows.csv", "summary.json"] {
            let x = std::fs::read(seq.join(p.label()).join(f)).unwrap();
            let y = std::fs::read(par.join(p.label()).join(f)).unwrap();
            assert_eq!(x, y, "{} {f}", p.label());
        }
    }
    // Different points really differ.
    assert_ne!(a[0].fct_ns, a[2].fct_ns);
    std::fs::remove_dir_all(&base).ok();
}

/// A point with many overrides gets a folder name a file system takes
/// (it failed with "File name too long"), distinct from its neighbour's,
/// and its run writes there; short labels are as they were.
#[test]
fn a_point_with_many_overrides_runs_into_a_folder_of_a_legal_name() {
    let many = |bytes: u32| Point {
        seed: 1,
        overrides: (0..30)
            .map(|i| ("switch.buffer_mb".to_string(), (8 + i % 2).to_string()))
            .take(29)
            .chain([("traffic.0.bytes".to_string(), bytes.to_string())])
            .collect(),
    };
    let (a, b) = (many(5000), many(6000));
    assert!(
        a.label().len() <= experiment::sweep::MAX_LABEL,
        "{}",
        a.label()
    );
    assert_ne!(a.label(), b.label());
    assert!(a.label().starts_with("seed1_switch.buffer_mb=8_"));
    let short = Point {
        seed: 3,
        overrides: vec![("switch.pfc".into(), "false".into())],
    };
    assert_eq!(short.label(), "seed3_switch.pfc=false");
    let dir = std::env::temp_dir().join(format!("sweep-long-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    run(
        TEXT,
        Path::new("t.toml"),
        std::slice::from_ref(&a),
        1,
        Some(&dir),
    )
    .unwrap();
    assert!(dir.join(a.label()).join("summary.json").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
