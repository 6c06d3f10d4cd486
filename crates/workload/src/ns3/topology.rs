//! The ns-3 topology file: `nodes switches links`, the switch ids, then one
//! link a line `a b rate delay error_rate`.

use std::collections::HashSet;

use engine::Time;

use super::text::{expect_fields, field, last_line, records};
use super::units::{parse_rate, parse_time};
use crate::error::WorkloadError;
use crate::flow::FlowSpec;
use engine::time::{MAX_RATE_BPS, MAX_TIME, MIN_RATE_BPS};

/// A point-to-point link between two nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct Ns3Link {
    pub a: u32,
    pub b: u32,
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay: Time,
    /// Per-packet loss probability.
    pub error_rate: f64,
}

/// A topology as ns-3 reads it: node ids are 0..nodes; those listed as
/// switches are switches, the rest are hosts.
#[derive(Clone, Debug, PartialEq)]
pub struct Ns3Topology {
    pub nodes: u32,
    /// Switch ids in file order.
    pub switches: Vec<u32>,
    pub links: Vec<Ns3Link>,
}

impl Ns3Topology {
    pub fn is_switch(&self, id: u32) -> bool {
        self.switches.contains(&id)
    }

    /// Host ids (the nodes that are not switches), ascending.
    pub fn hosts(&self) -> Vec<u32> {
        let mut sw = self.switches.clone();
        sw.sort_unstable();
        (0..self.nodes)
            .filter(|n| sw.binary_search(n).is_err())
            .collect()
    }

    /// Checks that every flow runs between two hosts of this topology.
    pub fn check_flows(&self, flows: &[FlowSpec]) -> Result<(), WorkloadError> {
        let hosts = self.hosts();
        for f in flows {
            for (end, id) in [("src", f.src), ("dst", f.dst)] {
                if hosts.binary_search(&id).is_err() {
                    let what = if id >= self.nodes {
                        "not a node"
                    } else {
                        "a switch"
                    };
                    return Err(WorkloadError::config(format!(
                        "flow {}: {end} {id} is {what} of the topology",
                        f.id
                    )));
                }
            }
        }
        Ok(())
    }
}

/// The most nodes a topology file may declare (its header is untrusted:
/// [`Ns3Topology::hosts`] and importers allocate by it).
pub const MAX_NODES: u32 = 1 << 24;

/// Parses a topology file; `origin` names it in errors.
pub fn parse_topology(text: &str, origin: &str) -> Result<Ns3Topology, WorkloadError> {
    let mut recs = records(text);
    let head = recs
        .next()
        .ok_or_else(|| WorkloadError::parse(origin, 1, "empty topology file"))?;
    expect_fields(&head, 3, "nodes switches links", origin)?;
    let count = |i: usize, what: &str| -> Result<u32, WorkloadError> {
        field(head.fields[i], what, "a count", origin, head.line)
    };
    let (nodes, n_switches, n_links) = (
        count(0, "nodes")?,
        count(1, "switches")?,
        count(2, "links")?,
    );
    if nodes > MAX_NODES {
        return Err(WorkloadError::parse(
            origin,
            head.line,
            format!("{nodes} nodes: at most {MAX_NODES} are supported"),
        ));
    }
    if n_switches > nodes {
        return Err(WorkloadError::parse(
            origin,
            head.line,
            format!("{n_switches} switches but only {nodes} nodes"),
        ));
    }
    let node_id = |tok: &str, what: &str, line: usize| -> Result<u32, WorkloadError> {
        let id: u32 = field(tok, what, "a node id", origin, line)?;
        if id >= nodes {
            return Err(WorkloadError::parse(
                origin,
                line,
                format!("{what} {id} is not below the node count {nodes}"),
            ));
        }
        Ok(id)
    };

    let mut switches = Vec::new();
    // A set, not a bitmap of `nodes` entries: the header is untrusted and
    // could claim billions of nodes.
    let mut seen = HashSet::new();
    if n_switches > 0 {
        let rec = recs.next().ok_or_else(|| {
            WorkloadError::parse(origin, last_line(text), "missing the line of switch ids")
        })?;
        if rec.fields.len() != n_switches as usize {
            return Err(WorkloadError::parse(
                origin,
                rec.line,
                format!(
                    "header says {n_switches} switches, this line lists {}",
                    rec.fields.len()
                ),
            ));
        }
        for tok in &rec.fields {
            let id = node_id(tok, "switch id", rec.line)?;
            if !seen.insert(id) {
                return Err(WorkloadError::parse(
                    origin,
                    rec.line,
                    format!("switch id {id} is listed twice"),
                ));
            }
            switches.push(id);
        }
    }

    // No capacity from the header: it is untrusted.
    let mut links = Vec::new();
    for rec in recs {
        if links.len() == n_links as usize {
            return Err(WorkloadError::parse(
                origin,
                rec.line,
                format!("header says {n_links} links, but the file has more"),
            ));
        }
        expect_fields(&rec, 5, "a b rate delay error_rate", origin)?;
        let f = &rec.fields;
        let a = node_id(f[0], "node", rec.line)?;
        let b = node_id(f[1], "node", rec.line)?;
        if a == b {
            return Err(WorkloadError::parse(
                origin,
                rec.line,
                format!("link from node {a} to itself"),
            ));
        }
        let at = |r: Result<_, String>| r.map_err(|m| WorkloadError::parse(origin, rec.line, m));
        let rate_bps = at(parse_rate(f[2]))?;
        // The TOML topologies' limits (README, "Limits and checks").
        if !(MIN_RATE_BPS..=MAX_RATE_BPS).contains(&rate_bps) {
            return Err(WorkloadError::parse(
                origin,
                rec.line,
                format!("link rate '{}' is outside 1 kb/s ..= 10000 Gb/s", f[2]),
            ));
        }
        let delay = at(parse_time(f[3]))?;
        if delay > MAX_TIME {
            return Err(WorkloadError::parse(
                origin,
                rec.line,
                format!("link delay '{}' is above 2^62 ps (about 53 days)", f[3]),
            ));
        }
        let error_rate: f64 = field(f[4], "error rate", "a number", origin, rec.line)?;
        if !(0.0..=1.0).contains(&error_rate) {
            return Err(WorkloadError::parse(
                origin,
                rec.line,
                format!("error rate {error_rate} is outside [0, 1]"),
            ));
        }
        links.push(Ns3Link {
            a,
            b,
            rate_bps,
            delay,
            error_rate,
        });
    }
    if links.len() != n_links as usize {
        return Err(WorkloadError::parse(
            origin,
            last_line(text),
            format!(
                "header (line {}) says {n_links} links, the file has {}",
                head.line,
                links.len()
            ),
        ));
    }
    Ok(Ns3Topology {
        nodes,
        switches,
        links,
    })
}
