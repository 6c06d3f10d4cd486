//! Links: ports and their queues (`port.rs`), what crosses a wire
//! (`frame.rs`), sending (`transmit.rs`: serialisation, a down link),
//! arriving (`arrive.rs`), a direction's impairments (`impair.rs`: random
//! loss, reordering), faults (`faults.rs`) and recurring random failures
//! (`random_failures.rs`); what a fault, a failure schedule and a
//! reordered direction's state are, plain data, is here. Link `i` owns ports `2i` (at its `a`
//! end) and `2i + 1` (at `b`), so a port's partner is `port ^ 1`.

mod faults;
pub mod frame;
mod impair;
pub mod port;
mod random_failures;
mod transmit;

use crate::config::EcnSetting;
use crate::net::arena::Hdr;
use engine::Time;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// The links: every port (one direction of a link, with its wire of
/// frames in flight), the scheduled faults, the recurring random failures,
/// the reordered directions and the flows that lost a packet to a down
/// link.
pub(crate) struct Links {
    pub ports: Vec<port::Port>,
    pub faults: Vec<Fault>,
    /// Recurring random failure schedules (`random_failures.rs`).
    pub failures: Vec<FailureState>,
    /// The reordered directions by port (`impair.rs`; empty without a
    /// reorder fault).
    pub reorder: std::collections::BTreeMap<u32, Reorder>,
    /// The receiving ends (host, QP) of the packets lost to a randomly
    /// failed link (`random_failures.rs`).
    pub link_down_qps: std::collections::BTreeSet<(u32, u32)>,
    /// The wire size of a control frame (PFC, RCM's notes).
    pub pfc_frame_bytes: u32,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FaultAction {
    Down,
    Up,
    /// Run the link at this rate from now on (both directions).
    Rate(u64),
    /// Random loss probability of the chosen direction(s).
    Loss(f64),
    /// ECN marking of the chosen direction(s)' egress port from now on.
    Ecn(EcnSetting),
    /// Reordering of the chosen direction(s) from now on: each packet is
    /// delayed with probability `fraction`, by a delay uniform in
    /// (0, `delay`] beyond the link's own, so later packets overtake it
    /// (`impair.rs`). A fraction of 0 ends it.
    Reorder {
        fraction: f64,
        delay: Time,
    },
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fault {
    pub at: Time,
    /// Index of the link in the topology.
    pub link: u32,
    /// None: both directions; Some(true): a -> b; Some(false): b -> a.
    pub a_to_b: Option<bool>,
    pub action: FaultAction,
}

/// Recurring random link failures: from `start`, every `interval` until
/// `stop`, the links this schedule failed come back up and a new random
/// set of `count` switch-to-switch links (drawn among those up) goes down,
/// both directions; at `stop` the last set comes back. Drawn from the
/// `StreamKind::Failures` stream of the schedule's index.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RandomFailures {
    pub start: Time,
    pub interval: Time,
    pub stop: Time,
    /// Links failed at each interval (at least 1).
    pub count: u32,
}

/// A failure schedule as it runs: what it is, the links it holds down
/// now, and its random stream.
pub(crate) struct FailureState {
    pub spec: RandomFailures,
    pub down: Vec<u32>,
    pub rng: engine::Rng,
}

/// A delayed packet, ordered by when it lands and then by when it was
/// sent (packets landing at one picosecond keep their sending order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Late {
    pub at: Time,
    pub seq: u64,
    pub hdr: Hdr,
}

impl Ord for Late {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

impl PartialOrd for Late {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A reordered direction (`impair.rs`): its fault's parameters, its
/// random stream (`StreamKind::Reorder` of the port) and its delayed
/// packets.
pub(crate) struct Reorder {
    pub fraction: f64,
    /// The largest extra delay (ps, at least 1).
    pub delay: Time,
    pub rng: engine::Rng,
    pub late: BinaryHeap<Reverse<Late>>,
    /// Packets delayed so far (the next one's sequence).
    pub delayed: u64,
}
