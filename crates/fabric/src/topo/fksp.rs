//! Setting FKSP on a built network ([`Network::route_by_ksp`]): the ToR
//! layer (the switch each host hangs from), the k shortest loop-free
//! paths between every two ToRs by Yen's algorithm (`ksp.rs`), stored in
//! the routing tables' pinned paths (`pinned.rs`, whose doc gives the
//! design and what happens on link failures); and what tests and reports
//! read back. Touches the routes; reads the ports and hosts.

use crate::link::port::End;
use crate::link::Links;
use crate::net::core::Core;
use crate::net::NodeRole;
use crate::switch::Switches;
use crate::topo::ksp::Yen;
use crate::topo::pinned::Pinned;
use crate::topo::topology::Topology;
use engine::rng::stream_seed;
use engine::StreamKind;

/// The most paths FKSP stores (ToRs squared times k). Near the limit, a
/// Jellyfish of 360 switches of degree 8 with k = 8 takes about 5 s of
/// Yen and 70 MB at its peak; 1024 ToRs with k = 1, 1.4 s and 90 MB.
pub const MAX_PINNED_PATHS: u64 = 1 << 20;

/// Who chooses, among the k paths, the one a packet takes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PathChoice {
    /// FKSP: a seeded hash of the flow's identity pins it to one path.
    #[default]
    Flow,
    /// The source ToR's load balancer, among the first hops of the live
    /// paths, for each packet it balances (`topo/pinned.rs`).
    LoadBalancer,
}

/// Why FKSP cannot route a network.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KspError {
    /// A host is attached to no switch, so there is no ToR layer.
    NoTorLayer { host: String },
    /// Two ToRs are joined by fewer than k loop-free paths.
    TooFewPaths {
        from: String,
        to: String,
        found: usize,
        k: u32,
    },
    /// ToRs squared times k is above [`MAX_PINNED_PATHS`].
    TooMany { tors: u32, k: u32 },
}

impl std::fmt::Display for KspError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KspError::NoTorLayer { host } => write!(
                f,
                "k-shortest paths run between ToRs, the switches hosts hang from, but host \
                 {host} is attached to no switch"
            ),
            KspError::TooFewPaths { from, to, found, k } => write!(
                f,
                "k = {k} is above the {found} loop-free path(s) that exist from ToR {from} to \
                 ToR {to}; use k <= {found}"
            ),
            KspError::TooMany { tors, k } => write!(
                f,
                "{tors} ToRs with k = {k} make {} paths to store; at most {MAX_PINNED_PATHS} \
                 are supported",
                *tors as u64 * *tors as u64 * *k as u64
            ),
        }
    }
}

impl std::error::Error for KspError {}

/// What FKSP reads of the built network beyond the switches: the links,
/// the event core's node maps and the topology's names.
pub(crate) struct Built<'a> {
    pub links: &'a Links,
    pub core: &'a Core,
    pub topo: &'a Topology,
}

impl Switches {
    /// Per switch index: its links to other switches that are up, as
    /// (egress port, neighbour switch index).
    fn switch_adjacency(&self, links: &Links) -> Vec<Vec<(u32, u32)>> {
        let mut adj = vec![Vec::new(); self.nodes.len()];
        for (id, p) in links.ports.iter().enumerate() {
            if let (End::Switch(s, _), End::Switch(peer, _)) = (p.owner, p.peer) {
                if p.up {
                    adj[s as usize].push((id as u32, peer));
                }
            }
        }
        adj
    }

    /// The switch index each host hangs from.
    fn host_switches(built: &Built) -> Result<Vec<u32>, KspError> {
        let (ports, roles) = (&built.links.ports, &built.core.roles);
        built
            .core
            .host_port
            .iter()
            .zip(&built.core.host_node)
            .map(
                |(&p, &node)| match roles[ports[p as usize ^ 1].node as usize] {
                    NodeRole::Switch(s) => Ok(s),
                    NodeRole::Host(_) => Err(KspError::NoTorLayer {
                        host: built.topo.nodes[node as usize].name.clone(),
                    }),
                },
            )
            .collect()
    }

    fn switch_name(&self, built: &Built, s: u32) -> String {
        let node = built.links.ports[self.nodes[s as usize].ports[0] as usize].node;
        built.topo.nodes[node as usize].name.clone()
    }

