//! The `[run]` section: how the simulation runs, not what it simulates
//! (so nothing here changes an output): the threads one run uses.

use crate::scenario::check::Check;
use crate::scenario::ScenarioError;
use serde::Deserialize;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunCfg {
    /// Threads the run is split over (`--threads` overrides it): the
    /// fabric's nodes in as many shards, each run by its own thread,
    /// with byte-identical outputs for any number (docs/scale_out.md).
    pub threads: Option<u32>,
}

impl RunCfg {
    pub fn validate(&self, c: Check) -> Result<(), ScenarioError> {
        check_threads(self.threads, c)
    }
}

/// A thread count given in `[run] threads` or `--threads`: at least 1.
pub fn check_threads(threads: Option<u32>, c: Check) -> Result<(), ScenarioError> {
    match threads {
        Some(0) => Err(c.err("run.threads", "0 threads: at least 1 is needed")),
        _ => Ok(()),
    }
}
