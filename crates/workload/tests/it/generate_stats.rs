//! Statistical and structural properties of the generators: sample means,
//! offered load, pattern invariants, determinism and stream independence.
//!
//! Sample sizes are chosen so that each 2% tolerance is at least 4 standard
//! deviations wide (computed from each distribution's second moment), so a
//! pass is not luck and a real bias of a few percent fails.

use std::collections::HashMap;

use engine::time::{MS, SEC};
use engine::{Rng, StreamKind};
use workload::{permutation_flows, poisson_flows, Cdf, FlowSpec, Pattern, PoissonConfig, Stop};

const G100: u64 = 100_000_000_000;

fn config(hosts: u32, pattern: Pattern, stop: Stop) -> PoissonConfig {
    PoissonConfig {
        hosts: (0..hosts).collect(),
        host_bps: G100,
        load: 0.5,
        cdf: Cdf::builtin("websearch").unwrap(),
        pattern,
        start: 2 * SEC,
        stop,
        class: 0,
    }
}

#[test]
fn sampled_mean_matches_distribution_mean() {
    // Relative sd of the sample mean is sqrt(CV^2 / n): websearch CV^2 = 5.4,
    // fbhdp CV^2 = 30.9. With 100k samples fbhdp's sd would be 1.8%, so a 2%
    // bound would fail by chance one run in four; 2M samples make it 0.39%.
    for (name, n) in [("websearch", 2_000_000), ("fbhdp", 2_000_000)] {
        let cdf = Cdf::builtin(name).unwrap();
        let mut rng = Rng::new(11, StreamKind::Workload, 0);
        let sum: f64 = (0..n).map(|_| cdf.sample(&mut rng) as f64).sum();
        let mean = sum / n as f64;
        let err = mean / cdf.mean() - 1.0;
        assert!(
            err.abs() < 0.02,
            "{name}: sample mean {mean} vs {}",
            cdf.mean()
        );
    }
}

#[test]
fn sampled_cdf_matches_rows() {
    // The empirical CDF at each row's size equals the row's probability
    // (binomial sd <= 0.0005 at 1M samples; bound 0.003).
    for name in ["websearch", "fbhdp", "enterprise"] {
        let cdf = Cdf::builtin(name).unwrap();
        let mut rng = Rng::new(12, StreamKind::Workload, 0);
        let n = 1_000_000;
        let mut s: Vec<u64> = (0..n).map(|_| cdf.sample(&mut rng)).collect();
        s.sort_unstable();
        for &(x, _) in cdf.rows() {
            // With repeated sizes (point masses) P(<= x) is the last row's.
            let p = cdf
                .rows()
                .iter()
                .filter(|r| r.0 == x)
                .map(|r| r.1)
                .fold(0.0, f64::max);
            let below = s.partition_point(|&v| v as f64 <= x) as f64 / n as f64;
            // Sizes of 0 are sampled as 1 byte, so P(<= 0) is 0 by design.
            if x >= 1.0 {
                assert!(
                    (below - p).abs() < 0.003,
                    "{name}: P(<= {x}) = {below}, row says {p}"
                );
            }
        }
    }
}

#[test]
fn poisson_all_to_all_offers_the_target_load() {
    // 16 hosts x 100 Gb/s at 50% with websearch (mean 1.71 MB): 3,653 flows
    // per host-second, so 7 s gives about 409k flows. The offered bytes are
    // compound Poisson: relative sd sqrt(E[X^2]/E[X]^2 / N) = sqrt(6.37/409k)
    // = 0.39%, so 2% is 5 sd.
    let hosts = 16;
    let duration = 7 * SEC;
    let cfg = config(hosts, Pattern::AllToAll, Stop::Duration(duration));
    let flows = poisson_flows(&cfg, 2024).unwrap();
    assert!(flows.len() >= 20_000);
    let bits: f64 = flows.iter().map(|f| f.bytes as f64 * 8.0).sum();
    let offered = bits / (7.0 * hosts as f64 * G100 as f64);
    assert!(
        (offered / 0.5 - 1.0).abs() < 0.02,
        "offered load {offered} for target 0.5"
    );
    // Every host offers its share (per host: 25.6k flows, sd 1.6%; bound 8%).
    let mut per_host = vec![0f64; hosts as usize];
    for f in &flows {
        assert_ne!(f.src, f.dst);
        assert!(f.start >= 2 * SEC && f.start < 2 * SEC + duration);
        per_host[f.src as usize] += f.bytes as f64 * 8.0;
    }
    for (h, b) in per_host.iter().enumerate() {
        let load = b / (7.0 * G100 as f64);
        assert!((load / 0.5 - 1.0).abs() < 0.08, "host {h}: {load}");
    }
    // Sorted by start, ids in order.
    assert!(flows
        .windows(2)
        .all(|w| w[0].start <= w[1].start && w[0].id + 1 == w[1].id));
}

