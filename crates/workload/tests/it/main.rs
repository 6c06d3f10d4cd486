//! The workload crate's integration tests, one test executable (`it`) so
//! the workspace links one binary here instead of one per file: each file
//! beside this one is a module. To add tests, write `tests/it/NAME.rs`
//! (starting with a `//!` comment), add `mod NAME;` below. A helper module
//! shared by several goes here too, used as `crate::NAME`. Modules run on
//! parallel threads of one process: give temporary files, sockets and ports
//! names of their own, and never set environment variables or the current
//! directory. Run one module with `cargo test --release -p workload --test
//! it NAME::`.

mod bench_files;
mod builtin;
mod cdf;
mod collective;
mod error;
mod fixed;
mod flow;
mod generate;
mod generate_stats;
mod ns3_config;
mod ns3_flows;
mod ns3_topology;
mod ns3_units;
mod pattern;
mod simai;