    /// Routes every packet on one of the `k` shortest loop-free paths
    /// between its source and destination ToRs (see `topo/pinned.rs`),
    /// chosen by `choice`: FKSP's hash of the flow's identity, seeded by
    /// the run's seed, or the source ToR's load balancer. Takes ToRs
    /// squared times k runs of Yen's algorithm, halved by symmetry.
    pub(crate) fn route_by_ksp(
        &mut self,
        built: &Built,
        seed: u64,
        k: u32,
        choice: PathChoice,
    ) -> Result<(), KspError> {
        let host_switch = Self::host_switches(built)?;
        // ToRs numbered by switch index.
        let mut tor_of_switch = vec![u32::MAX; self.nodes.len()];
        for &s in &host_switch {
            tor_of_switch[s as usize] = 0;
        }
        let mut tor_switch = Vec::new();
        for (s, t) in tor_of_switch.iter_mut().enumerate() {
            if *t == 0 {
                *t = tor_switch.len() as u32;
                tor_switch.push(s as u32);
            }
        }
        let tors = tor_switch.len() as u32;
        if tors as u64 * tors as u64 * k as u64 > MAX_PINNED_PATHS {
            return Err(KspError::TooMany { tors, k });
        }
        let adj = self.switch_adjacency(built.links);
        let mut yen = Yen::new(self.nodes.len());
        // The paths of each pair a < b, row by row, path by path, as
        // (switch, egress port) hops; path j's are hops[start[j]..start[j + 1]].
        let (mut hops, mut start) = (Vec::new(), vec![0u32]);
        for a in 0..tors {
            for b in a + 1..tors {
                let (sa, sb) = (tor_switch[a as usize], tor_switch[b as usize]);
                let paths = yen.paths(&adj, sa, sb, k as usize);
                if paths.len() < k as usize {
                    return Err(KspError::TooFewPaths {
                        from: self.switch_name(built, sa),
                        to: self.switch_name(built, sb),
                        found: paths.len(),
                        k,
                    });
                }
                for p in paths {
                    hops.extend((0..p.len()).map(|h| [p.nodes[h], p.ports[h]]));
                    start.push(hops.len() as u32);
                }
            }
        }
        let host_tor = host_switch
            .iter()
            .map(|&s| tor_of_switch[s as usize])
            .collect();
        let seed = stream_seed(seed, StreamKind::Ecmp, 1 << 32);
        let mut pinned = Pinned::new(k, tors, seed, host_tor);
        // Path i of pair (a, b), a < b.
        let t = tors as usize;
        let upper = |a: usize, b: usize, i: usize| {
            let j = (a * t - a * (a + 1) / 2 + (b - a - 1)) * k as usize + i;
            &hops[start[j] as usize..start[j + 1] as usize]
        };
        for (a, &a_switch) in tor_switch.iter().enumerate() {
            for b in 0..t {
                for i in 0..k as usize {
                    if a < b {
                        pinned.push(upper(a, b, i).iter().copied());
                    } else if a > b {
                        // The reverse of b -> a: the same links, entered
                        // from the other end (port ^ 1), from a's switch.
                        let fwd = upper(b, a, i);
                        let n = fwd.len();
                        let node = |h: usize| if h == n { a_switch } else { fwd[h][0] };
                        pinned.push((0..n).map(|h| [node(n - h), fwd[n - 1 - h][1] ^ 1]));
                    } else {
                        pinned.push([]);
                    }
                }
            }
        }
        if choice == PathChoice::LoadBalancer {
            pinned.by_balancer();
        }
        let ports = &built.links.ports;
        pinned.refresh(|p| ports[p as usize].up);
        let (_, shortest) = std::mem::take(&mut self.routes).unpin();
        self.routes = shortest.pin(pinned);
        Ok(())
    }

    /// Under FKSP, the egress ports of every switch hop a packet of flow
    /// identity `flow` (`sport << 16 | src`) takes toward host `dst`
    /// while its pinned path is alive: the path's ports (empty between
    /// hosts of one ToR). None without FKSP.
    pub(crate) fn pinned_route(&self, flow: u32, dst: u32) -> Option<Vec<u32>> {
        let pinned = self.routes.pinned()?;
        let (a, b) = (pinned.tor_of(flow & 0xffff), pinned.tor_of(dst));
        let path = pinned.path(a, b, pinned.choice(flow, dst));
        Some(path.iter().map(|h| h[1]).collect())
    }

    /// Under FKSP, the k paths from the ToR of host `src` to that of host
    /// `dst`, shortest first, as the egress ports of their switch hops.
    pub(crate) fn ksp_paths(&self, src: u32, dst: u32) -> Vec<Vec<u32>> {
        let Some(pinned) = self.routes.pinned() else {
            return Vec::new();
        };
        let (a, b) = (pinned.tor_of(src), pinned.tor_of(dst));
        (0..pinned.k())
            .map(|i| pinned.path(a, b, i).iter().map(|h| h[1]).collect())
            .collect()
    }
}
