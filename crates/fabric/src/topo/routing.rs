//! Shortest-path routing tables with equal-cost next-hop groups (ECMP).
//!
//! For every switch and destination host there is one group id; a group is
//! a slice of egress ports, stored after its length in one array, so that
//! a lookup reads the length and the ports from one line. Identical groups
//! are stored once, and so are identical columns (a destination's group at
//! every switch) once the switch the host hangs from is set aside: hosts
//! under one ToR share a column, and only their last hop, kept per host,
//! differs. A 1024-host fat tree thus needs 160 KB of columns instead of
//! 1.3 MB of (switch, host) entries, small enough to stay in cache on the
//! path of every hop; never
//! per-host-pair state. Tables are built by one breadth-first search per
//! ToR (a host hanging from one switch by one link shares its column, so
//! the build does not grow with hosts times links), and one per other
//! destination, and rebuilt when a link fails or returns.
//!
//! With FKSP (`[routing] paths = "ksp"`, [`Routes::pin`]), the tables
//! hold the pinned paths (`pinned.rs`) beside the shortest-path tables,
//! and every column entry says [`PINNED`]: the test a hop makes for an
//! unreachable destination (`g >= PINNED`) also sends it, out of line, to
//! the pinned paths, and the shortest-path tables answer where those do
//! not. The default routing's hop thus runs the instructions it ran
//! before FKSP existed.

use crate::topo::pinned::{PathHop, Pinned};
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
    switches: u32,
    /// Per destination host.
    dests: Vec<Dest>,
    /// column * switches + switch index -> group id (UNREACHABLE: none).
    columns: Vec<u32>,
    /// Groups one after another, each its length and then its ports; a
    /// group id is the index of its length.
    members: Vec<u32>,
    /// FKSP's pinned paths and the shortest-path tables, when set.
    pinned: Option<Box<PinnedRoutes>>,
}

/// What FKSP's routing holds.
#[derive(Clone, Debug)]
struct PinnedRoutes {
    paths: Pinned,
    /// The tables without FKSP (they have no `pinned`).
    shortest: Routes,
}

/// Where a destination's routes are.
#[derive(Clone, Copy, Debug)]
struct Dest {
    column: u32,
    /// The one switch whose every next hop is the host itself, and its
    /// group there (`NO_SWITCH`: none, or several; the column holds all).
    local_switch: u32,
    local_group: u32,
}

pub const UNREACHABLE: u32 = u32::MAX;
const NO_SWITCH: u32 = u32::MAX;
/// A column's entry for a destination's own switch (read from `Dest`).
const LOCAL: u32 = u32::MAX - 1;
/// Every column's entry under FKSP: ask the pinned paths.
const PINNED: u32 = u32::MAX - 2;

