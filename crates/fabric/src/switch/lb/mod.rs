//! Load balancing: which of the equal-cost next hops a switch sends a
//! packet to. [`LoadBalancer`] is the choice the fabric's configuration
//! makes; `Balancer` is its state for every switch, one variant per
//! scheme, each in its own file here. Called by the ingress pipeline
//! (`switch/ingress.rs`) only when there are two hops or more; a scheme
//! touches only its own state. See docs/extending.md, "Adding a load
//! balancer".

mod ecmp;

use crate::net::arena::Hdr;
use ecmp::Ecmp;

/// The load balancer of every switch (the scenario's `[switch]
/// load_balancer` chooses it by the names in [`LoadBalancer::NAMES`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LoadBalancer {
    /// Per-flow hashing of the RoCEv2 5-tuple, seeded per switch.
    #[default]
    Ecmp,
}

impl LoadBalancer {
    /// Every scheme with the name scenario files give it.
    pub const NAMES: &[(&str, LoadBalancer)] = &[("ecmp", LoadBalancer::Ecmp)];

    /// Its name in scenario files.
    pub fn name(self) -> &'static str {
        LoadBalancer::NAMES
            .iter()
            .find(|(_, lb)| *lb == self)
            .map_or("?", |(n, _)| n)
    }
}

/// A load balancer's state for all switches (static dispatch: one match
/// per packet, no box).
pub(crate) enum Balancer {
    Ecmp(Ecmp),
}

impl Balancer {
    /// The state of `kind` for `switches` switches, seeded from the run's
    /// seed.
    pub fn new(kind: LoadBalancer, seed: u64, switches: u32) -> Balancer {
        match kind {
            LoadBalancer::Ecmp => Balancer::Ecmp(Ecmp::new(seed, switches)),
        }
    }

    /// The egress port switch `s` sends `hdr` to, among `hops` (two or
    /// more).
    #[inline(always)]
    pub fn pick(&mut self, s: u32, hdr: &Hdr, hops: &[u32]) -> u32 {
        match self {
            Balancer::Ecmp(e) => e.pick(s, hdr, hops),
        }
    }
}
