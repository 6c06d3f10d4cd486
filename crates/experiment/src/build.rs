//! Turns a parsed scenario into a ready-to-run network by composing the
//! build steps of its sections (`scenario/*`): the topology, the fabric
//! configuration (switch, transport, nic and host sections), the engine
//! of every transport in use, the flows (and, under `ecmp_hash = "ns3"`,
//! their ns-3 destination port), the collective jobs, the faults and the
//! sampling.
//! Every problem found is reported with its key path and line.

use crate::scenario::check::{Check, Files, Source};
use crate::scenario::{traffic, EngineKind, Scenario, ScenarioError, Traffic, TrafficCfg};
use engine::Time;
use fabric::{AppId, FabricConfig, Network};
use std::path::Path;
use transport::Engine;

/// A built scenario: the network with its flows and faults added, the
/// names of the traffic classes, and when the run stops.
pub struct Built {
    pub net: Network,
    pub classes: Vec<String>,
    pub stop: Option<Time>,
    /// The largest retransmission timeout in use (the run's no-progress
    /// limit is a multiple of it).
    pub max_rto: Time,
    /// Until when the run may be quiet without being stuck: the last fault
    /// (a stalled run may recover then) or the last job's start.
    pub quiet_until: Time,
    /// The collective jobs' applications, in `[[jobs]]` order.
    pub jobs: Vec<AppId>,
}

pub use crate::ns3::Imported;

/// The fabric configuration of the switch and transport sections.
pub fn fabric_config(sc: &Scenario, file: &str) -> Result<FabricConfig, ScenarioError> {
    let c = Check::new(file);
    let mut cfg = FabricConfig {
        seed: sc.seed,
        ..FabricConfig::default()
    };
    sc.switch.build(&mut cfg);
    sc.transport.build(&mut cfg, &sc.topology, c)?;
    sc.nic.build(&mut cfg, c)?;
    sc.host.build(&mut cfg);
    Ok(cfg)
}

/// Builds the whole scenario. `path` is the scenario file (for messages and
/// for resolving relative paths); `seed` overrides the file's seed.
pub fn build(sc: &Scenario, path: &Path, seed: Option<u64>) -> Result<Built, ScenarioError> {
    build_from(sc, path, seed, Files::Disk, None)
}

