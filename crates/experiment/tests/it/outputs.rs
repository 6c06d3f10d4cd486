//! Outputs are byte-identical for a scenario and seed, differ with another
//! seed where the scenario is random, and bad scenarios give clear errors;
//! `delivered_bytes` counts every flow's completed messages, unfinished
//! flows' too.

use crate::common;
use experiment::{report, Scenario};
use std::path::Path;

const RANDOM: &str = r#"
seed = 5
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
[[traffic]]
pattern = "permutation"
bytes = 300_000
"#;

fn outputs(seed: Option<u64>, dir: &Path) -> (Vec<u8>, Vec<u8>) {
    let o = common::run_toml_seed(RANDOM, seed);
    let s = report::summary(&o, "random", seed.unwrap_or(5), &common::any_ran());
    report::write_outputs(&o, &s, dir).unwrap();
    (
        std::fs::read(dir.join("flows.csv")).unwrap(),
        std::fs::read(dir.join("summary.json")).unwrap(),
    )
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let tmp = std::env::temp_dir().join(format!("rdmalab-out-{}", std::process::id()));
    let a = outputs(None, &tmp.join("a"));
    let b = outputs(None, &tmp.join("b"));
    let c = outputs(Some(6), &tmp.join("c"));
    assert_eq!(a, b);
    assert_ne!(
        a.0, c.0,
        "a permutation under another seed pairs other hosts"
    );
    let header = String::from_utf8(a.0.clone()).unwrap();
    assert!(header.starts_with(
        "flow_id,src,dst,size_bytes,start_ns,fct_ns,ideal_fct_ns,slowdown,goodput_gbps,verb,class,ooo_packets,ood_max,reorder_retx,ideal_fct_exact_ns,slowdown_exact,delivered_bytes\n"
    ));
    assert_eq!(header.lines().count(), 9);
    std::fs::remove_dir_all(&tmp).ok();
}

fn build_err(text: &str) -> String {
    let sc = match Scenario::parse(text, "bad.toml") {
        Ok(sc) => sc,
        Err(e) => return e.to_string(),
    };
    match experiment::build(&sc, Path::new("bad.toml"), None) {
        Ok(_) => panic!("scenario should be refused"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_scenarios_get_clear_errors() {
    let unknown = RANDOM.replace("bytes = 300_000", "bytes = 300_000\nbites = 1");
    let e = build_err(&unknown);
    assert!(e.contains("bad.toml") && e.contains("bites"), "{e}");

    let wrong_type = RANDOM.replace("leaves = 2", "leaves = \"two\"");
    let e = build_err(&wrong_type);
    assert!(e.contains("bad.toml: topology.leaves: invalid type"), "{e}");
    assert!(e.contains("expected u32") && e.contains("line 5"), "{e}");

    let missing_node = r#"
[topology]
kind = "edges"
nodes = [{ name = "a", kind = "host" }, { name = "s", kind = "switch" }]
links = [{ a = "a", b = "s" }, { a = "s", b = "ghost" }]
"#;
    let e = build_err(missing_node);
    assert!(
        e.contains("topology.links[1].b") && e.contains("ghost"),
        "{e}"
    );

    let bad_host = format!("{RANDOM}[[flows]]\nsrc = 0\ndst = 99\nbytes = 10\n");
    let e = build_err(&bad_host);
    assert!(e.contains("flows") && e.contains("99"), "{e}");

    let bad_fault =
        format!("{RANDOM}[[faults]]\nlink = [\"leaf0\", \"leaf1\"]\naction = \"down\"\n");
    let e = build_err(&bad_fault);
    assert!(e.contains("faults[0].link"), "{e}");

    let no_loss =
        format!("{RANDOM}[[faults]]\nlink = [\"leaf0\", \"spine1\"]\naction = \"loss\"\n");
    let e = build_err(&no_loss);
    assert!(e.contains("faults[0].loss"), "{e}");

    let jumbo = format!("{RANDOM}[transport]\nmtu = 20000\n");
    let e = build_err(&jumbo);
    assert!(e.contains("transport.mtu") && e.contains("16383"), "{e}");

    // A switch of 300 ports: more than a header can name.
    let hosts: Vec<String> = (0..300)
        .map(|i| format!("{{ name = \"h{i}\", kind = \"host\" }}"))
        .collect();
    let links: Vec<String> = (0..300)
        .map(|i| format!("{{ a = \"h{i}\", b = \"s\" }}"))
        .collect();
    let wide = format!(
        "[topology]\nkind = \"edges\"\nnodes = [{{ name = \"s\", kind = \"switch\" }}, {}]\nlinks = [{}]\n",
        hosts.join(", "),
        links.join(", ")
    );
    let e = build_err(&wide);
    assert!(e.contains("switch s has 300 ports"), "{e}");
}

#[test]
fn builtin_example_parses_and_builds() {
    let sc = Scenario::parse(experiment::EXAMPLE, "example").unwrap();
    let b = experiment::build(&sc, Path::new("example"), None).unwrap();
    assert_eq!(b.net.host_count(), 32);
    assert_eq!(b.net.flows().len(), 32 + 16);
}

#[test]
fn every_shipped_scenario_parses_and_builds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let sc = Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
            let b = experiment::build(&sc, &path, None).unwrap_or_else(|e| panic!("{e}"));
            let work = !b.net.flows().is_empty() || !b.jobs.is_empty();
            assert!(work, "{} has no flows and no jobs", path.display());
            n += 1;
        }
    }
    assert!(n >= 5);
}

#[test]
fn delivered_bytes_count_completed_messages_of_unfinished_flows_too() {
    // A 100 Gb/s flow of 8 messages of 125 kB (10 us each) stopped at
    // 45 us, and a small one that finishes.
    let text = r#"
seed = 1
stop_ms = 0.045
[topology]
kind = "leaf_spine"
leaves = 2
spines = 1
hosts_per_leaf = 2
[[flows]]
src = 0
dst = 2
bytes = 1_000_000
messages = 8
[[flows]]
src = 1
dst = 3
bytes = 5_000
verb = "read"
"#;
    let rows = report::flow_rows(&common::run_toml(text));
    let (cut, done) = (&rows[0], &rows[1]);
    assert!(
        cut.fct_ns.is_none(),
        "the run stops before the big flow ends"
    );
    assert!(
        cut.delivered_bytes > 0 && cut.delivered_bytes < 1_000_000,
        "{}",
        cut.delivered_bytes
    );
    assert_eq!(cut.delivered_bytes % 125_000, 0, "whole messages");
    assert!(done.fct_ns.is_some());
    assert_eq!(done.delivered_bytes, 5_000);
}
