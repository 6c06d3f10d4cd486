//! Hosts: each wraps a transport NIC (`driver.rs` drives it), and the
//! applications that give the NICs work (`app/`: the interface, and the
//! flows of `flows.rs`). This file holds a host's own state; it touches
//! nothing else.

pub mod app;
mod driver;
pub mod flows;

use app::{AppTimers, QpOwner};

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
    /// telemetry echo): the one flag the hosts' send and receive paths
    /// test (`driver.rs`).
    pub host_hooks: bool,
}

/// What a host's driver and applications borrow while a host's events
/// run: the hosts, the links (its port and the wire it puts frames on),
/// the event core, the capture and the configuration; never a switch.
pub(crate) struct AtHost<'a> {
    pub hosts: &'a mut Hosts,
    pub links: &'a mut crate::link::Links,
    pub core: &'a mut crate::net::core::Core,
    pub observe: &'a mut crate::observe::Observe,
    pub cfg: &'a crate::config::FabricConfig,
}

impl AtHost<'_> {
    /// The same borrows, for a call that hands them on (an application's
    /// context).
    #[inline(always)]
    pub(crate) fn reborrow(&mut self) -> AtHost<'_> {
        AtHost {
            hosts: self.hosts,
            links: self.links,
            core: self.core,
            observe: self.observe,
            cfg: self.cfg,
        }
    }
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
}
