//! The fuzzing harness (issue 39): each target feeds generated and
//! mutated inputs to a part that reads hostile input and checks that it
//! refuses them by name or handles them, never panicking, hanging or
//! giving up service. The suite runs a short, fixed-seed pass of each;
//! `scripts/fuzz.sh` runs a long one (docs/fuzzing.md: what was tried
//! and found).

mod mutate;
mod net;
mod scenario;
mod visor;