#[test]
fn interarrivals_are_exponential_with_traffic_gen_mean() {
    let cfg = config(4, Pattern::AllToAll, Stop::Duration(10 * SEC));
    let flows = poisson_flows(&cfg, 5).unwrap();
    let starts: Vec<f64> = flows
        .iter()
        .filter(|f| f.src == 2)
        .map(|f| f.start as f64)
        .collect();
    let gaps: Vec<f64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
    let n = gaps.len() as f64;
    let mean = gaps.iter().sum::<f64>() / n;
    let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n;
    // ~36.5k gaps: the mean's relative sd is 0.5%, the CV's about 0.5%.
    assert!((mean / cfg.mean_gap_ps() - 1.0).abs() < 0.025, "{mean}");
    assert!(
        (var.sqrt() / mean - 1.0).abs() < 0.03,
        "CV {}",
        var.sqrt() / mean
    );
}

#[test]
fn poisson_permutation_is_a_fixed_derangement() {
    let cfg = config(64, Pattern::Permutation, Stop::Count(20_000));
    let flows = poisson_flows(&cfg, 3).unwrap();
    let mut partner: HashMap<u32, u32> = HashMap::new();
    for f in &flows {
        assert_ne!(f.src, f.dst, "a host sent to itself");
        let p = *partner.entry(f.src).or_insert(f.dst);
        assert_eq!(p, f.dst, "host {} changed partner", f.src);
    }
    assert_eq!(partner.len(), 64);
    let mut dsts: Vec<u32> = partner.values().copied().collect();
    dsts.sort();
    assert_eq!(dsts, (0..64).collect::<Vec<_>>(), "not a bijection");
}

#[test]
fn static_permutation_is_a_derangement_for_many_seeds() {
    let hosts: Vec<u32> = (0..37).collect();
    for seed in 0..200 {
        let mut rng = Rng::new(seed, StreamKind::Workload, 0);
        let f = permutation_flows(&hosts, 1, 0, &mut rng).unwrap();
        let mut dsts: Vec<u32> = f.iter().map(|x| x.dst).collect();
        assert!(f.iter().all(|x| x.src != x.dst));
        dsts.sort();
        assert_eq!(dsts, hosts);
    }
}

#[test]
fn group_keeps_destinations_in_the_group() {
    let cfg = config(16, Pattern::Group { size: 4 }, Stop::Count(20_000));
    let flows = poisson_flows(&cfg, 4).unwrap();
    let mut seen = [[0u32; 16]; 16];
    for f in &flows {
        assert_eq!(
            f.src / 4,
            f.dst / 4,
            "{} -> {} leaves its group",
            f.src,
            f.dst
        );
        assert_ne!(f.src, f.dst);
        seen[f.src as usize][f.dst as usize] += 1;
    }
    // Every other member of each group is reached (about 417 flows each).
    for (s, row) in seen.iter().enumerate() {
        let group = s / 4 * 4..s / 4 * 4 + 4;
        for (d, &n) in row.iter().enumerate() {
            if group.contains(&d) && d != s {
                assert!(n > 300, "{s} -> {d}: {n}");
            }
        }
    }
    let bad = config(15, Pattern::Group { size: 4 }, Stop::Count(1));
    assert!(poisson_flows(&bad, 0)
        .unwrap_err()
        .to_string()
        .contains("groups of 4"));
}

