//! Workloads for rdmalab: flow-size distributions (CDFs), open-loop arrival
//! processes and traffic patterns that turn them into flows, and import of
//! the HPCC ns-3 topology, flow and configuration files; and the
//! collective operations as step plans (`collective`), and SimAI's
//! workload files read into such plans (`simai`).
//!
//! Everything here produces plain data (`FlowSpec`s, an `Ns3Topology`); the
//! caller decides what a flow means (which verb, which transport).

pub mod builtin;
pub mod cdf;
pub mod collective;
pub mod error;
pub mod fixed;
pub mod flow;
pub mod generate;
pub mod ns3;
pub mod pattern;
pub mod simai;

pub use cdf::Cdf;
pub use error::WorkloadError;
pub use fixed::{all_to_all_flows, incast_flows, permutation_flows};
pub use flow::{merge, FlowSpec};
pub use generate::{poisson_flows, PoissonConfig, Stop};
pub use ns3::{
    parse_config, parse_flows, parse_topology, Ns3Config, Ns3Entry, Ns3Link, Ns3Topology,
};
pub use pattern::Pattern;
