//! `[topology] kind = "jellyfish"` and `[routing] paths = "ksp"` through
//! the scenario, as a user writes them: the graph is regular and
//! connected for several seeds; Yen's paths between ToRs are real,
//! loop-free, distinct, ordered by length, the first a shortest one; a
//! flow under FKSP stays on one of them (the ports' byte counters show
//! it) and the choice spreads flows over all k; with the choice left to
//! the load balancer, one sprayed flow covers several paths and every
//! packet stays on one of them; a failed link on a pinned
//! path sends its flow to the shortest paths; the bad inputs are refused
//! naming their key; and the comparison in docs/topologies.md builds.

use experiment::{build, run, Scenario};
use fabric::link::port::End;
use fabric::{Fault, FaultAction, Network};
use std::collections::{HashSet, VecDeque};
use std::path::Path;

fn scenario(text: &str) -> Network {
    let sc = Scenario::parse(text, "t.toml").unwrap_or_else(|e| panic!("{e}"));
    build(&sc, Path::new("t.toml"), None)
        .unwrap_or_else(|e| panic!("{e}"))
        .net
}

/// A Jellyfish of 20 switches of degree 4 and 32 hosts, drawn from
/// `topo_seed`, run with `seed`, with `rest` appended.
fn jellyfish(seed: u64, topo_seed: u64, rest: &str) -> String {
    format!(
        "seed = {seed}\n[topology]\nkind = \"jellyfish\"\nswitches = 20\ndegree = 4\nhosts = 32\n\
         seed = {topo_seed}\n{rest}\n"
    )
}

const KSP: &str = "[routing]\npaths = \"ksp\"\nk = 6\n";

/// Per switch index: its neighbour switches, and its host count, read
/// from the built ports.
fn switch_graph(net: &Network) -> (Vec<Vec<u32>>, Vec<u32>) {
    let n = net.topology().switch_count();
    let (mut adj, mut hosts) = (vec![Vec::new(); n], vec![0; n]);
    for p in net.ports() {
        match (p.owner, p.peer) {
            (End::Switch(s, _), End::Switch(t, _)) => adj[s as usize].push(t),
            (End::Switch(s, _), End::Host(_)) => hosts[s as usize] += 1,
            _ => {}
        }
    }
    (adj, hosts)
}

/// Hop distances from switch `s` over the switch graph.
fn distances(adj: &[Vec<u32>], s: u32) -> Vec<u32> {
    let mut d = vec![u32::MAX; adj.len()];
    d[s as usize] = 0;
    let mut q = VecDeque::from([s]);
    while let Some(n) = q.pop_front() {
        for &m in &adj[n as usize] {
            if d[m as usize] == u32::MAX {
                d[m as usize] = d[n as usize] + 1;
                q.push_back(m);
            }
        }
    }
    d
}

/// The switch a host hangs from.
fn tor(net: &Network, host: u32) -> u32 {
    net.ports()
        .iter()
        .find_map(|p| match (p.owner, p.peer) {
            (End::Switch(s, _), End::Host(h)) if h == host => Some(s),
            _ => None,
        })
        .unwrap()
}

#[test]
fn jellyfish_graphs_are_regular_and_connected() {
    for seed in 1..=6 {
        for (ports, want) in [("degree = 4", None), ("ports = 6", Some(6))] {
            let text = jellyfish(seed, seed, "[[flows]]\nsrc = 0\ndst = 31\nbytes = 1000")
                .replace("degree = 4", ports);
            let net = scenario(&text);
            let (adj, hosts) = switch_graph(&net);
            assert_eq!(hosts.iter().sum::<u32>(), 32);
            for (s, a) in adj.iter().enumerate() {
                // Hosts spread evenly: 2 under sw0..sw11, 1 under the rest.
                assert_eq!(hosts[s], if s < 12 { 2 } else { 1 }, "seed {seed}");
                let links = a.len() as u32;
                match want {
                    None => assert_eq!(links, 4, "seed {seed} switch {s}"),
                    Some(total) => assert_eq!(links + hosts[s], total, "seed {seed} switch {s}"),
                }
                let set: HashSet<_> = a.iter().collect();
                assert_eq!(set.len(), a.len(), "parallel links at switch {s}");
            }
            assert!(
                distances(&adj, 0).iter().all(|&d| d != u32::MAX),
                "seed {seed} split"
            );
        }
    }
    // 15 switches of degree 3: the odd total leaves one port free on one
    // switch, and only there.
    let text = jellyfish(1, 1, "[[flows]]\nsrc = 0\ndst = 14\nbytes = 1000").replace(
        "switches = 20\ndegree = 4\nhosts = 32",
        "switches = 15\ndegree = 3\nhosts = 15",
    );
    let (adj, _) = switch_graph(&scenario(&text));
    let mut degrees: Vec<usize> = adj.iter().map(|a| a.len()).collect();
    degrees.sort_unstable();
    assert_eq!(degrees[0], 2);
    assert!(degrees[1..].iter().all(|&d| d == 3), "{degrees:?}");
}

