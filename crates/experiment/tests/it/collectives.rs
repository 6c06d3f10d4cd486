//! Collective jobs run closed-loop on a fabric (`experiment::jobs`): no
//! transfer is posted before the receives it waits for arrived, for every
//! algorithm; iterations are spaced by the compute gap; two identical
//! jobs side by side finish together; a ring all-reduce's bus bandwidth
//! on an idle non-blocking fabric is its alpha-beta formula's.

use engine::time::US;
use engine::Time;
use experiment::jobs::{self, Job, JobApp};
use fabric::{FabricConfig, Network, NodeKind, RunState, Topology};
use workload::collective::{plan, Algorithm, Collective, Spec};

const RATE: u64 = 100_000_000_000;
const DELAY: Time = US;

/// `hosts` hosts on one switch (non-blocking), each by a link of `RATE`
/// and `DELAY`.
fn star(hosts: u32) -> Topology {
    let mut topo = Topology::default();
    let s = topo.add_node("s0".into(), NodeKind::Switch);
    for h in 0..hosts {
        let n = topo.add_node(format!("h{h}"), NodeKind::Host);
        topo.add_link(n, s, RATE, DELAY);
    }
    topo
}

fn job(name: &str, spec: Spec, hosts: Vec<u32>, iterations: u32, compute: Time) -> (Job, Spec) {
    let job = Job {
        name: name.into(),
        hosts,
        iterations,
        compute,
        start: 2 * US,
    };
    (job, spec)
}

fn spec(collective: Collective, algorithm: Algorithm, ranks: u32, bytes: u64) -> Spec {
    Spec {
        collective,
        algorithm,
        ranks,
        bytes,
        channels: 1,
        chunk_bytes: 0,
    }
}

/// Runs `jobs` on a star of `hosts` to the end; the network and the ids.
fn run(hosts: u32, list: Vec<(Job, Spec)>, log: bool) -> (Network, Vec<fabric::AppId>) {
    let mut net = Network::new(star(hosts), FabricConfig::default()).unwrap();
    let with_plans = list.into_iter().map(|(j, s)| (j, plan(&s).unwrap()));
    let ids = jobs::add(&mut net, with_plans.collect(), log).unwrap();
    assert_eq!(net.run_until(Time::MAX, u64::MAX), RunState::Done);
    net.check_conservation().unwrap();
    (net, ids)
}

/// Every transfer of every iteration is posted no earlier than the
/// arrival of each receive it waits for, and arrives; for every
/// algorithm, with chunks, two channels and a compute gap.
#[test]
fn no_step_starts_before_its_inputs_arrived() {
    let n = 6;
    let (iterations, compute) = (3, 5 * US);
    for c in Collective::ALL {
        for &a in c.algorithms() {
            let s = Spec {
                channels: 2,
                chunk_bytes: 3000,
                ..spec(c, a, n, 48_000)
            };
            let hosts = vec![5, 0, 3, 1, 4, 2];
            let (net, ids) = run(n, vec![job("j", s, hosts, iterations, compute)], true);
            let app = net.app::<JobApp>(ids[0]).unwrap();
            assert!(app.done() && app.error().is_none(), "{c:?} {a:?}");
            let p = app.plan();
            let mut checked = 0;
            for it in 0..iterations {
                for i in 0..p.transfers.len() {
                    let (posted, arrived) = app.logged(it, i).unwrap();
                    assert!(arrived < Time::MAX && posted < arrived, "{c:?} {a:?}");
                    for &d in p.deps(i) {
                        let (_, input) = app.logged(it, d as usize).unwrap();
                        assert!(
                            posted >= input,
                            "{c:?} {a:?}: iteration {it}, transfer {i} before {d}"
                        );
                        checked += 1;
                    }
                }
            }
            assert!(checked > 0 || c == Collective::AllToAll, "{c:?} {a:?}");
            // Iterations follow each other by at least the compute gap.
            let its = app.iterations();
            assert_eq!(its.len(), iterations as usize);
            for w in its.windows(2) {
                assert!(w[1].start >= w[0].start + compute, "{c:?} {a:?}");
            }
            let r = jobs::result(&net, ids[0]).unwrap();
            let last = its.last().unwrap().end.unwrap();
            assert_eq!(r.completion, Some(last - 2 * US));
        }
    }
}

