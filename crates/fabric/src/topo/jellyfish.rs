//! Jellyfish (Singla et al., "Jellyfish: Networking Data Centers
//! Randomly", NSDI'12, section 3): a random regular graph of switches with
//! servers attached. Builds a [`Topology`] and touches nothing else.
//!
//! Servers are spread evenly (the first `hosts % switches` switches hold
//! one more) and numbered switch by switch: hosts 0.. sit under `sw0`.
//! Each switch has a number of free network ports ([`SwitchPorts`]); the
//! construction is the paper's:
//!
//! 1. Random matching: pick two switches with free ports at random; if
//!    they are not yet neighbours, join them; repeat until no two
//!    non-neighbouring switches have free ports left.
//! 2. Fix-up: a switch `a` left with two free ports or more takes a random
//!    existing link `(x, y)` with `x` and `y` not neighbours of `a`,
//!    removes it and adds `(a, x)` and `(a, y)`. Two switches `a`, `b` left
//!    with one free port each (they are neighbours, or phase 1 would have
//!    joined them) do the same with one end each: `(x, y)` is replaced by
//!    `(a, x)` and `(b, y)`. Every step places two free ports.
//!
//! The graph is thus regular: every switch uses all of its network ports,
//! except, when their total is odd, exactly one switch that keeps one port
//! free (the known one-port exception). It is simple (no parallel links,
//! no self-links) and connected: an attempt whose graph falls apart (or
//! whose fix-up finds no link to break, in a graph too small for it) is
//! thrown away and the next one drawn, up to [`ATTEMPTS`]; then the
//! builder refuses. Attempt `i` draws from the stream of the topology seed,
//! kind `Workload`, id [`STREAM_BASE`] + `i` (engine has no topology kind;
//! traffic classes use small ids).

use crate::topo::topology::{NodeKind, Topology};
use engine::{Rng, StreamKind, Time};

/// The most ports a switch may have (the fabric's limit: a packet names
/// its ingress port in a byte).
pub const MAX_SWITCH_PORTS: u32 = crate::net::arena::Hdr::MAX_PORTS as u32;

/// How many tries a construction gets before the builder refuses.
pub const ATTEMPTS: u32 = 32;
/// The first random stream id of the construction (see the module doc).
pub const STREAM_BASE: u64 = 1 << 62;

/// How many of a switch's ports join other switches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwitchPorts {
    /// Every switch has this many switch-to-switch links (the paper's r).
    Degree(u32),
    /// Every switch has this many ports in all; those its servers leave
    /// free join other switches (the paper's k; a switch with one server
    /// fewer has one more switch link).
    Total(u32),
}

/// What a Jellyfish topology is made of.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JellyfishSpec {
    pub switches: u32,
    pub ports: SwitchPorts,
    pub hosts: u32,
    pub host_bps: u64,
    pub fabric_bps: u64,
    pub delay: Time,
    pub seed: u64,
}

impl JellyfishSpec {
    /// Servers under switch `s`.
    pub fn hosts_at(&self, s: u32) -> u32 {
        self.hosts / self.switches + u32::from(s < self.hosts % self.switches)
    }

    /// Switch-to-switch ports of switch `s` (0 where its servers take all
    /// of its ports).
    pub fn network_ports(&self, s: u32) -> u32 {
        match self.ports {
            SwitchPorts::Degree(r) => r,
            SwitchPorts::Total(k) => k.saturating_sub(self.hosts_at(s)),
        }
    }

    /// The sum of every switch's network ports (twice the switch links,
    /// plus one when it is odd).
    pub fn network_port_total(&self) -> u64 {
        let (base, extra) = (self.hosts / self.switches, self.hosts % self.switches);
        match self.ports {
            SwitchPorts::Degree(r) => r as u64 * self.switches as u64,
            SwitchPorts::Total(k) => {
                k.saturating_sub(base + 1) as u64 * extra as u64
                    + k.saturating_sub(base) as u64 * (self.switches - extra) as u64
            }
        }
    }
}

/// The switch graph under construction.
struct Graph {
    /// Neighbours of each switch.
    adj: Vec<Vec<u32>>,
    /// Free network ports of each switch.
    free: Vec<u32>,
    /// Every link, as (a, b).
    links: Vec<(u32, u32)>,
}

impl Graph {
    fn joined(&self, a: u32, b: u32) -> bool {
        a == b || self.adj[a as usize].contains(&b)
    }

