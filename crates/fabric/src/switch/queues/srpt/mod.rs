//! SRPT scheduling (`Scheduling::Srpt`): at every switch port, the queued
//! packets of the data class (the NICs' `data_priority`) are served
//! smallest remaining message first ([`transport::Packet::remaining`],
//! read from the arena slot), ties in arrival order. Which packet then
//! leaves is [`SrptDequeue`]'s choice. By default, as in pFabric
//! (Alizadeh et al., SIGCOMM'13, section 4.1), the smallest packet names a
//! flow and that flow's earliest queued packet leaves: a message's later
//! packets rank above its earlier ones (fewer bytes remain), and sending
//! them first would reorder every long flow at every queue (go-back-N then
//! times out: 996 timeouts for one 2 MB WRITE in `kick.rs`'s test). With
//! `SrptDequeue::Packet` the smallest packet itself leaves, reordering
//! exactly so: the SRPT of Eunomia's Fig 17 (§5.4: "large flows arriving
//! in reverse order due to SRPT"), for an ordering layer to absorb.
//!
//! SRPT runs in the event loop's hooked instance (`Network::hooks`), so
//! the default's hop has no trace of it: there [`Queues`](super::Queues)
//! files an admitted packet of SRPT's class here, in a binary heap of keys
//! per port and a queue per (port, flow), in arrival order, instead of
//! the class's ring, and pops SRPT's choice when the class is the port's
//! highest eligible. The class's byte count and backlog bit cover SRPT's
//! queues as they cover a ring, so ECN marking, the lossy drop rule, PFC,
//! the load balancers and the MMU (which releases by the packet's ingress
//! port, whatever the order) see the same queue as under FIFO. This file
//! holds SRPT's queues and touches nothing else; `tests.rs` runs it in a
//! fabric.

#[cfg(test)]
mod tests;

use crate::net::arena::Hdr;
use crate::switch::queues::SrptDequeue;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

/// SRPT's state for the whole fabric.
pub(crate) struct Srpt {
    /// The class SRPT orders.
    pub class: usize,
    /// The NICs' MTU: a packet's iPSN counts packets of this size.
    pub mtu: u32,
    /// Which packet of the chosen flow leaves.
    dequeue: SrptDequeue,
    /// Packets queued so far: the arrival order that breaks ties.
    seq: u64,
    /// By port: a key per queued packet, the smallest on top.
    keys: Vec<BinaryHeap<Reverse<Key>>>,
    /// By (port, flow): the flow's queued packets in arrival order, as
    /// many as it has keys at the port.
    flows: BTreeMap<(u32, u64), VecDeque<Hdr>>,
}

/// A queued packet's rank: (remaining bytes, arrival, flow, arena slot).
/// The slot (unique among the packets alive) finds the packet itself in
/// its flow's queue; it never decides the order, the arrival being unique.
type Key = (u64, u64, u64, u32);

/// A packet's flow as SRPT keeps it apart: its 5-tuple's source and
/// destination parts.
fn flow_of(hdr: &Hdr) -> u64 {
    (hdr.flow as u64) << 32 | hdr.dst as u64
}

impl Srpt {
    /// SRPT on `class` at every one of `ports` ports (NICs of `mtu`),
    /// dequeuing as `dequeue` says.
    pub fn new(class: u8, mtu: u32, dequeue: SrptDequeue, ports: usize) -> Srpt {
        Srpt {
            class: class as usize,
            mtu,
            dequeue,
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

    /// Queues `hdr`, with `remaining` bytes in its message, at port `p`
    /// (after those queued before it).
    pub fn push(&mut self, p: u32, remaining: u64, hdr: Hdr) {
        let (seq, flow) = (self.seq, flow_of(&hdr));
        self.seq += 1;
        self.keys[p as usize].push(Reverse((remaining, seq, flow, hdr.idx)));
        self.flows.entry((p, flow)).or_default().push_back(hdr);
    }

    /// Takes the packet SRPT serves next at port `p`, if it holds one, and
    /// whether it holds no other.
    pub fn pop(&mut self, p: u32) -> Option<(Hdr, bool)> {
        let heap = &mut self.keys[p as usize];
        let Reverse((_, _, flow, slot)) = heap.pop()?;
        let empty = heap.is_empty();
        let queue = self
            .flows
            .get_mut(&(p, flow))
            .expect("a key has its packet");
        let hdr = match self.dequeue {
            SrptDequeue::FlowEarliest => queue.pop_front(),
            // Searched from the newest: a flow's fewest remaining bytes
            // are usually its latest packet's.
            SrptDequeue::Packet => {
                let at = queue.iter().rposition(|h| h.idx == slot);
                at.and_then(|at| queue.remove(at))
            }
        }
        .expect("a key has its packet");
        if queue.is_empty() {
            self.flows.remove(&(p, flow));
        }
        Some((hdr, empty))
    }
}
