//! The event core a node runs in: the calendar and the global events, the
//! window being run (its events by node, its end, the node running and
//! that node's own queue), simulated time, the node of each port and
//! host, the packets in flight (the arena) and the counters. Every
//! node's pipeline borrows it; what it holds belongs to no one node.

use crate::net::arena::Arena;
use crate::net::calendar::Calendar;
use crate::net::event::{node_of, Ev, Global};
use crate::net::window::{ByNode, Globals, NodeQueue};
use crate::net::NodeRole;
use crate::observe::counters::Counters;
use engine::Time;

pub(crate) struct Core {
    pub q: Calendar<Ev>,
    /// Events that act on more than one node.
    pub globals: Globals<Global>,
    /// The latest time handled (see `Network::now`).
    pub now: Time,
    /// The shortest link delay (at least 1 ps): what one node does at time
    /// t reaches another no earlier than t plus this.
    pub lookahead: Time,
    /// The window being run: its events by node, its end (exclusive; 0
    /// between windows), the node running and that node's events
    /// scheduled during the window.
    pub window: ByNode<Ev>,
    pub window_end: Time,
    pub window_node: u32,
    pub local: NodeQueue<Ev>,
    /// Whether a calm switch may defer its ports' transmission ends (see
    /// `Network::set_deferred_ends`).
    pub defer_ends: bool,
    /// The running node is a switch whose MMU is calm this window: its
    /// ports' transmission ends are deferred (`TxEnd::Deferred`), not
    /// events.
    pub calm: bool,
    /// Deferred ends run so far, and the latest one's time.
    pub deferred_ends: u64,
    pub deferred_latest: Time,
    /// What each node is, and the node of each port and of each host, for
    /// grouping events.
    pub roles: Vec<NodeRole>,
    pub port_node: Vec<u32>,
    pub host_node: Vec<u32>,
    /// Each host's port.
    pub host_port: Vec<u32>,
    pub arena: Arena,
    pub counters: Counters,
    /// This copy's place in a sharded run (`shard.rs`); None on one thread.
    pub shard: Option<Box<crate::net::shard::Shard>>,
}

impl Core {
    /// Notes what node `node`'s share of the window did to the packets
    /// alive (sharded: `net/parallel.rs` pieces the peak together).
    #[cold]
    #[inline(never)]
    pub(crate) fn note_segment(&mut self, node: u32) {
        let (delta, rise) = self.arena.end_segment();
        let s = self.shard.as_mut().expect("sharded");
        s.segments.push((node, delta, rise));
    }

    /// Whether this copy runs node `v` (always, on one thread).
    #[inline]
    pub(crate) fn owns(&self, v: u32) -> bool {
        self.shard
            .as_ref()
            .is_none_or(|s| s.owner[v as usize] == s.id)
    }

    /// Schedules an event of the running node (any node between windows):
    /// into the node's own queue if it is due in the window, else into the
    /// calendar.
    #[inline(always)]
    pub(crate) fn schedule(&mut self, at: Time, ev: Ev) {
        if at < self.window_end {
            debug_assert_eq!(
                node_of(&self.port_node, &self.host_node, ev),
                self.window_node,
                "{ev:?} at {at}"
            );
            self.local.push(at, ev);
        } else {
            self.q.schedule(at, ev);
        }
    }
}
