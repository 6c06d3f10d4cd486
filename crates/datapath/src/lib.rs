//! The real datapath: the transport's sans-IO NIC driven over UDP
//! sockets, so go-back-N, IRN and MP-RDMA move real bytes between
//! processes as RoCEv2 packets (`rdmalab net serve` / `net run`).
//!
//! Modules, bottom up (a module uses only those above it):
//! - [`region`]: registered memory backed by a real buffer, every access
//!   bounds-checked; the test pattern.
//! - [`codec`]: a packet as a UDP datagram and back (the frame of
//!   `transport::frame` with the sockets' addresses; checksums and ICRC
//!   checked on receipt).
//! - [`impair`]: loss, duplication, reordering and delay of received
//!   datagrams, for tests.
//! - [`socket`]: the UDP sockets (quinn-udp: GSO, GRO, recvmmsg, ECN).
//! - [`pcap`]: `--pcap`, the frames sent and received.
//! - [`port`]: what a command asks of its endpoint's port.
//! - [`window`]: which parts of the region each peer may reach.
//! - [`length`]: WRITE and SEND packets against their message's
//!   announced length; the NAK that refuses one.
//! - [`endpoint`]: a NIC, its region and sockets on the wall clock,
//!   through `transport::driver`; hostile datagrams counted by reason.
//! - [`session`]: the job both ends agree on and the control messages
//!   (JSON lines over TCP) that carry it.
//! - [`report`]: what a transfer prints.
//! - [`client`], [`server`]: the two commands.

pub mod client;
pub mod codec;
pub mod endpoint;
pub mod impair;
pub mod length;
pub mod pcap;
pub mod port;
pub mod region;
pub mod report;
pub mod server;
pub mod session;
pub mod socket;
pub mod window;

pub use client::{run, RunOptions};
pub use report::Report;
pub use server::{ServeOptions, Server};
pub use session::{irn_rtos, CcName, Job, VerbName};
pub use transport::EngineKind;