    fn join(&mut self, a: u32, b: u32) {
        self.adj[a as usize].push(b);
        self.adj[b as usize].push(a);
        self.free[a as usize] -= 1;
        self.free[b as usize] -= 1;
        self.links.push((a, b));
    }

    /// Removes link `i` (its ports become free).
    fn cut(&mut self, i: usize) -> (u32, u32) {
        let (a, b) = self.links.swap_remove(i);
        self.adj[a as usize].retain(|&n| n != b);
        self.adj[b as usize].retain(|&n| n != a);
        self.free[a as usize] += 1;
        self.free[b as usize] += 1;
        (a, b)
    }

    /// Phase 1: joins random pairs of switches with free ports until no
    /// two of them can be joined.
    fn match_randomly(&mut self, rng: &mut Rng) {
        let mut open: Vec<u32> = (0..self.free.len() as u32)
            .filter(|&s| self.free[s as usize] > 0)
            .collect();
        let mut misses = 0;
        while open.len() >= 2 {
            let mut i = rng.below(open.len() as u64) as usize;
            let mut j = rng.below(open.len() as u64 - 1) as usize;
            if j >= i {
                j += 1;
            }
            if self.joined(open[i], open[j]) {
                misses += 1;
                if misses < 2 * open.len() + 8 {
                    continue;
                }
                // Many misses in a row: look for any pair that can be joined.
                let pair = (0..open.len()).find_map(|i| {
                    (i + 1..open.len())
                        .find(|&j| !self.joined(open[i], open[j]))
                        .map(|j| (i, j))
                });
                let Some((a, b)) = pair else { break };
                (i, j) = (a, b);
            }
            misses = 0;
            self.join(open[i], open[j]);
            // Drop the full ones, the later index first.
            for k in [i.max(j), i.min(j)] {
                if self.free[open[k] as usize] == 0 {
                    open.swap_remove(k);
                }
            }
        }
    }

    /// A random link `(x, y)`, oriented, with `x` joinable to `a` and `y`
    /// to `b` (and neither end `a` or `b`): its index and whether it is
    /// reversed. Random tries first, then every link from a random start.
    fn breakable(&self, rng: &mut Rng, a: u32, b: u32) -> Option<(usize, bool)> {
        let fits = |x: u32, y: u32| x != b && y != a && !self.joined(a, x) && !self.joined(b, y);
        let test = |i: usize| {
            let (x, y) = self.links[i];
            if fits(x, y) {
                Some((i, false))
            } else if fits(y, x) {
                Some((i, true))
            } else {
                None
            }
        };
        let n = self.links.len();
        if n == 0 {
            return None;
        }
        for _ in 0..64 {
            if let Some(found) = test(rng.below(n as u64) as usize) {
                return Some(found);
            }
        }
        let start = rng.below(n as u64) as usize;
        (0..n).find_map(|k| test((start + k) % n))
    }

    /// Phase 2: places the free ports left, two at a time, by breaking a
    /// link. False if some pair could not be placed.
    fn fix_up(&mut self, rng: &mut Rng) -> bool {
        loop {
            let open: Vec<u32> = (0..self.free.len() as u32)
                .filter(|&s| self.free[s as usize] > 0)
                .collect();
            let total: u32 = open.iter().map(|&s| self.free[s as usize]).sum();
            if total < 2 {
                return true;
            }
            // The switch with the most free ports, and its partner: itself
            // if it has two, else another switch with one.
            let a = *open
                .iter()
                .max_by_key(|&&s| (self.free[s as usize], std::cmp::Reverse(s)))
                .expect("free ports");
            let b = if self.free[a as usize] >= 2 {
                a
            } else {
                *open.iter().find(|&&s| s != a).expect("two free ports")
            };
            if a != b && !self.joined(a, b) {
                self.join(a, b);
                continue;
            }
            let Some((i, reversed)) = self.breakable(rng, a, b) else {
                return false;
            };
            let (x, y) = self.cut(i);
            let (x, y) = if reversed { (y, x) } else { (x, y) };
            self.join(a, x);
            self.join(b, y);
        }
    }

    fn connected(&self) -> bool {
        let n = self.adj.len();
        if n == 0 {
            return true;
        }
        let mut seen = vec![false; n];
        let mut stack = vec![0u32];
        seen[0] = true;
        let mut count = 1;
        while let Some(s) = stack.pop() {
            for &p in &self.adj[s as usize] {
                if !seen[p as usize] {
                    seen[p as usize] = true;
                    count += 1;
                    stack.push(p);
                }
            }
        }
        count == n
    }
}

