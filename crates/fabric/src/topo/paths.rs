//! Paths through the built network: the routing tables' (re)build from
//! the ports' state (FKSP's pinned paths kept, their liveness refreshed),
//! and a pair of hosts' first equal-cost shortest path with its base RTT
//! and the ideal FCT of a flow along it (under FKSP too: the ideal is the
//! shortest path). Touches the routes.

use crate::net::{Network, NodeRole};
use crate::topo::routing::{Adjacency, Routes};
use engine::time::serialization;
use engine::Time;

impl Network {
    pub(crate) fn rebuild_routes(&mut self) {
        let mut adj: Vec<Vec<(u32, u32, bool)>> = vec![Vec::new(); self.core.roles.len()];
        for (id, p) in self.links.ports.iter().enumerate() {
            let peer = self.links.ports[id ^ 1].node;
            adj[p.node as usize].push((id as u32, peer, p.up));
        }
        let switch_index: Vec<Option<u32>> = self
            .core
            .roles
            .iter()
            .map(|r| match r {
                NodeRole::Switch(s) => Some(*s),
                NodeRole::Host(_) => None,
            })
            .collect();
        let host_nodes: Vec<u32> = self.hosts.nodes.iter().map(|h| h.node).collect();
        let (pinned, _) = std::mem::take(&mut self.sw.routes).unpin();
        self.sw.routes = Routes::build(&Adjacency {
            ports: &adj,
            switch_index: &switch_index,
            host_nodes: &host_nodes,
        });
        // FKSP keeps its paths; those crossing a port that is down now
        // leave their flows to the shortest paths (see `pinned.rs`).
        if let Some(mut pinned) = pinned {
            let ports = &self.links.ports;
            pinned.refresh(|p| ports[p as usize].up);
            self.sw.routes = std::mem::take(&mut self.sw.routes).pin(pinned);
        }
    }

    /// The path properties of `src` -> `dst` along the first equal-cost
    /// path: (one-way propagation delay, one MTU serialised at every hop,
    /// a packet of `first` wire bytes serialised at every hop, bottleneck
    /// rate).
    pub(crate) fn path(&self, src: u32, dst: u32, first: u64) -> (Time, Time, Time, u64) {
        let mtu = self.cfg.nic.mtu as u64;
        let (mut delay, mut per_hop, mut first_hops, mut bottleneck) = (0, 0, 0, u64::MAX);
        let mut port = self.hosts.nodes[src as usize].port;
        for _ in 0..self.core.roles.len() {
            let p = &self.links.ports[port as usize];
            delay += p.delay;
            per_hop += serialization(mtu, p.rate_bps());
            first_hops += serialization(first, p.rate_bps());
            bottleneck = bottleneck.min(p.rate_bps());
            let next = self.links.ports[port as usize ^ 1].node;
            match self.core.roles[next as usize] {
                NodeRole::Host(_) => break,
                NodeRole::Switch(s) => match self.sw.routes.next_hops(s, dst).first() {
                    Some(&p) => port = p,
                    None => break,
                },
            }
        }
        (delay, per_hop, first_hops, bottleneck)
    }

    /// Base RTT between two hosts as HPCC ns-3 defines it: twice the path
    /// delay plus one MTU serialised per hop.
    pub fn base_rtt(&self, src: u32, dst: u32) -> Time {
        let (delay, per_hop, _, _) = self.path(src, dst, 0);
        2 * delay + per_hop
    }

    /// The ideal FCT of `bytes` from `src` to `dst` (see `FlowResult::ideal`
    /// and `FlowResult::ideal_exact`): HPCC ns-3's, and what a write takes
    /// alone on the idle path: its first packet (payload and headers)
    /// stored and forwarded at every hop, the rest of its wire bytes at the
    /// bottleneck behind it, and the ACK's way back.
    pub fn ideal_fct(&self, src: u32, dst: u32, bytes: u64) -> (Time, Time) {
        let nic = &self.cfg.nic;
        let first = bytes.min(nic.mtu as u64) + nic.header_bytes as u64;
        let (delay, per_hop, first_hops, bottleneck) = self.path(src, dst, first);
        let (_, _, ack_hops, _) = self.path(src, dst, nic.ctrl_bytes as u64);
        let packets = bytes.div_ceil(nic.mtu as u64).max(1);
        // HPCC ns-3's ideal leaves a congestion control's own header
        // (HPCC's INT) out; the exact one counts every byte on the wire.
        let ns3_headers = nic.header_bytes.saturating_sub(nic.cc.wire_bytes());
        let hpcc =
            2 * delay + per_hop + serialization(bytes + packets * ns3_headers as u64, bottleneck);
        let wire = bytes + packets * nic.header_bytes as u64;
        let exact = 2 * delay + first_hops + ack_hops + serialization(wire - first, bottleneck);
        (hpcc, exact)
    }
}
