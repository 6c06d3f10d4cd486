//! Paths through the built network: the routing tables' (re)build from
//! the ports' state (FKSP's pinned paths kept, their liveness refreshed),
//! and a pair of hosts' first equal-cost shortest path with its base RTT
//! and the ideal FCT of a flow along it (under FKSP too: the ideal is the
//! shortest path). Touches the routes.

use crate::link::Links;
use crate::net::NodeRole;
use crate::switch::Switches;
use crate::topo::routing::{Adjacency, Routes};
use engine::time::serialization;
use engine::Time;
use transport::NicConfig;

impl Switches {
    /// Rebuilds the routing tables over the links that are up (a port's
    /// `up`); FKSP's pinned paths stay where they still can.
    pub(crate) fn rebuild_routes(&mut self, links: &Links, roles: &[NodeRole], host_nodes: &[u32]) {
        let mut adj: Vec<Vec<(u32, u32, bool)>> = vec![Vec::new(); roles.len()];
        for (id, p) in links.ports.iter().enumerate() {
            let peer = links.ports[id ^ 1].node;
            adj[p.node as usize].push((id as u32, peer, p.up));
        }
        let switch_index: Vec<Option<u32>> = roles
            .iter()
            .map(|r| match r {
                NodeRole::Switch(s) => Some(*s),
                NodeRole::Host(_) => None,
            })
            .collect();
        let (pinned, _) = std::mem::take(&mut self.routes).unpin();
        self.routes = Routes::build(&Adjacency {
            ports: &adj,
            switch_index: &switch_index,
            host_nodes,
        });
        // FKSP keeps its paths; those crossing a port that is down now
        // leave their flows to the shortest paths (see `pinned.rs`).
        if let Some(mut pinned) = pinned {
            let ports = &links.ports;
            pinned.refresh(|p| ports[p as usize].up);
            self.routes = std::mem::take(&mut self.routes).pin(pinned);
        }
    }
}

/// The first shortest path from the host whose port is `from` to host
/// `dst`: its propagation delay, an MTU's serialisation summed over its
/// hops, `first` bytes' likewise, and its bottleneck rate.
pub(crate) fn path(
    links: &Links,
    roles: &[NodeRole],
    routes: &Routes,
    mtu: u64,
    from: u32,
    dst: u32,
    first: u64,
) -> (Time, Time, Time, u64) {
    let (mut delay, mut per_hop, mut first_hops, mut bottleneck) = (0, 0, 0, u64::MAX);
    let mut port = from;
    for _ in 0..roles.len() {
        let p = &links.ports[port as usize];
        delay += p.delay;
        per_hop += serialization(mtu, p.rate_bps());
        first_hops += serialization(first, p.rate_bps());
        bottleneck = bottleneck.min(p.rate_bps());
        let next = links.ports[port as usize ^ 1].node;
        match roles[next as usize] {
            NodeRole::Host(_) => break,
            NodeRole::Switch(s) => match routes.next_hops(s, dst).first() {
                Some(&p) => port = p,
                None => break,
            },
        }
    }
    (delay, per_hop, first_hops, bottleneck)
}

/// The ideal completion time of `bytes` from `src` (whose port is `from`)
/// to `dst` on an empty fabric: as HPCC ns-3 computes it, counting
/// `ns3_headers` bytes of headers per packet, and exact (see
/// `Network::ideal_fct`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn ideal_fct(
    links: &Links,
    roles: &[NodeRole],
    routes: &Routes,
    nic: &NicConfig,
    ns3_headers: u32,
    from: u32,
    dst: u32,
    bytes: u64,
) -> (Time, Time) {
    let mtu = nic.mtu as u64;
    let first = bytes.min(mtu) + nic.header_bytes as u64;
    let (delay, per_hop, first_hops, bottleneck) =
        path(links, roles, routes, mtu, from, dst, first);
    let (_, _, ack_hops, _) = path(links, roles, routes, mtu, from, dst, nic.ctrl_bytes as u64);
    let packets = bytes.div_ceil(mtu).max(1);
    // HPCC ns-3's ideal leaves a congestion control's own header (HPCC's
    // INT) out and counts 48 bytes of others (`FabricConfig::ideal_headers`);
    // the exact one counts every byte on the wire.
    let hpcc =
        2 * delay + per_hop + serialization(bytes + packets * ns3_headers as u64, bottleneck);
    let wire = bytes + packets * nic.header_bytes as u64;
    let exact = 2 * delay + first_hops + ack_hops + serialization(wire - first, bottleneck);
    (hpcc, exact)
}
