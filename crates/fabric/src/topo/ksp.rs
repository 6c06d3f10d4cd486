//! The k shortest loop-free paths between two switches by Yen's algorithm
//! (J. Y. Yen, "Finding the K Shortest Loopless Paths in a Network",
//! Management Science 17(11), 1971), with Lawler's saving (a path's
//! spur nodes start where it left its parent), on an unweighted switch
//! graph: length is the number of links. Pure graph code over the
//! adjacency it is given; touches nothing else.
//!
//! A path is a sequence of links, named by the egress port at each switch,
//! so two parallel links make two paths. Ties in length are broken by the
//! ports' order (lexicographic), so the result is fixed by the graph.

use std::collections::BTreeSet;

/// Per switch: its usable links to other switches, as (egress port,
/// neighbour switch).
pub type SwitchAdjacency = [Vec<(u32, u32)>];

/// A loop-free path: the switches from source to destination, and the
/// egress port taken at each but the last.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    pub nodes: Vec<u32>,
    pub ports: Vec<u32>,
}

impl Path {
    /// Links on the path.
    pub fn len(&self) -> usize {
        self.ports.len()
    }

    /// True for the path from a switch to itself.
    pub fn is_empty(&self) -> bool {
        self.ports.is_empty()
    }
}

/// Reusable scratch space for the searches over one graph.
pub struct Yen {
    /// Per switch: the search stamp it was last reached in.
    seen: Vec<u32>,
    /// Per switch: the stamp of the search that may not enter it.
    blocked: Vec<u32>,
    /// Per switch: the (port, previous switch) it was reached by.
    parent: Vec<(u32, u32)>,
    stamp: u32,
    queue: Vec<u32>,
}

impl Yen {
    pub fn new(switches: usize) -> Yen {
        Yen {
            seen: vec![0; switches],
            blocked: vec![0; switches],
            parent: vec![(0, 0); switches],
            stamp: 0,
            queue: Vec::new(),
        }
    }

    /// A new search stamp (clearing the marks when the counter wraps).
    fn next_stamp(&mut self) -> u32 {
        if self.stamp == u32::MAX {
            self.seen.fill(0);
            self.blocked.fill(0);
            self.stamp = 0;
        }
        self.stamp += 1;
        self.stamp
    }

    /// A shortest path from `src` to `dst` entering no switch of
    /// `avoid_nodes` and leaving `src` by no port of `avoid_ports`
    /// (breadth first, neighbours in adjacency order).
    fn shortest(
        &mut self,
        g: &SwitchAdjacency,
        src: u32,
        dst: u32,
        avoid_nodes: &[u32],
        avoid_ports: &[u32],
    ) -> Option<Path> {
        let stamp = self.next_stamp();
        for &n in avoid_nodes {
            self.blocked[n as usize] = stamp;
        }
        self.queue.clear();
        self.queue.push(src);
        self.seen[src as usize] = stamp;
        let mut head = 0;
        let mut found = src == dst;
        while head < self.queue.len() && !found {
            let n = self.queue[head];
            head += 1;
            for &(port, peer) in &g[n as usize] {
                let p = peer as usize;
                if self.seen[p] == stamp
                    || self.blocked[p] == stamp
                    || (n == src && avoid_ports.contains(&port))
                {
                    continue;
                }
                self.seen[p] = stamp;
                self.parent[p] = (port, n);
                if peer == dst {
                    found = true;
                    break;
                }
                self.queue.push(peer);
            }
        }
        if !found {
            return None;
        }
        let (mut nodes, mut ports) = (vec![dst], Vec::new());
        let mut n = dst;
        while n != src {
            let (port, prev) = self.parent[n as usize];
            ports.push(port);
            nodes.push(prev);
            n = prev;
        }
        nodes.reverse();
        ports.reverse();
        Some(Path { nodes, ports })
    }

