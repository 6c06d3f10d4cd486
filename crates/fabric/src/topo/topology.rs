//! Topology descriptions and their builders: leaf-spine, k-ary fat tree, the
//! MP-RDMA two-ToR testbed, and explicit edge lists.
//!
//! A description is plain data (named nodes, links with rate and delay); the
//! network is built from it elsewhere. Hosts are numbered 0.. in the order
//! they appear among the nodes.

use engine::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Switch,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSpec {
    pub name: String,
    pub kind: NodeKind,
}

/// A full-duplex link; both directions have the same rate and delay.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    pub a: u32,
    pub b: u32,
    pub rate_bps: u64,
    pub delay: Time,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Topology {
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<LinkSpec>,
}

impl Topology {
    pub fn add_node(&mut self, name: String, kind: NodeKind) -> u32 {
        self.nodes.push(NodeSpec { name, kind });
        self.nodes.len() as u32 - 1
    }

    pub fn add_link(&mut self, a: u32, b: u32, rate_bps: u64, delay: Time) {
        self.links.push(LinkSpec {
            a,
            b,
            rate_bps,
            delay,
        });
    }

    pub fn host_count(&self) -> usize {
        self.nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Host)
            .count()
    }

    pub fn switch_count(&self) -> usize {
        self.nodes.len() - self.host_count()
    }

    pub fn node_by_name(&self, name: &str) -> Option<u32> {
        self.nodes
            .iter()
            .position(|n| n.name == name)
            .map(|i| i as u32)
    }

    /// Two-tier leaf-spine: every leaf connects to every spine once.
    /// Oversubscription follows from the rates: hosts_per_leaf * host_bps
    /// down against spines * fabric_bps up.
    pub fn leaf_spine(
        leaves: u32,
        spines: u32,
        hosts_per_leaf: u32,
        host_bps: u64,
        fabric_bps: u64,
        delay: Time,
    ) -> Topology {
        let mut t = Topology::default();
        for h in 0..leaves * hosts_per_leaf {
            t.add_node(format!("h{h}"), NodeKind::Host);
        }
        let leaf0 = t.nodes.len() as u32;
        for l in 0..leaves {
            t.add_node(format!("leaf{l}"), NodeKind::Switch);
        }
        let spine0 = t.nodes.len() as u32;
        for s in 0..spines {
            t.add_node(format!("spine{s}"), NodeKind::Switch);
        }
        for h in 0..leaves * hosts_per_leaf {
            t.add_link(h, leaf0 + h / hosts_per_leaf, host_bps, delay);
        }
        for l in 0..leaves {
            for s in 0..spines {
                t.add_link(leaf0 + l, spine0 + s, fabric_bps, delay);
            }
        }
        t
    }

    /// Three-tier k-ary fat tree (k even): k pods of k/2 edge and k/2
    /// aggregation switches, (k/2)^2 cores, k^3/4 hosts.
    pub fn fat_tree(k: u32, host_bps: u64, fabric_bps: u64, delay: Time) -> Topology {
        let half = k / 2;
        let mut t = Topology::default();
        let hosts = k * half * half;
        for h in 0..hosts {
            t.add_node(format!("h{h}"), NodeKind::Host);
        }
        let edge0 = t.nodes.len() as u32;
        for e in 0..k * half {
            t.add_node(format!("edge{e}"), NodeKind::Switch);
        }
        let agg0 = t.nodes.len() as u32;
        for a in 0..k * half {
            t.add_node(format!("agg{a}"), NodeKind::Switch);
        }
        let core0 = t.nodes.len() as u32;
        for c in 0..half * half {
            t.add_node(format!("core{c}"), NodeKind::Switch);
        }
        for h in 0..hosts {
            t.add_link(h, edge0 + h / half, host_bps, delay);
        }
        for pod in 0..k {
            for e in 0..half {
                for a in 0..half {
                    t.add_link(
                        edge0 + pod * half + e,
                        agg0 + pod * half + a,
                        fabric_bps,
                        delay,
                    );
                }
            }
            for a in 0..half {
                for c in 0..half {
                    t.add_link(
                        agg0 + pod * half + a,
                        core0 + a * half + c,
                        fabric_bps,
                        delay,
                    );
                }
            }
        }
        t
    }

    /// The MP-RDMA testbed: two ToRs joined by `paths` parallel spines, with
    /// `hosts_per_tor` hosts under each ToR (hosts 0.. under tor0).
    pub fn testbed(
        paths: u32,
        hosts_per_tor: u32,
        host_bps: u64,
        fabric_bps: u64,
        delay: Time,
    ) -> Topology {
        let mut t = Topology::default();
        for h in 0..2 * hosts_per_tor {
            t.add_node(format!("h{h}"), NodeKind::Host);
        }
        let tor0 = t.add_node("tor0".into(), NodeKind::Switch);
        let tor1 = t.add_node("tor1".into(), NodeKind::Switch);
        for h in 0..2 * hosts_per_tor {
            let tor = if h < hosts_per_tor { tor0 } else { tor1 };
            t.add_link(h, tor, host_bps, delay);
        }
        for p in 0..paths {
            let s = t.add_node(format!("spine{p}"), NodeKind::Switch);
            t.add_link(tor0, s, fabric_bps, delay);
            t.add_link(s, tor1, fabric_bps, delay);
        }
        t
    }

    /// Checks what the network builder relies on; the error names the link
    /// or node at fault.
    pub fn validate(&self) -> Result<(), String> {
        let n = self.nodes.len() as u32;
        let mut degree = vec![0u32; self.nodes.len()];
        for (i, l) in self.links.iter().enumerate() {
            if l.a >= n || l.b >= n {
                return Err(format!(
                    "link {i} joins node {} and node {}, but there are only {n} nodes",
                    l.a, l.b
                ));
            }
            if l.a == l.b {
                return Err(format!(
                    "link {i} joins node {} to itself",
                    self.nodes[l.a as usize].name
                ));
            }
            if l.rate_bps == 0 {
                return Err(format!("link {i} has a rate of 0"));
            }
            degree[l.a as usize] += 1;
            degree[l.b as usize] += 1;
        }
        let mut seen = std::collections::HashSet::new();
        for (i, node) in self.nodes.iter().enumerate() {
            if !seen.insert(node.name.as_str()) {
                return Err(format!("node name {:?} is used twice", node.name));
            }
            if node.kind == NodeKind::Host && degree[i] != 1 {
                return Err(format!(
                    "host {} has {} links; a host has exactly one",
                    node.name, degree[i]
                ));
            }
        }
        if self.host_count() == 0 {
            return Err("the topology has no hosts".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const G: u64 = 1_000_000_000;

    #[test]
    fn fat_tree_sizes() {
        let t = Topology::fat_tree(8, 100 * G, 100 * G, 1000);
        assert_eq!(t.host_count(), 128);
        assert_eq!(t.switch_count(), 80);
        assert_eq!(t.links.len(), 384);
        let t = Topology::fat_tree(12, 100 * G, 100 * G, 1000);
        assert_eq!(t.host_count(), 432);
        t.validate().unwrap();
    }

    #[test]
    fn leaf_spine_and_testbed_sizes() {
        let t = Topology::leaf_spine(8, 8, 16, 100 * G, 100 * G, 1000);
        assert_eq!(
            (t.host_count(), t.switch_count(), t.links.len()),
            (128, 16, 192)
        );
        let t = Topology::leaf_spine(32, 4, 10, 40 * G, 100 * G, 1000);
        assert_eq!(
            (t.host_count(), t.switch_count(), t.links.len()),
            (320, 36, 448)
        );
        let t = Topology::testbed(4, 5, 40 * G, 40 * G, 1000);
        assert_eq!(
            (t.host_count(), t.switch_count(), t.links.len()),
            (10, 6, 18)
        );
        t.validate().unwrap();
    }

    #[test]
    fn validate_names_the_fault() {
        let mut t = Topology::testbed(1, 1, G, G, 1);
        t.add_link(0, 99, G, 1);
        assert!(t.validate().unwrap_err().contains("node 99"));
        let mut t = Topology::testbed(1, 1, G, G, 1);
        t.add_link(0, 3, G, 1);
        assert!(t.validate().unwrap_err().contains("host h0 has 2 links"));
    }
}
