//! The simulation engine: integer picosecond time, a deterministic event
//! queue, seeded per-component random streams, statistics primitives, and a
//! cache hint for hot loops.
//!
//! This crate knows nothing of networks; every other crate may use it.

pub mod input;
pub mod prefetch;
pub mod queue;
pub mod ring;
pub mod rng;
pub mod stats;
pub mod time;

pub use queue::EventQueue;
pub use rng::{stream_seed, Rng, StreamKind};
pub use time::Time;
