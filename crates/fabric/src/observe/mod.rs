//! What a run reports and how it is checked: counters (`counters.rs`),
//! time series (`sampling.rs`), invariants (`checks.rs`) and the
//! simulator's memory footprint (`footprint.rs`). Reads the fabric; the
//! counters are written by the components that count.

mod checks;
pub mod counters;
pub mod footprint;
pub mod sampling;
