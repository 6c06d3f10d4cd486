//! Turns a parsed scenario into a ready-to-run network: the topology, the
//! fabric and NIC configuration, the flows of every traffic class, and the
//! faults. Every problem found here is reported with its key path.

use crate::scenario::*;
use engine::time::{from_secs_f64, NS, US};
use engine::{Rng, StreamKind, Time};
use fabric::{EcnSetting, FabricConfig, Fault, FaultAction, Flow, Network, NodeKind, Topology};
use std::path::Path;
use transport::{
    CcConfig, DcqcnParams, IrnConfig, MpRdmaConfig, Notification, Reliability, SyncMode, Verb,
};
use workload::FlowSpec;

/// A built scenario: the network with its flows and faults added, and the
/// names of the traffic classes.
pub struct Built {
    pub net: Network,
    pub classes: Vec<String>,
    pub stop: Option<Time>,
}

/// How an entry's flows are posted: as [`Flow::messages`] work requests,
/// [`Flow::sync_per_10k`] of them synchronise.
#[derive(Clone, Copy)]
struct Split {
    messages: u16,
    sync_per_10k: u16,
}

/// A flow to add: its spec, verb, the entry's transport and split.
type Planned = (FlowSpec, Verb, Option<TransportKind>, Split);

/// An entry's `messages` and `sync_ratio` (key `key`, transport `kind`),
/// checked.
fn message_split(
    m: &MessagesCfg,
    kind: TransportKind,
    key: &str,
    file: &str,
) -> Result<Split, ScenarioError> {
    let messages = m.messages.unwrap_or(1);
    let messages = u16::try_from(messages)
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| {
            ScenarioError::new(
                file,
                format!("{key}.messages"),
                format!("must be between 1 and 65535, not {messages}"),
            )
        })?;
    let ratio = m.sync_ratio.unwrap_or(0.0);
    if !(0.0..=1.0).contains(&ratio) {
        return Err(ScenarioError::new(
            file,
            format!("{key}.sync_ratio"),
            format!("must be between 0 and 1, not {ratio}"),
        ));
    }
    if ratio > 0.0 && kind != TransportKind::Mprdma {
        return Err(ScenarioError::new(
            file,
            format!("{key}.sync_ratio"),
            format!(
                "synchronise operations need transport \"mprdma\" (this entry's is \
                 \"{}\", which delivers in order anyway)",
                format!("{kind:?}").to_lowercase()
            ),
        ));
    }
    Ok(Split {
        messages,
        sync_per_10k: (ratio * 10_000.0).round() as u16,
    })
}

/// Positive and finite (NaN is not).
fn is_positive(x: f64) -> bool {
    x > 0.0 && x.is_finite()
}

fn gbps(x: f64) -> u64 {
    (x * 1e9).round() as u64
}

fn ns(x: f64) -> Time {
    (x * NS as f64).round() as Time
}

fn us(x: f64) -> Time {
    (x * US as f64).round() as Time
}

fn verb(v: VerbCfg) -> Verb {
    match v {
        VerbCfg::Write => Verb::Write,
        VerbCfg::Read => Verb::Read,
        VerbCfg::Send => Verb::Send,
    }
}

/// Resolves a path written in a scenario relative to the scenario's folder.
fn resolve(base: &Path, p: &Path) -> std::path::PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}

pub use crate::ns3::Imported;

