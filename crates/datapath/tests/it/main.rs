//! The datapath crate's integration tests, one test executable (`it`) so
//! the workspace links one binary here instead of one per file: each file
//! beside this one is a module. To add tests, write `tests/it/NAME.rs`
//! (starting with a `//!` comment), add `mod NAME;` below, and reach the
//! shared helpers as `crate::common` (not with a `mod` line of its own).
//! Modules run on parallel threads of one process: give temporary files,
//! sockets and ports names of their own, and never set environment
//! variables or the current directory. Run one module with `cargo test
//! --release -p datapath --test it NAME::`.

mod common;

mod codec;
mod control;
mod hostile;
mod impair;
mod region;
mod session;
mod transfer;
mod uet;
mod window;