/// Checks the k paths between the ToRs of every two hosts under distinct
/// ToRs; returns how many pairs had paths longer than their shortest.
fn check_ksp(net: &Network, k: usize) -> usize {
    let (adj, _) = switch_graph(net);
    let ports = net.ports();
    let mut longer = 0;
    let hosts = net.host_count();
    for src in 0..hosts {
        for dst in 0..hosts {
            let (a, b) = (tor(net, src), tor(net, dst));
            if a == b {
                continue;
            }
            let paths = net.ksp_paths(src, dst);
            assert_eq!(paths.len(), k);
            let shortest = distances(&adj, a)[b as usize] as usize;
            assert_eq!(
                paths[0].len(),
                shortest,
                "first path of {a}->{b} is not shortest"
            );
            for (i, p) in paths.iter().enumerate() {
                // A walk of real links from a to b entering no switch twice.
                let mut at = a;
                let mut seen = HashSet::from([a]);
                for &port in p {
                    let End::Switch(s, _) = ports[port as usize].owner else {
                        panic!("host port on a path")
                    };
                    assert_eq!(s, at, "{p:?} is not a walk");
                    let End::Switch(next, _) = ports[port as usize].peer else {
                        panic!("a path leaves the switches")
                    };
                    assert!(seen.insert(next), "{p:?} has a loop");
                    at = next;
                }
                assert_eq!(at, b, "{p:?} ends elsewhere");
                assert!(!paths[..i].contains(p), "{p:?} twice");
                if i > 0 {
                    assert!(paths[i - 1].len() <= p.len(), "not ordered by length");
                }
            }
            longer += usize::from(paths[k - 1].len() > shortest);
        }
    }
    longer
}

#[test]
fn ksp_paths_are_loop_free_distinct_ordered_and_first_shortest() {
    for seed in 1..=3 {
        let net = scenario(&jellyfish(
            seed,
            seed,
            &format!("{KSP}[[flows]]\nsrc = 0\ndst = 31\nbytes = 1000"),
        ));
        assert!(check_ksp(&net, 6) > 0, "every pair has 6 shortest paths?");
    }
    // The fat tree (k=4): 4 shortest paths between pods; 2 in a pod, then
    // none shorter than 8 links (out through one aggregation switch's
    // cores, down and up another pod, back in through the other's).
    let ft = "[topology]\nkind = \"fat_tree\"\nk = 4\n[routing]\npaths = \"ksp\"\nk = 4\n\
              [[flows]]\nsrc = 0\ndst = 15\nbytes = 1000\n";
    let net = scenario(ft);
    check_ksp(&net, 4);
    let paths = net.ksp_paths(0, 15);
    assert!(paths.iter().all(|p| p.len() == 4), "{paths:?}");
    let paths = net.ksp_paths(0, 2);
    assert_eq!(
        paths.iter().map(|p| p.len()).collect::<Vec<_>>(),
        [2, 2, 8, 8]
    );
}

