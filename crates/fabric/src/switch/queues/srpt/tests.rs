//! SRPT in a fabric: a short flow overtakes a long one at a shared
//! queue, each dequeue rule's ordering, and a failed link's SRPT queues
//! drained.

use crate::host::flows::Flow;
use crate::switch::{Scheduling, SrptDequeue};
use crate::topo::topology::{NodeKind, Topology};
use crate::{FabricConfig, Network, RunState};
use engine::time::US;
use transport::Verb;

const G: u64 = 1_000_000_000;
/// SRPT as pFabric dequeues it (the default).
const SRPT: Scheduling = Scheduling::Srpt {
    dequeue: SrptDequeue::FlowEarliest,
};

/// Hosts 0 and 1 at 100 Gb/s and host 2 at 10 Gb/s on one switch:
/// the switch's port toward host 2 is the bottleneck.
fn star() -> Topology {
    let mut topo = Topology::default();
    let s = topo.add_node("s".into(), NodeKind::Switch);
    for (h, rate) in [(0, 100 * G), (1, 100 * G), (2, 10 * G)] {
        let n = topo.add_node(format!("h{h}"), NodeKind::Host);
        topo.add_link(n, s, rate, US);
    }
    topo
}

fn flow(src: u32, dst: u32, bytes: u64, start: u64, verb: Verb) -> Flow {
    Flow {
        src,
        dst,
        bytes,
        start,
        verb,
        class: 0,
        engine: 0,
        messages: 1,
        sync_per_10k: 0,
    }
}

/// A 2 MB WRITE from host 0 fills the bottleneck queue; 100 us later a
/// 10 KB flow from host 1 (a WRITE, or a READ by host 2 whose
/// responses cross the bottleneck) joins it. Returns the short flow's
/// FCT and the bytes queued at the bottleneck when it started.
fn overtake(scheduling: Scheduling, verb: Verb) -> (u64, u64) {
    let cfg = FabricConfig {
        scheduling,
        ..FabricConfig::default()
    };
    let mut net = Network::new(star(), cfg).expect("valid");
    let start = 100 * US;
    net.add_flow(flow(0, 2, 2_000_000, 0, Verb::Write)).unwrap();
    let short = match verb {
        Verb::Read => flow(1, 2, 10_000, start, Verb::Read),
        _ => flow(1, 2, 10_000, start, verb),
    };
    net.add_flow(short).unwrap();
    // The bottleneck: the switch's port on host 2's link (link 2, the
    // switch at its b end).
    let bottleneck = 2 * 2 + 1;
    assert_eq!(net.run_until(start - 1, u64::MAX), RunState::TimeLimit);
    let queued = net.sw.queues.queued_bytes(bottleneck);
    assert_eq!(net.run_until(u64::MAX, u64::MAX), RunState::Done);
    net.check_conservation().expect("conserved");
    assert_eq!(net.core.counters.total_dropped_packets(), 0);
    // The long flow paused its sender; whatever the order, every
    // (ingress port, class) released what it admitted and resumed.
    assert!(net.core.counters.pause_frames > 0);
    assert!(net.sw.nodes[0].mmu.is_idle());
    assert_eq!(net.sw.queues.queued_bytes(bottleneck), 0);
    // No flow's packets were reordered: nothing was sent twice.
    for h in 0..3 {
        assert_eq!(net.nic(h).stats().retransmitted_packets, 0, "host {h}");
    }
    (net.flows()[1].fct().expect("finished"), queued)
}

/// SRPT lets a short flow overtake a long one at a shared queue: its
/// packets leave before the long flow's packets queued ahead of them
/// (it finishes before those bytes could have drained at 10 Gb/s), so
/// its FCT is a fraction of FIFO's, where it waits behind them. A READ
/// ranks by the responder's bytes: its responses overtake too.
#[test]
fn a_short_flow_overtakes_a_long_one_at_a_shared_queue() {
    for verb in [Verb::Write, Verb::Read] {
        let (fifo, queued) = overtake(Scheduling::Fifo, verb);
        let (srpt, queued_srpt) = overtake(SRPT, verb);
        assert_eq!(queued, queued_srpt, "the same run until the short flow");
        let drain = queued * 8 * 1000 / 10; // ps at 10 Gb/s
        assert!(queued > 100_000, "{verb:?}: only {queued} bytes queued");
        assert!(
            fifo > drain,
            "{verb:?}: FIFO {fifo} ps, queue drains in {drain}"
        );
        assert!(
            srpt < drain / 4,
            "{verb:?}: SRPT {srpt} ps, queue drains in {drain}"
        );
        assert!(
            srpt * 5 < fifo,
            "{verb:?}: SRPT {srpt} ps vs FIFO {fifo} ps"
        );
    }
}

