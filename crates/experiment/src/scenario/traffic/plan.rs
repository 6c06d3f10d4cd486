//! The build step of `[[flows]]` and `[[traffic]]`: every entry becomes
//! flows (patterns and Poisson arrivals generated from the workload crate,
//! ns-3 flow files imported), checked against the built network (host ids,
//! counts, a path between the two hosts, message lengths the transport can
//! count) and added to it in one global order.

use super::super::check::{us, Check, ScenarioError, Source};
use super::super::transport::TransportCfg;
use super::MAX_FLOWS;
use super::{DestinationsCfg, FlowCfg, MessagesCfg, PoissonCfg, Traffic, TrafficCfg, VerbCfg};
use engine::{Rng, StreamKind};
use fabric::{Flow, Network, NodeKind};
use std::path::Path;
use transport::{Engine, EngineKind, Verb, WorkRequest, WrError};
use workload::FlowSpec;

/// How an entry's flows are posted: as [`Flow::messages`] work requests,
/// [`Flow::sync_per_10k`] of them synchronise.
#[derive(Clone, Copy)]
pub struct Split {
    messages: u16,
    sync_per_10k: u16,
}

/// A flow to add: its spec, verb, the entry's transport and split.
pub type Planned = (FlowSpec, Verb, Option<EngineKind>, Split);

/// An entry's `messages` and `sync_ratio` (key `key`, transport `kind`),
/// checked.
fn message_split(
    m: &MessagesCfg,
    kind: EngineKind,
    key: &str,
    c: Check,
) -> Result<Split, ScenarioError> {
    m.validate(key, c)?;
    let messages = m.messages.unwrap_or(1) as u16;
    let ratio = m.sync_ratio.unwrap_or(0.0);
    if ratio > 0.0 && !kind.engine().honours_sync() {
        return Err(c.err(
            format!("{key}.sync_ratio"),
            format!(
                "synchronise operations need transport {} (this entry's is \
                 \"{kind}\", which delivers in order anyway)",
                EngineKind::quoted_where(Engine::honours_sync)
            ),
        ));
    }
    Ok(Split {
        messages,
        sync_per_10k: (ratio * 10_000.0).round() as u16,
    })
}

fn verb(v: VerbCfg) -> Verb {
    match v {
        VerbCfg::Write => Verb::Write,
        VerbCfg::Read => Verb::Read,
        VerbCfg::Send => Verb::Send,
    }
}

/// Refuses an entry that would generate more than [`MAX_FLOWS`] flows.
fn count_limit(c: Check, key: &str, n: u64) -> Result<(), ScenarioError> {
    if n > MAX_FLOWS {
        return Err(c.err(
            key,
            format!("would generate {n} flows; at most {MAX_FLOWS} are supported"),
        ));
    }
    Ok(())
}

/// What planning reads besides the traffic itself.
#[derive(Clone, Copy)]
pub struct Inputs<'a> {
    /// The run's seed (each entry draws from its own stream of it).
    pub seed: u64,
    /// ns-3 node ids to hosts, when the topology was imported from ns-3.
    pub ns3_hosts: Option<&'a [Option<u32>]>,
    /// The built fabric (hosts, paths).
    pub net: &'a Network,
    pub c: Check<'a>,
    /// Where CDF and flow files named by the scenario are read from.
    pub src: Source<'a>,
}