pub fn topology(sc: &Scenario, file: &str, base: &Path) -> Result<Imported, ScenarioError> {
    let err = |key: &str, msg: String| ScenarioError::new(file, key, msg);
    let positive = |key: &str, v: f64| {
        if v > 0.0 && v.is_finite() {
            Ok(())
        } else {
            Err(err(key, format!("must be a positive number, got {v}")))
        }
    };
    let topo = match &sc.topology {
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
                if *v == 0 {
                    return Err(err(&format!("topology.{k}"), "must be at least 1".into()));
                }
            }
            positive("topology.host_gbps", *host_gbps)?;
            positive("topology.fabric_gbps", *fabric_gbps)?;
            Topology::leaf_spine(
                *leaves,
                *spines,
                *hosts_per_leaf,
                gbps(*host_gbps),
                gbps(*fabric_gbps),
                ns(*delay_ns),
            )
        }
        TopologyCfg::FatTree {
            k,
            host_gbps,
            fabric_gbps,
            delay_ns,
        } => {
            if *k < 2 || k % 2 != 0 {
                return Err(err(
                    "topology.k",
                    format!("must be an even number >= 2, got {k}"),
                ));
            }
            positive("topology.host_gbps", *host_gbps)?;
            positive("topology.fabric_gbps", *fabric_gbps)?;
            Topology::fat_tree(*k, gbps(*host_gbps), gbps(*fabric_gbps), ns(*delay_ns))
        }
        TopologyCfg::Testbed {
            paths,
            hosts_per_tor,
            host_gbps,
            fabric_gbps,
            delay_ns,
        } => {
            if *paths == 0 || *hosts_per_tor == 0 {
                return Err(err(
                    "topology",
                    "paths and hosts_per_tor must be at least 1".into(),
                ));
            }
            positive("topology.host_gbps", *host_gbps)?;
            positive("topology.fabric_gbps", *fabric_gbps)?;
            Topology::testbed(
                *paths,
                *hosts_per_tor,
                gbps(*host_gbps),
                gbps(*fabric_gbps),
                ns(*delay_ns),
            )
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
                        err(
                            &format!("topology.links[{i}].{end}"),
                            format!("no node named {name:?} in topology.nodes"),
                        )
                    })
                };
                let a = find("a", &l.a)?;
                let b = find("b", &l.b)?;
                positive(&format!("topology.links[{i}].gbps"), l.gbps)?;
                t.add_link(a, b, gbps(l.gbps), ns(l.delay_ns));
            }
            t
        }
        TopologyCfg::Ns3 { file: f } => {
            let path = resolve(base, f);
            let text = std::fs::read_to_string(&path).map_err(|e| {
                err(
                    "topology.file",
                    format!("cannot read {}: {e}", path.display()),
                )
            })?;
            return crate::ns3::import_topology(&text, &path.display().to_string())
                .map_err(|m| err("topology.file", m));
        }
    };
    topo.validate().map_err(|m| err("topology", m))?;
    Ok(Imported {
        topo,
        ns3_hosts: None,
    })
}