#[test]
fn hotspot_sends_fraction_to_the_hot_set() {
    // 16 hosts, hot = {0, 1}, fraction 0.3. A flow goes to the hot set when
    // it draws hot (0.3) or draws uniform and lands on a hot host:
    // cold sources 0.3 + 0.7 * 2/15, hot sources 0.3 + 0.7 * 1/15, so over
    // 14 cold and 2 hot sources the share is 0.3875. 200k flows: sd 0.0011.
    let hot = vec![0, 1];
    let pattern = Pattern::HotSpot {
        hot: hot.clone(),
        fraction: 0.3,
    };
    let flows = poisson_flows(&config(16, pattern, Stop::Count(200_000)), 6).unwrap();
    let to_hot = flows.iter().filter(|f| hot.contains(&f.dst)).count() as f64;
    let share = to_hot / flows.len() as f64;
    assert!((share - 0.3875).abs() < 0.005, "share to hot set {share}");
    assert!(flows.iter().all(|f| f.src != f.dst));
    // fraction 1: every flow from a cold host goes to the hot set.
    let all_hot = Pattern::HotSpot { hot, fraction: 1.0 };
    let flows = poisson_flows(&config(16, all_hot, Stop::Count(5_000)), 6).unwrap();
    assert!(flows.iter().filter(|f| f.src > 1).all(|f| f.dst <= 1));
    assert!(flows
        .iter()
        .filter(|f| f.src <= 1)
        .all(|f| f.dst == 1 - f.src));
}

fn run(seed: u64, pattern: Pattern) -> Vec<FlowSpec> {
    poisson_flows(&config(32, pattern, Stop::Duration(20 * MS)), seed).unwrap()
}

#[test]
fn same_seed_same_flows_different_seed_different_flows() {
    let patterns = [
        Pattern::AllToAll,
        Pattern::Permutation,
        Pattern::Group { size: 8 },
        Pattern::HotSpot {
            hot: vec![3],
            fraction: 0.5,
        },
        Pattern::Incast {
            fan_in: 10,
            bytes: 64_000,
        },
    ];
    for p in patterns {
        let a = run(77, p.clone());
        assert!(a.len() > 100, "{p:?}: only {} flows", a.len());
        assert_eq!(a, run(77, p.clone()), "{p:?} not reproducible");
        assert_ne!(a, run(78, p.clone()), "{p:?} ignores the seed");
    }
}

#[test]
fn adding_a_host_keeps_host_0_arrivals() {
    let host0 = |hosts: Vec<u32>| -> Vec<(u64, u64)> {
        let mut cfg = config(2, Pattern::AllToAll, Stop::Duration(50 * MS));
        cfg.hosts = hosts;
        poisson_flows(&cfg, 9)
            .unwrap()
            .iter()
            .filter(|f| f.src == 0)
            .map(|f| (f.start, f.bytes))
            .collect()
    };
    let base = host0((0..16).collect());
    assert!(base.len() > 50);
    // A host appended, and one prepended (which moves host 0's position in
    // the list: streams are keyed by host id, not position).
    assert_eq!(base, host0((0..17).collect()), "appending moved host 0");
    let mut front = vec![100];
    front.extend(0..16);
    assert_eq!(base, host0(front), "prepending moved host 0");
    // A different seed does move them, so the equalities are not vacuous.
    let mut cfg = config(16, Pattern::AllToAll, Stop::Duration(50 * MS));
    let other: Vec<(u64, u64)> = poisson_flows(&cfg, 10)
        .unwrap()
        .iter()
        .filter(|f| f.src == 0)
        .map(|f| (f.start, f.bytes))
        .collect();
    assert_ne!(base, other);
    cfg.hosts.push(16);
    assert!(poisson_flows(&cfg, 9).unwrap().iter().any(|f| f.src == 16));
}

#[test]
fn class_keys_the_streams_and_pattern_does_not_move_arrivals() {
    let mut c0 = config(8, Pattern::AllToAll, Stop::Duration(50 * MS));
    let a = poisson_flows(&c0, 1).unwrap();
    c0.class = 1;
    let b = poisson_flows(&c0, 1).unwrap();
    assert!(b.iter().all(|f| f.class == 1));
    let times = |v: &[FlowSpec]| v.iter().map(|f| f.start).collect::<Vec<_>>();
    assert_ne!(times(&a), times(&b), "classes share a stream");
    // Same class and seed, other pattern: same arrivals and sizes.
    c0.class = 0;
    c0.pattern = Pattern::HotSpot {
        hot: vec![5],
        fraction: 0.9,
    };
    let h = poisson_flows(&c0, 1).unwrap();
    let key = |v: &[FlowSpec]| {
        v.iter()
            .map(|f| (f.src, f.start, f.bytes))
            .collect::<Vec<_>>()
    };
    assert_eq!(key(&a), key(&h));
}
