//! The rdmalab package's (crates/cli) integration tests but the digests,
//! one test executable (`it`) so the workspace links one binary here
//! instead of one per file: each file beside this one is a module. To add
//! tests, write `tests/it/NAME.rs` (starting with a `//!` comment), add
//! `mod NAME;` below, and reach the shared helpers as `crate::binary`,
//! `crate::scripts` (not with a `mod` line of its own). Modules run on
//! parallel threads of one process: give temporary files, sockets and ports
//! names of their own, and never set environment variables or the current
//! directory. Run one module with `cargo test --release -p rdmalab --test
//! it NAME::`. `tests/digests.rs` stays an executable of its own: it is the
//! gate every change runs (`cargo test --release -p rdmalab --test
//! digests`).

mod binary;
mod scripts;

mod cli;
mod compare;
mod doc_tables;
mod eunomia_memory_script;
mod eunomia_script;
mod eunomia_section5_script;
mod fuzz;
mod net;
mod ns3_micro;
mod out_folders;
mod override_errors;
mod readme;
mod scale_out;
mod source_shape;
mod summary_values;
mod traps;
mod visor_daemon;
mod visor_fig5_script;
mod visor_hostile;