pub fn fabric_config(sc: &Scenario, file: &str) -> Result<FabricConfig, ScenarioError> {
    let s = &sc.switch;
    let t = &sc.transport;
    let err = |key: &str, msg: String| ScenarioError::new(file, key, msg);
    if !is_positive(s.buffer_mb) {
        return Err(err(
            "switch.buffer_mb",
            format!("must be positive, got {}", s.buffer_mb),
        ));
    }
    if !is_positive(s.pfc_alpha) {
        return Err(err(
            "switch.pfc_alpha",
            format!("must be positive, got {}", s.pfc_alpha),
        ));
    }
    if t.mtu == 0 {
        return Err(err("transport.mtu", "must be at least 1".into()));
    }
    if t.mtu as u64 + t.header_bytes as u64 > fabric::MAX_FRAME_BYTES as u64 {
        return Err(err(
            "transport.mtu",
            format!(
                "{} payload + {} header bytes make frames larger than the fabric carries ({} bytes)",
                t.mtu,
                t.header_bytes,
                fabric::MAX_FRAME_BYTES
            ),
        ));
    }
    if t.ack_bytes > fabric::MAX_FRAME_BYTES {
        return Err(err(
            "transport.ack_bytes",
            format!("at most {} bytes", fabric::MAX_FRAME_BYTES),
        ));
    }
    if t.ack_every == 0 {
        return Err(err("transport.ack_every", "must be at least 1".into()));
    }
    if t.data_priority > 7 || t.ctrl_priority > 7 {
        return Err(err("transport", "priorities are 0..=7".into()));
    }
    let mut ecn = Vec::new();
    for (i, e) in s.ecn_table.iter().enumerate() {
        let setting = red(e.kmin_kb, e.kmax_kb, e.pmax)
            .ok_or_else(|| err(&format!("switch.ecn_table[{i}]"), RED_RULE.into()))?;
        ecn.push(EcnSetting {
            rate_bps: gbps(e.gbps),
            ..setting
        });
    }
    ecn.sort_by_key(|e| e.rate_bps);
    let mut cfg = FabricConfig {
        seed: sc.seed,
        headroom: s.headroom_bytes,
        ecn_enabled: s.ecn && !ecn.is_empty(),
        ecn,
        reroute_on_failure: s.reroute_on_failure,
        ..FabricConfig::default()
    };
    cfg.mmu.buffer = (s.buffer_mb * 1024.0 * 1024.0) as u64;
    cfg.mmu.pfc = s.pfc;
    cfg.mmu.alpha = s.pfc_alpha;
    cfg.mmu.reserve = s.reserve_bytes;
    cfg.mmu.resume_offset = s.resume_offset_bytes;
    cfg.mmu.egress_alpha = s.egress_alpha;
    cfg.nic.mtu = t.mtu;
    cfg.nic.header_bytes = t.header_bytes;
    cfg.nic.ctrl_bytes = t.ack_bytes;
    cfg.nic.ack_every = t.ack_every;
    cfg.nic.rto = us(t.rto_us);
    cfg.nic.data_priority = t.data_priority;
    cfg.nic.ctrl_priority = t.ctrl_priority;
    if t.cc == CcKind::Dcqcn {
        let line = sc_host_bps(sc);
        let mut p = match t.dcqcn_preset {
            DcqcnPreset::Conweave => DcqcnParams::conweave_at(line),
            DcqcnPreset::Hpcc => DcqcnParams::hpcc(line),
            DcqcnPreset::Mellanox => DcqcnParams::mellanox(),
        };
        let o = &t.dcqcn;
        let mbps = |x: f64| (x * 1e6).round() as u64;
        if let Some(v) = o.alpha_resume_interval_us {
            p.alpha_resume_interval = us(v);
        }
        if let Some(v) = o.rate_decrease_interval_us {
            p.rate_decrease_interval = us(v);
        }
        if let Some(v) = o.rp_timer_us {
            p.rp_timer = us(v);
        }
        if let Some(v) = o.fast_recovery_times {
            p.fast_recovery_times = v;
        }
        if let Some(v) = o.g {
            p.g = v;
        }
        if let Some(v) = o.rai_mbps {
            p.rai_bps = mbps(v);
        }
        if let Some(v) = o.rhai_mbps {
            p.rhai_bps = mbps(v);
        }
        if let Some(v) = o.min_rate_mbps {
            p.min_rate_bps = mbps(v);
        }
        if let Some(v) = o.rate_on_first_cnp {
            p.rate_on_first_cnp = v;
        }
        if let Some(v) = o.clamp_target_rate {
            p.clamp_target_rate = v;
        }
        if let Some(v) = o.byte_counter {
            p.byte_counter = v;
        }
        if let Some(v) = o.cnp_interval_us {
            p.notification = Notification::Cnp {
                cnp_interval: us(v),
            };
        }
        p.validate().map_err(|m| err("transport.dcqcn", m))?;
        cfg.nic.cc = CcConfig::Dcqcn(p);
    }
    cfg.nic.reliability = match t.kind {
        TransportKind::Roce => Reliability::GoBackN,
        TransportKind::Irn => Reliability::Irn(irn_config(t, file)?),
        TransportKind::Mprdma => Reliability::MpRdma(mprdma_config(t, file)?),
    };
    Ok(cfg)
}

const RED_RULE: &str = "needs kmin_kb <= kmax_kb and 0 <= pmax <= 1";

/// A RED marking setting (for any rate), if the values make one.
fn red(kmin_kb: f64, kmax_kb: f64, pmax: f64) -> Option<EcnSetting> {
    let valid = kmin_kb.is_finite()
        && kmax_kb.is_finite()
        && 0.0 <= kmin_kb
        && kmin_kb <= kmax_kb
        && (0.0..=1.0).contains(&pmax);
    valid.then_some(EcnSetting {
        rate_bps: 0,
        kmin: (kmin_kb * 1000.0) as u64,
        kmax: (kmax_kb * 1000.0) as u64,
        pmax,
    })
}

