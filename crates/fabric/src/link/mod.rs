//! Links: ports and their queues (`port.rs`), what crosses a wire
//! (`frame.rs`), sending (`transmit.rs`: serialisation, random loss, a
//! down link), arriving (`arrive.rs`) and faults (`faults.rs`; what a
//! fault is, plain data, is here). Link `i` owns ports `2i` (at its `a`
//! end) and `2i + 1` (at `b`), so a port's partner is `port ^ 1`.

mod arrive;
mod faults;
pub mod frame;
pub mod port;
mod transmit;

use crate::config::EcnSetting;
use engine::Time;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FaultAction {
    Down,
    Up,
    /// Run the link at this rate from now on (both directions).
    Rate(u64),
    /// Random loss probability of the chosen direction(s).
    Loss(f64),
    /// ECN marking of the chosen direction(s)' egress port from now on.
    Ecn(EcnSetting),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fault {
    pub at: Time,
    /// Index of the link in the topology.
    pub link: u32,
    /// None: both directions; Some(true): a -> b; Some(false): b -> a.
    pub a_to_b: Option<bool>,
    pub action: FaultAction,
}
