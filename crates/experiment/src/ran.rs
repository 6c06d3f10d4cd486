//! What ran, as `summary.json` records it and the readable summary's first
//! lines say: the scenario's text after `--set`/`--vary` (its SHA-256; the
//! run's identity is made from it), the overrides themselves, the setup
//! that decides most results (topology, transport, congestion control,
//! load balancer, ordering, PFC), and the known traps of that setup (and
//! the settings that have no effect in it, `Scenario::no_effect`),
//! warned at run time with the doc that explains them. Reads only the
//! scenario.

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
    /// Known traps of this setup and settings without effect in it
    /// ([`warnings`]).
    pub warnings: Vec<String>,
    /// Which flows the statistics count (`[output] warmup_us`) and the
    /// FCT over time's windows.
    pub measure: crate::measured::Measure,
}

impl Ran {
    /// What ran of `sc`, parsed from `text` (after `overrides`).
    pub fn new(sc: &Scenario, text: &str, overrides: &[(String, String)]) -> Ran {
        Ran {
            text: text.to_string(),
            overrides: overrides.to_vec(),
            setup: Setup::of(sc),
            warnings: warnings(sc),
            measure: sc.output.measure(),
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

/// The load balancers that send a flow's packets over every path.
const PER_PACKET: [&str; 3] = ["spray", "drill", "power_of_two"];

/// Known traps of `sc`'s setup, each with the doc that explains it:
/// results that look like a bug of the model but are the design's.
pub fn warnings(sc: &Scenario) -> Vec<String> {
    let t = &sc.transport;
    let lb = sc.switch.load_balancer.name();
    let mut w = Vec::new();
    // TIMELY is not warned of: under DRILL on scenarios/eunomia_lb.toml
    // (IRN) its p99 slowdown is 3.6 against 4.2 under ECMP.
    if PER_PACKET.contains(&lb) && t.cc == CcKind::Hpcc {
        w.push(format!(
            "transport.cc = \"hpcc\" under switch.load_balancer = \"{lb}\" (per packet): HPCC reads each hop's rate from the difference of two ACKs' records of that hop, which assumes a flow keeps its path; sprayed packets mix ports and the control misjudges the load (p99 slowdown 84.8 with DRILL against 2.8 with ECMP on scenarios/eunomia_lb.toml, IRN); docs/cc.md, \"HPCC under per-packet load balancing\""
        ));
    }
    let hold = match t.ordering.as_str() {
        "eunomia" => Some(&t.eunomia.last_packet),
        "static_bitmap" => Some(&t.static_bitmap.last_packet),
        _ => None,
    };
    if let Some(hold) = hold {
        if hold.as_deref().unwrap_or("sender_hold") == "sender_hold" {
            w.push(format!(
                "transport.ordering = \"{0}\" holds each WRITE's last packet at the sender until every earlier packet is acknowledged: about one round trip more per WRITE (mean slowdown 2.30 against 1.35 with the receiver's hold, DRILL on scenarios/eunomia_lb.toml); transport.{0}.last_packet = \"receiver_hold\" avoids it; docs/eunomia.md, \"Eunomia's layer\"",
                t.ordering
            ));
        }
    }
    // Settings given that do not act in this combination.
    w.extend(sc.no_effect());
    w
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
