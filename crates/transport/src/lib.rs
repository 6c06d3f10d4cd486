//! The sans-IO RNIC: RC queue pairs with WRITE, READ and SEND/RECV,
//! segmentation, PSNs, ACK/NACK with go-back-N, a retransmission timeout,
//! per-QP rate limiting and congestion control, and round-robin service
//! across QPs.
//!
//! Nothing here knows about clocks, sockets or the simulator: the caller
//! feeds in "work request posted", "packet arrived" and "timer fired" with
//! the current time, and pulls out packets to send, timers to arm and
//! completions (the shape of quinn-proto). The simulator's hosts and the
//! real UDP datapath both drive this same code.

//!
//! Modules: [`nic`] (public API, QP table, dispatch, scheduler loop),
//! `qp` (one queue pair), `requester` and `responder` (the two halves of
//! RC with go-back-N), [`irn`] (IRN: selective repeat, BDP flow control,
//! out-of-order placement), [`mprdma`] (MP-RDMA: multipath sender, 2-bit
//! bitmap receiver), [`reliability`] (the per-QP choice between them and
//! their NIC state), [`memory`] (DMA for callers that move real bytes),
//! `sched` (ready ring and rate-limiter heap), [`cc`] (congestion control
//! selection) and [`dcqcn`] (DCQCN reaction point, presets).

pub mod cc;
pub mod dcqcn;
pub mod irn;
pub mod memory;
pub mod mprdma;
pub mod nic;
pub mod packet;
mod qp;
pub mod reliability;
mod requester;
mod responder;
mod sched;

pub use cc::{Cc, CcConfig};
pub use dcqcn::{Dcqcn, DcqcnParams, Notification};
pub use irn::IrnConfig;
pub use memory::Memory;
pub use mprdma::{MpRdmaConfig, SyncMode};
pub use nic::{
    Completion, CompletionSide, Event, Nic, NicConfig, NicStats, QpConfig, QpId, SendOptions,
    Transmit, WorkRequest,
};
pub use packet::{MpHeader, Packet, PacketKind, Verb, ATOMIC_BYTES};
pub use reliability::{Reliability, StateBytes};
