//! Import of the HPCC ns-3 simulator's input files (topology, flows,
//! key-value configuration), so rdmalab can run exactly the work that ns-3
//! ran (bench/README.md). Errors name the file and the line.

mod config;
mod flows;
mod text;
mod topology;
pub mod units;

pub use config::{parse_config, Ns3Config, Ns3Entry};
pub use flows::{parse_flow_dports, parse_flows};
pub use topology::{parse_topology, Ns3Link, Ns3Topology};