    /// Up to `k` shortest loop-free paths from `src` to `dst`, shortest
    /// first (fewer if fewer exist; none if `dst` is unreachable).
    pub fn paths(&mut self, g: &SwitchAdjacency, src: u32, dst: u32, k: usize) -> Vec<Path> {
        let mut found: Vec<(Path, usize)> = Vec::new();
        if k == 0 {
            return Vec::new();
        }
        let Some(first) = self.shortest(g, src, dst, &[], &[]) else {
            return Vec::new();
        };
        found.push((first, 0));
        // Candidates by (length, ports), with their nodes and spur index.
        let mut candidates: BTreeSet<(usize, Vec<u32>, Vec<u32>, usize)> = BTreeSet::new();
        let mut avoid_ports = Vec::new();
        while found.len() < k {
            let (prev, from) = found.last().expect("one path").clone();
            for j in from..prev.len() {
                let root = &prev.ports[..j];
                avoid_ports.clear();
                for (p, _) in &found {
                    if p.len() > j && &p.ports[..j] == root {
                        avoid_ports.push(p.ports[j]);
                    }
                }
                let spur = prev.nodes[j];
                let Some(tail) = self.shortest(g, spur, dst, &prev.nodes[..j], &avoid_ports) else {
                    continue;
                };
                let mut ports = root.to_vec();
                ports.extend_from_slice(&tail.ports);
                let mut nodes = prev.nodes[..j].to_vec();
                nodes.extend_from_slice(&tail.nodes);
                candidates.insert((ports.len(), ports, nodes, j));
            }
            let Some((_, ports, nodes, j)) = candidates.pop_first() else {
                break;
            };
            found.push((Path { nodes, ports }, j));
        }
        found.into_iter().map(|(p, _)| p).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An undirected graph from its links: link i has port 2i at `a` and
    /// 2i + 1 at `b`.
    pub(crate) fn graph(n: usize, links: &[(u32, u32)]) -> Vec<Vec<(u32, u32)>> {
        let mut g = vec![Vec::new(); n];
        for (i, &(a, b)) in links.iter().enumerate() {
            g[a as usize].push((2 * i as u32, b));
            g[b as usize].push((2 * i as u32 + 1, a));
        }
        g
    }

    /// Every loop-free path from src to dst, by depth-first search.
    fn all_paths(g: &SwitchAdjacency, src: u32, dst: u32) -> Vec<Path> {
        fn walk(g: &SwitchAdjacency, dst: u32, p: &mut Path, out: &mut Vec<Path>) {
            let n = *p.nodes.last().unwrap();
            if n == dst {
                out.push(p.clone());
                return;
            }
            for &(port, peer) in &g[n as usize] {
                if !p.nodes.contains(&peer) {
                    p.nodes.push(peer);
                    p.ports.push(port);
                    walk(g, dst, p, out);
                    p.nodes.pop();
                    p.ports.pop();
                }
            }
        }
        let mut out = Vec::new();
        let mut p = Path {
            nodes: vec![src],
            ports: vec![],
        };
        walk(g, dst, &mut p, &mut out);
        out
    }

    /// The properties every answer must have, against the brute force:
    /// loop-free, real paths of the graph, distinct, non-decreasing
    /// length, the first a shortest path, and the lengths those of the k
    /// shortest of all paths.
    pub(crate) fn check(g: &SwitchAdjacency, src: u32, dst: u32, k: usize) -> Vec<Path> {
        let got = Yen::new(g.len()).paths(g, src, dst, k);
        let mut all = all_paths(g, src, dst);
        all.sort_by_key(|p| p.len());
        assert_eq!(got.len(), k.min(all.len()), "{src}->{dst}");
        for (i, p) in got.iter().enumerate() {
            assert_eq!(p.nodes[0], src);
            assert_eq!(*p.nodes.last().unwrap(), dst);
            assert_eq!(p.nodes.len(), p.ports.len() + 1);
            let mut nodes = p.nodes.clone();
            nodes.sort_unstable();
            nodes.dedup();
            assert_eq!(nodes.len(), p.nodes.len(), "loop in {p:?}");
            for (h, &port) in p.ports.iter().enumerate() {
                assert!(
                    g[p.nodes[h] as usize].contains(&(port, p.nodes[h + 1])),
                    "{p:?} is not a path of the graph"
                );
            }
            assert!(!got[..i].contains(p), "{p:?} twice");
            if i > 0 {
                assert!(got[i - 1].len() <= p.len(), "not ordered by length");
            }
            assert_eq!(p.len(), all[i].len(), "path {i} is not among the shortest");
        }
        got
    }

    #[test]
    fn yen_on_small_graphs_matches_brute_force() {
        // Two squares sharing an edge, with a diagonal.
        let g = graph(
            6,
            &[
                (0, 1),
                (1, 2),
                (0, 3),
                (3, 4),
                (4, 5),
                (2, 5),
                (1, 4),
                (0, 4),
            ],
        );
        for k in 1..12 {
            for (s, d) in [(0, 5), (5, 0), (1, 3), (2, 3)] {
                check(&g, s, d, k);
            }
        }
        // Parallel links are two paths.
        let g = graph(3, &[(0, 1), (0, 1), (1, 2)]);
        assert_eq!(check(&g, 0, 2, 5).len(), 2);
        // Unreachable and trivial.
        let g = graph(3, &[(0, 1)]);
        assert!(check(&g, 0, 2, 3).is_empty());
    }

    /// Random graphs of varying density against the brute force.
    #[test]
    fn yen_on_random_graphs() {
        let mut rng = engine::Rng::new(9, engine::StreamKind::Workload, 0);
        for _ in 0..40 {
            let n = 4 + rng.below(5) as u32;
            let mut links = Vec::new();
            for a in 0..n {
                for b in a + 1..n {
                    if rng.bernoulli(0.45) {
                        links.push((a, b));
                    }
                }
            }
            let g = graph(n as usize, &links);
            for k in [1, 2, 4, 9] {
                check(&g, 0, n - 1, k);
            }
        }
    }
}
