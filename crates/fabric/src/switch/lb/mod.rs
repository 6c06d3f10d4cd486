//! Load balancing: which of the equal-cost next hops a switch sends a
//! packet to. [`LoadBalancer`] is the choice the fabric's configuration
//! makes; `Balancer` is its state for every switch, one variant per
//! scheme, each in its own file here; `Sight` (`sight.rs`) is the
//! read-only view of the switch (its ports' queues, the time) the schemes
//! that need more than the header get. Called by the ingress pipeline
//! (`switch/ingress.rs`) only when there are two hops or more; a scheme
//! touches only its own state. Two schemes act beyond picking a hop, in
//! the hop's hooks (compiled only into the event loop's hooked instance,
//! `Network::hooks`): ConWeave at ToRs (tags, holds, control packets:
//! `Balancer::at_tors`, handed every packet first) and CONGA at every
//! switch hop (congestion fields and feedback: `Balancer::every_hop`,
//! shown every admitted packet). See docs/extending.md, "Adding a load
//! balancer", and docs/load_balancing.md.

mod conga;
mod conweave;
mod drill;
mod ecmp;
mod ecmp_ns3;
mod flowlet;
mod letflow;
mod power_of_two;
mod sight;
mod spray;

use crate::net::arena::Hdr;
use crate::topo::topology::Topology;
use conga::Conga;
pub use conga::CongaParams;
use conweave::Conweave;
pub use conweave::{ConweaveParams, ConweaveStats};
use drill::Drill;
pub use drill::DrillParams;
use ecmp::Ecmp;
pub use ecmp_ns3::EcmpHash;
use ecmp_ns3::Ns3Ecmp;
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
    /// Per flowlet, the uplink of least congestion toward the destination
    /// leaf, measured along the paths and fed back (CONGA, SIGCOMM'14;
    /// two-tier leaf-spines only).
    Conga(CongaParams),
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
        ("conga", LoadBalancer::Conga(CongaParams::DEFAULT)),
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

    /// Whether the scheme can run on `topo`, and if not why.
    pub fn check_topology(self, topo: &Topology) -> Result<(), String> {
        match self {
            LoadBalancer::Conga(_) => CongaParams::check(topo),
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
    /// Boxed: its tables make it the largest by far.
    Conga(Box<Conga>),
    /// Boxed: its tables would make every variant, and the `Network`
    /// around them, larger.
    Conweave(Box<Conweave>),
    /// ECMP with the HPCC ns-3 simulator's hash and next-hop order
    /// (`ecmp_hash = "ns3"`); boxed: its tables are per destination. Last, so the
    /// others keep the discriminants they had.
    EcmpNs3(Box<Ns3Ecmp>),
}

impl Balancer {
    /// The state of `kind` for the switches of `topo`, seeded from the
    /// run's seed, ECMP hashing with `hash`; an error if the scheme cannot
    /// run on `topo`, or `hash` is not the default with a scheme other than
    /// ECMP.
    pub fn new(
        kind: LoadBalancer,
        hash: EcmpHash,
        seed: u64,
        topo: &Topology,
    ) -> Result<Balancer, String> {
        let switches = topo.switch_count() as u32;
        if hash != EcmpHash::Rdmalab && kind != LoadBalancer::Ecmp {
            return Err(format!(
                "the ns-3 ECMP hash needs load_balancer = \"ecmp\", not \"{}\"",
                kind.name()
            ));
        }
        Ok(match kind {
            LoadBalancer::Ecmp if hash == EcmpHash::Ns3 => {
                Balancer::EcmpNs3(Box::new(Ns3Ecmp::new(topo)))
            }
            LoadBalancer::Ecmp => Balancer::Ecmp(Ecmp::new(seed, switches)),
            LoadBalancer::Spray => Balancer::Spray(Spray::new(switches)),
            LoadBalancer::Drill(p) => Balancer::Drill(Drill::new(p, seed, switches)),
            LoadBalancer::PowerOfTwo => Balancer::PowerOfTwo(PowerOfTwo::new(seed, switches)),
            LoadBalancer::Letflow(p) => Balancer::Letflow(Letflow::new(p, seed, switches)),
            LoadBalancer::Conga(p) => Balancer::Conga(Box::new(Conga::new(p, seed, topo)?)),
            LoadBalancer::Conweave(p) => {
                Balancer::Conweave(Box::new(Conweave::new(p, seed, switches)))
            }
        })
    }

    /// The HPCC ns-3 ECMP's state, when it is the scheme.
    #[inline]
    pub(crate) fn ns3(&mut self) -> Option<&mut Ns3Ecmp> {
        match self {
            Balancer::EcmpNs3(e) => Some(e),
            _ => None,
        }
    }

    /// The UDP source port of flow `id` under the ns-3 hash (out of line:
    /// flow starts are handled inside the event loop).
    #[cold]
    #[inline(never)]
    pub(crate) fn ns3_sport(&self, id: u32) -> Option<u16> {
        match self {
            Balancer::EcmpNs3(e) => Some(e.sport(id)),
            _ => None,
        }
    }

    /// Swaps switch `s`'s state with `other`'s (a sharded run's merge,
    /// `net/shard.rs`; `other` is the same balancer).
    pub fn swap_switch(&mut self, other: &mut Balancer, s: usize) {
        match (self, other) {
            (Balancer::Spray(a), Balancer::Spray(b)) => a.swap_switch(b, s),
            (Balancer::Drill(a), Balancer::Drill(b)) => a.swap_switch(b, s),
            (Balancer::PowerOfTwo(a), Balancer::PowerOfTwo(b)) => a.swap_switch(b, s),
            (Balancer::Letflow(a), Balancer::Letflow(b)) => a.swap_switch(b, s),
            // ECMP's state is its seeds and tables, the same in every
            // copy; CONGA and ConWeave never run sharded
            // (`Network::cannot_shard`).
            _ => {}
        }
    }

    /// Whether the scheme acts at ToRs beyond picking a hop: then the
    /// ingress pipeline hands it every packet first (`Network::lb_at_tor`).
    pub fn at_tors(&self) -> bool {
        matches!(self, Balancer::Conweave(_))
    }

    /// Whether the scheme acts at every switch hop (`hop`), not only where
    /// it chooses.
    pub fn every_hop(&self) -> bool {
        matches!(self, Balancer::Conga(_))
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
            Balancer::EcmpNs3(e) => e.pick(s, &hdr, hops),
            Balancer::Spray(b) => b.pick(s, hops),
            Balancer::Drill(b) => b.pick(s, &hdr, hops, sight),
            Balancer::PowerOfTwo(b) => b.pick(s, &hdr, hops, sight),
            Balancer::Letflow(b) => b.pick(s, &hdr, hops, sight.now),
            Balancer::Conga(b) => b.pick(s, &hdr, hops, sight),
            Balancer::Conweave(b) => b.pick(s, &hdr, hops),
        }
    }

    /// A packet that entered switch `s` by port `in_port` leaves it by port
    /// `out` (chosen and admitted), for the schemes that act at every hop
    /// (`every_hop`; the ingress pipeline calls this only for them).
    #[inline(never)]
    pub fn hop(&mut self, s: u32, in_port: u32, out: u32, hdr: Hdr, sight: Sight) {
        if let Balancer::Conga(b) = self {
            b.hop(s, in_port, out, &hdr, sight);
        }
    }
}
