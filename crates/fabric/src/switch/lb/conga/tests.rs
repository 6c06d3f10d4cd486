//! CONGA in a small fabric: two leaves, two spines, four hosts a leaf,
//! 100 Gb/s everywhere but spine0 -> leaf1 at 10 Gb/s, which only spine0's
//! DRE sees. Flowlets from leaf0 to leaf1 learn it through CE and the
//! feedback leaf1 piggybacks on its packets to leaf0 (the ACKs), and leave
//! the slow path.

use super::leaves::NONE;
use crate::host::flows::Flow;
use crate::link::{Fault, FaultAction};
use crate::net::Network;
use crate::switch::lb::{Balancer, CongaParams, LoadBalancer};
use crate::topo::topology::Topology;
use crate::FabricConfig;
use engine::time::US;

const GBPS: u64 = 1_000_000_000;

/// The fabric, with 200 flows of 50 KB from leaf0's hosts to leaf1's, one
/// every 10 us (40 Gb/s offered; each a flowlet of its own).
fn fabric(lb: LoadBalancer) -> Network {
    let topo = Topology::leaf_spine(2, 2, 4, 100 * GBPS, 100 * GBPS, US);
    let cfg = FabricConfig {
        load_balancer: lb,
        ..FabricConfig::default()
    };
    let mut net = Network::new(topo, cfg).unwrap();
    // Links: eight host links, then leaf0-spine0, leaf0-spine1,
    // leaf1-spine0 (8, 9, 10): its b -> a direction is spine0 -> leaf1.
    net.add_fault(Fault {
        at: 0,
        link: 10,
        a_to_b: Some(false),
        action: FaultAction::Rate(10 * GBPS),
    })
    .unwrap();
    for i in 0..200 {
        net.add_flow(Flow {
            src: i % 4,
            dst: 4 + (i / 4) % 4,
            bytes: 50_000,
            start: i as u64 * 10 * US,
            verb: transport::Verb::Write,
            class: 0,
            engine: 0,
            messages: 1,
            sync_per_10k: 0,
        })
        .unwrap();
    }
    net
}

fn conga(net: &Network) -> &super::State {
    match &net.sw.lb {
        Balancer::Conga(c) => &c.state,
        _ => unreachable!("a CONGA fabric"),
    }
}

/// Bytes leaf0 sent to spine0 and to spine1 (ports 16 and 18).
fn uplink_bytes(net: &Network) -> [u64; 2] {
    [net.ports()[16].tx_bytes, net.ports()[18].tx_bytes]
}

#[test]
fn feedback_reaches_the_source_leaf_and_flowlets_leave_the_slow_path() {
    let mut net = fabric(LoadBalancer::Conga(CongaParams::DEFAULT));
    // Leaf0's Congestion-To-Leaf toward leaf1, and leaf1's
    // Congestion-From-Leaf of leaf0, each uplink's highest metric seen.
    let (mut to, mut from) = ([0u8; 2], [0u8; 2]);
    let mut t = 0;
    while net.flows_done() < 200 {
        t += 20 * US;
        net.run_until(t, u64::MAX);
        let c = conga(&net);
        let (to_row, from_row) = (c.row(0, 1), c.row(1, 0));
        for k in 0..2 {
            to[k] = to[k].max(c.to_leaf[to_row + k].metric);
            from[k] = from[k].max(c.from_leaf[from_row + k].metric);
        }
        assert!(t < 100_000 * US, "the flows finish");
    }
    net.check_conservation().unwrap();
    // Uplink 0 (through spine0) is the congested path: leaf1 measured it
    // and leaf0 heard of it.
    assert!(from[0] >= 4 && to[0] >= 4, "from {from:?} to {to:?}");
    assert!(to[1] < to[0], "from {from:?} to {to:?}");
    // So CONGA sends far less through spine0 than ECMP's half.
    let up = uplink_bytes(&net);
    let mut ecmp = fabric(LoadBalancer::Ecmp);
    ecmp.run_until(u64::MAX, u64::MAX);
    let ecmp_up = uplink_bytes(&ecmp);
    assert!(
        up[0] * 2 < ecmp_up[0] && up[0] * 4 < up[1],
        "conga {up:?}, ecmp {ecmp_up:?}"
    );
    // Every packet's CONGA fields were consumed at leaf1 (or never set:
    // ACKs from leaf1 carry leaf1 as their source).
    let c = conga(&net);
    assert!(c.tags.iter().all(|t| t.src == NONE || t.src == 1));
}

/// Entries older than the aging time count for nothing.
#[test]
fn aged_entries_count_as_zero() {
    let mut net = fabric(LoadBalancer::Conga(CongaParams::DEFAULT));
    net.run_until(1000 * US, u64::MAX);
    let Balancer::Conga(c) = &mut net.sw.lb else {
        unreachable!()
    };
    let s = &mut c.state;
    let row = s.row(0, 1);
    for k in 0..2 {
        s.to_leaf[row + k].metric = 7;
        s.to_leaf[row + k].at = 0;
    }
    s.to_leaf[row].at = 1000 * US;
    // Leaf0 is switch 0; its uplinks are ports 16 and 18. At 1400 us
    // uplink 0's entry (400 us old) still counts, uplink 1's (1400 us) no
    // longer does: every choice is uplink 1 whatever the local DREs.
    let sight = crate::switch::lb::Sight::new(&net.links.ports, &net.sw.queues, 1400 * US);
    for _ in 0..20 {
        assert_eq!(s.best_uplink(0, 4, &[16, 18], &sight), 18);
    }
}