/// A rank starts its next iteration the compute gap after it ended the
/// last (a rank that only sends, the broadcast's root, runs ahead of the
/// others but not of its gap).
#[test]
fn the_compute_gap_separates_a_ranks_iterations() {
    let s = spec(Collective::AllReduce, Algorithm::Ring, 4, 400_000);
    let gap = 30 * US;
    let (net, ids) = run(4, vec![job("j", s, vec![0, 1, 2, 3], 4, gap)], true);
    let app = net.app::<JobApp>(ids[0]).unwrap();
    let its = app.iterations();
    // The ring's ranks end each iteration within a step of each other; the
    // next starts a gap later.
    for w in its.windows(2) {
        let (end, next) = (w[0].end.unwrap(), w[1].start);
        assert!(
            next >= end - 50 * US / 10 && next <= end + gap,
            "{end} {next}"
        );
        assert!(next >= w[0].start + gap);
    }
}

/// Two identical jobs on the two halves of a non-blocking fabric, their
/// ranks interleaved on one switch, finish together.
#[test]
fn identical_jobs_on_disjoint_halves_finish_together() {
    for a in [Algorithm::Ring, Algorithm::Tree, Algorithm::HalvingDoubling] {
        let s = Spec {
            chunk_bytes: 64_000,
            ..spec(Collective::AllReduce, a, 8, 4_000_000)
        };
        let even: Vec<u32> = (0..8).map(|r| 2 * r).collect();
        let odd: Vec<u32> = (0..8).map(|r| 2 * r + 1).collect();
        let (net, ids) = run(
            16,
            vec![job("a", s, even, 2, US), job("b", s, odd, 2, US)],
            false,
        );
        let [x, y] = [0, 1].map(|i| jobs::result(&net, ids[i]).unwrap().completion.unwrap());
        let diff = x.abs_diff(y) as f64 / x as f64;
        assert!(diff < 1e-3, "{a:?}: {x} and {y} ps");
        // The ring has no incast: alone, a job takes the same time (the
        // tree's and halving-doubling's incasts share the switch's buffer
        // with the other job's, and its PFC thresholds).
        if a != Algorithm::Ring {
            continue;
        }
        let alone = run(
            16,
            vec![job("a", s, (0..8).map(|r| 2 * r).collect(), 2, US)],
            false,
        );
        let z = jobs::result(&alone.0, alone.1[0])
            .unwrap()
            .completion
            .unwrap();
        assert!(
            x.abs_diff(z) as f64 / (z as f64) < 1e-3,
            "{a:?}: {x} with, {z} alone"
        );
    }
}

/// Ring all-reduce on an idle star: bus bandwidth within 5% of the
/// alpha-beta formula. Each of the 2(n-1) steps moves a piece of S/n
/// bytes over every host's link: its packets with their headers, and on
/// the same link the ACKs of the piece coming in (one per packet); the
/// per-step latency is the last packet's store-and-forward at the switch
/// and the two link delays.
#[test]
fn ring_all_reduce_bus_bandwidth_is_the_alpha_beta_formula() {
    let cfg = FabricConfig::default();
    let (mtu, header, ack) = (
        cfg.nic.mtu as u64,
        cfg.nic.header_bytes as u64,
        cfg.nic.ctrl_bytes as u64,
    );
    let ser = |bytes: u64| bytes * 8 * 1_000_000_000_000 / RATE;
    for (n, bytes) in [(4u32, 4_000_000u64), (8, 16_000_000), (16, 16_000_000)] {
        let s = spec(Collective::AllReduce, Algorithm::Ring, n, bytes);
        let (net, ids) = run(n, vec![job("r", s, (0..n).collect(), 1, 0)], false);
        let r = jobs::result(&net, ids[0]).unwrap();
        let row = &r.rows[0];
        let piece = bytes / n as u64;
        let packets = piece.div_ceil(mtu);
        let wire = piece + packets * (header + ack);
        let step = ser(wire) + ser(mtu + header) + 2 * DELAY;
        let formula = 2 * (n as u64 - 1) * step;
        let bus = |t: Time| bytes as f64 * 8.0 / (t as f64 / 1e12) / 1e9 * row.bus_factor;
        let (got, want) = (row.busbw_gbps().unwrap(), bus(formula));
        assert!(
            (got / want - 1.0).abs() < 0.05,
            "n={n}: busbw {got:.2} Gb/s, formula {want:.2}"
        );
        // Bounded by the link's payload share.
        assert!(got < 100.0 * mtu as f64 / (mtu + header) as f64);
        eprintln!(
            "ring all-reduce n={n} {bytes} B: busbw {got:.3} Gb/s, alpha-beta {want:.3} Gb/s"
        );
    }
}

