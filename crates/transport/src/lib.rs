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

mod nic;
pub mod packet;

pub use nic::{
    Completion, CompletionSide, Event, Nic, NicConfig, NicStats, QpConfig, QpId, Transmit,
    WorkRequest,
};
pub use packet::{Packet, PacketKind, Verb};