impl Routes {
    pub fn build(adj: &Adjacency) -> Routes {
        let nodes = adj.ports.len();
        let hosts = adj.host_nodes.len() as u32;
        let switches = adj.switch_index.iter().filter(|s| s.is_some()).count();
        let mut routes = Routes {
            switches: switches as u32,
            dests: Vec::with_capacity(hosts as usize),
            columns: Vec::new(),
            members: Vec::new(),
            pinned: None,
        };
        let mut interned: HashMap<Vec<u32>, u32> = HashMap::new();
        let mut intern = |members: &mut Vec<u32>, hops: &[u32]| -> u32 {
            if let Some(&id) = interned.get(hops) {
                return id;
            }
            let id = members.len() as u32;
            members.push(hops.len() as u32);
            members.extend_from_slice(hops);
            interned.insert(hops.to_vec(), id);
            id
        };
        let mut columns: HashMap<Vec<u32>, u32> = HashMap::new();
        // Per switch: the column of the hosts hanging from it alone, once
        // one of them has been searched.
        let mut tor_column = vec![UNREACHABLE; switches];
        let mut column = vec![UNREACHABLE; switches];
        let mut dist = vec![u32::MAX; nodes];
        let mut frontier = Vec::new();
        let mut next = Vec::new();
        let mut hops = Vec::new();
        for &dst_node in adj.host_nodes {
            // A host with one link, up, to a switch shares that switch's
            // column with its other such hosts: elsewhere its routes are
            // the switch's. One search a ToR, not one a host, keeps the
            // build linear in hosts (a k=40 fat tree: 800 searches, not
            // 16,000).
            let tor = match adj.ports[dst_node as usize][..] {
                [(_, peer, true)] => adj.switch_index[peer as usize].and_then(|sw| {
                    let mut back = adj.ports[peer as usize].iter().filter(|l| l.1 == dst_node);
                    match (back.next(), back.next()) {
                        (Some(&(port, _, true)), None) => Some((sw, port)),
                        _ => None,
                    }
                }),
                _ => None,
            };
            if let Some((sw, tor_port)) = tor {
                if tor_column[sw as usize] != UNREACHABLE {
                    let local_group = intern(&mut routes.members, &[tor_port]);
                    routes.dests.push(Dest {
                        column: tor_column[sw as usize],
                        local_switch: sw,
                        local_group,
                    });
                    continue;
                }
            }
            column.fill(UNREACHABLE);
            let mut local = Vec::new();
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
                let mut to_host = true;
                for &(port, peer, up) in &adj.ports[node] {
                    let via_switch = adj.switch_index[peer as usize].is_some();
                    if up
                        && dist[peer as usize] == dist[node] - 1
                        && (via_switch || peer == dst_node)
                    {
                        hops.push(port);
                        to_host &= peer == dst_node;
                    }
                }
                if hops.is_empty() {
                    continue;
                }
                column[*sw as usize] = intern(&mut routes.members, &hops);
                if to_host && hops.len() == 1 {
                    local.push(*sw);
                }
            }
            let (local_switch, local_group) = match local[..] {
                [sw] => (sw, std::mem::replace(&mut column[sw as usize], LOCAL)),
                _ => (NO_SWITCH, UNREACHABLE),
            };
            let id = match columns.get(&column) {
                Some(&id) => id,
                None => {
                    let id = columns.len() as u32;
                    routes.columns.extend_from_slice(&column);
                    columns.insert(column.clone(), id);
                    id
                }
            };
            if let Some((sw, _)) = tor.filter(|&(sw, _)| sw == local_switch) {
                tor_column[sw as usize] = id;
            }
            routes.dests.push(Dest {
                column: id,
                local_switch,
                local_group,
            });
        }
        routes
    }

    /// The group of `switch` toward host `dst`: a group id, UNREACHABLE
    /// or PINNED.
    #[inline(always)]
    fn group(&self, switch: u32, dst: u32) -> u32 {
        let d = self.dests[dst as usize];
        if switch == d.local_switch {
            d.local_group
        } else {
            self.columns[d.column as usize * self.switches as usize + switch as usize]
        }
    }

    /// The ports of group `g` (a group id).
    #[inline(always)]
    fn members_of(&self, g: u32) -> &[u32] {
        let start = g as usize + 1;
        &self.members[start..start + self.members[g as usize] as usize]
    }

    /// Whether routes follow pinned paths (FKSP, k shortest paths), whose
    /// per-packet labels live beside the arena.
    pub fn pinned_by_path(&self) -> bool {
        self.pinned.is_some()
    }

    /// The egress ports `switch` may send a packet of flow identity `flow`
    /// (`sport << 16 | src`) toward host `dst` to: under FKSP its pinned
    /// path's port (with the choice left to the load balancer, at the
    /// source ToR the first hops of the live paths: `pinned.rs`), else the
    /// equal-cost shortest-path ports (empty if unreachable). `packet` is
    /// the packet's arena slot and `in_port` the port it arrived by, which
    /// only the balancer's choice of paths reads.
    #[inline(always)]
    pub fn hops(&self, switch: u32, flow: u32, dst: u32, packet: u32, in_port: u32) -> &[u32] {
        let g = self.group(switch, dst);
        if g >= PINNED {
            return self.unusual_hops(g, switch, [flow, dst, packet, in_port]);
        }
        self.members_of(g)
    }

    /// [`Routes::hops`] for an unreachable destination or under FKSP.
    #[cold]
    #[inline(never)]
    fn unusual_hops(&self, g: u32, switch: u32, [flow, dst, packet, in_port]: [u32; 4]) -> &[u32] {
        let Some(p) = self.pinned.as_ref().filter(|_| g == PINNED) else {
            return &[];
        };
        let hop = if p.paths.chosen_by_balancer() {
            p.paths.hop_by_balancer(switch, flow, dst, packet, in_port)
        } else {
            match p.paths.port(switch, flow, dst) {
                Some(port) => PathHop::Ports(std::slice::from_ref(port)),
                None => PathHop::Shortest,
            }
        };
        match hop {
            PathHop::Ports(ports) => ports,
            PathHop::Shortest => p.shortest.next_hops(switch, dst),
        }
    }

    /// The equal-cost shortest-path egress ports of `switch` toward host
    /// `dst` (empty if unreachable), FKSP or not.
    #[inline]
    pub fn next_hops(&self, switch: u32, dst: u32) -> &[u32] {
        match self.group(switch, dst) {
            UNREACHABLE => &[],
            PINNED => match &self.pinned {
                Some(p) => p.shortest.next_hops(switch, dst),
                None => &[],
            },
            g => self.members_of(g),
        }
    }

    /// These shortest-path tables with FKSP's `paths` over them: every
    /// column entry PINNED, each destination's own switch (which reaches
    /// the host by its port) kept.
    pub(crate) fn pin(self, paths: Pinned) -> Routes {
        let switches = self.switches;
        Routes {
            switches,
            dests: self
                .dests
                .iter()
                .map(|d| Dest { column: 0, ..*d })
                .collect(),
            columns: vec![PINNED; switches as usize],
            members: self.members.clone(),
            pinned: Some(Box::new(PinnedRoutes {
                paths,
                shortest: self,
            })),
        }
    }

    /// FKSP's paths, if set, and the shortest-path tables without them.
    pub(crate) fn unpin(self) -> (Option<Pinned>, Routes) {
        match self.pinned {
            Some(p) => (Some(p.paths), p.shortest),
            None => (None, self),
        }
    }

    /// FKSP's paths, if set.
    pub(crate) fn pinned(&self) -> Option<&Pinned> {
        self.pinned.as_ref().map(|p| &p.paths)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Per node: (port, neighbour, up).
    type Links = Vec<Vec<(u32, u32, bool)>>;

    /// Nodes 0-1 spines, 2-4 leaves, then hosts: two under each leaf, one
    /// more on leaves 2 and 3 at once (multi-homed), one whose link is down.
    /// Returns the links, the switch index of each node and the host nodes.
    fn fabric() -> (Links, Vec<Option<u32>>, Vec<u32>) {
        let mut links = Vec::new();
        for leaf in 2..5 {
            for spine in 0..2 {
                links.push((leaf, spine, true));
            }
        }
        let mut hosts = Vec::new();
        let mut node = 5;
        for leaf in 2..5 {
            for _ in 0..2 {
                links.push((node, leaf, true));
                hosts.push(node);
                node += 1;
            }
        }
        links.extend([(node, 2, true), (node, 3, true), (node + 1, 4, false)]);
        hosts.extend([node, node + 1]);
        let nodes = node as usize + 2;
        let mut ports = vec![Vec::new(); nodes];
        for (i, &(a, b, up)) in links.iter().enumerate() {
            ports[a as usize].push((2 * i as u32, b, up));
            ports[b as usize].push((2 * i as u32 + 1, a, up));
        }
        let switch_index = (0..nodes).map(|n| (n < 5).then_some(n as u32)).collect();
        (ports, switch_index, hosts)
    }

    /// The shortest-path next hops of one switch toward one host, straight
    /// from the adjacency (what the table must answer).
    fn reference(adj: &Adjacency, switch_node: u32, dst_node: u32) -> Vec<u32> {
        let mut dist = vec![u32::MAX; adj.ports.len()];
        dist[dst_node as usize] = 0;
        let mut frontier = vec![dst_node];
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for n in frontier {
                if n != dst_node && adj.switch_index[n as usize].is_none() {
                    continue;
                }
                for &(_, peer, up) in &adj.ports[n as usize] {
                    if up && dist[peer as usize] == u32::MAX {
                        dist[peer as usize] = dist[n as usize] + 1;
                        next.push(peer);
                    }
                }
            }
            frontier = next;
        }
        let d = dist[switch_node as usize];
        if d == u32::MAX || d == 0 {
            return Vec::new();
        }
        adj.ports[switch_node as usize]
            .iter()
            .filter(|&&(_, peer, up)| {
                up && dist[peer as usize] == d - 1
                    && (adj.switch_index[peer as usize].is_some() || peer == dst_node)
            })
            .map(|&(port, _, _)| port)
            .collect()
    }

    #[test]
    fn shared_columns_answer_as_the_full_table() {
        let (ports, switch_index, hosts) = fabric();
        let adj = Adjacency {
            ports: &ports,
            switch_index: &switch_index,
            host_nodes: &hosts,
        };
        let routes = Routes::build(&adj);
        for (dst, &dst_node) in hosts.iter().enumerate() {
            for s in 0..5u32 {
                let want = reference(&adj, s, dst_node);
                assert_eq!(
                    routes.next_hops(s, dst as u32),
                    want,
                    "switch {s} to host {dst}"
                );
            }
        }
        // The host under leaf 2 is reached from leaf 2 by its own port, from
        // elsewhere through the spines.
        assert_eq!(routes.next_hops(2, 0).len(), 1);
        assert_eq!(routes.next_hops(3, 0).len(), 2);
        // The host whose link is down is unreachable everywhere.
        assert!((0..5).all(|s| routes.next_hops(s, 7).is_empty()));
        // Hosts under one leaf share a column: three leaves, the
        // multi-homed host and the unreachable one make at most five.
        assert!(
            routes.columns.len() <= 5 * 5,
            "{} entries",
            routes.columns.len()
        );
        assert!(
            routes
                .dests
                .iter()
                .filter(|d| d.local_switch == NO_SWITCH)
                .count()
                == 2
        );
    }

    /// Under FKSP the pinned path answers where it runs, the shortest
    /// paths elsewhere (the destination's own switch, a pair without a
    /// path, a dead path), and `next_hops` still gives the shortest paths.
    #[test]
    fn pinned_paths_answer_first_and_fall_back() {
        let (ports, switch_index, hosts) = fabric();
        let adj = Adjacency {
            ports: &ports,
            switch_index: &switch_index,
            host_nodes: &hosts,
        };
        let plain = Routes::build(&adj);
        // ToRs: leaves 2, 3, 4; one path per pair, only leaf 2 -> leaf 3
        // has hops: out of leaf 2 by port 2 (to spine 1), out of spine 1 by
        // port 7 (to leaf 3).
        let mut paths = Pinned::new(1, 3, 5, vec![0, 0, 1, 1, 2, 2, 0, 2]);
        for pair in 0..9 {
            if pair == 1 {
                paths.push([[2, 2], [1, 7]]);
            } else {
                paths.push([]);
            }
        }
        let pinned = plain.clone().pin(paths.clone());
        // Host 0 (under leaf 2) to host 2 (under leaf 3), any source port.
        for sport in 0..4u32 {
            let flow = sport << 16;
            assert_eq!(pinned.hops(2, flow, 2, 0, 0), [2]);
            assert_eq!(pinned.hops(1, flow, 2, 0, 0), [7]);
            assert_eq!(pinned.hops(3, flow, 2, 0, 0), plain.next_hops(3, 2));
        }
        for s in 0..5 {
            for dst in 0..8 {
                assert_eq!(pinned.next_hops(s, dst), plain.next_hops(s, dst));
                // Host 4 is under leaf 4: no pinned hops.
                assert_eq!(pinned.hops(s, 0, 4, 0, 0), plain.next_hops(s, 4));
            }
            assert!(pinned.hops(s, 0, 7, 0, 0).is_empty());
        }
        // Port 7 down: the path is dead, the flow takes the shortest paths.
        paths.refresh(|p| p != 7);
        let dead = plain.clone().pin(paths);
        assert_eq!(dead.hops(2, 0, 2, 0, 0), plain.next_hops(2, 2));
        assert_eq!(dead.hops(2, 0, 2, 0, 0).len(), 2);
        let (back, unpinned) = dead.unpin();
        assert!(back.is_some() && unpinned.pinned().is_none());
    }
}