/// The flows of every `[[traffic]]` entry, then of `[[flows]]`, unsorted,
/// and the names of the traffic classes.
pub fn plan_flows(
    traffic: &[Traffic],
    flows_cfg: &[FlowCfg],
    default_kind: EngineKind,
    inputs: &Inputs,
) -> Result<(Vec<Planned>, Vec<String>), ScenarioError> {
    let Inputs {
        seed,
        ns3_hosts,
        net,
        c,
        src,
    } = *inputs;
    let hosts: Vec<u32> = (0..net.host_count()).collect();
    let n = hosts.len() as u64;
    let mut classes = Vec::new();
    let mut flows: Vec<Planned> = Vec::new();
    for (i, entry) in traffic.iter().enumerate() {
        let tr = &entry.pattern;
        let key = format!("traffic[{i}]");
        let kind = entry.transport.unwrap_or(default_kind);
        let split = message_split(&entry.messages, kind, &key, c)?;
        let class = i as u16;
        let mut rng = Rng::new(seed, StreamKind::Workload, i as u64);
        let wl = |r: Result<Vec<FlowSpec>, workload::WorkloadError>| {
            r.map_err(|e| c.err(&key, e.to_string()))
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
                    return Err(c.err(
                        format!("{key}.receiver"),
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
                        return Err(c.err(
                            format!("{key}.fan_in"),
                            format!(
                                "must be between 1 and {} (the candidate senders)",
                                from.len()
                            ),
                        ));
                    }
                    from.truncate(*n as usize);
                }
                if let Some(bad) = from.iter().find(|&&h| h >= net.host_count()) {
                    return Err(c.err(
                        format!("{key}.senders"),
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
            } => {
                count_limit(c, &key, n * n.saturating_sub(1))?;
                (
                    "all_to_all",
                    wl(workload::all_to_all_flows(&hosts, *bytes, us(*start_us)))?,
                    *v,
                )
            }
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
            TrafficCfg::Ns3 {
                file: f,
                verb: v,
                limit,
            } => {
                let fkey = format!("{key}.file");
                let (text, shown) = src.read(f).map_err(|m| c.err(&fkey, m))?;
                let mut specs = workload::ns3::parse_flows(&text, &shown)
                    .map_err(|e| c.err(&fkey, e.to_string()))?;
                if let Some(map) = ns3_hosts {
                    crate::ns3::map_hosts(&mut specs, map, &shown).map_err(|m| c.err(&fkey, m))?;
                }
                if let Some(n) = limit {
                    specs.truncate(*n);
                }
                ("ns3", specs, *v)
            }
            TrafficCfg::Poisson(pc) => {
                let specs = poisson(pc, &key, &hosts, class, inputs)?;
                ("poisson", specs, pc.verb)
            }
        };
        count_limit(c, &key, (flows.len() + specs.len()) as u64)?;
        classes.push(format!("{key}:{name}"));
        flows.extend(
            specs
                .into_iter()
                .map(|f| (FlowSpec { class, ..f }, verb(v), entry.transport, split)),
        );
    }
    if !flows_cfg.is_empty() {
        let class = classes.len() as u16;
        classes.push("flows".into());
        for (j, f) in flows_cfg.iter().enumerate() {
            let kind = f.transport.unwrap_or(default_kind);
            let split = message_split(&f.messages(), kind, &format!("flows[{j}]"), c)?;
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
    Ok((flows, classes))
}

/// The connected component of every host (hosts numbered in node order),
/// over the links as built (before any fault).
fn host_components(net: &Network) -> Vec<u32> {
    let topo = net.topology();
    let mut parent: Vec<u32> = (0..topo.nodes.len() as u32).collect();
    fn root(parent: &mut [u32], mut x: u32) -> u32 {
        while parent[x as usize] != x {
            parent[x as usize] = parent[parent[x as usize] as usize];
            x = parent[x as usize];
        }
        x
    }
    for l in &topo.links {
        let (a, b) = (root(&mut parent, l.a), root(&mut parent, l.b));
        parent[a as usize] = b;
    }
    (0..topo.nodes.len() as u32)
        .filter(|&i| topo.nodes[i as usize].kind == NodeKind::Host)
        .map(|i| root(&mut parent, i))
        .collect()
}

/// Sorts the planned flows into one global order (by start time, ties by
/// class then generation order), checks each and adds it to `net`.
/// `schemes` holds the engine of every kind in use, the
/// scenario's own kind first.
pub fn add_flows(
    mut flows: Vec<Planned>,
    net: &mut Network,
    transport: &TransportCfg,
    schemes: &[(EngineKind, Engine)],
    traffic_entries: usize,
    c: Check,
) -> Result<(), ScenarioError> {
    flows.sort_by_key(|(f, ..)| (f.start, f.class, f.id));
    let components = host_components(net);
    for (i, (f, v, kind, split)) in flows.iter().enumerate() {
        let key = if (f.class as usize) < traffic_entries {
            format!("traffic[{}]", f.class)
        } else {
            "flows".to_string()
        };
        if f.bytes == 0 {
            return Err(c.err(&key, format!("flow {i} has 0 bytes")));
        }
        if u64::from(split.messages) > f.bytes {
            return Err(c.err(
                format!("{key}.messages"),
                format!(
                    "flow {i} has {} bytes, fewer than its {} messages",
                    f.bytes, split.messages
                ),
            ));
        }
        let kind = kind.unwrap_or(transport.kind);
        let (_, scheme) = schemes
            .iter()
            .find(|(k, _)| *k == kind)
            .expect("every kind in use has a scheme");
        // The first message is the longest.
        let wr = WorkRequest {
            verb: *v,
            len: f.bytes.div_ceil(split.messages as u64),
            ..WorkRequest::default()
        };
        match transport::check_work_request(scheme, &wr, transport.mtu) {
            Ok(()) => {}
            Err(e @ WrError::Unsupported(_)) => {
                let what = format!("flow {i}: transport \"{}\": {e}", kind.name());
                return Err(c.err(&key, what));
            }
            Err(e) => {
                let what = format!(
                    "flow {i}: {e} (split the bytes with `messages`, or raise transport.mtu)"
                );
                return Err(c.err(format!("{key}.bytes"), what));
            }
        }
        let hosts = components.len() as u32;
        if f.src < hosts
            && f.dst < hosts
            && components[f.src as usize] != components[f.dst as usize]
        {
            return Err(c.err(
                &key,
                format!(
                    "flow {i} from host {} ({}) to host {} ({}): no path joins them",
                    f.src,
                    host_name(net, f.src),
                    f.dst,
                    host_name(net, f.dst)
                ),
            ));
        }
        let engine = if kind == transport.kind {
            0
        } else {
            net.add_engine(*scheme).map_err(|m| c.err(&key, m))?
        };
        net.add_flow(Flow {
            src: f.src,
            dst: f.dst,
            bytes: f.bytes,
            start: f.start,
            verb: *v,
            class: f.class,
            engine,
            messages: split.messages,
            sync_per_10k: split.sync_per_10k,
        })
        .map_err(|m| c.err(&key, format!("flow {i}: {m}")))?;
    }
    Ok(())
}

/// The node name of host `h`.
fn host_name(net: &Network, h: u32) -> String {
    net.topology()
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Host)
        .nth(h as usize)
        .map_or_else(|| format!("h{h}"), |n| n.name.clone())
}

fn poisson(
    pc: &PoissonCfg,
    key: &str,
    all_hosts: &[u32],
    class: u16,
    inputs: &Inputs,
) -> Result<Vec<FlowSpec>, ScenarioError> {
    let Inputs {
        seed, net, c, src, ..
    } = *inputs;
    let err = |k: &str, msg: String| c.err(format!("{key}{k}"), msg);
    let cdf = match workload::Cdf::builtin(&pc.cdf) {
        Ok(cdf) => cdf,
        Err(_) => {
            let p = Path::new(&pc.cdf);
            if !src.exists(p) {
                return Err(err(
                    ".cdf",
                    format!(
                        "{:?} is neither a built-in distribution ({}) nor a file",
                        pc.cdf,
                        workload::Cdf::builtin_names().join(", ")
                    ),
                ));
            }
            let (text, shown) = src.read(p).map_err(|m| err(".cdf", m))?;
            workload::Cdf::parse(&text, &shown).map_err(|e| err(".cdf", e.to_string()))?
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
    if !matches!(pattern, workload::Pattern::Incast { .. }) && cdf.mean() < 1.0 {
        return Err(err(
            ".cdf",
            format!(
                "{:?} has a mean flow size of {} bytes: its sizes are fractions of a byte",
                pc.cdf,
                cdf.mean()
            ),
        ));
    }
    let hosts = pc.hosts.clone().unwrap_or_else(|| all_hosts.to_vec());
    if let Some(bad) = hosts.iter().find(|&&h| h >= net.host_count()) {
        return Err(err(".hosts", format!("host {bad} does not exist")));
    }
    if hosts.is_empty() {
        return Err(err(".hosts", "no hosts".into()));
    }
    let stop = match (pc.duration_us, pc.flow_count) {
        (Some(d), None) => workload::Stop::Duration(us(d)),
        (None, Some(n)) => workload::Stop::Count(n),
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
    if let workload::Stop::Duration(d) = stop {
        // The expected number of flows, before generating any.
        let gap = cfg.mean_gap_ps();
        let per_arrival = match cfg.pattern {
            workload::Pattern::Incast { fan_in, .. } => fan_in as f64,
            _ => cfg.hosts.len() as f64,
        };
        let expected = d as f64 / gap * per_arrival;
        if expected.is_nan() || expected > MAX_FLOWS as f64 {
            return Err(err(
                ".duration_us",
                format!(
                    "at load {} this duration would generate about {expected:.3e} flows; \
                     at most {MAX_FLOWS} are supported",
                    pc.load
                ),
            ));
        }
    }
    workload::poisson_flows(&cfg, seed).map_err(|e| err("", e.to_string()))
}
