//! Topologies (`topology.rs`: descriptions and builders; `jellyfish.rs`:
//! the random regular graph), routing tables (`routing.rs`: equal-cost
//! shortest paths; `pinned.rs`: FKSP's per-flow paths, found by Yen's
//! algorithm in `ksp.rs` and set on a network by `fksp.rs`) and paths
//! through the built network with their base RTT and ideal FCT
//! (`paths.rs`).

pub mod fksp;
pub mod jellyfish;
pub mod ksp;
pub(crate) mod paths;
mod pinned;
pub mod routing;
pub mod topology;