/// The switch-to-switch ports that carried at least `bytes` (the data of
/// one flow, not its ACKs).
fn heavy_fabric_ports(net: &Network, bytes: u64) -> HashSet<u32> {
    (0..net.ports().len() as u32)
        .filter(|&p| {
            let port = &net.ports()[p as usize];
            matches!((port.owner, port.peer), (End::Switch(..), End::Switch(..)))
                && port.stats().tx_bytes >= bytes
        })
        .collect()
}

#[test]
fn a_flow_under_fksp_keeps_one_of_its_k_paths() {
    // One graph (topology seed 7), the flow's identity drawn anew by each
    // run seed: each run's data crosses exactly the ports of one of the k
    // paths, and the runs between them use several paths, some longer
    // than the shortest.
    let bytes = 300_000;
    let flow = format!("[[flows]]\nsrc = 0\ndst = 31\nbytes = {bytes}");
    let mut used = HashSet::new();
    for seed in 1..=12 {
        let sc = Scenario::parse(&jellyfish(seed, 7, &format!("{KSP}{flow}")), "t.toml").unwrap();
        let built = build(&sc, Path::new("t.toml"), None).unwrap();
        let o = run(built, |_| {});
        assert!(o.flows()[0].finish.is_some());
        let heavy = heavy_fabric_ports(&o.net, bytes);
        let paths = o.net.ksp_paths(0, 31);
        let i = paths
            .iter()
            .position(|p| p.iter().copied().collect::<HashSet<_>>() == heavy)
            .unwrap_or_else(|| panic!("seed {seed}: ports {heavy:?} are none of {paths:?}"));
        used.insert(i);
    }
    assert!(used.len() >= 3, "12 flows used only paths {used:?}");
    assert!(used.iter().any(|&i| i > 0));
}

#[test]
fn the_path_choice_spreads_flows_over_all_k() {
    let net = scenario(&jellyfish(
        1,
        1,
        &format!("{KSP}[[flows]]\nsrc = 0\ndst = 31\nbytes = 1000"),
    ));
    let paths = net.ksp_paths(0, 31);
    let mut count = vec![0; paths.len()];
    for sport in 0..600u32 {
        let route = net.pinned_route(sport << 16, 31).unwrap();
        let i = paths.iter().position(|p| *p == route).expect("a k path");
        count[i] += 1;
    }
    // 100 expected each.
    assert!(count.iter().all(|&c| c > 60), "{count:?}");
    // Hosts under one ToR: no path, the shortest-path tables answer.
    assert_eq!(net.pinned_route(0, 1), Some(vec![]));
    assert_eq!(
        scenario(&jellyfish(
            1,
            1,
            "[[flows]]\nsrc = 0\ndst = 31\nbytes = 1000"
        ))
        .pinned_route(0, 31),
        None
    );
}

#[test]
fn the_load_balancer_spreads_one_flow_over_the_k_paths_and_off_none() {
    // One 2 MB flow, sprayed at the source ToR over the first hops of its
    // 6 paths: every packet follows one of the paths whole, so its data
    // crosses only their ports (the ACKs, sprayed back, cross the reverse
    // paths' ports), every distinct first hop carries a share, and the
    // ports of at least two paths carry data.
    let bytes = 2_000_000u64;
    let text = jellyfish(
        1,
        7,
        &format!(
            "{KSP}choice = \"load_balancer\"\n[switch]\nload_balancer = \"spray\"\n\
             [transport]\nordering = \"ideal\"\n[[flows]]\nsrc = 0\ndst = 31\nbytes = {bytes}"
        ),
    );
    let sc = Scenario::parse(&text, "t.toml").unwrap();
    let o = run(build(&sc, Path::new("t.toml"), None).unwrap(), |_| {});
    assert!(o.flows()[0].finish.is_some());
    let paths = o.net.ksp_paths(0, 31);
    let back = o.net.ksp_paths(31, 0);
    let on_paths: HashSet<u32> = paths.iter().chain(&back).flatten().copied().collect();
    let carried = heavy_fabric_ports(&o.net, 1);
    assert!(
        carried.is_subset(&on_paths),
        "ports off the k paths carried packets: {:?}",
        carried.difference(&on_paths).collect::<Vec<_>>()
    );
    let firsts: HashSet<u32> = paths.iter().map(|p| p[0]).collect();
    assert!(firsts.len() >= 2, "{paths:?}");
    for &f in &firsts {
        let tx = o.net.ports()[f as usize].stats().tx_bytes;
        assert!(
            tx >= bytes / (2 * paths.len() as u64),
            "first hop {f}: {tx} B"
        );
    }
    let data_paths = paths
        .iter()
        .filter(|p| {
            p.iter()
                .all(|&q| o.net.ports()[q as usize].stats().tx_bytes >= bytes / 20)
        })
        .count();
    assert!(data_paths >= 2, "{data_paths} paths carried data");
}

