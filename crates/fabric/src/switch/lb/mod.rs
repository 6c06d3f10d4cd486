//! Load balancing: which of the equal-cost next hops a switch sends a
//! packet to. [`LoadBalancer`] is the choice the fabric's configuration
//! makes; `Balancer` is its state for every switch, one variant per
//! scheme, each in its own file here; `Sight` (`sight.rs`) is the
//! read-only view of the switch (its ports' queues, the time) the schemes
//! that need more than the header get. Called by the ingress pipeline
//! (`switch/ingress.rs`) only when there are two hops or more; a scheme
//! touches only its own state. A scheme that acts at ToRs beyond picking a
//! hop (ConWeave: tags, holds, control packets) says so in
//! `Balancer::at_tors`, and the ingress pipeline hands it every packet
//! first. See docs/extending.md, "Adding a load balancer", and
//! docs/load_balancing.md.

mod conweave;
mod drill;
mod ecmp;
mod letflow;
mod power_of_two;
mod sight;
mod spray;

use crate::net::arena::Hdr;
use conweave::Conweave;
pub use conweave::{ConweaveParams, ConweaveStats};
use drill::Drill;
pub use drill::DrillParams;
use ecmp::Ecmp;
use letflow::Letflow;
pub use letflow::LetflowParams;
use power_of_two::PowerOfTwo;
pub(crate) use sight::Sight;
use spray::Spray;

/// The load balancer of every switch (the scenario's `[switch]
/// load_balancer` chooses it by the names in [`LoadBalancer::NAMES`], and
/// `[switch.<name>]` sets its parameters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LoadBalancer {
    /// Per-flow hashing of the RoCEv2 5-tuple, seeded per switch.
    #[default]
    Ecmp,
    /// Per packet, round robin over the next hops (one turn per switch).
    Spray,
    /// Per packet, the least queued of `d` random next hops and the `m`
    /// best remembered (DRILL, CoNEXT'17).
    Drill(DrillParams),
    /// Per packet, the less queued of two random next hops.
    PowerOfTwo,
    /// Per flowlet (a flow's packets split by an idle gap), a random next
    /// hop (LetFlow, NSDI'17).
    Letflow(LetflowParams),
    /// Per flow epoch, rerouted at the source ToR when the path is slow to
    /// answer, reordered back at the destination ToR (ConWeave,
    /// SIGCOMM'23); ECMP elsewhere.
    Conweave(ConweaveParams),
}

impl LoadBalancer {
    /// Every scheme with the name scenario files give it, with its default
    /// parameters.
    pub const NAMES: &[(&str, LoadBalancer)] = &[
        ("ecmp", LoadBalancer::Ecmp),
        ("spray", LoadBalancer::Spray),
        ("drill", LoadBalancer::Drill(DrillParams::DEFAULT)),
        ("power_of_two", LoadBalancer::PowerOfTwo),
        ("letflow", LoadBalancer::Letflow(LetflowParams::DEFAULT)),
        ("conweave", LoadBalancer::Conweave(ConweaveParams::DEFAULT)),
    ];

    /// Its name in scenario files (whatever its parameters).
    pub fn name(self) -> &'static str {
        let kind = std::mem::discriminant(&self);
        LoadBalancer::NAMES
            .iter()
            .find(|(_, lb)| std::mem::discriminant(lb) == kind)
            .map_or("?", |(n, _)| n)
    }

    /// Whether the scheme can run on `topo` (ConWeave needs a ToR layer).
    pub fn check_topology(self, topo: &crate::Topology) -> Result<(), String> {
        match self {
            LoadBalancer::Conweave(_) => ConweaveParams::check_topology(topo),
            _ => Ok(()),
        }
    }
}

/// A load balancer's state for all switches (static dispatch: one match
/// per packet, no box).
pub(crate) enum Balancer {
    Ecmp(Ecmp),
    Spray(Spray),
    Drill(Drill),
    PowerOfTwo(PowerOfTwo),
    Letflow(Letflow),
    /// Boxed: its tables would make every variant, and the `Network`
    /// around them, larger.
    Conweave(Box<Conweave>),
}

impl Balancer {
    /// The state of `kind` for `switches` switches, seeded from the run's
    /// seed.
    pub fn new(kind: LoadBalancer, seed: u64, switches: u32) -> Balancer {
        match kind {
            LoadBalancer::Ecmp => Balancer::Ecmp(Ecmp::new(seed, switches)),
            LoadBalancer::Spray => Balancer::Spray(Spray::new(switches)),
            LoadBalancer::Drill(p) => Balancer::Drill(Drill::new(p, seed, switches)),
            LoadBalancer::PowerOfTwo => Balancer::PowerOfTwo(PowerOfTwo::new(seed, switches)),
            LoadBalancer::Letflow(p) => Balancer::Letflow(Letflow::new(p, seed, switches)),
            LoadBalancer::Conweave(p) => {
                Balancer::Conweave(Box::new(Conweave::new(p, seed, switches)))
            }
        }
    }

    /// Whether the scheme acts at ToRs beyond picking a hop: then the
    /// ingress pipeline hands it every packet first (`Network::lb_at_tor`).
    pub fn at_tors(&self) -> bool {
        matches!(self, Balancer::Conweave(_))
    }

    /// Packets the scheme holds inside switches, and their wire bytes.
    pub fn held(&self) -> (u64, u64) {
        match self {
            Balancer::Conweave(b) => b.held(),
            _ => (0, 0),
        }
    }

    /// Packets (and wire bytes) switches made, and those switches consumed
    /// (ConWeave's control packets), for conservation.
    pub fn own_packets(&self) -> [(u64, u64); 2] {
        match self {
            Balancer::Conweave(b) => {
                let s = b.stats();
                [
                    (s.control_packets, s.control_bytes),
                    (s.control_consumed_packets, s.control_consumed_bytes),
                ]
            }
            _ => [(0, 0); 2],
        }
    }

    /// Whether `pick` reads the candidate ports' queues (then they must be
    /// up to date: no deferred transmission end due before the packet).
    #[inline(always)]
    pub fn reads_queues(&self) -> bool {
        matches!(self, Balancer::Drill(_) | Balancer::PowerOfTwo(_))
    }

    /// The egress port switch `s` sends `hdr` to, among `hops` (two or
    /// more). The ingress pipeline inlines ECMP's own `pick` (the default
    /// scheme's hop stays as it was) and calls this, out of line, for the
    /// others.
    #[inline(never)]
    pub fn pick(&mut self, s: u32, hdr: Hdr, hops: &[u32], sight: Sight) -> u32 {
        match self {
            Balancer::Ecmp(e) => e.pick(s, &hdr, hops),
            Balancer::Spray(b) => b.pick(s, hops),
            Balancer::Drill(b) => b.pick(s, &hdr, hops, sight),
            Balancer::PowerOfTwo(b) => b.pick(s, &hdr, hops, sight),
            Balancer::Letflow(b) => b.pick(s, &hdr, hops, sight.now),
            Balancer::Conweave(b) => b.pick(s, &hdr, hops),
        }
    }
}
