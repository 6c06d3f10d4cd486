//! Bringing HPCC ns-3 topology and flow files into rdmalab: node ids become
//! hosts (numbered 0.. in id order) and switches (named `sw<id>`), and the
//! flows' node ids become host ids. Touches only what it is given.

use crate::scenario::check::{MAX_LINKS, MAX_NODES};
use fabric::{NodeKind, Topology};
use workload::FlowSpec;

pub struct Imported {
    pub topo: Topology,
    /// Host id of each ns-3 node id (None for switches), when imported.
    pub ns3_hosts: Option<Vec<Option<u32>>>,
}

pub fn import_topology(text: &str, origin: &str) -> Result<Imported, String> {
    let ns3 = workload::ns3::parse_topology(text, origin).map_err(|e| e.to_string())?;
    // The header is untrusted: check its counts before allocating by them.
    if ns3.nodes as u64 > MAX_NODES || ns3.links.len() as u64 > MAX_LINKS {
        return Err(format!(
            "{origin}: {} nodes and {} links; at most {MAX_NODES} nodes and {MAX_LINKS} links \
             are supported",
            ns3.nodes,
            ns3.links.len()
        ));
    }
    let mut is_switch = vec![false; ns3.nodes as usize];
    for &s in &ns3.switches {
        is_switch[s as usize] = true;
    }
    let mut t = Topology::default();
    let mut hosts = Vec::with_capacity(ns3.nodes as usize);
    let mut next_host = 0;
    for (id, &sw) in is_switch.iter().enumerate() {
        if sw {
            t.add_node(format!("sw{id}"), NodeKind::Switch);
            hosts.push(None);
        } else {
            t.add_node(format!("h{next_host}"), NodeKind::Host);
            hosts.push(Some(next_host));
            next_host += 1;
        }
    }
    for l in &ns3.links {
        t.add_link(l.a, l.b, l.rate_bps, l.delay);
    }
    t.validate().map_err(|m| format!("{origin}: {m}"))?;
    Ok(Imported {
        topo: t,
        ns3_hosts: Some(hosts),
    })
}

/// Rewrites ns-3 node ids in `specs` to host ids.
pub fn map_hosts(specs: &mut [FlowSpec], map: &[Option<u32>], origin: &str) -> Result<(), String> {
    for (j, s) in specs.iter_mut().enumerate() {
        let host = |n: u32| map.get(n as usize).copied().flatten();
        match (host(s.src), host(s.dst)) {
            (Some(a), Some(b)) => {
                s.src = a;
                s.dst = b;
            }
            _ => {
                return Err(format!(
                    "{origin}: flow {j} ({} -> {}) does not join two hosts",
                    s.src, s.dst
                ))
            }
        }
    }
    Ok(())
}
