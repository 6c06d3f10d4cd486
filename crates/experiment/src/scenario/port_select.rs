//! Which egress ports `[output] ports` samples: `[node, peer]` pairs, or
//! selectors by level (`"all"`, `"host"`, `"switch"`, `"tor_up"`,
//! `"agg_down"`, ...), a selector alone or mixed with pairs in a list.
//! A switch's level is its distance in hops from the nearest host: 1 a
//! ToR (a leaf), 2 an aggregation switch (a leaf-spine's spine), 3 a core
//! switch. Its up ports lead to a switch of its level or above, its down
//! ports to a lower level (a host, at level 0). Reads the topology only.

use fabric::{NodeKind, Topology};
use serde::Deserialize;
use std::collections::VecDeque;

/// `ports = "all"`, or a list of `[node, peer]` pairs and selectors.
#[derive(Debug, Deserialize, Clone)]
#[serde(untagged)]
pub enum PortList {
    One(String),
    Many(Vec<PortItem>),
}

impl Default for PortList {
    fn default() -> PortList {
        PortList::Many(Vec::new())
    }
}

#[derive(Debug, Deserialize, Clone)]
#[serde(untagged)]
pub enum PortItem {
    Pair([String; 2]),
    Selector(String),
}

/// The selectors, as written.
pub const SELECTORS: [&str; 9] = [
    "all",
    "host",
    "switch",
    "tor_up",
    "tor_down",
    "agg_up",
    "agg_down",
    "core_up",
    "core_down",
];

impl PortList {
    pub fn items(&self) -> Vec<PortItem> {
        match self {
            PortList::One(s) => vec![PortItem::Selector(s.clone())],
            PortList::Many(v) => v.clone(),
        }
    }

    /// The `[node, peer]` pairs (selectors left out).
    pub fn pairs(&self) -> usize {
        self.items()
            .iter()
            .filter(|i| matches!(i, PortItem::Pair(_)))
            .count()
    }

    pub fn is_empty(&self) -> bool {
        matches!(self, PortList::Many(v) if v.is_empty())
    }
}

/// Each node's hops from the nearest host (u32::MAX: none reaches it).
fn levels(topo: &Topology) -> Vec<u32> {
    let n = topo.nodes.len();
    let mut adj = vec![Vec::new(); n];
    for l in &topo.links {
        adj[l.a as usize].push(l.b as usize);
        adj[l.b as usize].push(l.a as usize);
    }
    let mut level = vec![u32::MAX; n];
    let mut queue = VecDeque::new();
    for (i, node) in topo.nodes.iter().enumerate() {
        if node.kind == NodeKind::Host {
            level[i] = 0;
            queue.push_back(i);
        }
    }
    while let Some(i) = queue.pop_front() {
        for &j in &adj[i] {
            if level[j] == u32::MAX {
                level[j] = level[i] + 1;
                queue.push_back(j);
            }
        }
    }
    level
}

/// The egress ports (`2 * link` from `a` to `b`, `2 * link + 1` back)
/// selector `sel` names, in port order; Err: not a selector.
pub fn select(topo: &Topology, sel: &str) -> Result<Vec<u32>, String> {
    // The sending node's level (None: any), and whether the port leads
    // up (None: either way); "switch" is any level but the hosts'.
    let (tier, dir) = sel.split_once('_').unwrap_or((sel, ""));
    let (at, up): (Option<u32>, Option<bool>) = match (tier, dir) {
        ("all", "") | ("switch", "") => (None, None),
        ("host", "") => (Some(0), None),
        ("tor", d) | ("agg", d) | ("core", d) if d == "up" || d == "down" => {
            let l = match tier {
                "tor" => 1,
                "agg" => 2,
                _ => 3,
            };
            (Some(l), Some(d == "up"))
        }
        _ => {
            return Err(format!(
                "unknown port selector {sel:?}: expected a [node, peer] pair or one of {}",
                SELECTORS.map(|s| format!("{s:?}")).join(", ")
            ))
        }
    };
    let level = levels(topo);
    let switches_only = sel == "switch";
    let want = |a: u32, b: u32| {
        let (la, lb) = (level[a as usize], level[b as usize]);
        if switches_only {
            return la > 0;
        }
        at.is_none_or(|l| la == l) && up.is_none_or(|u| (lb >= la) == u)
    };
    let mut ports = Vec::new();
    for (i, link) in topo.links.iter().enumerate() {
        for (port, (a, b)) in [(2 * i, (link.a, link.b)), (2 * i + 1, (link.b, link.a))] {
            if want(a, b) {
                ports.push(port as u32);
            }
        }
    }
    Ok(ports)
}
