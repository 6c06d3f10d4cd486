//! ConWeave (Song et al., SIGCOMM'23, "Network Load Balancing with
//! In-network Reordering Support for RDMA"), after its public ns-3 code
//! (`conweave-routing.cc`, `conweave-voq.cc`): the ToRs balance, every
//! other switch hashes as ECMP does.
//!
//! - The source ToR (the leaf a flow's data enters from its host) keeps
//!   per flow an epoch, an uplink and a reply deadline (`tx.rs`). The first
//!   packet of an epoch asks the destination ToR for a reply (INIT); if the
//!   reply does not come before the deadline, the flow's next packet is the
//!   epoch's TAIL on the old uplink, and the packets after it go REROUTED
//!   on a new one, drawn as the better of two random uplinks not paused.
//!   An uplink whose data arrived ECN-marked is paused for `path_pause`
//!   (NOTIFY). A flow idle for `tx_expiry` starts afresh.
//! - The destination ToR (`rx.rs`) holds the REROUTED packets that arrive
//!   before their epoch's TAIL in a queue per flow and releases them right
//!   after the TAIL, in order, or when a flush deadline passes (estimated
//!   from the two paths' timestamps, else `default_voq_wait`). It answers
//!   INIT and TAIL with a reply and sends NOTIFY for ECN-marked data.
//!
//! Per-packet header fields (epoch, flags, timestamps, the uplink) live in
//! a side table indexed by the packet's arena slot, written by the source
//! ToR and read by the destination ToR; nothing of it exists when another
//! scheme runs. The replies and NOTIFYs are real packets (`net.rs`), so
//! they take link time and buffer. Held packets wait outside the
//! switch's buffer, as the artifact's reordering queues do, and are
//! admitted when released (`Mmu::admit_held`). This file
//! holds the parameters, the state and the counters; it touches nothing
//! else.

mod net;
mod rx;
#[cfg(test)]
mod tests;
mod tx;

use super::ecmp::Ecmp;
use crate::net::arena::Hdr;
use crate::topo::topology::{NodeKind, Topology};
use engine::time::US;
use engine::{Rng, StreamKind, Time};
use rx::RxState;
use std::collections::{BTreeSet, HashMap};
use tx::TxState;

/// ConWeave's parameters (`[switch.conweave]`). The defaults are the
/// artifact's `run.py` values for its two-tier leaf-spine; for its
/// three-tier fat tree it runs `extra_voq_flush` 64 us, `default_voq_wait`
/// 600 us and `tx_expiry` 1000 us lossless (16, 300 and 1000 with IRN).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConweaveParams {
    /// Added to the ToR-to-ToR base RTT to make the reply deadline.
    pub extra_reply_deadline: Time,
    /// How long an uplink reported congested (ECN) is avoided.
    pub path_pause: Time,
    /// Added to the estimated arrival of the TAIL to make the flush
    /// deadline of a held queue.
    pub extra_voq_flush: Time,
    /// The flush wait when no packet of the old path was seen.
    pub default_voq_wait: Time,
    /// A flow idle this long starts a new epoch on a freshly drawn uplink.
    pub tx_expiry: Time,
}

impl ConweaveParams {
    pub const DEFAULT: ConweaveParams = ConweaveParams {
        extra_reply_deadline: 4 * US,
        path_pause: 16 * US,
        extra_voq_flush: 16 * US,
        default_voq_wait: 200 * US,
        tx_expiry: 300 * US,
    };

    /// Checks that the topology has a ToR layer ConWeave can act at: every
    /// host hangs off a switch (its ToR), and no two ToRs are linked
    /// directly (a source ToR's next hops toward another ToR are then its
    /// uplinks, the paths it chooses among).
    pub fn check_topology(topo: &Topology) -> Result<(), String> {
        let is_host = |n: u32| topo.nodes[n as usize].kind == NodeKind::Host;
        let mut has_hosts = vec![false; topo.nodes.len()];
        for l in &topo.links {
            for (h, peer) in [(l.a, l.b), (l.b, l.a)] {
                if is_host(h) {
                    if is_host(peer) {
                        return Err(format!(
                            "conweave needs a ToR layer: hosts {} and {} are linked directly",
                            topo.nodes[h as usize].name, topo.nodes[peer as usize].name
                        ));
                    }
                    has_hosts[peer as usize] = true;
                }
            }
        }
        for l in &topo.links {
            if has_hosts[l.a as usize] && has_hosts[l.b as usize] {
                return Err(format!(
                    "conweave needs a ToR layer: switches {} and {} both have hosts and are linked directly",
                    topo.nodes[l.a as usize].name, topo.nodes[l.b as usize].name
                ));
            }
        }
        Ok(())
    }
}

/// What ConWeave did over a run (all ToRs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConweaveStats {
    /// Flows moved to a new uplink after a reply deadline passed (the
    /// artifact's `m_nReRoute` also counts new uplinks drawn after an idle
    /// expiry; those reorder nothing and are not counted here).
    pub reroutes: u64,
    /// REROUTED packets held at a destination ToR.
    pub held_packets: u64,
    /// Held queues released by their TAIL.
    pub tail_releases: u64,
    /// Held queues flushed by their deadline (their TAIL was late or
    /// lost: what they release may still be out of order), and the
    /// packets they released.
    pub timer_flushes: u64,
    pub timer_flushed_packets: u64,
    /// Replies (to INIT and TAIL) and NOTIFYs the destination ToRs sent.
    pub replies: u64,
    pub notifies: u64,
    /// Control packets created, and those that reached their ToR (the rest
    /// were dropped, with a counted reason, or are still in flight), with
    /// their wire bytes.
    pub control_packets: u64,
    pub control_bytes: u64,
    pub control_consumed_packets: u64,
    pub control_consumed_bytes: u64,
}

