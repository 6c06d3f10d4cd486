//! The simulated RDMA fabric: topologies, links with faults, switches with
//! a shared buffer, PFC and ECN, ECMP routing, and hosts that wrap the
//! sans-IO transport NIC.
//!
//! This crate drives `transport` through its public API only and never
//! reads a NIC's private state; experiments drive this crate.

mod arena;
mod calendar;
pub mod config;
pub mod counters;
pub mod flows;
pub mod mmu;
mod network;
pub mod port;
pub mod routing;
pub mod topology;
mod window;

pub use config::{EcnSetting, FabricConfig};

/// The largest frame (payload and headers) the fabric carries, in bytes.
pub const MAX_FRAME_BYTES: u32 = arena::Hdr::MAX_WIRE;
pub use counters::{Counters, DropReason};
pub use flows::{Flow, FlowResult};
pub use network::{Fault, FaultAction, Memory, Network, RunState, SampleSpec};
pub use topology::{LinkSpec, NodeKind, NodeSpec, Topology};
