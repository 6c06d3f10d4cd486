//! ConWeave in a whole fabric: with one slow uplink, flows are rerouted,
//! and no destination host is handed a REROUTED packet before its epoch's
//! TAIL unless the held queue's deadline passed first; held packets stay
//! outside the switch's buffer until released.

use super::{Handed, Handoff};
use crate::config::FabricConfig;
use crate::host::flows::Flow;
use crate::net::{Network, RunState};
use crate::switch::lb::{Balancer, ConweaveParams, LoadBalancer};
use crate::topo::topology::Topology;
use engine::time::{MS, US};
use engine::Time;
use std::collections::HashMap;

const GBPS: u64 = 1_000_000_000;

/// Two leaves of four hosts over four spines, all at 100 Gb/s but the
/// link leaf0-spine0 at 10 Gb/s; each host of leaf0 sends two 1 MB
/// writes to hosts of leaf1 at once. Returns the network, run to the end
/// (in windows of `window` picoseconds at most, if given).
fn slow_uplink_run(seed: u64, window: Option<Time>) -> Network {
    let mut net = slow_uplink(seed, window);
    assert_eq!(net.run_until(100 * MS, u64::MAX), RunState::Done);
    net
}

/// The network of [`slow_uplink_run`], not run yet.
fn slow_uplink(seed: u64, window: Option<Time>) -> Network {
    let mut topo = Topology::leaf_spine(2, 4, 4, 100 * GBPS, 100 * GBPS, US);
    // Links: the eight host links, then leaf l to spine s at 8 + 4l + s.
    topo.links[8].rate_bps = 10 * GBPS;
    let cfg = FabricConfig {
        seed,
        load_balancer: LoadBalancer::Conweave(ConweaveParams::DEFAULT),
        ..FabricConfig::default()
    };
    let mut net = Network::new(topo, cfg).expect("a leaf-spine has a ToR layer");
    if let Some(ps) = window {
        net.set_window(ps);
    }
    for src in 0..4 {
        for k in 0..2 {
            let flow = Flow {
                src,
                dst: 4 + (src + k) % 4,
                bytes: 1_000_000,
                start: 0,
                verb: transport::Verb::Write,
                class: 0,
                engine: 0,
                messages: 1,
                sync_per_10k: 0,
            };
            net.add_flow(flow).expect("valid flow");
        }
    }
    net
}

fn handed(net: &Network) -> &[Handed] {
    match &net.sw.lb {
        Balancer::Conweave(cw) => &cw.handed,
        _ => unreachable!("the run is ConWeave's"),
    }
}

#[test]
fn rerouted_packets_reach_the_host_only_after_their_tail_or_deadline() {
    let net = slow_uplink_run(1, None);
    net.check_conservation().expect("conservation");
    let st = net.conweave_stats().expect("ConWeave runs");
    assert!(st.reroutes > 0, "{st:?}");
    assert!(st.held_packets > 0 && st.tail_releases > 0, "{st:?}");
    assert!(st.replies > 0 && st.control_consumed_packets > 0, "{st:?}");
    // Per flow and epoch: has its TAIL been handed on, has its held queue
    // been flushed by its deadline.
    let mut seen: HashMap<(u64, u32), (bool, bool)> = HashMap::new();
    let (mut before_tail, mut flushed) = (0, 0);
    for h in handed(&net) {
        let (tail, timer) = seen.entry((h.key, h.epoch)).or_default();
        if h.how == Handoff::Timer {
            *timer = true;
            flushed += 1;
        }
        *tail |= h.tail;
        if h.rerouted && !*tail {
            assert!(
                *timer,
                "a REROUTED packet of epoch {} reached its host before the TAIL: {h:?}",
                h.epoch
            );
            before_tail += 1;
        }
    }
    // Every packet the deadline flushed is counted, and only those went
    // ahead of a TAIL without one of their own being flushed.
    assert_eq!(flushed, st.timer_flushed_packets);
    assert!(before_tail >= flushed);
    let rerouted = handed(&net).iter().filter(|h| h.rerouted).count();
    assert!(rerouted > 0);
    // A seed fixes the run.
    let again = slow_uplink_run(1, None);
    assert_eq!(again.conweave_stats(), Some(st));
    assert_eq!(again.counters(), net.counters());
}

/// A run's results do not depend on how the loop batches events: windows
/// of one picosecond (the global time order) give the same run.
#[test]
fn windows_of_one_picosecond_give_the_same_run() {
    let full = slow_uplink_run(2, None);
    let fine = slow_uplink_run(2, Some(1));
    assert!(full.conweave_stats().is_some_and(|s| s.reroutes > 0));
    assert_eq!(full.conweave_stats(), fine.conweave_stats());
    assert_eq!(full.counters().packet_hops, fine.counters().packet_hops);
    let finish = |n: &Network| n.flows().iter().map(|f| f.finish).collect::<Vec<_>>();
    assert_eq!(finish(&full), finish(&fine));
}

/// Held packets wait outside the MMU, as the artifact's reordering queues
/// do: at every moment each switch's buffer holds exactly the bytes queued
/// at its ports, however many packets its ToR holds (charged to the buffer,
/// a hold's packets PAUSEd the new path's spine and, shrinking the shared
/// pool, the ToR's own hosts: the 20 ms collapse at 80% load). Their
/// release admits them, and a lossless fabric drops none.
#[test]
fn held_packets_are_not_in_the_buffer_until_released() {
    let mut net = slow_uplink(1, None);
    let mut most_held = 0;
    let mut t = 0;
    while net.run_until(t, u64::MAX) != RunState::Done {
        most_held = most_held.max(net.sw.lb.held().0);
        for (s, node) in net.sw.nodes.iter().enumerate() {
            let queued: u64 = node
                .ports
                .iter()
                .map(|&p| net.sw.queues.queued_bytes(p))
                .sum();
            assert_eq!(node.mmu.used(), queued, "switch {s} at {t} ps");
        }
        t += US;
        assert!(t < 100 * MS, "the run ends");
    }
    assert!(most_held > 10, "packets were held: {most_held}");
    assert_eq!(net.counters().total_dropped_packets(), 0);
    net.check_conservation().expect("conservation");
}
