//! The `[topology]` section: its TOML types (one flat table whose keys
//! depend on `kind`), its checks (rates, delays, and the size of the
//! network before anything is allocated) and its build step, a fabric
//! [`Topology`] (or an imported ns-3 one; a Jellyfish drawn from the
//! run's seed).

use super::check::{gbps, ns, Check, ScenarioError, Source};
pub use super::check::{MAX_LINKS, MAX_NODES};
use crate::ns3::Imported;
use fabric::topo::jellyfish::{JellyfishSpec, SwitchPorts, MAX_SWITCH_PORTS};
use fabric::{NodeKind, Topology};
use serde::Deserialize;
use std::path::PathBuf;

pub(super) fn default_delay_ns() -> f64 {
    1000.0
}
pub(super) fn default_gbps() -> f64 {
    100.0
}

/// The `[topology]` section as written: one flat table, so that a wrong
/// type or unknown key is reported with its exact key and line; which keys
/// each `kind` needs is checked when it becomes a [`TopologyCfg`].
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct TopologyRaw {
    kind: TopologyKind,
    leaves: Option<u32>,
    spines: Option<u32>,
    hosts_per_leaf: Option<u32>,
    k: Option<u32>,
    paths: Option<u32>,
    hosts_per_tor: Option<u32>,
    switches: Option<u32>,
    degree: Option<u32>,
    ports: Option<u32>,
    hosts: Option<u32>,
    seed: Option<u64>,
    host_gbps: Option<f64>,
    fabric_gbps: Option<f64>,
    delay_ns: Option<f64>,
    nodes: Option<Vec<NodeCfg>>,
    links: Option<Vec<LinkCfg>>,
    file: Option<PathBuf>,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum TopologyKind {
    LeafSpine,
    FatTree,
    Testbed,
    Jellyfish,
    Edges,
    Ns3,
}

impl TopologyKind {
    fn name(self) -> &'static str {
        match self {
            TopologyKind::LeafSpine => "leaf_spine",
            TopologyKind::FatTree => "fat_tree",
            TopologyKind::Testbed => "testbed",
            TopologyKind::Jellyfish => "jellyfish",
            TopologyKind::Edges => "edges",
            TopologyKind::Ns3 => "ns3",
        }
    }
}

impl TryFrom<TopologyRaw> for TopologyCfg {
    type Error = String;

    fn try_from(r: TopologyRaw) -> Result<Self, String> {
        let kind = r.kind.name();
        let need = |name: &str, v: Option<u32>| {
            v.ok_or_else(|| format!("kind = \"{kind}\" needs `{name}`"))
        };
        let present: Vec<(&str, bool)> = vec![
            ("leaves", r.leaves.is_some()),
            ("spines", r.spines.is_some()),
            ("hosts_per_leaf", r.hosts_per_leaf.is_some()),
            ("k", r.k.is_some()),
            ("paths", r.paths.is_some()),
            ("hosts_per_tor", r.hosts_per_tor.is_some()),
            ("switches", r.switches.is_some()),
            ("degree", r.degree.is_some()),
            ("ports", r.ports.is_some()),
            ("hosts", r.hosts.is_some()),
            ("seed", r.seed.is_some()),
            ("host_gbps", r.host_gbps.is_some()),
            ("fabric_gbps", r.fabric_gbps.is_some()),
            ("delay_ns", r.delay_ns.is_some()),
            ("nodes", r.nodes.is_some()),
            ("links", r.links.is_some()),
            ("file", r.file.is_some()),
        ];
        let rates = ["host_gbps", "fabric_gbps", "delay_ns"];
        let allowed: Vec<&str> = match r.kind {
            TopologyKind::LeafSpine => {
                [&["leaves", "spines", "hosts_per_leaf"][..], &rates].concat()
            }
            TopologyKind::FatTree => [&["k"][..], &rates].concat(),
            TopologyKind::Testbed => [&["paths", "hosts_per_tor"][..], &rates].concat(),
            TopologyKind::Jellyfish => [
                &["switches", "degree", "ports", "hosts", "seed"][..],
                &rates,
            ]
            .concat(),
            TopologyKind::Edges => vec!["nodes", "links"],
            TopologyKind::Ns3 => vec!["file"],
        };
        if let Some((name, _)) = present.iter().find(|(n, p)| *p && !allowed.contains(n)) {
            return Err(format!(
                "`{name}` does not apply to kind = \"{kind}\" (its keys: {})",
                allowed.join(", ")
            ));
        }
        let host_gbps = r.host_gbps.unwrap_or_else(default_gbps);
        let fabric_gbps = r.fabric_gbps.unwrap_or_else(default_gbps);
        let delay_ns = r.delay_ns.unwrap_or_else(default_delay_ns);
        Ok(match r.kind {
            TopologyKind::LeafSpine => TopologyCfg::LeafSpine {
                leaves: need("leaves", r.leaves)?,
                spines: need("spines", r.spines)?,
                hosts_per_leaf: need("hosts_per_leaf", r.hosts_per_leaf)?,
                host_gbps,
                fabric_gbps,
                delay_ns,
            },
            TopologyKind::FatTree => TopologyCfg::FatTree {
                k: need("k", r.k)?,
                host_gbps,
                fabric_gbps,
                delay_ns,
            },
            TopologyKind::Testbed => TopologyCfg::Testbed {
                paths: need("paths", r.paths)?,
                hosts_per_tor: need("hosts_per_tor", r.hosts_per_tor)?,
                host_gbps,
                fabric_gbps,
                delay_ns,
            },
            TopologyKind::Jellyfish => TopologyCfg::Jellyfish {
                switches: need("switches", r.switches)?,
                ports: match (r.degree, r.ports) {
                    (Some(d), None) => SwitchPorts::Degree(d),
                    (None, Some(p)) => SwitchPorts::Total(p),
                    (None, None) => {
                        return Err("kind = \"jellyfish\" needs `degree` or `ports`".into())
                    }
                    (Some(_), Some(_)) => {
                        return Err(
                            "kind = \"jellyfish\" takes `degree` or `ports`, not both".into()
                        )
                    }
                },
                hosts: need("hosts", r.hosts)?,
                seed: r.seed,
                host_gbps,
                fabric_gbps,
                delay_ns,
            },
            TopologyKind::Edges => TopologyCfg::Edges {
                nodes: r.nodes.ok_or("kind = \"edges\" needs `nodes`")?,
                links: r.links.ok_or("kind = \"edges\" needs `links`")?,
            },
            TopologyKind::Ns3 => TopologyCfg::Ns3 {
                file: r.file.ok_or("kind = \"ns3\" needs `file`")?,
            },
        })
    }
}

