//! One run split over threads (`--threads`, `[run] threads`; fabric's
//! `net/shard.rs`): every output file byte-identical to one thread's for
//! 2, 3 and 4 threads, on scenarios with PFC pauses, DCQCN's marks, load
//! balancers, a link that fails and comes back and sampled series; the
//! partition; and the thread counts and features refused, by key.

use experiment::scenario::check::Files;
use experiment::{report, run, Scenario};
use std::collections::BTreeMap;
use std::path::Path;

/// Builds `sc` on `threads` threads (None: the scenario's).
fn build(sc: &Scenario, threads: Option<u32>) -> Result<experiment::Built, String> {
    experiment::build::build_from(sc, Path::new("test.toml"), None, Files::Disk, threads)
        .map_err(|e| e.to_string())
}

/// Every output file of `text` run on `threads` threads, by name.
fn outputs(text: &str, threads: u32) -> BTreeMap<String, Vec<u8>> {
    let sc = Scenario::parse(text, "test.toml").expect("scenario parses");
    let built = build(&sc, Some(threads)).expect("scenario builds");
    let shards = if threads == 1 { 0 } else { threads as usize };
    assert_eq!(built.net.shard_summary().len(), shards);
    let o = run(built, |_| {});
    o.net.check_conservation().expect("conservation");
    let ran = experiment::ran::Ran::new(&sc, text, &[]);
    let s = report::summary(&o, "threads", sc.seed, &ran);
    let dir = std::env::temp_dir().join(format!(
        "rdmalab-threads-{}-{threads}-{:x}",
        std::process::id(),
        text.len()
    ));
    report::write_outputs(&o, &s, &dir).expect("outputs written");
    let mut files = BTreeMap::new();
    for e in std::fs::read_dir(&dir).expect("outputs") {
        let p = e.expect("entry").path();
        let name = p.file_name().expect("name").to_string_lossy().into_owned();
        files.insert(name, std::fs::read(&p).expect("readable"));
    }
    std::fs::remove_dir_all(&dir).expect("removed");
    files
}

fn same_for_any_threads(text: &str) {
    let one = outputs(text, 1);
    assert!(one.contains_key("flows.csv") && one.contains_key("summary.json"));
    for threads in 2..=4 {
        let many = outputs(text, threads);
        assert_eq!(
            one.keys().collect::<Vec<_>>(),
            many.keys().collect::<Vec<_>>(),
            "{threads} threads: the files"
        );
        for (name, bytes) in &one {
            assert!(
                &many[name] == bytes,
                "{threads} threads: {name} differs from one thread's"
            );
        }
    }
}

/// An incast into a lossless leaf-spine under DCQCN: PFC pauses, ECN
/// marks, same-picosecond ties; ports, flows and a switch sampled.
const INCAST: &str = r#"
seed = 3
[topology]
kind = "leaf_spine"
leaves = 4
spines = 2
hosts_per_leaf = 4
host_gbps = 100
fabric_gbps = 100
delay_ns = 1000
[switch]
buffer_mb = 1
pfc = true
[transport]
cc = "dcqcn"
[[traffic]]
pattern = "incast"
receiver = 0
fan_in = 12
bytes = 200_000
[[traffic]]
pattern = "permutation"
bytes = 300_000
[output]
sample_us = 5
ports = [["leaf0", "h0"], ["spine0", "leaf0"]]
flows = [0, 13]
ecn_ports = [["leaf0", "h0"], ["h3", "leaf0"]]
buffers = ["leaf0"]
pfc = true
pcap = { flows = [0, 1, 13], max_packets = 900 }
"#;

#[test]
fn an_incast_with_pfc_and_series_is_the_same_on_any_number_of_threads() {
    same_for_any_threads(INCAST);
}

/// A fat tree under DRILL whose spine link fails and comes back: routes
/// recomputed, packets lost on the dead link, retransmissions.
#[test]
fn a_failing_link_under_drill_is_the_same_on_any_number_of_threads() {
    let text = r#"
seed = 5
[topology]
kind = "fat_tree"
k = 4
host_gbps = 100
delay_ns = 500
[switch]
load_balancer = "drill"
[[traffic]]
pattern = "permutation"
bytes = 400_000
[[faults]]
link = ["agg0", "core0"]
at_us = 20
action = "down"
[[faults]]
link = ["agg0", "core0"]
at_us = 60
action = "up"
"#;
    same_for_any_threads(text);
}

