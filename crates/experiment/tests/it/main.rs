//! The experiment crate's integration tests, one test executable (`it`) so
//! the workspace links one binary here instead of one per file: each file
//! beside this one is a module. To add tests, write `tests/it/NAME.rs`
//! (starting with a `//!` comment), add `mod NAME;` below, and reach the
//! shared helpers as `crate::common` (not with a `mod` line of its own).
//! Modules run on parallel threads of one process: give temporary files,
//! sockets and ports names of their own, and never set environment
//! variables or the current directory. Run one module with `cargo test
//! --release -p experiment --test it NAME::`.

mod common;

mod bad_input;
mod bench;
mod cc_fabric;
mod collectives;
mod compare_ns3;
mod dcqcn_fabric;
mod deflection;
mod load_balancers;
mod lossless_fabric;
mod measured;
mod messages;
mod mixed_transports;
mod mprdma_fluid;
mod mprdma_sender;
mod no_effect;
mod ordering;
mod outputs;
mod pcap;
mod pfc_record;
mod port_selectors;
mod random_failures;
mod rcm;
mod report_pages;
mod sampling_window;
mod scenario_keys;
mod setup_scale;
mod srpt;
mod svg;
mod sweep;
mod threads;
mod topology_routing;
mod traces;
mod uet_fabric;
mod windows;
mod work_conserving;
