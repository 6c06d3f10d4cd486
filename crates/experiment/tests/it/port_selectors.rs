//! `[output] ports` by level ("all", "host", "tor_up", "agg_down", ...,
//! alone or in a list beside [node, peer] pairs) samples exactly the
//! ports of that level and direction, each once; `[output] buffers`
//! records each chosen switch's buffer occupancy; bad selectors and
//! names are refused naming the key.

use crate::common;
use experiment::Scenario;
use std::collections::BTreeSet;
use std::path::Path;

/// A 2x2 leaf-spine of 2 hosts per leaf and an incast into host 0.
fn scenario(output: &str) -> String {
    format!(
        r#"
seed = 1
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 2
[[traffic]]
pattern = "incast"
receiver = 0
senders = [1, 2, 3]
bytes = 100_000
[output]
sample_us = 1
{output}
"#
    )
}

/// The ports whose queue is sampled, as `<node>-><peer>`.
fn sampled(output: &str) -> BTreeSet<String> {
    let o = common::run_toml(&scenario(output));
    let names: Vec<String> = o
        .net
        .series()
        .iter()
        .filter_map(|s| s.name.strip_prefix("queue_bytes:").map(String::from))
        .collect();
    let set: BTreeSet<String> = names.iter().cloned().collect();
    assert_eq!(set.len(), names.len(), "each port once: {names:?}");
    set
}

fn set(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn selectors_pick_the_ports_of_their_level_and_direction() {
    let up = set(&[
        "leaf0->spine0",
        "leaf0->spine1",
        "leaf1->spine0",
        "leaf1->spine1",
    ]);
    let down = set(&[
        "spine0->leaf0",
        "spine0->leaf1",
        "spine1->leaf0",
        "spine1->leaf1",
    ]);
    let hosts = set(&["h0->leaf0", "h1->leaf0", "h2->leaf1", "h3->leaf1"]);
    let tor_down = set(&["leaf0->h0", "leaf0->h1", "leaf1->h2", "leaf1->h3"]);
    assert_eq!(sampled("ports = \"tor_up\""), up);
    assert_eq!(sampled("ports = \"agg_down\""), down);
    assert_eq!(sampled("ports = \"host\""), hosts);
    assert_eq!(sampled("ports = \"tor_down\""), tor_down);
    let all = sampled("ports = \"all\"");
    assert_eq!(all.len(), 2 * (4 + 4), "both directions of 8 links");
    let switch: BTreeSet<String> = up.union(&down).chain(&tor_down).cloned().collect();
    assert_eq!(sampled("ports = \"switch\""), switch);
    // A list mixes selectors and pairs; a port named twice counts once.
    let mixed = sampled("ports = [\"host\", [\"leaf0\", \"spine1\"], [\"h0\", \"leaf0\"]]");
    let mut want = hosts.clone();
    want.insert("leaf0->spine1".into());
    assert_eq!(mixed, want);
}

#[test]
fn a_fat_trees_levels_are_edge_agg_and_core() {
    // k = 4: 16 hosts, 8 edge, 8 aggregation and 4 core switches, each
    // switch with k/2 ports down and k/2 up (a core switch: k down).
    let text = r#"
seed = 1
[topology]
kind = "fat_tree"
k = 4
[[flows]]
src = 0
dst = 15
bytes = 10_000
[output]
sample_us = 1
"#;
    let count = |sel: &str, prefix: &str, peer: &str| {
        let o = common::run_toml(&format!("{text}ports = \"{sel}\"\n"));
        let names: Vec<String> = o
            .net
            .series()
            .iter()
            .filter_map(|s| s.name.strip_prefix("queue_bytes:").map(String::from))
            .collect();
        assert!(
            names.iter().all(|n| {
                let (a, b) = n.split_once("->").unwrap();
                a.starts_with(prefix) && b.starts_with(peer)
            }),
            "{sel}: {names:?}"
        );
        names.len()
    };
    assert_eq!(count("host", "h", "edge"), 16);
    assert_eq!(count("tor_down", "edge", "h"), 16);
    assert_eq!(count("tor_up", "edge", "agg"), 16);
    assert_eq!(count("agg_down", "agg", "edge"), 16);
    assert_eq!(count("agg_up", "agg", "core"), 16);
    assert_eq!(count("core_down", "core", "agg"), 16);
    let e = build_err(&format!("{text}ports = \"core_up\"\n"));
    assert!(e.contains("selects no port"), "{e}");
}

#[test]
fn buffers_record_each_switchs_occupancy() {
    let o = common::run_toml(&scenario("buffers = \"all\""));
    let names: Vec<&str> = o.net.series().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "buffer_bytes:leaf0",
            "buffer_bytes:leaf1",
            "buffer_bytes:spine0",
            "buffer_bytes:spine1"
        ]
    );
    // The incast's receiving leaf buffers packets; the series is the MMU's
    // bytes at each sample, never negative.
    let leaf0 = &o.net.series()[0].points;
    assert!(leaf0.iter().any(|&(_, v)| v > 0.0));
    assert!(leaf0.iter().all(|&(_, v)| v >= 0.0));
    let one = common::run_toml(&scenario("buffers = [\"spine1\"]"));
    assert_eq!(one.net.series().len(), 1);
    assert_eq!(one.net.series()[0].points, o.net.series()[3].points);
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
fn bad_selectors_and_names_are_refused_naming_the_key() {
    for (output, key, says) in [
        (
            "ports = \"tor_upp\"",
            "output.ports",
            "unknown port selector \"tor_upp\"",
        ),
        (
            "ports = [\"all\", \"spine\"]",
            "output.ports[1]",
            "\"agg_down\"",
        ),
        ("ports = \"core_down\"", "output.ports", "selects no port"),
        (
            "ports = [[\"h0\", \"spine0\"]]",
            "output.ports[0]",
            "no link joins",
        ),
        ("buffers = \"every\"", "output.buffers", "expected \"all\""),
        (
            "buffers = [\"leaf0\", \"h1\"]",
            "output.buffers[1]",
            "is a host",
        ),
        (
            "buffers = [\"leaf9\"]",
            "output.buffers[0]",
            "no node \"leaf9\"",
        ),
    ] {
        let e = build_err(&scenario(output));
        assert!(e.contains(key) && e.contains(says), "{output}: {e}");
    }
    let e = build_err(&scenario("").replace("sample_us = 1", "buffers = \"all\""));
    assert!(e.contains("output.sample_us"), "{e}");
    // "all" counts against the bound once the topology is known.
    let e = build_err(&format!(
        "stop_ms = 100\n{}",
        scenario("ports = \"all\"").replace("sample_us = 1", "sample_us = 0.01")
    ));
    assert!(e.contains("sampled values"), "{e}");
}
