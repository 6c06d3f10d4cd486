//! The HPCC ns-3 files in bench/ parse to what bench/README.md says they
//! are, and the static generators reproduce the shapes of P128 and A2A128.

use engine::time::{NS, SEC, US};
use workload::{all_to_all_flows, parse_config, parse_flows, parse_topology, FlowSpec};

fn bench(name: &str) -> String {
    let path = format!("{}/../../bench/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn flows(name: &str) -> Vec<FlowSpec> {
    parse_flows(&bench(name), name).unwrap()
}

#[test]
fn ws128_flows() {
    let f = flows("flows-ws128.txt");
    assert_eq!(f.len(), 2212);
    assert_eq!(
        f[0],
        FlowSpec {
            id: 0,
            src: 26,
            dst: 23,
            bytes: 54831,
            start: 2 * SEC + 1492 * NS,
            class: 0
        }
    );
    let total: u64 = f.iter().map(|x| x.bytes).sum();
    assert_eq!((total as f64 / 1e6).round(), 3607.0, "{total}");
    let largest = f.iter().map(|x| x.bytes).max().unwrap();
    assert!((29_000_000..30_000_000).contains(&largest), "{largest}");
    // Poisson over 5 ms from t = 2 s.
    assert!(f
        .iter()
        .all(|x| x.start >= 2 * SEC && x.start < 2 * SEC + 5_000 * US));
    assert!(f.iter().enumerate().all(|(i, x)| x.id == i as u32));
}

#[test]
fn fat_tree_topologies() {
    for (name, nodes, switches, links) in [
        ("topo-fattree-k8-100g.txt", 208, 80, 384),
        ("topo-fattree-k16-100g.txt", 1344, 320, 3072),
    ] {
        let t = parse_topology(&bench(name), name).unwrap();
        assert_eq!(t.nodes, nodes);
        assert_eq!(t.switches.len(), switches);
        assert_eq!(t.links.len(), links);
        let hosts = t.hosts();
        assert_eq!(hosts, (0..nodes - switches as u32).collect::<Vec<_>>());
        for l in &t.links {
            assert_eq!(
                (l.rate_bps, l.delay, l.error_rate),
                (100_000_000_000, US, 0.0)
            );
        }
        // Every host has exactly one link.
        for h in hosts {
            assert_eq!(t.links.iter().filter(|l| l.a == h || l.b == h).count(), 1);
        }
    }
}

#[test]
fn flow_files_fit_their_topologies() {
    let k8 = parse_topology(&bench("topo-fattree-k8-100g.txt"), "k8").unwrap();
    let k16 = parse_topology(&bench("topo-fattree-k16-100g.txt"), "k16").unwrap();
    for name in ["flows-ws128.txt", "flows-p128.txt", "flows-a2a128.txt"] {
        k8.check_flows(&flows(name)).unwrap();
    }
    k16.check_flows(&flows("flows-p1024.txt")).unwrap();
    // And the 1024-host flows do not fit the 128-host tree.
    assert!(k8.check_flows(&flows("flows-p1024.txt")).is_err());
}

#[test]
fn permutation_files_are_derangements() {
    for (name, n) in [("flows-p128.txt", 128u32), ("flows-p1024.txt", 1024)] {
        let f = flows(name);
        assert_eq!(f.len(), n as usize);
        let mut srcs: Vec<u32> = f.iter().map(|x| x.src).collect();
        let mut dsts: Vec<u32> = f.iter().map(|x| x.dst).collect();
        srcs.sort();
        dsts.sort();
        assert_eq!(srcs, (0..n).collect::<Vec<_>>());
        assert_eq!(dsts, srcs);
        assert!(f.iter().all(|x| x.bytes == 2_000_000 && x.start == 0));
    }
}

#[test]
fn a2a128_is_our_all_to_all() {
    let file = flows("flows-a2a128.txt");
    let ours = all_to_all_flows(&(0..128).collect::<Vec<_>>(), 100_000, 0).unwrap();
    assert_eq!(file.len(), 16256);
    assert_eq!(file, ours);
}

#[test]
fn ws128_dcqcn_config() {
    let c = parse_config(&bench("ns3-hpcc-config-ws128-dcqcn.txt"), "cfg").unwrap();
    assert_eq!(c.get_u64("CC_MODE").unwrap(), 1);
    assert_eq!(c.get_u64("PACKET_PAYLOAD_SIZE").unwrap(), 1000);
    assert_eq!(c.get_u64("BUFFER_SIZE").unwrap(), 32);
    assert_eq!(c.get_f64("EWMA_GAIN").unwrap(), 0.00390625);
    assert_eq!(c.get_f64("SIMULATOR_STOP_TIME").unwrap(), 2.05);
    assert_eq!(c.get_rate("RATE_AI").unwrap(), 20_000_000);
    assert_eq!(c.get_rate("MIN_RATE").unwrap(), 1_000_000_000);
    assert_eq!(c.get_str("FLOW_FILE").unwrap(), "flows-ws128.txt");
    assert_eq!(c.get_u64("L2_ACK_INTERVAL").unwrap(), 1);
    let g = 1_000_000_000u64;
    assert_eq!(
        c.rate_map("KMAX_MAP").unwrap(),
        vec![(100 * g, 1600.0), (400 * g, 6400.0)]
    );
    assert_eq!(
        c.rate_map("KMIN_MAP").unwrap(),
        vec![(100 * g, 400.0), (400 * g, 1600.0)]
    );
    assert_eq!(
        c.rate_map("PMAX_MAP").unwrap(),
        vec![(100 * g, 0.2), (400 * g, 0.2)]
    );
    assert_eq!(c.entries[0].key, "ENABLE_QCN");
    assert!(c.get("HPCC_NOT_THERE").is_none());
}

#[test]
fn damaged_real_files_are_rejected_with_line_numbers() {
    // ws128 without its last flow.
    let text = bench("flows-ws128.txt");
    let cut: String = text.lines().take(2212).map(|l| format!("{l}\n")).collect();
    assert_eq!(
        parse_flows(&cut, "ws").unwrap_err().to_string(),
        "ws:2212: header (line 1) says 2212 flows, the file has 2211"
    );
    // A mangled size on line 101.
    let bad: String = text
        .lines()
        .enumerate()
        .map(|(i, l)| if i == 100 { l.replace(" 3 100 ", " 3 100 x") } else { l.to_string() } + "\n")
        .collect();
    let e = parse_flows(&bad, "ws").unwrap_err().to_string();
    assert!(e.starts_with("ws:101: size 'x"), "{e}");
    // k8 with one link dropped and with a link to a node that does not exist.
    let topo = bench("topo-fattree-k8-100g.txt");
    let short: String = topo.lines().take(385).map(|l| format!("{l}\n")).collect();
    assert_eq!(
        parse_topology(&short, "k8").unwrap_err().to_string(),
        "k8:385: header (line 1) says 384 links, the file has 383"
    );
    let far = topo.replacen("0 128 100Gbps", "0 208 100Gbps", 1);
    assert_eq!(
        parse_topology(&far, "k8").unwrap_err().to_string(),
        "k8:3: node 208 is not below the node count 208"
    );
}