/// LetFlow's flowlet tables and spraying's turns, per switch.
#[test]
fn letflow_and_spray_are_the_same_on_any_number_of_threads() {
    for lb in ["letflow", "spray"] {
        let text = format!(
            r#"
[topology]
kind = "leaf_spine"
leaves = 3
spines = 3
hosts_per_leaf = 3
host_gbps = 100
fabric_gbps = 100
delay_ns = 800
[switch]
load_balancer = "{lb}"
[transport]
kind = "irn"
[[traffic]]
pattern = "all_to_all"
bytes = 30_000
"#
        );
        same_for_any_threads(&text);
    }
}

fn build_error(text: &str, threads: Option<u32>) -> String {
    let sc = Scenario::parse(text, "test.toml").expect("scenario parses");
    match build(&sc, threads) {
        Ok(_) => panic!("built"),
        Err(e) => e,
    }
}

const SMALL: &str = r#"
[topology]
kind = "leaf_spine"
leaves = 1
spines = 1
hosts_per_leaf = 2
host_gbps = 100
fabric_gbps = 100
delay_ns = 1000
[[flows]]
src = 0
dst = 1
bytes = 10_000
"#;

#[test]
fn thread_counts_and_features_that_cannot_be_split_are_refused_by_key() {
    let e = build_error(SMALL, Some(0));
    assert!(e.contains("run.threads") && e.contains("0 threads"), "{e}");
    // Two hosts and two switches: four nodes, at most four threads.
    let e = build_error(SMALL, Some(5));
    assert!(
        e.contains("run.threads") && e.contains("5 threads for 4 nodes"),
        "{e}"
    );
    let e = Scenario::parse(&format!("{SMALL}\n[run]\nthreads = 0\n"), "test.toml")
        .expect_err("refused")
        .to_string();
    assert!(e.contains("run.threads") && e.contains("line 16"), "{e}");
    let conga = SMALL.replace(
        "[[flows]]",
        "[switch]\nload_balancer = \"conga\"\n[[flows]]",
    );
    let e = build_error(&conga, Some(2));
    assert!(
        e.contains("switch.load_balancer") && e.contains("threads = 1"),
        "{e}"
    );
    let srpt = SMALL.replace("[[flows]]", "[switch]\nscheduling = \"srpt\"\n[[flows]]");
    let e = build_error(&srpt, Some(2));
    assert!(e.contains("switch.scheduling"), "{e}");
}

#[test]
fn the_file_s_threads_apply_and_the_flag_overrides_them() {
    let text = format!("{SMALL}\n[run]\nthreads = 2\n");
    let sc = Scenario::parse(&text, "test.toml").expect("parses");
    let b = |t| build(&sc, t).expect("builds");
    assert_eq!(b(None).net.shard_summary().len(), 2);
    assert_eq!(b(Some(3)).net.shard_summary().len(), 3);
    assert!(b(Some(1)).net.shard_summary().is_empty());
}

/// A k=4 fat tree in two shards: a pod pair each, every host with its
/// leaf; in four, a pod each.
#[test]
fn shards_keep_pods_together_and_balance_hosts() {
    let text = SMALL.replace(
        "kind = \"leaf_spine\"\nleaves = 1\nspines = 1\nhosts_per_leaf = 2\nhost_gbps = 100\nfabric_gbps = 100",
        "kind = \"fat_tree\"\nk = 4\nhost_gbps = 100",
    );
    let sc = Scenario::parse(&text, "test.toml").expect("parses");
    for (threads, cut) in [(2, 4), (4, 4)] {
        let b = build(&sc, Some(threads)).expect("builds");
        let shards = b.net.shard_summary();
        assert_eq!(shards.len(), threads as usize);
        for (k, &(hosts, switches, links)) in shards.iter().enumerate() {
            assert_eq!(hosts, 16 / threads, "shard {k}: {shards:?}");
            assert!(switches >= 2 && links >= cut, "shard {k}: {shards:?}");
        }
        let switches: u32 = shards.iter().map(|s| s.1).sum();
        assert_eq!(switches, 20);
    }
}

/// Links failing at random every 100 us, packets lost on them and the
/// flows they hit noted, under go-back-N.
#[test]
fn random_link_failures_are_the_same_on_any_number_of_threads() {
    let text = r#"
seed = 3
[topology]
kind = "leaf_spine"
leaves = 4
spines = 4
hosts_per_leaf = 2
host_gbps = 100
fabric_gbps = 100
[transport]
rto_us = 100
[[traffic]]
pattern = "poisson"
cdf = "websearch"
load = 0.3
duration_us = 300
[[faults]]
action = "random_failures"
fraction = 0.125
interval_us = 60
at_us = 30
stop_us = 250
"#;
    same_for_any_threads(text);
}
