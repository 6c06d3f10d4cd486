//! The sans-IO RNIC: RC queue pairs with WRITE, READ and SEND/RECV,
//! segmentation, PSNs, ACK/NACK with go-back-N, IRN or MP-RDMA, a
//! retransmission timeout, per-QP rate limiting and congestion control,
//! and round-robin service across QPs.
//!
//! Nothing here knows about clocks, sockets or the simulator: the caller
//! feeds in "work request posted", "packet arrived" and "timer due" with
//! the current time, and pulls out packets to send, completions and the
//! time of its next timer (`poll_timeout` / `handle_timeout`, the shape of
//! quinn-proto). The simulator's hosts and the real UDP datapath both
//! drive this same code.
//!
//! Layers, bottom up (a file uses only the layers below it):
//! - [`psn`], [`int`], [`packet`], [`memory`], `cc::hooks` (the
//!   interface every congestion control implements), [`dcqcn`], [`hpcc`],
//!   [`timely`], [`dctcp`], [`cc`] (their dispatch), [`reorder`]:
//!   sequence numbers (32-bit serial in the NIC, 24 bits on the wire),
//!   packets, DMA, congestion control, reordering counters; plain data and
//!   their own state machines.
//! - [`api`]: the types of the NIC's API (QpId, QpConfig, InitialPsns,
//!   WorkRequest, Completion, Event, Transmit, NicConfig, NicStats,
//!   SendOptions) and the engines' configuration files they hold
//!   (`engine::config` with the engines' capabilities, `engine::names`
//!   with the one table of engine names, and each engine's `config`).
//! - `rc`: what every reliable-connection engine shares (segmentation,
//!   the one data-packet builder, WQE types, the handler context, control
//!   packets, the packet handling of requester/responder engines).
//! - [`engine`]: one folder per engine (`gbn`, [`irn`], [`mprdma`], [`uet`]), the
//!   [`Engine`] choice and the one dispatch over the engines' runtime
//!   state.
//! - `sched` (ready ring and rate-limiter heap), `timers` (the NIC's one
//!   timer channel), `qp` (one queue pair).
//! - [`order`]: ordering layers between demultiplexing and a QP's engine
//!   (the ideal reorder buffer; the choice, `order::config`, is plain data
//!   the API holds).
//! - [`frame`]: a [`packet::Packet`] as RoCEv2 bytes and back (the header
//!   formats are the `wire` crate's); uses only `packet` and `order`'s
//!   flag bits.
//! - [`uet_frame`]: the UET engine's packets as Ultra Ethernet (PDS and
//!   SES) bytes and back; uses `packet`, `frame`'s decoded form and the
//!   engine's trimmed bit.
//! - [`nic`]: the NIC.
//! - [`driver`]: the one drive loop of a NIC, over an environment ([`driver::Io`]):
//!   the simulator's hosts, the test benches, the UDP datapath
//!   (`datapath::endpoint`).

pub mod api;
pub mod cc;
pub mod dcqcn;
pub mod dctcp;
pub mod driver;
pub mod engine;
pub mod frame;
mod held;
pub mod hpcc;
pub mod int;
pub mod memory;
pub mod nic;
pub mod order;
pub mod packet;
pub mod psn;
mod qp;
mod rc;
pub mod reorder;
mod sched;
pub mod timely;
mod timers;
pub mod uet_frame;

pub use api::{
    Completion, CompletionSide, ConfigError, Event, InitialPsns, NicConfig, NicStats, QpConfig,
    QpError, QpId, RtoLow, SendOptions, Transmit, WorkRequest, WrError,
};
pub use cc::{Cc, CcConfig, CcState};
pub use dcqcn::{Dcqcn, DcqcnParams, Notification};
pub use dctcp::{Dctcp, DctcpParams};
pub use engine::irn::{self, IrnConfig};
pub use engine::mprdma::{self, MpRdmaConfig, SenderMode, SyncMode};
pub use engine::uet::{self, EvPolicy, UetCc, UetConfig, UetMode};
pub use engine::{Engine, EngineKind, StateBytes};
pub use hpcc::{Hpcc, HpccParams};
pub use int::{IntHop, IntStack};
pub use memory::Memory;
pub use nic::Nic;
pub use order::{
    EunomiaConfig, LastPacket, OrderMemory, OrderingError, OrderingKind, StaticBitmapConfig,
};
pub use packet::{MpHeader, Packet, PacketKind, Verb, ATOMIC_BYTES};
pub use psn::MAX_PSN_SPAN;
pub use qp::check_work_request;
pub use reorder::{OodHistogram, QpReorder};
pub use timely::{Timely, TimelyParams};