/// MP-RDMA parameters from `[transport.mprdma]`.
fn mprdma_config(t: &TransportCfg, file: &str) -> Result<MpRdmaConfig, ScenarioError> {
    let o = &t.mprdma;
    let d = MpRdmaConfig::default();
    let m = MpRdmaConfig {
        delta: o.delta.unwrap_or(d.delta),
        l_slots: o.l_slots.unwrap_or(d.l_slots),
        initial_window: o.initial_window.unwrap_or(d.initial_window),
        num_vps: o.num_vps.unwrap_or(d.num_vps),
        alpha: o.alpha.unwrap_or(d.alpha),
        probe_p: o.probe_p.unwrap_or(d.probe_p),
        sync_mode: match o.sync_mode.unwrap_or_default() {
            SyncModeCfg::Delayed => SyncMode::Delayed,
            SyncModeCfg::StopAndWait => SyncMode::StopAndWait,
        },
    };
    m.validate()
        .map_err(|e| ScenarioError::new(file, "transport.mprdma", e))?;
    Ok(m)
}

/// IRN parameters from `[transport.irn]`; an "auto" BDP cap is left at the
/// default here and set by [`build`] from the built topology.
fn irn_config(t: &TransportCfg, file: &str) -> Result<IrnConfig, ScenarioError> {
    let o = &t.irn;
    let mut c = IrnConfig::default();
    let time = |key: &str, v: f64| {
        if is_positive(v) {
            Ok(us(v))
        } else {
            Err(ScenarioError::new(
                file,
                format!("transport.irn.{key}"),
                format!("must be positive, got {v}"),
            ))
        }
    };
    if let Some(v) = o.rto_low_us {
        c.rto_low = time("rto_low_us", v)?;
    }
    if let Some(v) = o.rto_high_us {
        c.rto_high = time("rto_high_us", v)?;
    }
    if let Some(v) = o.n_packets {
        c.n_packets = v;
    }
    if let Some(BdpBytes::Bytes(b)) = o.bdp_bytes {
        c.bdp_packets = bdp_packets(b, t.mtu);
    }
    c.validate()
        .map_err(|m| ScenarioError::new(file, "transport.irn", m))?;
    Ok(c)
}

/// The BDP cap in packets of `mtu` payload bytes (at least one).
fn bdp_packets(bytes: u64, mtu: u32) -> u32 {
    u32::try_from(bytes.div_ceil(mtu.max(1) as u64).max(1)).unwrap_or(u32::MAX)
}

/// IRN's automatic BDP cap: the host link rate times the largest base RTT
/// from host 0 (every host sees the same distances in the symmetric
/// topologies; the ConWeave/TLT IRN runs use one cap for all QPs too).
fn auto_bdp_bytes(net: &Network) -> u64 {
    let rtt = (0..net.host_count())
        .map(|d| net.base_rtt(0, d))
        .max()
        .unwrap_or(0);
    (net.host_rate_bps(0) as u128 * rtt as u128 / engine::time::SEC as u128 / 8) as u64
}

/// The host link rate the topology section gives (ns-3 imports: 100G).
fn sc_host_bps(sc: &Scenario) -> u64 {
    match &sc.topology {
        TopologyCfg::LeafSpine { host_gbps, .. }
        | TopologyCfg::FatTree { host_gbps, .. }
        | TopologyCfg::Testbed { host_gbps, .. } => gbps(*host_gbps),
        TopologyCfg::Edges { links, .. } => links.first().map_or(100_000_000_000, |l| gbps(l.gbps)),
        TopologyCfg::Ns3 { .. } => 100_000_000_000,
    }
}