/// A data packet's request to the destination ToR.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Flag {
    #[default]
    Data,
    /// The first packet of an epoch: reply, so the source ToR knows the
    /// path is not congested (RTT_REQUEST in the paper).
    Init,
    /// The last packet on the old path after a reply deadline passed.
    Tail,
}

/// What a control packet tells the source ToR.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Control {
    /// Not a control packet.
    #[default]
    None,
    /// The INIT of `epoch` arrived (RTT_REPLY).
    ReplyInit,
    /// The TAIL of `epoch` arrived (CLEAR).
    ReplyTail,
    /// Data that took `uplink` toward `data_dst`'s ToR was ECN-marked.
    Notify,
}

/// ConWeave's fields of one packet in flight (the side table's entry).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Tag {
    pub epoch: u32,
    /// After the TAIL, on the new path (phase 1 in the artifact).
    pub rerouted: bool,
    pub flag: Flag,
    pub control: Control,
    /// The source ToR's uplink (global port id) the data took.
    pub uplink: u32,
    /// The data's destination host (for a control packet, whose own
    /// destination is the data's source).
    pub data_dst: u32,
    /// When the source ToR sent it, and when it sent its epoch's TAIL (0:
    /// not yet).
    pub tx_time: Time,
    pub tail_time: Time,
}

/// One ToR's tables (every switch has one; only ToRs fill theirs).
struct Tor {
    rng: Rng,
    /// Source side, by flow key.
    tx: HashMap<u64, TxState>,
    /// Until when an uplink is paused, by `dst ToR << 32 | uplink` (the
    /// artifact's path id is the uplink and the hops after it, which
    /// toward one destination ToR the uplink fixes).
    paused: HashMap<u64, Time>,
    /// Destination side, by flow key.
    rx: HashMap<u64, RxState>,
    /// Flush deadlines of the held queues: (deadline, flow key).
    deadlines: BTreeSet<(Time, u64)>,
}

/// How a packet reached its destination host's port queue, for the
/// ordering test.
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Handoff {
    /// Straight through.
    Direct,
    /// Held, then released right after its TAIL.
    AfterTail,
    /// Held, then flushed by its deadline.
    Timer,
}

/// One packet handed toward its destination host by its ToR.
#[cfg(test)]
#[derive(Clone, Copy, Debug)]
pub(super) struct Handed {
    pub key: u64,
    pub epoch: u32,
    pub rerouted: bool,
    pub tail: bool,
    pub how: Handoff,
}

/// ConWeave's state for the whole fabric.
pub(crate) struct Conweave {
    p: ConweaveParams,
    /// Non-ToR switches, and packets ConWeave leaves alone, go by ECMP.
    ecmp: Ecmp,
    /// Each host's ToR (switch index), set once the network is built.
    host_tor: Vec<u32>,
    tors: Vec<Tor>,
    /// The side table, by arena slot (grown on demand).
    tags: Vec<Tag>,
    /// Base RTT between two ToRs, by `src ToR << 32 | dst ToR`.
    rtt: HashMap<u64, Time>,
    stats: ConweaveStats,
    #[cfg(test)]
    pub(super) handed: Vec<Handed>,
}

impl Conweave {
    pub fn new(p: ConweaveParams, seed: u64, switches: u32) -> Conweave {
        Conweave {
            p,
            ecmp: Ecmp::new(seed, switches),
            host_tor: Vec::new(),
            tors: (0..switches as u64)
                .map(|s| Tor {
                    rng: Rng::new(seed, StreamKind::LoadBalance, s),
                    tx: HashMap::new(),
                    paused: HashMap::new(),
                    rx: HashMap::new(),
                    deadlines: BTreeSet::new(),
                })
                .collect(),
            tags: Vec::new(),
            rtt: HashMap::new(),
            stats: ConweaveStats::default(),
            #[cfg(test)]
            handed: Vec::new(),
        }
    }

    /// ECMP's choice, for every packet ConWeave does not steer.
    #[inline(always)]
    pub fn pick(&self, s: u32, hdr: &Hdr, hops: &[u32]) -> u32 {
        self.ecmp.pick(s, hdr, hops)
    }

    pub fn stats(&self) -> ConweaveStats {
        self.stats
    }

    /// Packets held at destination ToRs, and their wire bytes.
    pub fn held(&self) -> (u64, u64) {
        self.tors
            .iter()
            .flat_map(|t| t.rx.values())
            .flat_map(|r| r.held())
            .fold((0, 0), |(n, b), h| (n + 1, b + h.wire() as u64))
    }

    fn tag_mut(&mut self, idx: u32) -> &mut Tag {
        let i = idx as usize;
        if i >= self.tags.len() {
            self.tags.resize(i + 1, Tag::default());
        }
        &mut self.tags[i]
    }
}

/// A flow's key: its identity and destination.
#[inline]
fn flow_key(hdr: &Hdr) -> u64 {
    (hdr.flow as u64) << 32 | hdr.dst as u64
}
