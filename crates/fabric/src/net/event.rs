//! The events of the simulation: [`Ev`], what happens at one node (an
//! arrival, a transmission end, a NIC's wake-up or timer, a switch's
//! deadline), with its tie
//! order and the node it acts on; and [`Global`], what acts on several
//! nodes and runs alone between windows. Plain data: touches nothing.

use crate::hash::mix64;
use crate::host::app::AppId;
use crate::net::window::Tie;
use engine::Time;

/// An event at one node (see `window.rs` for the order of events).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ev {
    /// The head of the port's wire FIFO reaches the partner.
    Arrive(u32),
    /// The earliest of the port's delayed packets (a reorder fault,
    /// `link/impair.rs`) reaches the partner.
    Late(u32),
    /// The port finished serialising its current frame.
    TxDone(u32),
    /// A host's NIC asked to be polled again (rate limiter).
    NicWake(u32),
    /// One of a host's timers is due (one event per timer): an
    /// application's (`host/app/`) if one is, else its NIC's (the NIC
    /// runs its earliest due timer). One kind for both: a kind more
    /// cost 0.15% more instructions (WS128), in every event's matches.
    Timer(u32),
    /// A deadline of the switch that owns the port (a load balancer's:
    /// ConWeave's flush of a held queue); each runs every deadline due.
    SwitchTimer(u32),
}

impl Tie for Ev {
    /// Distinct for distinct events at one node (a timer's host, like a
    /// wake-up's, is the node itself; two timer events of one host at one
    /// picosecond are alike, each running the NIC's next due timer, and so
    /// are two deadlines of one switch, and two late packets of one port,
    /// each landing the earliest), as
    /// `mix64` is a bijection; scrambled by the time, so no port wins every
    /// tie.
    #[inline]
    fn tie(&self, at: Time) -> u64 {
        let code = match *self {
            Ev::Arrive(p) => p as u64,
            Ev::TxDone(p) => 1 << 32 | p as u64,
            Ev::NicWake(_) => 2 << 32,
            Ev::Timer(_) => 3 << 32,
            Ev::SwitchTimer(_) => 4 << 32,
            Ev::Late(p) => 5 << 32 | p as u64,
        };
        mix64(code ^ at.wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }
}

/// The node an event acts on.
#[inline(always)]
pub(crate) fn node_of(port_node: &[u32], host_node: &[u32], ev: Ev) -> u32 {
    match ev {
        Ev::TxDone(p) | Ev::SwitchTimer(p) => port_node[p as usize],
        Ev::Arrive(p) | Ev::Late(p) => port_node[p as usize ^ 1],
        Ev::NicWake(h) | Ev::Timer(h) => host_node[h as usize],
    }
}

/// Events that touch more than one node (an application's start or
/// fabric timer, a flow's start among them, may create QPs at two hosts;
/// a fault acts on both ends of a link; a sample reads the whole fabric):
/// each runs alone, between two windows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Global {
    AppStart(AppId),
    /// An application's fabric timer, with its token (the flows: a flow's
    /// start, by id).
    AppTimer(AppId, u64),
    Fault(u32),
    /// Random failure schedule `i` fails its next set (`link/random_failures.rs`).
    Failures(u32),
    Sample,
}
