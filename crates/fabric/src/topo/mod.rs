//! Topologies (`topology.rs`: descriptions and builders), routing tables
//! (`routing.rs`) and paths through the built network with their base RTT
//! and ideal FCT (`paths.rs`).

mod paths;
pub mod routing;
pub mod topology;
