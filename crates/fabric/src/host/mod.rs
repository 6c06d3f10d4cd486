//! Hosts: each wraps a transport NIC (`driver.rs` drives it), and the
//! applications that give the NICs work (`app/`: the interface, and the
//! flows of `flows.rs`), and the QP-context cache the simulator models
//! around a NIC (`qp_cache.rs`; `cached.rs` runs the drive loop through
//! it). This file holds a host's own state; it touches nothing else.

pub mod app;
mod cached;
mod driver;
pub mod flows;
pub mod qp_cache;

use app::{AppTimers, QpOwner};
use qp_cache::QpCache;

use transport::driver::Wakeups;
use transport::Nic;

/// The hosts and their applications.
pub(crate) struct Hosts {
    pub nodes: Vec<Host>,
    /// The flow lists (the application `AppId::FLOWS`) and the other
    /// applications (`app/`).
    pub flows: flows::Flows,
    pub apps: app::Apps,
    /// A host's send or receive has work out of line (a pcap trace, HPCC's
    /// telemetry echo, the QP-context cache): the one flag the hosts' send,
    /// receive and timer paths test (`driver.rs`).
    pub host_hooks: bool,
    /// The run's seed (the applications' source ports, `app::sport_of`).
    pub seed: u64,
}

/// One host: its node, its one port, its NIC.
pub(crate) struct Host {
    pub node: u32,
    pub port: u32,
    pub nic: Nic,
    /// The NicWake and Timer events asked for and not yet run.
    pub wakeups: Wakeups,
    /// The application and tag of each QP, by QP number (a QP flows
    /// share: its first flow's id).
    pub qp_owner: Vec<QpOwner>,
    /// The applications' timers at this host (run by its `Ev::Timer`s).
    pub app_timers: AppTimers,
    /// The NIC's QP-context cache, when one is modelled
    /// (`FabricConfig::qp_cache`).
    pub qp_cache: Option<Box<QpCache>>,
}
