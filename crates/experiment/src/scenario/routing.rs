//! The `[routing]` section: which paths packets take. `paths =
//! "shortest"` (the default): equal-cost shortest paths, hop by hop, the
//! switch's load balancer choosing among them. `paths = "ksp"` with `k`:
//! FKSP, every flow pinned to one of the k shortest loop-free paths
//! between its ToRs (Yen's algorithm; fabric's `topo/pinned.rs`), or,
//! with `choice = "load_balancer"`, a path per packet chosen by the
//! source ToR's load balancer among the paths' first hops. Its TOML
//! types, checks and build step, which sets the paths on the built
//! network and names `routing.paths`, `routing.k` or `routing.choice`
//! when it cannot.

use super::check::{Check, ScenarioError};
use fabric::topo::fksp::{KspError, PathChoice};
use fabric::Network;
use serde::Deserialize;

/// `k` when `paths = "ksp"` does not give it (the Jellyfish paper's 8).
pub const DEFAULT_K: u32 = 8;

#[derive(Debug, Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct RoutingCfg {
    #[serde(default)]
    pub paths: PathsCfg,
    /// Paths per ToR pair under `ksp` (default [`DEFAULT_K`]).
    pub k: Option<u32>,
    /// Under `ksp`, who picks a packet's path: "flow" (FKSP, the
    /// default) or "load_balancer" (the source ToR's `[switch]
    /// load_balancer`, among the paths' first hops).
    pub choice: Option<ChoiceCfg>,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ChoiceCfg {
    Flow,
    LoadBalancer,
}

#[derive(Debug, Deserialize, Clone, Copy, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PathsCfg {
    #[default]
    Shortest,
    Ksp,
}

impl RoutingCfg {
    /// `k` and `choice` apply to `ksp` only; `k` is at least 1; a choice
    /// by the load balancer needs one that is not per-flow hashing
    /// (`balancer` is the `[switch] load_balancer`).
    pub fn validate(&self, c: Check, balancer: &str) -> Result<(), ScenarioError> {
        match (self.paths, self.choice) {
            (PathsCfg::Shortest, Some(_)) => {
                return Err(c.err(
                    "routing.choice",
                    "applies to paths = \"ksp\" only (paths = \"shortest\" leaves every \
                     hop to the load balancer)",
                ))
            }
            (PathsCfg::Ksp, Some(ChoiceCfg::LoadBalancer)) if balancer == "ecmp" => {
                return Err(c.err(
                    "routing.choice",
                    "\"load_balancer\" with [switch] load_balancer = \"ecmp\" would pin each \
                     flow by a hash, which is what choice = \"flow\" (FKSP) does; choose a \
                     per-packet or flowlet load balancer, or choice = \"flow\"",
                ))
            }
            _ => {}
        }
        match (self.paths, self.k) {
            (PathsCfg::Shortest, Some(_)) => Err(c.err(
                "routing.k",
                "applies to paths = \"ksp\" only (paths = \"shortest\" uses every \
                 equal-cost shortest path)",
            )),
            (PathsCfg::Ksp, Some(k)) => c.at_least("routing.k", k, 1).map(|_| ()),
            _ => Ok(()),
        }
    }

    /// Sets the paths on the built network.
    pub fn build(&self, net: &mut Network, c: Check) -> Result<(), ScenarioError> {
        if self.paths == PathsCfg::Shortest {
            return Ok(());
        }
        let choice = match self.choice {
            Some(ChoiceCfg::LoadBalancer) => PathChoice::LoadBalancer,
            _ => PathChoice::Flow,
        };
        net.route_by_ksp(self.k.unwrap_or(DEFAULT_K), choice)
            .map_err(|e| {
                let key = match e {
                    KspError::NoTorLayer { .. } => "routing.paths",
                    KspError::TooFewPaths { .. } | KspError::TooMany { .. } => "routing.k",
                };
                c.err(key, e.to_string())
            })
    }
}