impl Topology {
    /// A Jellyfish topology (see the module doc). The caller checks sizes
    /// first: at least two switches, and no switch with more network ports
    /// than there are other switches. Err if no connected graph was found
    /// in [`ATTEMPTS`] tries.
    pub fn jellyfish(spec: &JellyfishSpec) -> Result<Topology, String> {
        let n = spec.switches;
        let mut graph = None;
        for attempt in 0..ATTEMPTS as u64 {
            let mut rng = Rng::new(spec.seed, StreamKind::Workload, STREAM_BASE + attempt);
            let mut g = Graph {
                adj: vec![Vec::new(); n as usize],
                free: (0..n).map(|s| spec.network_ports(s)).collect(),
                links: Vec::new(),
            };
            g.match_randomly(&mut rng);
            if g.fix_up(&mut rng) && g.connected() {
                graph = Some(g);
                break;
            }
        }
        let Some(g) = graph else {
            return Err(format!(
                "no connected graph of {n} switches with these ports was found in {ATTEMPTS} \
                 random tries; give each switch more switch links"
            ));
        };
        let mut t = Topology::default();
        for h in 0..spec.hosts {
            t.add_node(format!("h{h}"), NodeKind::Host);
        }
        let sw0 = spec.hosts;
        for s in 0..n {
            t.add_node(format!("sw{s}"), NodeKind::Switch);
        }
        let mut h = 0;
        for s in 0..n {
            for _ in 0..spec.hosts_at(s) {
                t.add_link(h, sw0 + s, spec.host_bps, spec.delay);
                h += 1;
            }
        }
        let mut links: Vec<(u32, u32)> =
            g.links.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect();
        links.sort_unstable();
        for (a, b) in links {
            t.add_link(sw0 + a, sw0 + b, spec.fabric_bps, spec.delay);
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(switches: u32, ports: SwitchPorts, hosts: u32, seed: u64) -> JellyfishSpec {
        JellyfishSpec {
            switches,
            ports,
            hosts,
            host_bps: 100_000_000_000,
            fabric_bps: 100_000_000_000,
            delay: 1_000_000,
            seed,
        }
    }

    /// Per switch (0..): its switch links and its hosts, and whether the
    /// switch graph is connected; read back from the built topology.
    fn shape(t: &Topology, spec: &JellyfishSpec) -> (Vec<u32>, Vec<u32>, bool) {
        let sw0 = spec.hosts;
        let n = spec.switches as usize;
        let (mut net, mut hosts) = (vec![0u32; n], vec![0u32; n]);
        let mut adj = vec![Vec::new(); n];
        let mut pairs = std::collections::HashSet::new();
        for l in &t.links {
            let (a, b) = (l.a.min(l.b), l.a.max(l.b));
            if a < sw0 {
                hosts[(b - sw0) as usize] += 1;
                continue;
            }
            assert!(pairs.insert((a, b)), "parallel link {a}-{b}");
            let (a, b) = ((a - sw0) as usize, (b - sw0) as usize);
            net[a] += 1;
            net[b] += 1;
            adj[a].push(b);
            adj[b].push(a);
        }
        let mut seen = vec![false; n];
        let mut stack = vec![0];
        seen[0] = true;
        while let Some(s) = stack.pop() {
            for &p in &adj[s] {
                if !std::mem::replace(&mut seen[p], true) {
                    stack.push(p);
                }
            }
        }
        (net, hosts, seen.iter().all(|&s| s))
    }

    /// Every switch uses every network port, except one switch missing one
    /// when the total is odd; the graph is simple and connected; hosts are
    /// spread evenly, in order.
    fn check(spec: &JellyfishSpec) -> Topology {
        let t = Topology::jellyfish(spec).unwrap();
        t.validate().unwrap();
        let (net, hosts, connected) = shape(&t, spec);
        assert!(connected, "{spec:?}");
        let short: Vec<u32> = (0..spec.switches)
            .filter(|&s| net[s as usize] != spec.network_ports(s))
            .collect();
        if spec.network_port_total().is_multiple_of(2) {
            assert!(short.is_empty(), "{spec:?}: switches {short:?} miss ports");
        } else {
            assert_eq!(short.len(), 1, "{spec:?}");
            let s = short[0];
            assert_eq!(net[s as usize] + 1, spec.network_ports(s), "{spec:?}");
        }
        for s in 0..spec.switches {
            assert_eq!(hosts[s as usize], spec.hosts_at(s));
        }
        // Hosts 0.. sit under sw0 first.
        let sw0 = spec.hosts;
        let mut last = 0;
        for l in t.links.iter().filter(|l| l.a < sw0) {
            assert!(l.b - sw0 >= last, "hosts out of switch order");
            last = l.b - sw0;
        }
        t
    }

    #[test]
    fn regular_and_connected_for_several_seeds() {
        for seed in 1..=8 {
            check(&spec(20, SwitchPorts::Degree(4), 32, seed));
            check(&spec(80, SwitchPorts::Total(8), 128, seed));
            // Odd total: 15 switches of degree 3.
            check(&spec(15, SwitchPorts::Degree(3), 15, seed));
            check(&spec(33, SwitchPorts::Degree(7), 40, seed));
        }
        // Complete graphs need the fix-up almost always.
        for seed in 1..=8 {
            check(&spec(6, SwitchPorts::Degree(5), 6, seed));
            check(&spec(7, SwitchPorts::Degree(6), 7, seed));
        }
    }

    #[test]
    fn the_seed_fixes_the_graph() {
        let a = Topology::jellyfish(&spec(20, SwitchPorts::Degree(4), 32, 1)).unwrap();
        let b = Topology::jellyfish(&spec(20, SwitchPorts::Degree(4), 32, 1)).unwrap();
        let c = Topology::jellyfish(&spec(20, SwitchPorts::Degree(4), 32, 2)).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    /// The fix-up places what random matching leaves: forcing phase 1 to
    /// stop early still ends regular.
    #[test]
    fn fix_up_places_left_ports() {
        let mut rng = Rng::new(3, StreamKind::Workload, 0);
        // A 4-regular graph on 9 switches where matching left one switch
        // with 4 free ports: a cycle of the other 8 with chords.
        let mut g = Graph {
            adj: vec![Vec::new(); 9],
            free: vec![4; 9],
            links: Vec::new(),
        };
        for i in 0..8u32 {
            g.join(i, (i + 1) % 8);
        }
        for i in 0..4u32 {
            g.join(i, i + 4);
        }
        // 0..8 have 1 free port each, switch 8 has 4.
        assert!(g.fix_up(&mut rng));
        assert!(g.free.iter().all(|&f| f == 0), "{:?}", g.free);
        assert!(g.connected());
        for (s, n) in g.adj.iter().enumerate() {
            assert_eq!(n.len(), 4, "switch {s}");
        }
    }

    /// Random matching leaves both kinds of stranded ports on small dense
    /// graphs (one switch with two or more; two neighbours with one
    /// each); the fix-up places them all.
    #[test]
    fn fix_up_handles_both_kinds_of_leftovers() {
        let (mut one_switch, mut two_neighbours, mut failed) = (0, 0, 0);
        for (n, r) in [(7u32, 4u32), (8, 5), (9, 6), (10, 7)] {
            for seed in 0..100 {
                let mut rng = Rng::new(seed, StreamKind::Workload, 0);
                let mut g = Graph {
                    adj: vec![Vec::new(); n as usize],
                    free: vec![r; n as usize],
                    links: Vec::new(),
                };
                g.match_randomly(&mut rng);
                let open: Vec<u32> = (0..n).filter(|&s| g.free[s as usize] > 0).collect();
                if open.iter().any(|&s| g.free[s as usize] >= 2) {
                    one_switch += 1;
                } else if open.len() >= 2 {
                    assert!(open.iter().all(|&a| open.iter().all(|&b| g.joined(a, b))));
                    two_neighbours += 1;
                }
                if g.fix_up(&mut rng) {
                    assert!(g.free.iter().all(|&f| f == 0), "{n} {r} {seed}");
                    assert!(g.adj.iter().all(|a| a.len() == r as usize));
                } else {
                    failed += 1;
                }
            }
        }
        assert!(
            one_switch > 0 && two_neighbours > 0,
            "{one_switch} {two_neighbours}"
        );
        assert_eq!(failed, 0);
    }

    #[test]
    fn a_graph_that_cannot_connect_is_refused() {
        // Degree 1: a perfect matching, never connected beyond 2 switches.
        let e = Topology::jellyfish(&spec(10, SwitchPorts::Degree(1), 10, 1)).unwrap_err();
        assert!(e.contains("no connected graph"), "{e}");
        check(&spec(2, SwitchPorts::Degree(1), 3, 1));
    }
}