/// A 1 MB WRITE from host 0 and five 20 KB WRITEs from host 1, one
/// every 40 us, share the bottleneck toward host 2. Returns the long
/// flow's packets that reached host 2 above the PSN it expected, and
/// its FCT.
fn long_flow_reordering(dequeue: SrptDequeue) -> (u64, u64) {
    let cfg = FabricConfig {
        scheduling: Scheduling::Srpt { dequeue },
        ..FabricConfig::default()
    };
    let mut net = Network::new(star(), cfg).expect("valid");
    net.add_flow(flow(0, 2, 1_000_000, 0, Verb::Write)).unwrap();
    for i in 0..5 {
        let start = (20 + 40 * i) * US;
        net.add_flow(flow(1, 2, 20_000, start, Verb::Write))
            .unwrap();
    }
    assert_eq!(net.run_until(u64::MAX, u64::MAX), RunState::Done);
    net.check_conservation().expect("conserved");
    let long = &net.flows()[0];
    let seen = net.nic(2).qp_reorder(long.responder_qp).expect("its QP");
    (seen.ooo_packets, long.fct().expect("finished"))
}

/// Under `dequeue = "packet"` the long flow's later packets (fewer
/// bytes left) leave the bottleneck before its earlier ones queued
/// there, so they reach its receiver out of order (go-back-N drops
/// them and resends: the flow takes longer); under pFabric's rule its
/// packets stay in order.
#[test]
fn only_packet_dequeue_reorders_a_long_flow() {
    let (kept, fct_kept) = long_flow_reordering(SrptDequeue::FlowEarliest);
    let (reordered, fct_reordered) = long_flow_reordering(SrptDequeue::Packet);
    assert_eq!(kept, 0, "flow_earliest");
    assert!(reordered > 10, "packet: {reordered} out of order");
    assert!(fct_reordered > fct_kept, "{fct_reordered} <= {fct_kept}");
}

/// When a link fails (random failures), the packets SRPT holds at its
/// ports are dropped at once, as a ring's are: buffer released, counted
/// as link_down, their flows noted as hit.
#[test]
fn a_failed_links_srpt_queues_are_drained() {
    use crate::link::RandomFailures;
    let mut topo = Topology::default();
    let s0 = topo.add_node("s0".into(), NodeKind::Switch);
    let s1 = topo.add_node("s1".into(), NodeKind::Switch);
    for (h, s) in [(0, s0), (1, s0), (2, s1)] {
        let n = topo.add_node(format!("h{h}"), NodeKind::Host);
        topo.add_link(n, s, 100 * G, US);
    }
    // Link 3: port 6 is s0's, toward s1 (the bottleneck).
    topo.add_link(s0, s1, 10 * G, US);
    let cfg = FabricConfig {
        scheduling: SRPT,
        ..FabricConfig::default()
    };
    let mut net = Network::new(topo, cfg).expect("valid");
    net.add_flow(flow(0, 2, 2_000_000, 0, Verb::Write)).unwrap();
    net.add_flow(flow(1, 2, 1_000_000, 0, Verb::Write)).unwrap();
    let at = 100 * US;
    let spec = RandomFailures {
        start: at,
        interval: 1000 * US,
        stop: 2000 * US,
        count: 1,
    };
    net.add_random_failures(spec).unwrap();
    net.run_until(at - 1, u64::MAX);
    let held = net.sw.queues.queued(6).count() as u64;
    assert!(held > 10, "{held} packets held");
    assert_eq!(
        net.sw.queues.queued_bytes(6),
        net.sw.queues.queued(6).map(|h| h.wire() as u64).sum()
    );
    net.run_until(at, u64::MAX);
    assert_eq!(net.randomly_failed_links(), [3]);
    assert_eq!(net.sw.queues.queued(6).count(), 0);
    assert_eq!(net.sw.queues.queued_bytes(6), 0);
    let down = crate::DropReason::ALL
        .iter()
        .position(|&r| r == crate::DropReason::LinkDown)
        .unwrap();
    assert!(net.core.counters.dropped_packets[down] >= held);
    assert_eq!(net.flows_hit_by_failures().map(|f| f.len()), Some(2));
    net.check_conservation().expect("conserved");
}
