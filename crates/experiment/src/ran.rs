//! What ran, as `summary.json` records it and the readable summary's first
//! lines say: the scenario's text after `--set`/`--vary` (its SHA-256; the
//! run's identity is made from it), the overrides themselves, and the
//! setup that decides most results (topology, transport, congestion
//! control, load balancer, ordering, PFC). Reads only the scenario.

use crate::scenario::{CcKind, TopologyCfg};
use crate::Scenario;
use serde::Serialize;

/// What a run was made from, before it ran.
pub struct Ran {
    /// The scenario's text after overrides (a benchmark: also its mode,
    /// flow count and hash), for `scenario_sha256` and the `run_id`.
    pub text: String,
    pub overrides: Vec<(String, String)>,
    pub setup: Setup,
}

impl Ran {
    /// What ran of `sc`, parsed from `text` (after `overrides`).
    pub fn new(sc: &Scenario, text: &str, overrides: &[(String, String)]) -> Ran {
        Ran {
            text: text.to_string(),
            overrides: overrides.to_vec(),
            setup: Setup::of(sc),
        }
    }
}

/// The choices that decide most results, named as the scenario file names
/// them.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Setup {
    /// The kind and its sizes, e.g. `leaf_spine: 4 leaves, 2 spines, 8
    /// hosts per leaf, 100/200 Gb/s`.
    pub topology: String,
    /// `[transport] kind` of the QPs (flows may name their own).
    pub transport: &'static str,
    pub congestion_control: &'static str,
    pub load_balancer: &'static str,
    pub ordering: String,
    pub pfc: bool,
}

impl Setup {
    pub fn of(sc: &Scenario) -> Setup {
        let t = &sc.transport;
        Setup {
            topology: topology(&sc.topology),
            transport: t.kind.name(),
            congestion_control: cc_name(t.cc),
            load_balancer: sc.switch.load_balancer.name(),
            ordering: t.ordering.clone(),
            pfc: sc.switch.pfc,
        }
    }
}

/// `[transport] cc` as the file spells it.
pub fn cc_name(cc: CcKind) -> &'static str {
    match cc {
        CcKind::None => "none",
        CcKind::Dcqcn => "dcqcn",
        CcKind::Hpcc => "hpcc",
        CcKind::Timely => "timely",
        CcKind::Dctcp => "dctcp",
    }
}

fn topology(t: &TopologyCfg) -> String {
    let rates = |h: f64, f: f64| format!("{h}/{f} Gb/s host/fabric");
    match t {
        TopologyCfg::LeafSpine {
            leaves,
            spines,
            hosts_per_leaf,
            host_gbps,
            fabric_gbps,
            ..
        } => format!(
            "leaf_spine: {leaves} leaves, {spines} spines, {hosts_per_leaf} hosts per leaf, {}",
            rates(*host_gbps, *fabric_gbps)
        ),
        TopologyCfg::FatTree {
            k,
            host_gbps,
            fabric_gbps,
            ..
        } => format!("fat_tree: k = {k}, {}", rates(*host_gbps, *fabric_gbps)),
        TopologyCfg::Testbed {
            paths,
            hosts_per_tor,
            host_gbps,
            fabric_gbps,
            ..
        } => format!(
            "testbed: {paths} paths, {hosts_per_tor} hosts per ToR, {}",
            rates(*host_gbps, *fabric_gbps)
        ),
        TopologyCfg::Jellyfish {
            switches,
            hosts,
            host_gbps,
            fabric_gbps,
            ..
        } => format!(
            "jellyfish: {switches} switches, {hosts} hosts, {}",
            rates(*host_gbps, *fabric_gbps)
        ),
        TopologyCfg::Edges { nodes, links } => {
            format!("edges: {} nodes, {} links", nodes.len(), links.len())
        }
        TopologyCfg::Ns3 { file } => format!("ns3: {}", file.display()),
    }
}
