//! Where CONGA runs: a two-tier leaf-spine, read off the topology. Leaves
//! are the switches with hosts, spines the others; every switch-to-switch
//! link must join a leaf to a spine, at most once per pair, so that a
//! leaf's uplink (its LBTag) names a whole path to any other leaf. Each
//! port gets its role: toward a host, a leaf's uplink (by its ordinal
//! among the leaf's uplinks) or a spine's downlink. Plain data: touches
//! nothing.

use crate::topo::topology::{NodeKind, Topology};

/// No leaf (a spine), or no uplink.
pub const NONE: u16 = u16::MAX;
/// The role of a port toward a host.
pub const HOST: u16 = u16::MAX;
/// The role of a spine's port (toward a leaf).
pub const DOWN: u16 = u16::MAX - 1;

pub struct Leaves {
    /// Each switch's leaf index, or [`NONE`] for a spine.
    pub of_switch: Vec<u16>,
    /// Each host's leaf index.
    pub of_host: Vec<u16>,
    /// Each port's role: [`HOST`], [`DOWN`], or the uplink's ordinal at
    /// its leaf.
    pub role: Vec<u16>,
    pub count: usize,
    /// The most uplinks a leaf has.
    pub uplinks: usize,
}

impl Leaves {
    /// The leaves of `topo`, or why it is not a two-tier leaf-spine.
    pub fn of(topo: &Topology) -> Result<Leaves, String> {
        const NEEDS: &str = "CONGA needs a two-tier leaf-spine (leaves: the switches with hosts; \
                             spines: the others; every switch-to-switch link joining a leaf to a \
                             spine, once per pair)";
        let nodes = &topo.nodes;
        let name = |n: u32| &nodes[n as usize].name;
        let is_switch = |n: u32| nodes[n as usize].kind == NodeKind::Switch;
        // Index of each node among its kind.
        let mut index = Vec::with_capacity(nodes.len());
        let (mut hosts, mut switches) = (0u32, 0u32);
        for n in nodes {
            let i = if n.kind == NodeKind::Switch {
                &mut switches
            } else {
                &mut hosts
            };
            index.push(*i);
            *i += 1;
        }
        let mut has_host = vec![false; nodes.len()];
        for l in &topo.links {
            for (a, b) in [(l.a, l.b), (l.b, l.a)] {
                if is_switch(a) && !is_switch(b) {
                    has_host[a as usize] = true;
                }
            }
        }
        let mut of_switch = vec![NONE; switches as usize];
        let mut count = 0usize;
        for (n, node) in nodes.iter().enumerate() {
            if node.kind == NodeKind::Switch && has_host[n] {
                if count == NONE as usize {
                    return Err(format!("{NEEDS}: more than {} leaves", NONE));
                }
                of_switch[index[n] as usize] = count as u16;
                count += 1;
            }
        }
        if count == 0 {
            return Err(format!("{NEEDS}: no switch has hosts"));
        }
        let leaf = |n: u32| is_switch(n) && has_host[n as usize];
        let mut of_host = vec![NONE; hosts as usize];
        let mut role = vec![DOWN; 2 * topo.links.len()];
        let mut uplinks = vec![0u16; count];
        let mut pairs = std::collections::HashSet::new();
        for (i, l) in topo.links.iter().enumerate() {
            for (end, (a, b)) in [(l.a, l.b), (l.b, l.a)].into_iter().enumerate() {
                let port = 2 * i + end;
                if !is_switch(a) {
                    if is_switch(b) {
                        of_host[index[a as usize] as usize] = of_switch[index[b as usize] as usize];
                    }
                } else if !is_switch(b) {
                    role[port] = HOST;
                } else if leaf(a) == leaf(b) {
                    let tier = if leaf(a) { "leaves" } else { "spines" };
                    return Err(format!(
                        "{NEEDS}: {} and {} are joined but both {tier}",
                        name(a),
                        name(b)
                    ));
                } else if leaf(a) {
                    if !pairs.insert((a, b)) {
                        return Err(format!(
                            "{NEEDS}: {} and {} are joined by more than one link",
                            name(a),
                            name(b)
                        ));
                    }
                    let k = &mut uplinks[of_switch[index[a as usize] as usize] as usize];
                    role[port] = *k;
                    *k += 1;
                }
            }
        }
        Ok(Leaves {
            of_switch,
            of_host,
            role,
            count,
            uplinks: uplinks.into_iter().max().unwrap_or(0) as usize,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leaf_spine_has_leaves_uplinks_and_roles() {
        let t = Topology::leaf_spine(3, 2, 2, 100, 100, 1);
        let l = Leaves::of(&t).unwrap();
        assert_eq!((l.count, l.uplinks), (3, 2));
        assert_eq!(l.of_switch, vec![0, 1, 2, NONE, NONE]);
        assert_eq!(l.of_host, vec![0, 0, 1, 1, 2, 2]);
        // Host links first (the host's end, then the leaf's), then leaf i
        // to spine j.
        assert_eq!(&l.role[..4], &[DOWN, HOST, DOWN, HOST]);
        let fabric: Vec<u16> = l.role[12..].to_vec();
        assert_eq!(
            fabric,
            vec![0, DOWN, 1, DOWN, 0, DOWN, 1, DOWN, 0, DOWN, 1, DOWN]
        );
        assert!(Leaves::of(&Topology::testbed(4, 2, 100, 100, 1)).is_ok());
    }

    #[test]
    fn other_shapes_are_refused_with_the_reason() {
        let err = |t: Topology| Leaves::of(&t).err().expect("refused");
        // A fat tree's aggregation switches join edges (leaves) and cores
        // (spines too).
        let e = err(Topology::fat_tree(4, 100, 100, 1));
        assert!(e.contains("both spines"), "{e}");
        let mut t = Topology::leaf_spine(2, 1, 1, 100, 100, 1);
        t.add_link(2, 3, 100, 1);
        let e = err(t);
        assert!(
            e.contains("leaf0 and leaf1 are joined but both leaves"),
            "{e}"
        );
        let mut t = Topology::leaf_spine(2, 1, 1, 100, 100, 1);
        t.add_link(2, 4, 100, 1);
        let e = err(t);
        assert!(
            e.contains("leaf0 and spine0 are joined by more than one link"),
            "{e}"
        );
    }
}