/// [`build`], reading the files the scenario names from `files`, on
/// `threads` threads (`--threads`; None: the scenario's `[run] threads`,
/// else 1).
pub fn build_from(
    sc: &Scenario,
    path: &Path,
    seed: Option<u64>,
    files: Files,
    threads: Option<u32>,
) -> Result<Built, ScenarioError> {
    let file = path.display().to_string();
    let src = Source {
        base: path.parent().unwrap_or(Path::new(".")),
        files,
    };
    let seed = seed.unwrap_or(sc.seed);
    let c = Check::new(&file);
    crate::scenario::run_cfg::check_threads(threads, c)?;
    let threads = threads.or(sc.run.threads).unwrap_or(1);
    let mut built = compose(sc, &file, src, seed).map_err(|e| sc.locate(e))?;
    if threads > 1 {
        // Each shard's copy, built alike (in parallel: a copy of a large
        // fabric takes a while), then split.
        let copies: Vec<Result<Built, ScenarioError>> = std::thread::scope(|s| {
            let handles: Vec<_> = (1..threads)
                .map(|_| s.spawn(|| compose(sc, &file, src, seed)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("building a copy panicked"))
                .collect()
        });
        let mut nets = vec![built.net];
        for copy in copies {
            nets.push(copy.map_err(|e| sc.locate(e))?.net);
        }
        built.net = Network::into_shards(nets).map_err(|e| sc.locate(c.err(e.key, e.message)))?;
    }
    Ok(built)
}

fn compose(sc: &Scenario, file: &str, src: Source, seed: u64) -> Result<Built, ScenarioError> {
    let c = Check::new(file);
    // Parsing checked these already, unless the scenario was edited since.
    sc.validate(file)?;
    let imported = sc.topology.build(c, src, seed)?;
    let mut cfg = fabric_config(sc, file)?;
    let ns3_hash = cfg.ecmp_hash == fabric::EcmpHash::Ns3;
    if ns3_hash && imported.ns3_hosts.is_none() {
        return Err(c.err(
            "switch.ecmp_hash",
            "\"ns3\" needs a topology imported from an HPCC ns-3 file (topology.kind = \"ns3\"): \
             it hashes ns-3's node ids",
        ));
    }
    cfg.load_balancer
        .check_topology(&imported.topo)
        .map_err(|m| c.err("switch.load_balancer", m))?;
    cfg.seed = seed;
    cfg.load_balancer
        .check_topology(&imported.topo)
        .map_err(|m| c.err("switch.load_balancer", m))?;
    let t = &sc.transport;
    let probe =
        || Network::new(imported.topo.clone(), cfg.clone()).map_err(|e| c.err(e.key, e.message));
    let mut cc = cfg.nic.cc;
    t.measure_cc(&mut cc, probe)?;
    cfg.nic.cc = cc;
    // The scheme of each kind a flow may use (`[transport] kind` or a
    // per-flow `transport`), with IRN's "auto" BDP cap measured once.
    let kinds: Vec<EngineKind> = std::iter::once(t.kind)
        .chain(sc.traffic.iter().filter_map(|t| t.transport))
        .chain(sc.flows.iter().filter_map(|f| f.transport))
        .collect();
    // NSCC's base RTT, measured if a UET flow runs it and none is given.
    let uet = kinds.iter().any(|k| matches!(k.engine(), Engine::Uet(_)));
    if uet && t.uet.nscc_on() && t.uet.auto_base_rtt() {
        let net = Network::new(imported.topo.clone(), cfg.clone())
            .map_err(|e| c.err(e.key, e.message))?;
        t.uet.measure_nscc(&mut cfg.nic.nscc, &net);
    }
    let mut schemes: Vec<(EngineKind, Engine)> = Vec::new();
    for k in kinds {
        if schemes.iter().any(|(s, _)| *s == k) {
            continue;
        }
        let probe = || {
            Network::new(imported.topo.clone(), cfg.clone()).map_err(|e| c.err(e.key, e.message))
        };
        let engine = t.engine(k, c, probe)?;
        cfg.nic
            .cc
            .check_engine(&engine)
            .map_err(|m| c.err("transport.cc", m))?;
        cfg.nic
            .check_ordering(&engine)
            .map_err(|m| c.err("transport.ordering", m))?;
        schemes.push((k, engine));
    }
    cfg.nic.engine = schemes[0].1;
    cfg.engine_header_bytes = schemes
        .iter()
        .map(|(_, e)| e.extra_header_bytes())
        .max()
        .unwrap_or(0);
    let Imported { topo, ns3_hosts } = imported;
    let mut net = Network::new(topo, cfg).map_err(|e| c.err(e.key, e.message))?;
    sc.routing.build(&mut net, c)?;
    let inputs = traffic::plan::Inputs {
        seed,
        ns3_hosts: ns3_hosts.as_deref(),
        net: &net,
        c,
        src,
    };
    let (flows, classes) = traffic::plan::plan_flows(&sc.traffic, &sc.flows, t.kind, &inputs)?;
    traffic::plan::add_flows(flows, &mut net, t, &schemes, sc.traffic.len(), c)?;
    if ns3_hash {
        if let Some(dport) = ns3_dport(&sc.traffic, src, c)? {
            net.set_ns3_dport(dport)
                .map_err(|m| c.err("switch.ecmp_hash", m))?;
        }
    }
    let mprdma = matches!(schemes[0].1, Engine::MpRdma(_));
    let jobs = crate::scenario::jobs::build(&sc.jobs, &mut net, seed, mprdma, src, c)?;
    crate::scenario::faults::build(&sc.faults, &mut net, c)?;
    sc.output.build(&mut net, c, sc.stop_ms)?;
    let stop = match sc.stop_ms {
        Some(ms) => Some(c.ms_positive("stop_ms", ms)?),
        None => None,
    };
    Ok(Built {
        net,
        classes,
        stop,
        max_rto: t.max_rto(),
        quiet_until: net_last_fault(sc).max(crate::scenario::jobs::last_start(&sc.jobs)),
        jobs,
    })
}

/// Under `ecmp_hash = "ns3"`: the destination port of the scenario's ns-3
/// flows (ns-3 hashes it), which must be one port for all (an ACK's hash
/// has no flow to look it up by); None when no traffic comes from an ns-3
/// flow file.
fn ns3_dport(traffic: &[Traffic], src: Source, c: Check) -> Result<Option<u16>, ScenarioError> {
    let mut port: Option<(u16, String)> = None;
    for (i, entry) in traffic.iter().enumerate() {
        let TrafficCfg::Ns3 { file, .. } = &entry.pattern else {
            continue;
        };
        let key = format!("traffic[{i}].file");
        let (text, shown) = src.read(file).map_err(|m| c.err(&key, m))?;
        let dports = workload::ns3::parse_flow_dports(&text, &shown)
            .map_err(|e| c.err(&key, e.to_string()))?;
        for (j, &d) in dports.iter().enumerate() {
            match &port {
                None => port = Some((d, format!("{shown}, flow {j}"))),
                Some((p, first)) if *p != d => {
                    return Err(c.err(
                        "switch.ecmp_hash",
                        format!(
                            "\"ns3\" needs one destination port for all flows: {first} has \
                             {p}, {shown}, flow {j} has {d}"
                        ),
                    ))
                }
                _ => {}
            }
        }
    }
    Ok(port.map(|(p, _)| p))
}

/// When the scenario's last fault happens (0 without faults).
fn net_last_fault(sc: &Scenario) -> Time {
    sc.faults
        .iter()
        .map(|f| crate::scenario::check::us(f.stop_us.unwrap_or(f.at_us).max(f.at_us)))
        .max()
        .unwrap_or(0)
}
