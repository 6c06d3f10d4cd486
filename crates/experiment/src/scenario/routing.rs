//! The `[routing]` section: which paths packets take. `paths =
//! "shortest"` (the default): equal-cost shortest paths, hop by hop, the
//! switch's load balancer choosing among them. `paths = "ksp"` with `k`:
//! FKSP, every flow pinned to one of the k shortest loop-free paths
//! between its ToRs (Yen's algorithm; fabric's `topo/pinned.rs`). Its
//! TOML types, checks and build step, which sets the paths on the built
//! network and names `routing.paths` or `routing.k` when it cannot.

use super::check::{Check, ScenarioError};
use fabric::topo::fksp::KspError;
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
}

#[derive(Debug, Deserialize, Clone, Copy, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PathsCfg {
    #[default]
    Shortest,
    Ksp,
}

impl RoutingCfg {
    /// `k` applies to `ksp` only, and is at least 1.
    pub fn validate(&self, c: Check) -> Result<(), ScenarioError> {
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
        net.route_by_ksp(self.k.unwrap_or(DEFAULT_K)).map_err(|e| {
            let key = match e {
                KspError::NoTorLayer { .. } => "routing.paths",
                KspError::TooFewPaths { .. } | KspError::TooMany { .. } => "routing.k",
            };
            c.err(key, e.to_string())
        })
    }
}