/// `[[jobs]]` in a scenario, beside `[[traffic]]`: placements take the
/// hosts earlier jobs left free (packed: the lowest; spread: an even
/// stride; random: drawn from the seed), every job and flow finishes.
#[test]
fn jobs_from_a_scenario_beside_traffic() {
    let text = r#"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 4

[[traffic]]
pattern = "permutation"
bytes = 100_000

[[jobs]]
name = "ar"
collective = "all_reduce"
placement = "packed"
size = 4
bytes = 1_000_000
iterations = 2
compute_us = 5

[[jobs]]
collective = "all_to_all"
placement = "spread"
size = 2
bytes = 200_000

[[jobs]]
collective = "broadcast"
placement = "random"
size = 2
bytes = 100_000
start_us = 3
"#;
    let o = crate::common::run_toml(text);
    assert_eq!(o.state, RunState::Done);
    assert_eq!(o.jobs.len(), 3);
    let hosts: Vec<Vec<u32>> = o
        .jobs
        .iter()
        .map(|&id| o.net.app::<JobApp>(id).unwrap().job().hosts.clone())
        .collect();
    assert_eq!(hosts[0], [0, 1, 2, 3]);
    assert_eq!(hosts[1], [4, 6]);
    let mut rest = hosts[2].clone();
    rest.sort();
    assert_eq!(rest, [5, 7]);
    for &id in &o.jobs {
        let r = jobs::result(&o.net, id).unwrap();
        assert!(r.completion.is_some() && r.error.is_none(), "{r:?}");
    }
    let r = jobs::result(&o.net, o.jobs[1]).unwrap();
    assert_eq!(r.name, "job1");
    assert_eq!(r.rows[0].start, 0);
    assert_eq!(
        jobs::result(&o.net, o.jobs[2]).unwrap().rows[0].start,
        3 * US
    );
    assert_eq!(o.flows().iter().filter(|f| f.finish.is_some()).count(), 8);
}