/// Builds the whole scenario. `path` is the scenario file (for messages and
/// for resolving relative paths); `seed` overrides the file's seed.
pub fn build(sc: &Scenario, path: &Path, seed: Option<u64>) -> Result<Built, ScenarioError> {
    let file = path.display().to_string();
    let base = path.parent().unwrap_or(Path::new("."));
    let mut sc = sc.clone();
    if let Some(s) = seed {
        sc.seed = s;
    }
    let err = |key: &str, msg: String| ScenarioError::new(&file, key, msg);
    let imported = topology(&sc, &file, base)?;
    let mut cfg = fabric_config(&sc, &file)?;
    // The scheme of each kind a flow may use (`[transport] kind` or a
    // per-flow `transport`), with IRN's "auto" BDP cap measured once.
    let kinds: Vec<TransportKind> = std::iter::once(sc.transport.kind)
        .chain(sc.traffic.iter().filter_map(|t| t.transport))
        .chain(sc.flows.iter().filter_map(|f| f.transport))
        .collect();
    let mut schemes: Vec<(TransportKind, Reliability)> = Vec::new();
    for k in kinds {
        if schemes.iter().any(|(s, _)| *s == k) {
            continue;
        }
        let r = match k {
            TransportKind::Roce => Reliability::GoBackN,
            TransportKind::Irn => {
                let mut c = irn_config(&sc.transport, &file)?;
                if sc
                    .transport
                    .irn
                    .bdp_bytes
                    .is_none_or(|b| b == BdpBytes::Auto)
                {
                    // Built once more to measure it: routes decide the base RTT.
                    let probe = Network::new(imported.topo.clone(), cfg.clone())
                        .map_err(|m| err("topology", m))?;
                    c.bdp_packets = bdp_packets(auto_bdp_bytes(&probe), sc.transport.mtu);
                    c.validate()
                        .map_err(|m| err("transport.irn.bdp_bytes", m))?;
                }
                Reliability::Irn(c)
            }
            TransportKind::Mprdma => Reliability::MpRdma(mprdma_config(&sc.transport, &file)?),
        };
        schemes.push((k, r));
    }
    cfg.nic.reliability = schemes[0].1;
    let mut net = Network::new(imported.topo, cfg).map_err(|m| err("topology", m))?;
    let hosts: Vec<u32> = (0..net.host_count()).collect();

    let mut classes = Vec::new();
    let mut flows: Vec<Planned> = Vec::new();
    for (i, entry) in sc.traffic.iter().enumerate() {
        let tr = &entry.pattern;
        let key = format!("traffic[{i}]");
        let kind = entry.transport.unwrap_or(sc.transport.kind);
        let split = message_split(&entry.messages, kind, &key, &file)?;
        let class = i as u16;
        let mut rng = Rng::new(sc.seed, StreamKind::Workload, i as u64);
        let wl = |r: Result<Vec<FlowSpec>, workload::WorkloadError>| {
            r.map_err(|e| err(&key, e.to_string()))
        };
        let (name, specs, v) = match tr {
            TrafficCfg::Permutation {
                bytes,
                start_us,
                verb: v,
            } => (
                "permutation",
                wl(workload::permutation_flows(
                    &hosts,
                    *bytes,
                    us(*start_us),
                    &mut rng,
                ))?,
                *v,
            ),
            TrafficCfg::Incast {
                receiver,
                senders,
                fan_in,
                bytes,
                start_us,
                verb: v,
            } => {
                if *receiver >= net.host_count() {
                    return Err(err(
                        &format!("{key}.receiver"),
                        format!(
                            "host {receiver} does not exist (there are {} hosts)",
                            net.host_count()
                        ),
                    ));
                }
                let mut from: Vec<u32> = match senders {
                    Some(s) => s.clone(),
                    None => hosts.iter().copied().filter(|h| h != receiver).collect(),
                };
                if let Some(n) = fan_in {
                    if *n as usize > from.len() || *n == 0 {
                        return Err(err(
                            &format!("{key}.fan_in"),
                            format!(
                                "must be between 1 and {} (the candidate senders)",
                                from.len()
                            ),
                        ));
                    }
                    from.truncate(*n as usize);
                }
                if let Some(bad) = from.iter().find(|&&h| h >= net.host_count()) {
                    return Err(err(
                        &format!("{key}.senders"),
                        format!("host {bad} does not exist"),
                    ));
                }
                (
                    "incast",
                    wl(workload::incast_flows(
                        &from,
                        *receiver,
                        *bytes,
                        us(*start_us),
                    ))?,
                    *v,
                )
            }
            TrafficCfg::AllToAll {
                bytes,
                start_us,
                verb: v,
            } => (
                "all_to_all",
                wl(workload::all_to_all_flows(&hosts, *bytes, us(*start_us)))?,
                *v,
            ),
            TrafficCfg::LongLived {
                pairs,
                bytes,
                start_us,
                verb: v,
            } => {
                let specs = pairs
                    .iter()
                    .enumerate()
                    .map(|(j, &[src, dst])| FlowSpec {
                        id: j as u32,
                        src,
                        dst,
                        bytes: *bytes,
                        start: us(*start_us),
                        class,
                    })
                    .collect();
                ("long_lived", specs, *v)
            }
            TrafficCfg::Ns3 { file: f, verb: v } => {
                let p = resolve(base, f);
                let text = std::fs::read_to_string(&p).map_err(|e| {
                    err(
                        &format!("{key}.file"),
                        format!("cannot read {}: {e}", p.display()),
                    )
                })?;
                let mut specs = workload::ns3::parse_flows(&text, &p.display().to_string())
                    .map_err(|e| err(&format!("{key}.file"), e.to_string()))?;
                if let Some(map) = &imported.ns3_hosts {
                    crate::ns3::map_hosts(&mut specs, map, &p.display().to_string())
                        .map_err(|m| err(&format!("{key}.file"), m))?;
                }
                ("ns3", specs, *v)
            }
            TrafficCfg::Poisson(pc) => {
                let specs = poisson(pc, &key, &file, base, &hosts, &net, sc.seed, class)?;
                ("poisson", specs, pc.verb)
            }
        };
        classes.push(format!("{key}:{name}"));
        flows.extend(
            specs
                .into_iter()
                .map(|f| (FlowSpec { class, ..f }, verb(v), entry.transport, split)),
        );
    }
    if !sc.flows.is_empty() {
        let class = classes.len() as u16;
        classes.push("flows".into());
        for (j, f) in sc.flows.iter().enumerate() {
            let kind = f.transport.unwrap_or(sc.transport.kind);
            let split = message_split(&f.messages(), kind, &format!("flows[{j}]"), &file)?;
            flows.push((
                FlowSpec {
                    id: 0,
                    src: f.src,
                    dst: f.dst,
                    bytes: f.bytes,
                    start: us(f.start_us),
                    class,
                },
                verb(f.verb),
                f.transport,
                split,
            ));
        }
    }
    // One global order: by start time, ties by class then generation order.
    flows.sort_by_key(|(f, ..)| (f.start, f.class, f.id));
    for (i, (f, v, transport, split)) in flows.iter().enumerate() {
        let key = if (f.class as usize) < sc.traffic.len() {
            format!("traffic[{}]", f.class)
        } else {
            "flows".to_string()
        };
        if f.bytes == 0 {
            return Err(err(&key, format!("flow {i} has 0 bytes")));
        }
        if u64::from(split.messages) > f.bytes {
            return Err(err(
                &format!("{key}.messages"),
                format!(
                    "flow {i} has {} bytes, fewer than its {} messages",
                    f.bytes, split.messages
                ),
            ));
        }
        let kind = transport.unwrap_or(sc.transport.kind);
        if !matches!(v, Verb::Write | Verb::Send) && kind == TransportKind::Mprdma {
            return Err(err(
                &key,
                format!("MP-RDMA (transport \"mprdma\") carries WRITE and SEND only, not {v:?}"),
            ));
        }
        let reliability = if kind == sc.transport.kind {
            0
        } else {
            let (_, r) = schemes
                .iter()
                .find(|(k, _)| *k == kind)
                .expect("resolved above");
            net.add_reliability(*r).map_err(|m| err(&key, m))?
        };
        net.add_flow(Flow {
            src: f.src,
            dst: f.dst,
            bytes: f.bytes,
            start: f.start,
            verb: *v,
            class: f.class,
            reliability,
            messages: split.messages,
            sync_per_10k: split.sync_per_10k,
        })
        .map_err(|m| err(&key, m))?;
    }
    for (i, fc) in sc.faults.iter().enumerate() {
        let key = format!("faults[{i}]");
        let (link, forward) = net.find_link(&fc.link[0], &fc.link[1]).ok_or_else(|| {
            err(
                &format!("{key}.link"),
                format!("no link joins {:?} and {:?}", fc.link[0], fc.link[1]),
            )
        })?;
        let action = match fc.action {
            FaultActionCfg::Down => FaultAction::Down,
            FaultActionCfg::Up => FaultAction::Up,
            FaultActionCfg::Loss => match fc.loss {
                Some(l) if (0.0..=1.0).contains(&l) => FaultAction::Loss(l),
                _ => {
                    return Err(err(
                        &format!("{key}.loss"),
                        "action \"loss\" needs loss = 0..1".into(),
                    ))
                }
            },
            FaultActionCfg::Ecn => match (fc.kmin_kb, fc.kmax_kb, fc.pmax) {
                (Some(lo), Some(hi), Some(p)) => FaultAction::Ecn(
                    red(lo, hi, p)
                        .ok_or_else(|| err(&key, format!("action \"ecn\" {RED_RULE}")))?,
                ),
                _ => {
                    return Err(err(
                        &key,
                        "action \"ecn\" needs kmin_kb, kmax_kb and pmax".into(),
                    ))
                }
            },
            FaultActionCfg::Rate => match fc.gbps {
                Some(g) if g > 0.0 => FaultAction::Rate(gbps(g)),
                _ => {
                    return Err(err(
                        &format!("{key}.gbps"),
                        "action \"rate\" needs gbps > 0".into(),
                    ))
                }
            },
        };
        let a_to_b = match fc.direction {
            DirectionCfg::Both => None,
            DirectionCfg::Forward => Some(forward),
            DirectionCfg::Backward => Some(!forward),
        };
        net.add_fault(Fault {
            at: us(fc.at_us),
            link,
            a_to_b,
            action,
        })
        .map_err(|m| err(&key, m))?;
    }
    if let Some(interval) = sc.output.sample_us {
        if !is_positive(interval) {
            return Err(err(
                "output.sample_us",
                format!("must be positive, got {interval}"),
            ));
        }
        // Egress port ids of `[node, peer]` pairs, errors naming `key[i]`.
        let port_ids = |key: &str, pairs: &[[String; 2]]| -> Result<Vec<u32>, ScenarioError> {
            pairs
                .iter()
                .enumerate()
                .map(|(i, [a, b])| {
                    let (link, forward) = net.find_link(a, b).ok_or_else(|| {
                        err(
                            &format!("{key}[{i}]"),
                            format!("no link joins {a:?} and {b:?}"),
                        )
                    })?;
                    Ok(2 * link + if forward { 0 } else { 1 })
                })
                .collect()
        };
        let ports = port_ids("output.ports", &sc.output.ports)?;
        let ecn_ports = port_ids("output.ecn_ports", &sc.output.ecn_ports)?;
        net.set_sampling(fabric::SampleSpec {
            interval: us(interval),
            ports,
            flows: sc.output.flows.clone(),
            ecn_ports,
        })
        .map_err(|m| err("output", m))?;
    } else if !sc.output.ports.is_empty()
        || !sc.output.flows.is_empty()
        || !sc.output.ecn_ports.is_empty()
    {
        return Err(err(
            "output.sample_us",
            "needed to sample ports, flows or ECN ports".into(),
        ));
    }
    let stop = sc.stop_ms.map(|ms| from_secs_f64(ms / 1000.0));
    Ok(Built { net, classes, stop })
}

