//! The transport crate's integration tests, one test executable (`it`) so
//! the workspace links one binary here instead of one per file: each file
//! beside this one is a module. To add tests, write `tests/it/NAME.rs`
//! (starting with a `//!` comment), add `mod NAME;` below, and reach the
//! shared helpers as `crate::common`, `crate::frame` (not with a `mod` line
//! of its own). Modules run on parallel threads of one process: give
//! temporary files, sockets and ports names of their own, and never set
//! environment variables or the current directory. Run one module with
//! `cargo test --release -p transport --test it NAME::`.

mod common;
mod frame;

mod dcqcn;
mod destroy;
mod forged_first;
mod frame_fuzz;
mod frame_roundtrip;
mod frame_vectors;
mod hostile;
mod irn;
mod last_packet;
mod mprdma_property;
mod mprdma_sync;
mod ordering;
mod prop_placement;
mod psn_wrap;
mod rc;
mod real_nic;
mod remaining;
mod reorder;
mod uet_frame;
