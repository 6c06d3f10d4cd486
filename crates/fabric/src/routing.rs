//! Shortest-path routing tables with equal-cost next-hop groups (ECMP).
//!
//! For every switch and destination host the table holds one group id; a
//! group is a slice of egress ports. Identical groups are stored once, so a
//! 1024-host fat tree needs a few MB, never per-host-pair state. Tables are
//! built by one breadth-first search per destination and rebuilt when a link
//! fails or returns.

use std::collections::HashMap;

/// One node's view of its links, as routing needs it.
pub struct Adjacency<'a> {
    /// Per node: (egress port id, neighbour node, link up).
    pub ports: &'a [Vec<(u32, u32, bool)>],
    /// Per node: Some(switch index) for switches, None for hosts.
    pub switch_index: &'a [Option<u32>],
    /// Node id of each host, indexed by host id.
    pub host_nodes: &'a [u32],
}

#[derive(Clone, Debug, Default)]
pub struct Routes {
    hosts: u32,
    /// switch index * hosts + destination host -> group id (u32::MAX: unreachable).
    group_of: Vec<u32>,
    /// group id -> (start, len) in `members`.
    groups: Vec<(u32, u32)>,
    members: Vec<u32>,
}

pub const UNREACHABLE: u32 = u32::MAX;

impl Routes {
    pub fn build(adj: &Adjacency) -> Routes {
        let nodes = adj.ports.len();
        let hosts = adj.host_nodes.len() as u32;
        let switches = adj.switch_index.iter().filter(|s| s.is_some()).count();
        let mut routes = Routes {
            hosts,
            group_of: vec![UNREACHABLE; switches * hosts as usize],
            groups: Vec::new(),
            members: Vec::new(),
        };
        let mut interned: HashMap<Vec<u32>, u32> = HashMap::new();
        let mut dist = vec![u32::MAX; nodes];
        let mut frontier = Vec::new();
        let mut next = Vec::new();
        let mut hops = Vec::new();
        for (dst, &dst_node) in adj.host_nodes.iter().enumerate() {
            dist.fill(u32::MAX);
            dist[dst_node as usize] = 0;
            frontier.clear();
            frontier.push(dst_node);
            let mut d = 0;
            while !frontier.is_empty() {
                d += 1;
                next.clear();
                for &n in &frontier {
                    // Paths never cross another host.
                    if n != dst_node && adj.switch_index[n as usize].is_none() {
                        continue;
                    }
                    for &(_, peer, up) in &adj.ports[n as usize] {
                        if up && dist[peer as usize] == u32::MAX {
                            dist[peer as usize] = d;
                            next.push(peer);
                        }
                    }
                }
                std::mem::swap(&mut frontier, &mut next);
            }
            for (node, sw) in adj.switch_index.iter().enumerate() {
                let Some(sw) = sw else { continue };
                if dist[node] == u32::MAX || dist[node] == 0 {
                    continue;
                }
                hops.clear();
                for &(port, peer, up) in &adj.ports[node] {
                    let via_switch = adj.switch_index[peer as usize].is_some();
                    if up
                        && dist[peer as usize] == dist[node] - 1
                        && (via_switch || peer == dst_node)
                    {
                        hops.push(port);
                    }
                }
                if hops.is_empty() {
                    continue;
                }
                let id = *interned.entry(hops.clone()).or_insert_with(|| {
                    routes
                        .groups
                        .push((routes.members.len() as u32, hops.len() as u32));
                    routes.members.extend_from_slice(&hops);
                    routes.groups.len() as u32 - 1
                });
                routes.group_of[*sw as usize * hosts as usize + dst] = id;
            }
        }
        routes
    }

    /// The equal-cost egress ports of `switch` toward host `dst` (empty if
    /// unreachable).
    #[inline]
    pub fn next_hops(&self, switch: u32, dst: u32) -> &[u32] {
        let g = self.group_of[switch as usize * self.hosts as usize + dst as usize];
        if g == UNREACHABLE {
            return &[];
        }
        let (start, len) = self.groups[g as usize];
        &self.members[start as usize..(start + len) as usize]
    }
}