#[derive(Debug, Deserialize, Clone)]
#[serde(try_from = "TopologyRaw")]
pub enum TopologyCfg {
    LeafSpine {
        leaves: u32,
        spines: u32,
        hosts_per_leaf: u32,
        host_gbps: f64,
        fabric_gbps: f64,
        delay_ns: f64,
    },
    FatTree {
        k: u32,
        host_gbps: f64,
        fabric_gbps: f64,
        delay_ns: f64,
    },
    Testbed {
        paths: u32,
        hosts_per_tor: u32,
        host_gbps: f64,
        fabric_gbps: f64,
        delay_ns: f64,
    },
    /// A random regular graph of `switches` switches (Jellyfish) with
    /// `hosts` spread evenly, drawn from `seed` (default: the run's seed).
    Jellyfish {
        switches: u32,
        ports: SwitchPorts,
        hosts: u32,
        seed: Option<u64>,
        host_gbps: f64,
        fabric_gbps: f64,
        delay_ns: f64,
    },
    Edges {
        nodes: Vec<NodeCfg>,
        links: Vec<LinkCfg>,
    },
    /// An HPCC ns-3 topology file (path relative to the scenario file).
    Ns3 { file: PathBuf },
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct NodeCfg {
    pub name: String,
    pub kind: NodeKindCfg,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NodeKindCfg {
    Host,
    Switch,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct LinkCfg {
    pub a: String,
    pub b: String,
    #[serde(default = "default_gbps")]
    pub gbps: f64,
    #[serde(default = "default_delay_ns")]
    pub delay_ns: f64,
}

/// The key a Jellyfish's switch ports were given by.
fn ports_key(p: SwitchPorts) -> &'static str {
    match p {
        SwitchPorts::Degree(_) => "topology.degree",
        SwitchPorts::Total(_) => "topology.ports",
    }
}

/// A Jellyfish's counts: at least two switches and one host, every switch
/// with at least one switch link and no more than there are other
/// switches, at most [`MAX_SWITCH_PORTS`] ports; its (nodes, links).
fn check_jellyfish(spec: &JellyfishSpec, c: Check) -> Result<(u64, u64), ScenarioError> {
    let n = c.at_least("topology.switches", spec.switches, 2)?;
    c.at_least("topology.hosts", spec.hosts, 1)?;
    let key = ports_key(spec.ports);
    let most_hosts = spec.hosts.div_ceil(n);
    // Switch 0 has the most hosts, the last switch the fewest.
    let (fewest_net, most_net) = (spec.network_ports(0), spec.network_ports(n - 1));
    let total = match spec.ports {
        SwitchPorts::Degree(d) => d as u64 + most_hosts as u64,
        SwitchPorts::Total(p) => p as u64,
    };
    if fewest_net == 0 {
        return Err(c.err(
            key,
            format!("leaves no port for switch links on a switch with {most_hosts} hosts"),
        ));
    }
    if most_net >= n {
        return Err(c.err(
            key,
            format!(
                "gives a switch {most_net} switch links, but there are only {} other switches",
                n - 1
            ),
        ));
    }
    if total > MAX_SWITCH_PORTS as u64 {
        return Err(c.err(
            key,
            format!(
                "makes switches of {total} ports ({most_hosts} hosts and their switch links); \
                 at most {MAX_SWITCH_PORTS} are supported"
            ),
        ));
    }
    let nodes = spec.hosts as u64 + n as u64;
    Ok((nodes, spec.hosts as u64 + spec.network_port_total() / 2))
}

/// `a * b` as u64 (cannot overflow).
fn mul(a: u32, b: u32) -> u64 {
    a as u64 * b as u64
}

impl TopologyCfg {
    /// Checks every number and the network's size (nodes and links within
    /// [`MAX_NODES`] and [`MAX_LINKS`]) without building anything.
    pub fn validate(&self, c: Check) -> Result<(), ScenarioError> {
        let rates = |h: f64, f: f64, d: f64| -> Result<(), ScenarioError> {
            c.gbps("topology.host_gbps", h)?;
            c.gbps("topology.fabric_gbps", f)?;
            c.ns("topology.delay_ns", d)?;
            Ok(())
        };
        // (key of the size, nodes, links)
        let (size_key, nodes, links) = match self {
            TopologyCfg::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf,
                host_gbps,
                fabric_gbps,
                delay_ns,
            } => {
                for (k, v) in [
                    ("leaves", leaves),
                    ("spines", spines),
                    ("hosts_per_leaf", hosts_per_leaf),
                ] {
                    c.at_least(&format!("topology.{k}"), *v, 1)?;
                }
                rates(*host_gbps, *fabric_gbps, *delay_ns)?;
                let hosts = mul(*leaves, *hosts_per_leaf);
                (
                    "topology",
                    hosts + *leaves as u64 + *spines as u64,
                    hosts + mul(*leaves, *spines),
                )
            }
            TopologyCfg::FatTree {
                k,
                host_gbps,
                fabric_gbps,
                delay_ns,
            } => {
                if *k < 2 || k % 2 != 0 {
                    return Err(c.err(
                        "topology.k",
                        format!("must be an even number >= 2, got {k}"),
                    ));
                }
                rates(*host_gbps, *fabric_gbps, *delay_ns)?;
                let (k, half) = (*k as u64, *k as u64 / 2);
                // k^3/4 hosts, k^2 edge and aggregation switches, k^2/4
                // cores; k^3/4 links at each of the three levels.
                (
                    "topology.k",
                    k * half * half + k * k + half * half,
                    3 * k * half * half,
                )
            }
            TopologyCfg::Testbed {
                paths,
                hosts_per_tor,
                host_gbps,
                fabric_gbps,
                delay_ns,
            } => {
                c.at_least("topology.paths", *paths, 1)?;
                c.at_least("topology.hosts_per_tor", *hosts_per_tor, 1)?;
                rates(*host_gbps, *fabric_gbps, *delay_ns)?;
                (
                    "topology",
                    2 * *hosts_per_tor as u64 + 2 + *paths as u64,
                    2 * *hosts_per_tor as u64 + 2 * *paths as u64,
                )
            }
            TopologyCfg::Jellyfish {
                host_gbps,
                fabric_gbps,
                delay_ns,
                ..
            } => {
                rates(*host_gbps, *fabric_gbps, *delay_ns)?;
                let spec = self.jellyfish(0).expect("a Jellyfish");
                let (nodes, links) = check_jellyfish(&spec, c)?;
                ("topology", nodes, links)
            }
            TopologyCfg::Edges { nodes, links } => {
                for (i, l) in links.iter().enumerate() {
                    c.gbps(&format!("topology.links[{i}].gbps"), l.gbps)?;
                    c.ns(&format!("topology.links[{i}].delay_ns"), l.delay_ns)?;
                }
                ("topology", nodes.len() as u64, links.len() as u64)
            }
            // Checked as the file is read (workload::ns3 limits its header).
            TopologyCfg::Ns3 { .. } => return Ok(()),
        };
        if nodes > MAX_NODES || links > MAX_LINKS {
            return Err(c.err(
                size_key,
                format!(
                    "this topology has {nodes} nodes and {links} links; at most \
                     {MAX_NODES} nodes and {MAX_LINKS} links are supported"
                ),
            ));
        }
        Ok(())
    }

    /// The host link rate this section gives (ns-3 imports: 100G), for the
    /// congestion control presets that scale with it.
    pub fn host_bps(&self) -> u64 {
        match self {
            TopologyCfg::LeafSpine { host_gbps, .. }
            | TopologyCfg::FatTree { host_gbps, .. }
            | TopologyCfg::Testbed { host_gbps, .. }
            | TopologyCfg::Jellyfish { host_gbps, .. } => gbps(*host_gbps),
            TopologyCfg::Edges { links, .. } => {
                links.first().map_or(100_000_000_000, |l| gbps(l.gbps))
            }
            TopologyCfg::Ns3 { .. } => 100_000_000_000,
        }
    }

    /// The Jellyfish this section describes, drawn from its `seed` or
    /// else `run_seed` (None for other kinds).
    fn jellyfish(&self, run_seed: u64) -> Option<JellyfishSpec> {
        let TopologyCfg::Jellyfish {
            switches,
            ports,
            hosts,
            seed,
            host_gbps,
            fabric_gbps,
            delay_ns,
        } = self
        else {
            return None;
        };
        Some(JellyfishSpec {
            switches: *switches,
            ports: *ports,
            hosts: *hosts,
            host_bps: gbps(*host_gbps),
            fabric_bps: gbps(*fabric_gbps),
            delay: ns(*delay_ns),
            seed: seed.unwrap_or(run_seed),
        })
    }

    /// Builds the topology (after [`TopologyCfg::validate`]); `seed` is
    /// the run's (a Jellyfish without its own `seed` is drawn from it).
    pub fn build(&self, c: Check, src: Source, seed: u64) -> Result<Imported, ScenarioError> {
        let topo = match self {
            TopologyCfg::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf,
                host_gbps,
                fabric_gbps,
                delay_ns,
            } => Topology::leaf_spine(
                *leaves,
                *spines,
                *hosts_per_leaf,
                gbps(*host_gbps),
                gbps(*fabric_gbps),
                ns(*delay_ns),
            ),
            TopologyCfg::FatTree {
                k,
                host_gbps,
                fabric_gbps,
                delay_ns,
            } => Topology::fat_tree(*k, gbps(*host_gbps), gbps(*fabric_gbps), ns(*delay_ns)),
            TopologyCfg::Testbed {
                paths,
                hosts_per_tor,
                host_gbps,
                fabric_gbps,
                delay_ns,
            } => Topology::testbed(
                *paths,
                *hosts_per_tor,
                gbps(*host_gbps),
                gbps(*fabric_gbps),
                ns(*delay_ns),
            ),
            TopologyCfg::Jellyfish { ports, .. } => {
                let spec = self.jellyfish(seed).expect("a Jellyfish");
                Topology::jellyfish(&spec).map_err(|m| c.err(ports_key(*ports), m))?
            }
            TopologyCfg::Edges { nodes, links } => {
                let mut t = Topology::default();
                for n in nodes {
                    let kind = match n.kind {
                        NodeKindCfg::Host => NodeKind::Host,
                        NodeKindCfg::Switch => NodeKind::Switch,
                    };
                    t.add_node(n.name.clone(), kind);
                }
                for (i, l) in links.iter().enumerate() {
                    let find = |end: &str, name: &str| {
                        t.node_by_name(name).ok_or_else(|| {
                            c.err(
                                format!("topology.links[{i}].{end}"),
                                format!("no node named {name:?} in topology.nodes"),
                            )
                        })
                    };
                    let a = find("a", &l.a)?;
                    let b = find("b", &l.b)?;
                    t.add_link(a, b, gbps(l.gbps), ns(l.delay_ns));
                }
                t
            }
            TopologyCfg::Ns3 { file } => {
                let (text, shown) = src.read(file).map_err(|m| c.err("topology.file", m))?;
                return crate::ns3::import_topology(&text, &shown)
                    .map_err(|m| c.err("topology.file", m));
            }
        };
        topo.validate().map_err(|m| c.err("topology", m))?;
        Ok(Imported {
            topo,
            ns3_hosts: None,
        })
    }
}
