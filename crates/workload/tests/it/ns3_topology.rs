//! Unit tests of `ns3/topology.rs` (moved from the file: the library has
//! `test = false`, so `cargo test` does not compile it twice).

use workload::flow::FlowSpec;
use workload::ns3::*;

const SMALL: &str =
    "4 1 3\n3\n0 3 100Gbps 1000ns 0\n1 3 40Gbps 0.001ms 0.01\n\n2 3 1.5Gbps 1us 0.000000\n";

fn err(text: &str) -> String {
    parse_topology(text, "topo.txt").unwrap_err().to_string()
}

#[test]
fn a_header_claiming_billions_of_nodes_is_refused() {
    let e = err("4000000000 0 0\n");
    assert!(e.contains("4000000000 nodes: at most"), "{e}");
}

#[test]
fn parses_a_small_star() {
    let t = parse_topology(SMALL, "topo.txt").unwrap();
    assert_eq!((t.nodes, t.switches.clone()), (4, vec![3]));
    assert_eq!(t.hosts(), vec![0, 1, 2]);
    assert!(t.is_switch(3) && !t.is_switch(0));
    assert_eq!(t.links.len(), 3);
    assert_eq!(
        t.links[1],
        Ns3Link {
            a: 1,
            b: 3,
            rate_bps: 40_000_000_000,
            delay: 1_000_000,
            error_rate: 0.01
        }
    );
    assert_eq!(t.links[2].rate_bps, 1_500_000_000);
}

#[test]
fn broken_topologies_are_reported_with_line() {
    assert_eq!(err(""), "topo.txt:1: empty topology file");
    // Rates and delays within the TOML topologies' limits.
    assert_eq!(
        err("2 1 1\n1\n0 1 1bps 1ns 0\n"),
        "topo.txt:3: link rate '1bps' is outside 1 kb/s ..= 10000 Gb/s"
    );
    assert_eq!(
        err("2 1 1\n1\n0 1 100000Tbps 1ns 0\n"),
        "topo.txt:3: link rate '100000Tbps' is outside 1 kb/s ..= 10000 Gb/s"
    );
    assert_eq!(
        err("2 1 1\n1\n0 1 1Gbps 5000000s 0\n"),
        "topo.txt:3: link delay '5000000s' is above 2^62 ps (about 53 days)"
    );
    assert_eq!(
        err("4 1\n"),
        "topo.txt:1: expected 3 fields 'nodes switches links', found 2"
    );
    assert_eq!(err("4 x 3\n"), "topo.txt:1: switches 'x' is not a count");
    assert_eq!(
        err("4 1 1\n3 2\n0 3 1Gbps 1ns 0\n"),
        "topo.txt:2: header says 1 switches, this line lists 2"
    );
    assert_eq!(
        err("4 1 1\n4\n0 3 1Gbps 1ns 0\n"),
        "topo.txt:2: switch id 4 is not below the node count 4"
    );
    assert_eq!(
        err("4 2 1\n3 3\n0 3 1Gbps 1ns 0\n"),
        "topo.txt:2: switch id 3 is listed twice"
    );
    assert_eq!(
        err("4 1 2\n3\n0 3 1Gbps 1ns 0\n"),
        "topo.txt:3: header (line 1) says 2 links, the file has 1"
    );
    assert_eq!(
        err("4 1 1\n3\n0 3 1Gbps 1ns 0\n1 3 1Gbps 1ns 0\n"),
        "topo.txt:4: header says 1 links, but the file has more"
    );
    assert_eq!(
        err("4 1 1\n3\n0 9 1Gbps 1ns 0\n"),
        "topo.txt:3: node 9 is not below the node count 4"
    );
    assert_eq!(
        err("4 1 1\n3\n3 3 1Gbps 1ns 0\n"),
        "topo.txt:3: link from node 3 to itself"
    );
    assert!(err("4 1 1\n3\n0 3 1Gbit 1ns 0\n").starts_with("topo.txt:3: '1Gbit' has no rate unit"));
    assert!(err("4 1 1\n3\n0 3 1Gbps 1 0\n").starts_with("topo.txt:3: '1' has no time unit"));
    assert_eq!(
        err("4 1 1\n3\n0 3 1Gbps 1ns 2\n"),
        "topo.txt:3: error rate 2 is outside [0, 1]"
    );
    assert_eq!(
        err("4 1 1\n3\n0 3 1Gbps 1ns\n"),
        "topo.txt:3: expected 5 fields 'a b rate delay error_rate', found 4"
    );
    assert_eq!(err("2 3 0\n"), "topo.txt:1: 3 switches but only 2 nodes");
    assert_eq!(err("4 1 0\n"), "topo.txt:1: missing the line of switch ids");
}

#[test]
fn check_flows_rejects_switch_endpoints() {
    let t = parse_topology(SMALL, "topo.txt").unwrap();
    let f = |src, dst| FlowSpec {
        id: 7,
        src,
        dst,
        bytes: 1,
        start: 0,
        class: 0,
    };
    assert!(t.check_flows(&[f(0, 2)]).is_ok());
    assert_eq!(
        t.check_flows(&[f(0, 3)]).unwrap_err().to_string(),
        "workload: flow 7: dst 3 is a switch of the topology"
    );
    assert!(t
        .check_flows(&[f(5, 0)])
        .unwrap_err()
        .to_string()
        .contains("not a node"));
}
