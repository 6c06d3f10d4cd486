//! The wire crate's integration tests, one test executable (`it`) so the
//! workspace links one binary here instead of one per file: each file
//! beside this one is a module. To add tests, write `tests/it/NAME.rs`
//! (starting with a `//!` comment), add `mod NAME;` below. A helper module
//! shared by several goes here too, used as `crate::NAME`. Modules run on
//! parallel threads of one process: give temporary files, sockets and ports
//! names of their own, and never set environment variables or the current
//! directory. Run one module with `cargo test --release -p wire --test it
//! NAME::`.

mod uet;
mod vectors;
