//! SRPT scheduling (`Scheduling::Srpt`): at every switch port, the queued
//! packets of the data class (the NICs' `data_priority`) are served
//! smallest remaining message first ([`transport::Packet::remaining`],
//! read from the arena slot), ties in arrival order. As in pFabric
//! (Alizadeh et al., SIGCOMM'13, section 4.1), the smallest packet names a
//! flow and that flow's earliest queued packet leaves: a message's later
//! packets rank above its earlier ones (fewer bytes remain), and sending
//! them first would reorder every long flow at every queue (go-back-N then
//! times out: 996 timeouts for one 2 MB WRITE in this file's test).
//!
//! The ingress pipeline queues packets in the class's ring as under FIFO;
//! when the port is free, `kick` comes here (one compare, never taken
//! under FIFO), the ring's packets move, in arrival order, into a binary
//! heap of keys per port and a FIFO per (port, flow), and the packet
//! chosen departs. Ring and heap together are the class's queue: the
//! port's byte count and backlog bit of the class cover both, so ECN, the
//! lossy drop rule, PFC, the load balancers and the MMU (which releases by
//! the packet's ingress port, whatever the order) see the same queue as
//! under FIFO. Touches SRPT's queues, the ports' queues and the egress
//! pipeline.

use crate::net::arena::Hdr;
use crate::net::Network;
use crate::switch::mmu::CLASSES;
use engine::Time;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

/// SRPT's state for the whole fabric (empty under FIFO).
pub(crate) struct Srpt {
    /// The class SRPT orders, or [`CLASSES`] (no class) under FIFO: the
    /// one compare the hot path makes.
    pub class: usize,
    /// The NICs' MTU: a packet's iPSN counts packets of this size.
    mtu: u32,
    /// Packets queued so far: the arrival order that breaks ties.
    seq: u64,
    /// By port: a key per queued packet, (remaining bytes, arrival, flow),
    /// the smallest on top.
    keys: Vec<BinaryHeap<Reverse<(u64, u64, u64)>>>,
    /// By (port, flow): the flow's queued packets in arrival order, as
    /// many as it has keys at the port.
    flows: BTreeMap<(u32, u64), VecDeque<Hdr>>,
}

/// A packet's flow as SRPT keeps it apart: its 5-tuple's source and
/// destination parts.
fn flow_of(hdr: &Hdr) -> u64 {
    (hdr.flow as u64) << 32 | hdr.dst as u64
}

impl Srpt {
    /// FIFO: no class is ordered.
    pub fn off() -> Srpt {
        Srpt {
            class: CLASSES,
            mtu: 0,
            seq: 0,
            keys: Vec::new(),
            flows: BTreeMap::new(),
        }
    }

    /// SRPT on `class` at every one of `ports` ports (NICs of `mtu`).
    pub fn new(class: u8, mtu: u32, ports: usize) -> Srpt {
        Srpt {
            class: class as usize,
            mtu,
            seq: 0,
            keys: (0..ports).map(|_| BinaryHeap::new()).collect(),
            flows: BTreeMap::new(),
        }
    }

    /// The packets SRPT holds at port `p` (not those still in its ring).
    pub fn queued(&self, p: u32) -> impl Iterator<Item = &Hdr> + '_ {
        self.flows
            .range((p, 0)..=(p, u64::MAX))
            .flat_map(|(_, q)| q.iter())
    }

    /// Takes the packet SRPT serves next at port `p`, if it holds one, and
    /// whether it holds no other.
    fn pop(&mut self, p: u32) -> Option<(Hdr, bool)> {
        let heap = &mut self.keys[p as usize];
        let Reverse((_, _, flow)) = heap.pop()?;
        let empty = heap.is_empty();
        let queue = self
            .flows
            .get_mut(&(p, flow))
            .expect("a key has its packet");
        let hdr = queue.pop_front().expect("a key has its packet");
        if queue.is_empty() {
            self.flows.remove(&(p, flow));
        }
        Some((hdr, empty))
    }
}

impl Network {
    /// Port `p` of switch `s` may start a packet (its PFC frames are
    /// sent): under SRPT, the SRPT class's newly queued packets join its
    /// queues, and the next packet of the highest eligible class departs,
    /// SRPT's choice if that class is SRPT's.
    #[inline(never)]
    pub(crate) fn kick_srpt(&mut self, now: Time, p: u32, s: u32) {
        let (class, mtu) = (self.srpt.class, self.srpt.mtu);
        let port = &mut self.ports[p as usize];
        while let Some(hdr) = port.queues[class].hdrs.pop_front() {
            let remaining = self.arena.remaining(hdr.idx, mtu);
            let (seq, flow) = (self.srpt.seq, flow_of(&hdr));
            self.srpt.seq += 1;
            self.srpt.keys[p as usize].push(Reverse((remaining, seq, flow)));
            self.srpt.flows.entry((p, flow)).or_default().push_back(hdr);
        }
        let hdr = if port.eligible_class() == Some(class) {
            let (hdr, empty) = self.srpt.pop(p).expect("a backlogged class holds a packet");
            port.release_held(class, hdr.wire(), empty);
            hdr
        } else {
            let Some(hdr) = port.pop_eligible() else {
                return;
            };
            hdr
        };
        let qlen = port.queues[hdr.class()].bytes;
        self.depart(now, p, s, hdr, qlen);
    }

    /// The next packet of `class` queued at port `p`, paused or not (a
    /// down link's queues are drained): for SRPT's class, SRPT's choice
    /// first, then the ring's first.
    pub(crate) fn pop_queued(&mut self, p: u32, class: usize) -> Option<Hdr> {
        let port = &mut self.ports[p as usize];
        if class == self.srpt.class {
            if let Some((hdr, empty)) = self.srpt.pop(p) {
                let empty = empty && port.queues[class].hdrs.is_empty();
                port.release_held(class, hdr.wire(), empty);
                return Some(hdr);
            }
        }
        port.pop_class(class)
    }
}

#[cfg(test)]
mod tests {
    use crate::host::flows::Flow;
    use crate::switch::Scheduling;
    use crate::topo::topology::{NodeKind, Topology};
    use crate::{FabricConfig, Network, RunState};
    use engine::time::US;
    use transport::Verb;

    const G: u64 = 1_000_000_000;

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
        let queued = net.ports()[bottleneck].queued_bytes();
        assert_eq!(net.run_until(u64::MAX, u64::MAX), RunState::Done);
        net.check_conservation().expect("conserved");
        assert_eq!(net.counters.total_dropped_packets(), 0);
        // The long flow paused its sender; whatever the order, every
        // (ingress port, class) released what it admitted and resumed.
        assert!(net.counters.pause_frames > 0);
        assert!(net.switches[0].mmu.is_idle());
        assert_eq!(net.ports()[bottleneck].queued_bytes(), 0);
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
            let (srpt, queued_srpt) = overtake(Scheduling::Srpt, verb);
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
}