/// The outputs of a run with jobs: `collectives.csv` with exactly its
/// columns and one row per job and iteration (busbw = algbw x the
/// collective's factor, algbw = bytes over the time), the jobs' block of
/// `summary.json` and their lines in the readable summary; a run without
/// jobs writes neither the file nor the block.
#[test]
fn collectives_csv_summary_json_and_text() {
    let base = "[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 4\n\
                [[traffic]]\npattern = \"permutation\"\nbytes = 50_000\n";
    let text = format!(
        "{base}[[jobs]]\nname = \"ag\"\ncollective = \"all_gather\"\nranks = \"0..3\"\nbytes = 400_000\niterations = 3\n\
         [[jobs]]\nname = \"bc\"\ncollective = \"broadcast\"\nranks = [7, 5, 6]\nbytes = 300_000\n"
    );
    let dir = std::env::temp_dir().join(format!("rdmalab-collectives-{}", std::process::id()));
    let o = crate::common::run_toml(&text);
    let s = experiment::report::summary(&o, "jobs", 1, &crate::common::any_ran());
    experiment::report::write_outputs(&o, &s, &dir.join("jobs")).unwrap();
    let csv = std::fs::read_to_string(dir.join("jobs/collectives.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "job,iteration,collective,algorithm,ranks,bytes,start_ns,end_ns,time_ns,algbw_gbps,busbw_gbps"
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 4);
    assert_eq!(
        rows[0][..6],
        ["ag", "0", "all_gather", "ring", "4", "400000"]
    );
    assert_eq!(
        rows[3][..6],
        ["bc", "0", "broadcast", "ring", "3", "300000"]
    );
    for (r, factor) in rows.iter().zip([0.75, 0.75, 0.75, 1.0]) {
        let num = |i: usize| r[i].parse::<f64>().unwrap();
        assert_eq!(num(8), num(7) - num(6));
        let algbw = num(5) * 8.0 / num(8);
        assert!((num(9) - algbw).abs() < 0.01 * algbw, "{r:?}");
        assert!((num(10) - factor * num(9)).abs() < 1e-3, "{r:?}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("jobs/summary.json")).unwrap())
            .unwrap();
    let ag = &json["jobs"][0];
    assert_eq!(ag["name"], "ag");
    assert_eq!(ag["iteration_time_ns"].as_array().unwrap().len(), 3);
    let last_end: u64 = rows[2][7].parse().unwrap();
    assert_eq!(ag["completion_time_ns"], last_end);
    let text_summary = experiment::summary_text::render(&s);
    assert!(text_summary.contains("job ag"), "{text_summary}");
    assert!(text_summary.contains("3 of 3 iterations"), "{text_summary}");
    // Without jobs: no file, no block.
    let o = crate::common::run_toml(base);
    let s = experiment::report::summary(&o, "plain", 1, &crate::common::any_ran());
    experiment::report::write_outputs(&o, &s, &dir.join("plain")).unwrap();
    assert!(!dir.join("plain/collectives.csv").exists());
    let json = std::fs::read_to_string(dir.join("plain/summary.json")).unwrap();
    assert!(!json.contains("\"jobs\""));
    assert!(!experiment::summary_text::render(&s).contains("job "));
    std::fs::remove_dir_all(&dir).ok();
}

/// A job behind a link that went down with no other path ends the run as
/// stalled, naming the job; a compute gap longer than the no-progress
/// limit (10 ms here) is not a stall, nor is a job that starts later.
#[test]
fn a_stuck_job_is_named_and_a_long_compute_gap_is_not_a_stall() {
    let base = r#"
[topology]
kind = "testbed"
paths = 1
hosts_per_tor = 1
[transport]
rto_us = 100
[[jobs]]
name = "stuck"
collective = "all_gather"
ranks = [0, 1]
bytes = 200_000
"#;
    let down =
        format!("{base}[[faults]]\nlink = [\"tor0\", \"spine0\"]\naction = \"down\"\nat_us = 1\n");
    let sc = experiment::Scenario::parse(&down, "stuck.toml").unwrap();
    let o = experiment::run(
        experiment::build(&sc, std::path::Path::new("stuck.toml"), None).unwrap(),
        |_| {},
    );
    let m = o.stalled.expect("the run is reported stalled");
    assert!(m.contains("jobs not completed: stuck"), "{m}");
    // Even with sampling events through the quiet spans.
    let gap = base.replace(
        "bytes = 200_000",
        "bytes = 200_000\niterations = 2\ncompute_us = 30_000\nstart_us = 25_000\n[output]\nsample_us = 0.1\nports = [[\"tor0\", \"spine0\"]]",
    );
    let o = crate::common::run_toml(&gap);
    assert!(o.stalled.is_none(), "{:?}", o.stalled);
    let r = jobs::result(&o.net, o.jobs[0]).unwrap();
    assert_eq!(r.rows.len(), 2);
    assert!(r.rows[1].start >= r.rows[0].end.unwrap() + 30_000 * US);
}

/// The report of a run with jobs: iteration time over the run (a line
/// per job, a point per finished iteration), bus bandwidth per job (a
/// bar each, lowest to highest as an error bar), the CDF of completion
/// times across the jobs, and their table; the readable summary's line
/// over all jobs. A run without jobs has none of them.
#[test]
fn the_report_and_the_summary_show_the_jobs() {
    let base = "[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 4\n\
                [[traffic]]\npattern = \"permutation\"\nbytes = 50_000\n";
    let text = format!(
        "{base}[[jobs]]\nname = \"ar\"\ncollective = \"all_reduce\"\nranks = \"0..3\"\nbytes = 400_000\niterations = 3\n\
         [[jobs]]\nname = \"a2a\"\ncollective = \"all_to_all\"\nranks = [4, 5, 6, 7]\nbytes = 300_000\niterations = 2\n"
    );
    let dir = std::env::temp_dir().join(format!("rdmalab-jobs-report-{}", std::process::id()));
    let o = crate::common::run_toml(&text);
    let s = experiment::report::summary(&o, "jobs", 1, &crate::common::any_ran());
    experiment::report::write_outputs(&o, &s, &dir.join("jobs")).unwrap();
    let page = experiment::html::render_dir(&dir.join("jobs")).unwrap();
    let figure = |id: &str| {
        let start = page
            .find(&format!("<figure class=\"chart\" id=\"{id}\""))
            .unwrap_or_else(|| panic!("no figure {id}"));
        let len = page[start..].find("</figure>").unwrap();
        page[start..start + len].to_string()
    };
    assert!(page.contains("Made from summary.json, flows.csv, collectives.csv of"));
    let its = figure("job-iterations");
    assert_eq!(its.matches("<polyline").count(), 2, "{its}");
    assert_eq!(its.matches("<circle").count(), 3 + 2, "{its}");
    let bus = figure("job-busbw");
    assert_eq!(bus.matches("<rect class=\"bar\"").count(), 2, "{bus}");
    assert_eq!(bus.matches("class=\"err\"").count(), 2, "{bus}");
    assert!(
        bus.contains(">ar</text>") && bus.contains(">a2a</text>"),
        "{bus}"
    );
    let cdf = figure("job-completion-cdf");
    assert_eq!(cdf.matches("<circle").count(), 2, "{cdf}");
    assert!(cdf.contains("2 of 2 jobs completed"), "{cdf}");
    let table = &page[page.find("<table id=\"jobs-table\"").unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(table.matches("<tr>").count(), 3, "{table}");
    assert!(table.contains("<td>3 of 3</td>"), "{table}");
    let text_summary = experiment::summary_text::render(&s);
    let all = text_summary
        .lines()
        .find(|l| l.trim_start().starts_with("jobs "))
        .unwrap_or_else(|| panic!("{text_summary}"));
    assert!(
        all.contains("2 of 2 completed, completion (us) min"),
        "{all}"
    );
    let ar = text_summary.lines().find(|l| l.contains("job ar")).unwrap();
    assert!(ar.contains(" first ") && ar.contains(" last "), "{ar}");
    // Without jobs: none of it.
    let o = crate::common::run_toml(base);
    let s = experiment::report::summary(&o, "plain", 1, &crate::common::any_ran());
    experiment::report::write_outputs(&o, &s, &dir.join("plain")).unwrap();
    let page = experiment::html::render_dir(&dir.join("plain")).unwrap();
    assert!(!page.contains("Collective jobs") && !page.contains("job-busbw"));
    std::fs::remove_dir_all(&dir).ok();
}

/// The run's reordering counts the jobs' QPs: a ring all-reduce across
/// two leaves under packet spraying and IRN sees packets out of order,
/// and IRN's retransmissions of them (a NACK on the first gap) arrive as
/// duplicates of data that was late, not lost (there is no drop).
#[test]
fn a_jobs_reordering_is_counted() {
    let o = crate::common::run_toml(
        "[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 4\n\
         [switch]\nload_balancer = \"spray\"\n[transport]\nkind = \"irn\"\n\
         [[jobs]]\ncollective = \"all_reduce\"\nranks = [0, 4, 1, 5, 2, 6]\nbytes = 3_000_000\n",
    );
    let s = crate::common::summary(&o);
    let r = &s.reordering;
    assert_eq!(s.dropped_packets, 0);
    assert!(r.ooo_packets > 0 && r.ood_max > 0, "{r:?}");
    assert!(
        r.reorder_retx > 0 && r.reorder_retx <= s.retransmitted_packets,
        "{r:?}"
    );
}
