//! Hosts: each wraps a transport NIC (`driver.rs` drives it), and the
//! applications that give the NICs work (`app/`: the interface, and the
//! flows of `flows.rs`), and the QP-context cache the simulator models
//! around a NIC (`qp_cache.rs`). This file holds a host's own state and the
//! hosts' table of HPCC telemetry awaiting its echo (`int_echo.rs` uses
//! it); it touches nothing else.

pub mod app;
mod driver;
pub mod flows;
mod int_echo;
pub mod qp_cache;

use std::collections::VecDeque;

use app::{AppTimers, QpOwner};
use qp_cache::QpCache;

use engine::Time;
use transport::driver::Wakeups;
use transport::{IntStack, Nic};

/// The records of data packets delivered and not yet answered, by
/// receiving host, then its QP number (dense, as `Host::qp_owner`'s), in
/// arrival order with their send times (`int_echo.rs`); grown on first
/// use, so a run without HPCC holds nothing.
#[derive(Default)]
pub(crate) struct IntEcho {
    pub waiting: Vec<Vec<VecDeque<(Time, IntStack)>>>,
}

impl IntEcho {
    /// The queue of host `h`'s QP `qp`.
    pub fn queue(&mut self, h: u32, qp: u32) -> &mut VecDeque<(Time, IntStack)> {
        let (h, qp) = (h as usize, qp as usize);
        if self.waiting.len() <= h {
            self.waiting.resize_with(h + 1, Vec::new);
        }
        let host = &mut self.waiting[h];
        if host.len() <= qp {
            host.resize_with(qp + 1, VecDeque::new);
        }
        &mut host[qp]
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
    /// The NIC's QP-context cache, when one is modelled
    /// (`FabricConfig::qp_cache`).
    pub qp_cache: Option<Box<QpCache>>,
}
