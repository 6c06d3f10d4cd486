//! RDMAvisor (../shared/papers/rdmavisor.txt): RDMA as a service. A
//! daemon per host (`rdmavisord`) serves local applications through a
//! socket-like API and multiplexes their logical connections onto one
//! shared set of QPs per remote host, over the real datapath.
//!
//! Modules, bottom up:
//! - [`proto`]: the application-daemon frames.
//! - [`fifo`]: a byte FIFO (frames read; output waiting for a ring or a
//!   link's socket).
//! - [`ring`]: the shared-memory rings that carry them.
//! - [`slab`]: the daemon's tables.
//! - [`cred`]: a Unix socket's peer credentials.
//! - [`link`]: what two daemons share (control messages, QPs, slots).
//! - [`notice`]: the one-sided verbs' notices, as SENDs carry them.
//! - [`daemon`]: the daemon's event loop.
//! - [`client`]: the library applications link.
//! - [`process`]: a daemon as a child process (benchmark, tests).

pub mod client;
pub mod cred;
pub mod daemon;
pub mod fifo;
pub mod link;
pub mod notice;
pub mod process;
pub mod proto;
pub mod ring;
pub mod slab;

pub use client::{Error, Event, Visor};
pub use proto::{Flags, Sharing};