#[test]
fn a_flow_whose_path_fails_moves_to_the_shortest_paths() {
    let bytes = 2_000_000;
    let text = jellyfish(
        3,
        7,
        &format!("{KSP}[[flows]]\nsrc = 0\ndst = 31\nbytes = {bytes}"),
    );
    let sc = Scenario::parse(&text, "t.toml").unwrap();
    // Where the flow goes undisturbed.
    let o = run(build(&sc, Path::new("t.toml"), None).unwrap(), |_| {});
    let path: Vec<u32> = {
        let heavy = heavy_fabric_ports(&o.net, bytes);
        let paths = o.net.ksp_paths(0, 31);
        paths
            .into_iter()
            .find(|p| p.iter().copied().collect::<HashSet<_>>() == heavy)
            .unwrap()
    };
    let finish = o.flows()[0].finish.unwrap();
    // Its first fabric link fails a third of the way in, for good.
    let mut built = build(&sc, Path::new("t.toml"), None).unwrap();
    let cut = path[0];
    built
        .net
        .add_fault(Fault {
            at: finish / 3,
            link: cut / 2,
            a_to_b: None,
            action: FaultAction::Down,
        })
        .unwrap();
    let o = run(built, |_| {});
    o.net.check_conservation().unwrap();
    assert!(o.flows()[0].finish.is_some(), "the flow did not finish");
    let sent = o.net.ports()[cut as usize].stats().tx_bytes;
    assert!(sent < bytes / 2, "{sent} bytes crossed the failed link");
    // The rest crossed other links out of the source ToR.
    let a = tor(&o.net, 0);
    let others: u64 = o
        .net
        .ports()
        .iter()
        .enumerate()
        .filter(|(p, port)| {
            *p as u32 != cut
                && matches!((port.owner, port.peer), (End::Switch(s, _), End::Switch(..)) if s == a)
        })
        .map(|(_, port)| port.stats().tx_bytes)
        .sum();
    assert!(others > bytes / 2, "{others}");
}

/// Parses and builds; the error's key and message.
fn error_of(text: &str) -> (String, String) {
    let e = match Scenario::parse(text, "bad.toml") {
        Err(e) => e,
        Ok(sc) => build(&sc, Path::new("bad.toml"), None)
            .err()
            .expect("refused"),
    };
    (e.key.clone(), e.to_string())
}

