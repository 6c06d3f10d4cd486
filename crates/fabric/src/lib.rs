//! The simulated RDMA fabric: topologies, links with faults, switches with
//! a shared buffer, PFC, ECN and load balancing, and hosts that wrap the
//! sans-IO transport NIC.
//!
//! One [`Network`] holds every component in `Vec`s (`net/`); each
//! component's behaviour lives in its own folder: `switch/`, `link/`,
//! `host/`, `observe/`, `topo/`. This crate drives `transport` through its
//! public API only and never reads a NIC's private state; experiments
//! drive this crate through what is re-exported here.

pub mod config;
mod hash;
pub mod host;
pub mod link;
mod net;
pub mod observe;
pub mod switch;
pub mod topo;

pub use config::{EcnSetting, FabricConfig, QpSharing};

/// The largest frame (payload and headers) the fabric carries, in bytes.
pub const MAX_FRAME_BYTES: u32 = net::arena::Hdr::MAX_WIRE;
pub use host::app::{App, AppId, HostCtx, QpSpec, Scope};
pub use host::flows::{Flow, FlowResult};
pub use host::qp_cache::{QpCache, QpCacheConfig};
pub use link::port::{Port, PortStats};
pub use link::{Fault, FaultAction, RandomFailures};
pub use net::{Network, RunState, SetupError};
pub use observe::counters::{Counters, DropReason};
pub use observe::footprint::Footprint;
pub use observe::pcap::{self, PcapSpec};
pub use observe::pfc_log::PfcEvent;
pub use observe::{SampleSpec, MAX_SAMPLED_VALUES, ORDERING_SERIES, RCM_SERIES};
pub use switch::lb::{
    CongaParams, ConweaveParams, ConweaveStats, DrillParams, EcmpHash, LetflowParams, LoadBalancer,
};
pub use switch::mmu::MmuConfig;
pub use switch::queues::voq::SwitchModel;
pub use switch::rcm::{Point, RcmParams, RcmStats};
pub use switch::{Deflection, Scheduling, SrptDequeue, Trimming};
pub use topo::topology::{LinkSpec, NodeKind, NodeSpec, Topology};