#[allow(clippy::too_many_arguments)]
fn poisson(
    pc: &PoissonCfg,
    key: &str,
    file: &str,
    base: &Path,
    all_hosts: &[u32],
    net: &Network,
    seed: u64,
    class: u16,
) -> Result<Vec<FlowSpec>, ScenarioError> {
    let err = |k: &str, msg: String| ScenarioError::new(file, format!("{key}{k}"), msg);
    let cdf = match workload::Cdf::builtin(&pc.cdf) {
        Ok(c) => c,
        Err(_) => {
            let p = resolve(base, Path::new(&pc.cdf));
            if !p.exists() {
                return Err(err(
                    ".cdf",
                    format!(
                        "{:?} is neither a built-in distribution ({}) nor a file",
                        pc.cdf,
                        workload::Cdf::builtin_names().join(", ")
                    ),
                ));
            }
            workload::Cdf::load(&p).map_err(|e| err(".cdf", e.to_string()))?
        }
    };
    fn need<T>(v: Option<T>, e: impl FnOnce() -> ScenarioError) -> Result<T, ScenarioError> {
        v.ok_or_else(e)
    }
    let missing = |k: &str| err(k, format!("needed by destinations = {:?}", pc.destinations));
    let pattern = match pc.destinations {
        DestinationsCfg::AllToAll => workload::Pattern::AllToAll,
        DestinationsCfg::Permutation => workload::Pattern::Permutation,
        DestinationsCfg::Group => workload::Pattern::Group {
            size: need(pc.group_size, || missing(".group_size"))?,
        },
        DestinationsCfg::HotSpot => workload::Pattern::HotSpot {
            hot: need(pc.hot.clone(), || missing(".hot"))?,
            fraction: need(pc.hot_fraction, || missing(".hot_fraction"))?,
        },
        DestinationsCfg::Incast => workload::Pattern::Incast {
            fan_in: need(pc.fan_in, || missing(".fan_in"))?,
            bytes: need(pc.incast_bytes, || missing(".incast_bytes"))?,
        },
    };
    let hosts = pc.hosts.clone().unwrap_or_else(|| all_hosts.to_vec());
    if let Some(bad) = hosts.iter().find(|&&h| h >= net.host_count()) {
        return Err(err(".hosts", format!("host {bad} does not exist")));
    }
    let stop = match (pc.duration_us, pc.flow_count) {
        (Some(d), None) if d > 0.0 => workload::Stop::Duration(us(d)),
        (None, Some(n)) if n > 0 => workload::Stop::Count(n),
        _ => {
            return Err(err(
                "",
                "give exactly one of duration_us (> 0) or flow_count (> 0)".into(),
            ))
        }
    };
    let cfg = workload::PoissonConfig {
        host_bps: net.host_rate_bps(hosts[0]),
        hosts,
        load: pc.load,
        cdf,
        pattern,
        start: us(pc.start_us),
        stop,
        class,
    };
    workload::poisson_flows(&cfg, seed).map_err(|e| err("", e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MP: &str = r#"
[topology]
kind = "testbed"
paths = 2
hosts_per_tor = 1
[transport]
kind = "mprdma"
[[flows]]
src = 0
dst = 1
bytes = 1000
"#;

    /// Values the parser accepts but MP-RDMA cannot run are named, not
    /// panics: an invalid Delta, and a verb MP-RDMA does not carry.
    #[test]
    fn mprdma_values_are_checked() {
        let p = Path::new("m.toml");
        let sc = Scenario::parse(MP, "m.toml").unwrap();
        assert!(build(&sc, p, None).is_ok());
        let bad = MP.replace("[[flows]]", "[transport.mprdma]\ndelta = 100\n[[flows]]");
        let sc = Scenario::parse(&bad, "m.toml").unwrap();
        let e = build(&sc, p, None)
            .err()
            .expect("delta > l_slots is rejected");
        assert_eq!(e.key, "transport.mprdma", "{e}");
        assert!(e.message.contains("delta"), "{e}");
        let read = MP.replace("bytes = 1000", "bytes = 1000\nverb = \"read\"");
        let sc = Scenario::parse(&read, "m.toml").unwrap();
        let e = build(&sc, p, None)
            .err()
            .expect("READ over MP-RDMA is rejected");
        assert!(e.message.contains("WRITE and SEND only"), "{e}");
    }
}