#[test]
fn bad_topology_and_routing_input_names_the_key() {
    let flow = "[[flows]]\nsrc = 0\ndst = 1\nbytes = 1000";
    let jf = |keys: &str, rest: &str| {
        format!("[topology]\nkind = \"jellyfish\"\n{keys}\n{rest}\n{flow}\n")
    };
    let leaf_spine =
        "[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\n";
    let cases: Vec<(&str, String, &str, &str)> = vec![
        ("one switch", jf("switches = 1\ndegree = 1\nhosts = 4", ""), "topology.switches", "at least 2"),
        ("no hosts", jf("switches = 4\ndegree = 2\nhosts = 0", ""), "topology.hosts", "at least 1"),
        ("degree above the others", jf("switches = 4\ndegree = 4\nhosts = 4", ""), "topology.degree", "only 3 other switches"),
        ("degree 0", jf("switches = 4\ndegree = 0\nhosts = 4", ""), "topology.degree", "no port for switch links"),
        ("ports all taken by hosts", jf("switches = 4\nports = 2\nhosts = 8", ""), "topology.ports", "no port for switch links"),
        ("ports above the others", jf("switches = 4\nports = 9\nhosts = 8", ""), "topology.ports", "only 3 other switches"),
        ("both ports and degree", jf("switches = 4\nports = 4\ndegree = 2\nhosts = 4", ""), "topology", "not both"),
        ("neither ports nor degree", jf("switches = 4\nhosts = 4", ""), "topology", "needs `degree` or `ports`"),
        ("too many ports", jf("switches = 400\ndegree = 300\nhosts = 400", ""), "topology.degree", "at most 256"),
        ("too many nodes", jf("switches = 4000000\ndegree = 3\nhosts = 4", ""), "topology", "at most 65536 nodes"),
        ("cannot connect", jf("switches = 10\ndegree = 1\nhosts = 10", ""), "topology.degree", "no connected graph"),
        ("leaf keys on jellyfish", jf("switches = 4\ndegree = 2\nhosts = 4\nleaves = 2", ""), "topology", "`leaves` does not apply"),
        ("unknown paths", format!("{leaf_spine}[routing]\npaths = \"ecmp\"\n{flow}\n"), "routing.paths", "ksp"),
        ("k with shortest", format!("{leaf_spine}[routing]\nk = 4\n{flow}\n"), "routing.k", "applies to paths = \"ksp\" only"),
        ("k zero", format!("{leaf_spine}[routing]\npaths = \"ksp\"\nk = 0\n{flow}\n"), "routing.k", "at least 1"),
        ("choice with shortest", format!("{leaf_spine}[routing]\nchoice = \"flow\"\n{flow}\n"), "routing.choice", "applies to paths = \"ksp\" only"),
        ("choice by ecmp", format!("{leaf_spine}[routing]\npaths = \"ksp\"\nk = 2\nchoice = \"load_balancer\"\n{flow}\n"), "routing.choice", "choice = \"flow\" (FKSP)"),
        ("unknown choice", format!("{leaf_spine}[routing]\npaths = \"ksp\"\nchoice = \"packet\"\n{flow}\n"), "routing.choice", "load_balancer"),
        ("unknown routing key", format!("{leaf_spine}[routing]\npaths = \"ksp\"\nkk = 3\n{flow}\n"), "routing", "kk"),
        (
            "k above the paths",
            format!("[topology]\nkind = \"testbed\"\npaths = 2\nhosts_per_tor = 1\n[routing]\npaths = \"ksp\"\nk = 3\n{flow}\n"),
            "routing.k",
            "above the 2 loop-free path(s) that exist from ToR tor0 to ToR tor1",
        ),
        (
            "ksp without a ToR layer",
            format!(
                "[topology]\nkind = \"edges\"\nnodes = [{{name = \"a\", kind = \"host\"}}, {{name = \"b\", kind = \"host\"}}]\n\
                 links = [{{a = \"a\", b = \"b\"}}]\n[routing]\npaths = \"ksp\"\nk = 1\n{flow}\n"
            ),
            "routing.paths",
            "host a is attached to no switch",
        ),
        (
            "too many paths",
            jf("switches = 400\ndegree = 5\nhosts = 400", "[routing]\npaths = \"ksp\"\nk = 8"),
            "routing.k",
            "at most 1048576",
        ),
    ];
    for (name, text, key, says) in cases {
        let (k, msg) = error_of(&text);
        assert!(k.starts_with(key), "{name}: key {k:?}, not {key:?}: {msg}");
        assert!(msg.contains(says), "{name}: {msg:?} does not say {says:?}");
    }
}

/// The comparison's scenarios in docs/topologies/ build (and the
/// Jellyfish is the fat tree's equipment: 80 switches of 8 ports).
#[test]
fn the_documented_comparison_builds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/topologies");
    for file in ["jellyfish80_fksp.toml", "fat_tree8_ecmp.toml"] {
        let path = dir.join(file);
        let sc = Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let net = build(&sc, &path, None).unwrap().net;
        let topo = net.topology();
        assert_eq!(
            (topo.switch_count(), topo.host_count()),
            (80, 128),
            "{file}"
        );
        assert_eq!(topo.links.len(), 384, "{file}");
    }
}
