//! The scenario file: a TOML description of topology, switches, transport,
//! traffic and faults, parsed strictly (unknown keys are errors) with
//! errors that name the file, the key path and what was expected.

use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// A name for reports; defaults to the file stem.
    pub name: Option<String>,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Hard stop in simulated milliseconds; without it the run ends when
    /// every flow has finished.
    pub stop_ms: Option<f64>,
    pub topology: TopologyCfg,
    #[serde(default)]
    pub switch: SwitchCfg,
    #[serde(default)]
    pub transport: TransportCfg,
    #[serde(default)]
    pub flows: Vec<FlowCfg>,
    #[serde(default)]
    pub traffic: Vec<Traffic>,
    #[serde(default)]
    pub faults: Vec<FaultCfg>,
    #[serde(default)]
    pub output: OutputCfg,
}

/// Time series to record (written to `series.csv` with `--out`).
#[derive(Debug, Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct OutputCfg {
    /// Sampling interval in microseconds; no series without it.
    pub sample_us: Option<f64>,
    /// Egress ports to sample, each as [node, peer]: queue bytes and
    /// utilisation of the link direction node -> peer.
    #[serde(default)]
    pub ports: Vec<[String; 2]>,
    /// Flow ids (rows of flows.csv) whose throughput and sending rate to sample.
    #[serde(default)]
    pub flows: Vec<u32>,
    /// Egress ports, each as [node, peer], whose ECN marking ratio to
    /// sample; summary.json also gets their totals over the run.
    #[serde(default)]
    pub ecn_ports: Vec<[String; 2]>,
}

fn default_seed() -> u64 {
    1
}
fn default_delay_ns() -> f64 {
    1000.0
}
fn default_gbps() -> f64 {
    100.0
}

/// The `[topology]` section as written: one flat table, so that a wrong
/// type or unknown key is reported with its exact key and line; which keys
/// each `kind` needs is checked when it becomes a [`TopologyCfg`].
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct TopologyRaw {
    kind: TopologyKind,
    leaves: Option<u32>,
    spines: Option<u32>,
    hosts_per_leaf: Option<u32>,
    k: Option<u32>,
    paths: Option<u32>,
    hosts_per_tor: Option<u32>,
    host_gbps: Option<f64>,
    fabric_gbps: Option<f64>,
    delay_ns: Option<f64>,
    nodes: Option<Vec<NodeCfg>>,
    links: Option<Vec<LinkCfg>>,
    file: Option<PathBuf>,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum TopologyKind {
    LeafSpine,
    FatTree,
    Testbed,
    Edges,
    Ns3,
}

impl TopologyKind {
    fn name(self) -> &'static str {
        match self {
            TopologyKind::LeafSpine => "leaf_spine",
            TopologyKind::FatTree => "fat_tree",
            TopologyKind::Testbed => "testbed",
            TopologyKind::Edges => "edges",
            TopologyKind::Ns3 => "ns3",
        }
    }
}

impl TryFrom<TopologyRaw> for TopologyCfg {
    type Error = String;

    fn try_from(r: TopologyRaw) -> Result<Self, String> {
        let kind = r.kind.name();
        let need = |name: &str, v: Option<u32>| {
            v.ok_or_else(|| format!("kind = \"{kind}\" needs `{name}`"))
        };
        let present: Vec<(&str, bool)> = vec![
            ("leaves", r.leaves.is_some()),
            ("spines", r.spines.is_some()),
            ("hosts_per_leaf", r.hosts_per_leaf.is_some()),
            ("k", r.k.is_some()),
            ("paths", r.paths.is_some()),
            ("hosts_per_tor", r.hosts_per_tor.is_some()),
            ("host_gbps", r.host_gbps.is_some()),
            ("fabric_gbps", r.fabric_gbps.is_some()),
            ("delay_ns", r.delay_ns.is_some()),
            ("nodes", r.nodes.is_some()),
            ("links", r.links.is_some()),
            ("file", r.file.is_some()),
        ];
        let rates = ["host_gbps", "fabric_gbps", "delay_ns"];
        let allowed: Vec<&str> = match r.kind {
            TopologyKind::LeafSpine => {
                [&["leaves", "spines", "hosts_per_leaf"][..], &rates].concat()
            }
            TopologyKind::FatTree => [&["k"][..], &rates].concat(),
            TopologyKind::Testbed => [&["paths", "hosts_per_tor"][..], &rates].concat(),
            TopologyKind::Edges => vec!["nodes", "links"],
            TopologyKind::Ns3 => vec!["file"],
        };
        if let Some((name, _)) = present.iter().find(|(n, p)| *p && !allowed.contains(n)) {
            return Err(format!(
                "`{name}` does not apply to kind = \"{kind}\" (its keys: {})",
                allowed.join(", ")
            ));
        }
        let host_gbps = r.host_gbps.unwrap_or_else(default_gbps);
        let fabric_gbps = r.fabric_gbps.unwrap_or_else(default_gbps);
        let delay_ns = r.delay_ns.unwrap_or_else(default_delay_ns);
        Ok(match r.kind {
            TopologyKind::LeafSpine => TopologyCfg::LeafSpine {
                leaves: need("leaves", r.leaves)?,
                spines: need("spines", r.spines)?,
                hosts_per_leaf: need("hosts_per_leaf", r.hosts_per_leaf)?,
                host_gbps,
                fabric_gbps,
                delay_ns,
            },
            TopologyKind::FatTree => TopologyCfg::FatTree {
                k: need("k", r.k)?,
                host_gbps,
                fabric_gbps,
                delay_ns,
            },
            TopologyKind::Testbed => TopologyCfg::Testbed {
                paths: need("paths", r.paths)?,
                hosts_per_tor: need("hosts_per_tor", r.hosts_per_tor)?,
                host_gbps,
                fabric_gbps,
                delay_ns,
            },
            TopologyKind::Edges => TopologyCfg::Edges {
                nodes: r.nodes.ok_or("kind = \"edges\" needs `nodes`")?,
                links: r.links.ok_or("kind = \"edges\" needs `links`")?,
            },
            TopologyKind::Ns3 => TopologyCfg::Ns3 {
                file: r.file.ok_or("kind = \"ns3\" needs `file`")?,
            },
        })
    }
}

#[derive(Debug, Deserialize, Clone)]
#[serde(try_from = "TopologyRaw")]
pub enum TopologyCfg {
    LeafSpine {
        leaves: u32,
        spines: u32,
        hosts_per_leaf: u32,
        host_gbps: f64,
        fabric_gbps: f64,
        delay_ns: f64,
    },
    FatTree {
        k: u32,
        host_gbps: f64,
        fabric_gbps: f64,
        delay_ns: f64,
    },
    Testbed {
        paths: u32,
        hosts_per_tor: u32,
        host_gbps: f64,
        fabric_gbps: f64,
        delay_ns: f64,
    },
    Edges {
        nodes: Vec<NodeCfg>,
        links: Vec<LinkCfg>,
    },
    /// An HPCC ns-3 topology file (path relative to the scenario file).
    Ns3 { file: PathBuf },
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct NodeCfg {
    pub name: String,
    pub kind: NodeKindCfg,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NodeKindCfg {
    Host,
    Switch,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct LinkCfg {
    pub a: String,
    pub b: String,
    #[serde(default = "default_gbps")]
    pub gbps: f64,
    #[serde(default = "default_delay_ns")]
    pub delay_ns: f64,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchCfg {
    pub buffer_mb: f64,
    pub pfc: bool,
    pub pfc_alpha: f64,
    pub reserve_bytes: u64,
    pub resume_offset_bytes: u64,
    /// PFC headroom per port; omitted: 2 x link BDP + 3 frames.
    pub headroom_bytes: Option<u64>,
    pub egress_alpha: f64,
    pub ecn: bool,
    pub ecn_table: Vec<EcnCfg>,
    pub reroute_on_failure: bool,
}

impl Default for SwitchCfg {
    fn default() -> Self {
        SwitchCfg {
            buffer_mb: 9.0,
            pfc: true,
            pfc_alpha: 0.125,
            reserve_bytes: 4096,
            resume_offset_bytes: 3072,
            headroom_bytes: None,
            egress_alpha: 1.0,
            ecn: true,
            ecn_table: vec![EcnCfg {
                gbps: 0.0,
                kmin_kb: 100.0,
                kmax_kb: 400.0,
                pmax: 0.2,
            }],
            reroute_on_failure: true,
        }
    }
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct EcnCfg {
    /// Ports of this rate or faster use this row (until the next row).
    pub gbps: f64,
    pub kmin_kb: f64,
    pub kmax_kb: f64,
    pub pmax: f64,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields, default)]
pub struct TransportCfg {
    pub mtu: u32,
    pub header_bytes: u32,
    pub ack_bytes: u32,
    pub ack_every: u32,
    pub rto_us: f64,
    pub data_priority: u8,
    pub ctrl_priority: u8,
    /// Congestion control of every QP: "none" (line rate) or "dcqcn".
    pub cc: CcKind,
    /// DCQCN parameter preset (data/params/dcqcn.toml): "conweave",
    /// "hpcc" or "mellanox"; `dcqcn` overrides single values.
    pub dcqcn_preset: DcqcnPreset,
    pub dcqcn: DcqcnOverrides,
    /// Reliability scheme of every QP: "roce" (go-back-N), "irn" or
    /// "mprdma".
    pub kind: TransportKind,
    /// IRN values replacing the defaults (used with `kind = "irn"`).
    pub irn: IrnOverrides,
    /// MP-RDMA values replacing the defaults (used with `kind = "mprdma"`).
    pub mprdma: MpRdmaOverrides,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    #[default]
    Roce,
    Irn,
    Mprdma,
}

/// `[transport.irn]`: single IRN values replacing the defaults
/// (data/params/irn_hpcc.toml: RTO_low 100 us, RTO_high 320 us, N = 3,
/// BDP cap from the topology).
#[derive(Debug, Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct IrnOverrides {
    pub rto_low_us: Option<f64>,
    pub rto_high_us: Option<f64>,
    pub n_packets: Option<u32>,
    /// The BDP cap in payload bytes, or "auto" (the default): the largest
    /// base RTT from host 0 times the host link rate.
    pub bdp_bytes: Option<BdpBytes>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BdpBytes {
    Auto,
    Bytes(u64),
}

impl<'de> Deserialize<'de> for BdpBytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = BdpBytes;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a positive byte count or \"auto\"")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<BdpBytes, E> {
                match u64::try_from(v) {
                    Ok(b) if b > 0 => Ok(BdpBytes::Bytes(b)),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Signed(v), &self)),
                }
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<BdpBytes, E> {
                self.visit_i64(i64::try_from(v).unwrap_or(i64::MAX))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<BdpBytes, E> {
                match v {
                    "auto" => Ok(BdpBytes::Auto),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum SyncModeCfg {
    #[default]
    Delayed,
    StopAndWait,
}

/// Single MP-RDMA values that replace the defaults (Δ 32, L 64, IW 64,
/// 256 VPs, α 1, p 0.01, delayed synchronise).
#[derive(Debug, Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct MpRdmaOverrides {
    pub delta: Option<u32>,
    pub l_slots: Option<u32>,
    pub initial_window: Option<u32>,
    pub num_vps: Option<u16>,
    pub alpha: Option<f64>,
    pub probe_p: Option<f64>,
    pub sync_mode: Option<SyncModeCfg>,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum CcKind {
    #[default]
    None,
    Dcqcn,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum DcqcnPreset {
    #[default]
    Conweave,
    Hpcc,
    Mellanox,
}

/// Single DCQCN values that replace the preset's.
#[derive(Debug, Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct DcqcnOverrides {
    pub alpha_resume_interval_us: Option<f64>,
    pub rate_decrease_interval_us: Option<f64>,
    pub rp_timer_us: Option<f64>,
    pub fast_recovery_times: Option<u32>,
    pub g: Option<f64>,
    pub rai_mbps: Option<f64>,
    pub rhai_mbps: Option<f64>,
    pub min_rate_mbps: Option<f64>,
    pub rate_on_first_cnp: Option<f64>,
    pub clamp_target_rate: Option<bool>,
    pub byte_counter: Option<u64>,
    /// Send CNP packets no more often than this per QP (0: every marked
    /// packet); omitted: the preset's way (ConWeave/HPCC: a flag on the ACK).
    pub cnp_interval_us: Option<f64>,
}

impl Default for TransportCfg {
    fn default() -> Self {
        TransportCfg {
            mtu: 1000,
            header_bytes: 48,
            ack_bytes: 60,
            ack_every: 1,
            rto_us: 4000.0,
            data_priority: 3,
            ctrl_priority: 0,
            cc: CcKind::None,
            dcqcn_preset: DcqcnPreset::Conweave,
            dcqcn: DcqcnOverrides::default(),
            kind: TransportKind::Roce,
            irn: IrnOverrides::default(),
            mprdma: MpRdmaOverrides::default(),
        }
    }
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum VerbCfg {
    #[default]
    Write,
    Read,
    Send,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct FlowCfg {
    pub src: u32,
    pub dst: u32,
    pub bytes: u64,
    #[serde(default)]
    pub start_us: f64,
    #[serde(default)]
    pub verb: VerbCfg,
    /// This flow's reliability scheme, overriding `[transport] kind`.
    pub transport: Option<TransportKind>,
    /// See [`MessagesCfg`].
    pub messages: Option<u32>,
    pub sync_ratio: Option<f64>,
}

impl FlowCfg {
    /// This flow's `messages` and `sync_ratio`, as a traffic entry has them.
    pub fn messages(&self) -> MessagesCfg {
        MessagesCfg {
            messages: self.messages,
            sync_ratio: self.sync_ratio,
        }
    }
}

/// How a flow's bytes are posted (`[[flows]]` and `[[traffic]]` entries):
/// as `messages` equal work requests at once on the flow's QP (default 1),
/// the fraction `sync_ratio` of them (MP-RDMA only) as synchronise
/// operations. Checked in `build`, where the transport is known.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MessagesCfg {
    pub messages: Option<u32>,
    pub sync_ratio: Option<f64>,
}

/// One `[[traffic]]` entry: its pattern and, optionally, the reliability
/// scheme of its flows (overriding `[transport] kind`, so transports can
/// share a fabric).
#[derive(Debug, Deserialize, Clone)]
#[serde(try_from = "TrafficRaw")]
pub struct Traffic {
    pub pattern: TrafficCfg,
    pub transport: Option<TransportKind>,
    pub messages: MessagesCfg,
}

/// A `[[traffic]]` entry as written: one flat table, so that a wrong type
/// names its key and line; which keys each `pattern` takes is checked when
/// it becomes a [`TrafficCfg`].
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct TrafficRaw {
    pattern: PatternKind,
    transport: Option<TransportKind>,
    messages: Option<u32>,
    sync_ratio: Option<f64>,
    bytes: Option<u64>,
    start_us: Option<f64>,
    verb: Option<VerbCfg>,
    receiver: Option<u32>,
    senders: Option<Vec<u32>>,
    fan_in: Option<u32>,
    pairs: Option<Vec<[u32; 2]>>,
    file: Option<PathBuf>,
    cdf: Option<String>,
    load: Option<f64>,
    destinations: Option<DestinationsCfg>,
    group_size: Option<u32>,
    hot: Option<Vec<u32>>,
    hot_fraction: Option<f64>,
    incast_bytes: Option<u64>,
    hosts: Option<Vec<u32>>,
    duration_us: Option<f64>,
    flow_count: Option<u64>,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum PatternKind {
    Permutation,
    Incast,
    AllToAll,
    LongLived,
    Ns3,
    Poisson,
}

impl TryFrom<TrafficRaw> for Traffic {
    type Error = String;

    fn try_from(r: TrafficRaw) -> Result<Self, String> {
        let transport = r.transport;
        let messages = MessagesCfg {
            messages: r.messages,
            sync_ratio: r.sync_ratio,
        };
        Ok(Traffic {
            pattern: TrafficCfg::try_from(r)?,
            transport,
            messages,
        })
    }
}

impl TryFrom<TrafficRaw> for TrafficCfg {
    type Error = String;

    fn try_from(r: TrafficRaw) -> Result<Self, String> {
        let (name, allowed): (&str, &[&str]) = match r.pattern {
            PatternKind::Permutation => ("permutation", &["bytes", "start_us", "verb"]),
            PatternKind::Incast => (
                "incast",
                &["receiver", "senders", "fan_in", "bytes", "start_us", "verb"],
            ),
            PatternKind::AllToAll => ("all_to_all", &["bytes", "start_us", "verb"]),
            PatternKind::LongLived => ("long_lived", &["pairs", "bytes", "start_us", "verb"]),
            PatternKind::Ns3 => ("ns3", &["file", "verb"]),
            PatternKind::Poisson => (
                "poisson",
                &[
                    "cdf",
                    "load",
                    "destinations",
                    "group_size",
                    "hot",
                    "hot_fraction",
                    "fan_in",
                    "incast_bytes",
                    "hosts",
                    "start_us",
                    "duration_us",
                    "flow_count",
                    "verb",
                ],
            ),
        };
        let present = [
            ("bytes", r.bytes.is_some()),
            ("start_us", r.start_us.is_some()),
            ("verb", r.verb.is_some()),
            ("receiver", r.receiver.is_some()),
            ("senders", r.senders.is_some()),
            ("fan_in", r.fan_in.is_some()),
            ("pairs", r.pairs.is_some()),
            ("file", r.file.is_some()),
            ("cdf", r.cdf.is_some()),
            ("load", r.load.is_some()),
            ("destinations", r.destinations.is_some()),
            ("group_size", r.group_size.is_some()),
            ("hot", r.hot.is_some()),
            ("hot_fraction", r.hot_fraction.is_some()),
            ("incast_bytes", r.incast_bytes.is_some()),
            ("hosts", r.hosts.is_some()),
            ("duration_us", r.duration_us.is_some()),
            ("flow_count", r.flow_count.is_some()),
        ];
        if let Some((key, _)) = present.iter().find(|(k, p)| *p && !allowed.contains(k)) {
            return Err(format!(
                "`{key}` does not apply to pattern = \"{name}\" (its keys: {})",
                allowed.join(", ")
            ));
        }
        fn need<T>(pattern: &str, key: &str, v: Option<T>) -> Result<T, String> {
            v.ok_or_else(|| format!("pattern = \"{pattern}\" needs `{key}`"))
        }
        let start_us = r.start_us.unwrap_or(0.0);
        let verb = r.verb.unwrap_or_default();
        Ok(match r.pattern {
            PatternKind::Permutation => TrafficCfg::Permutation {
                bytes: need(name, "bytes", r.bytes)?,
                start_us,
                verb,
            },
            PatternKind::Incast => TrafficCfg::Incast {
                receiver: need(name, "receiver", r.receiver)?,
                senders: r.senders,
                fan_in: r.fan_in,
                bytes: need(name, "bytes", r.bytes)?,
                start_us,
                verb,
            },
            PatternKind::AllToAll => TrafficCfg::AllToAll {
                bytes: need(name, "bytes", r.bytes)?,
                start_us,
                verb,
            },
            PatternKind::LongLived => TrafficCfg::LongLived {
                pairs: need(name, "pairs", r.pairs)?,
                bytes: r.bytes.unwrap_or_else(default_long_bytes),
                start_us,
                verb,
            },
            PatternKind::Ns3 => TrafficCfg::Ns3 {
                file: need(name, "file", r.file)?,
                verb,
            },
            PatternKind::Poisson => TrafficCfg::Poisson(Box::new(PoissonCfg {
                cdf: need(name, "cdf", r.cdf)?,
                load: need(name, "load", r.load)?,
                destinations: r.destinations.unwrap_or_default(),
                group_size: r.group_size,
                hot: r.hot,
                hot_fraction: r.hot_fraction,
                fan_in: r.fan_in,
                incast_bytes: r.incast_bytes,
                hosts: r.hosts,
                start_us,
                duration_us: r.duration_us,
                flow_count: r.flow_count,
                verb,
            })),
        })
    }
}

#[derive(Debug, Clone)]
pub enum TrafficCfg {
    /// Every host sends `bytes` to a partner of a random derangement.
    Permutation {
        bytes: u64,
        start_us: f64,
        verb: VerbCfg,
    },
    /// Hosts `senders` (default: every host but the receiver) each send
    /// `bytes` to `receiver` at once.
    Incast {
        receiver: u32,
        senders: Option<Vec<u32>>,
        fan_in: Option<u32>,
        bytes: u64,
        start_us: f64,
        verb: VerbCfg,
    },
    /// Every host sends `bytes` to every other host.
    AllToAll {
        bytes: u64,
        start_us: f64,
        verb: VerbCfg,
    },
    /// Flows from the listed (src, dst) pairs, large enough to stay alive
    /// for the whole run.
    LongLived {
        pairs: Vec<[u32; 2]>,
        bytes: u64,
        start_us: f64,
        verb: VerbCfg,
    },
    /// An HPCC ns-3 flow file (path relative to the scenario file).
    Ns3 { file: PathBuf, verb: VerbCfg },
    /// Open-loop Poisson arrivals at a target load with sizes from a CDF.
    Poisson(Box<PoissonCfg>),
}

#[derive(Debug, Clone)]
pub struct PoissonCfg {
    /// A built-in distribution name (e.g. "websearch", "fbhdp") or a path
    /// to a CDF file in the same format (relative to the scenario file).
    pub cdf: String,
    /// Offered load per host, as a fraction of the host link rate.
    pub load: f64,
    pub destinations: DestinationsCfg,
    /// For destinations = "group": hosts per group.
    pub group_size: Option<u32>,
    /// For destinations = "hot_spot": the hot hosts and the fraction of
    /// each host's traffic sent to them.
    pub hot: Option<Vec<u32>>,
    pub hot_fraction: Option<f64>,
    /// For destinations = "incast": senders per incast event and bytes each.
    pub fan_in: Option<u32>,
    pub incast_bytes: Option<u64>,
    /// The hosts taking part (default: all).
    pub hosts: Option<Vec<u32>>,
    pub start_us: f64,
    /// How long flows keep arriving; or give `flow_count` instead.
    pub duration_us: Option<f64>,
    pub flow_count: Option<u64>,
    pub verb: VerbCfg,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum DestinationsCfg {
    #[default]
    AllToAll,
    Group,
    Permutation,
    HotSpot,
    Incast,
}

fn default_long_bytes() -> u64 {
    1 << 40
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct FaultCfg {
    /// The two node names the link joins, e.g. ["spine0", "tor1"].
    pub link: [String; 2],
    #[serde(default)]
    pub at_us: f64,
    pub action: FaultActionCfg,
    /// "both" (default), or "forward" (from link[0] to link[1]) or "backward".
    #[serde(default)]
    pub direction: DirectionCfg,
    /// For action = "loss": the drop probability.
    pub loss: Option<f64>,
    /// For action = "rate": the new rate.
    pub gbps: Option<f64>,
    /// For action = "ecn": the port's RED marking from now on (e.g. a
    /// misconfigured switch).
    pub kmin_kb: Option<f64>,
    pub kmax_kb: Option<f64>,
    pub pmax: Option<f64>,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FaultActionCfg {
    Down,
    Up,
    Loss,
    Rate,
    Ecn,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum DirectionCfg {
    #[default]
    Both,
    Forward,
    Backward,
}

/// A scenario problem, with where it was found.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    pub file: String,
    /// The key path, e.g. `topology.leaves` or `faults[2].link`.
    pub key: String,
    pub message: String,
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.key.is_empty() || self.key == "." {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}: {}: {}", self.file, self.key, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

impl ScenarioError {
    pub fn new(file: &str, key: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError {
            file: file.to_string(),
            key: key.into(),
            message: message.into(),
        }
    }
}

/// Line number (1-based) of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
        + 1
}

impl Scenario {
    pub fn parse(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
        let de = toml::Deserializer::parse(text).map_err(|e| {
            let at = e
                .span()
                .map(|s| format!(" (line {})", line_of(text, s.start)));
            ScenarioError::new(
                file,
                "",
                format!("{}{}", e.message().trim(), at.unwrap_or_default()),
            )
        })?;
        serde_path_to_error::deserialize(de).map_err(|e| {
            let inner = e.inner();
            let at = inner
                .span()
                .map(|s| format!(" (line {})", line_of(text, s.start)));
            ScenarioError::new(
                file,
                e.path().to_string(),
                format!("{}{}", inner.message().trim(), at.unwrap_or_default()),
            )
        })
    }

    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| ScenarioError::new(&file, "", format!("cannot read: {e}")))?;
        let mut sc = Scenario::parse(&text, &file)?;
        if sc.name.is_none() {
            sc.name = path.file_stem().map(|s| s.to_string_lossy().into_owned());
        }
        Ok(sc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = r#"
seed = 3
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 2
[[flows]]
src = 0
dst = 3
bytes = 1000
"#;

    #[test]
    fn parses_with_defaults() {
        let s = Scenario::parse(OK, "ok.toml").unwrap();
        assert_eq!(s.seed, 3);
        assert!(s.switch.pfc);
        assert_eq!(s.transport.mtu, 1000);
        assert_eq!(s.flows[0].verb, VerbCfg::Write);
    }

    #[test]
    fn irn_keys_parse_strictly() {
        let irn =
            |extra: &str| format!("{OK}[transport]\nkind = \"irn\"\n[transport.irn]\n{extra}\n");
        let s = Scenario::parse(&irn("bdp_bytes = 156000\nrto_low_us = 50"), "i.toml").unwrap();
        assert_eq!(s.transport.kind, TransportKind::Irn);
        assert_eq!(s.transport.irn.bdp_bytes, Some(BdpBytes::Bytes(156_000)));
        assert_eq!(s.transport.irn.rto_low_us, Some(50.0));
        let s = Scenario::parse(&irn("bdp_bytes = \"auto\""), "i.toml").unwrap();
        assert_eq!(s.transport.irn.bdp_bytes, Some(BdpBytes::Auto));
        for bad in ["bdp_bytes = \"big\"", "bdp_bytes = -3", "bdp_bytes = 0"] {
            let e = Scenario::parse(&irn(bad), "i.toml").unwrap_err();
            assert_eq!(e.key, "transport.irn.bdp_bytes", "{e}");
            assert!(e.message.contains("\"auto\""), "{e}");
        }
        let e = Scenario::parse(&irn("rto_lo_us = 5"), "i.toml").unwrap_err();
        assert!(e.to_string().contains("rto_lo_us"), "{e}");
        let e = Scenario::parse(
            &OK.replace("[[flows]]", "[transport]\nkind = \"tcp\"\n[[flows]]"),
            "i.toml",
        )
        .unwrap_err();
        assert_eq!(e.key, "transport.kind", "{e}");
    }

    #[test]
    fn mprdma_keys_parse_strictly() {
        let mp = |extra: &str| {
            format!("{OK}[transport]\nkind = \"mprdma\"\n[transport.mprdma]\n{extra}\n")
        };
        let s =
            Scenario::parse(&mp("delta = 16\nsync_mode = \"stop_and_wait\""), "m.toml").unwrap();
        assert_eq!(s.transport.kind, TransportKind::Mprdma);
        assert_eq!(s.transport.mprdma.delta, Some(16));
        assert_eq!(s.transport.mprdma.sync_mode, Some(SyncModeCfg::StopAndWait));
        let e = Scenario::parse(&mp("deltaa = 16"), "m.toml").unwrap_err();
        assert!(e.to_string().contains("deltaa"), "{e}");
        let e = Scenario::parse(&mp("sync_mode = \"eager\""), "m.toml").unwrap_err();
        assert!(e.to_string().contains("eager"), "{e}");
        let e = Scenario::parse(&mp("l_slots = \"many\""), "m.toml").unwrap_err();
        assert!(e.to_string().contains("l_slots"), "{e}");
    }

    #[test]
    fn unknown_key_is_named() {
        let text = OK.replace("spines = 2", "spines = 2\nspinez = 4");
        let e = Scenario::parse(&text, "bad.toml").unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("bad.toml: "), "{msg}");
        assert!(msg.contains("spinez"), "{msg}");
    }

    #[test]
    fn wrong_type_names_key_and_expectation() {
        let text = OK.replace("bytes = 1000", "bytes = \"lots\"");
        let e = Scenario::parse(&text, "bad.toml").unwrap_err();
        assert_eq!(e.key, "flows[0].bytes");
        assert!(
            e.message.contains("u64") || e.message.contains("integer"),
            "{e}"
        );
        assert!(e.message.contains("line 11"), "{e}");
    }

    #[test]
    fn topology_keys_are_checked_per_kind() {
        let extra = OK.replace("spines = 2", "spines = 2\nk = 4");
        let e = Scenario::parse(&extra, "t.toml").unwrap_err();
        assert_eq!(e.key, "topology");
        assert!(
            e.message
                .contains("`k` does not apply to kind = \"leaf_spine\""),
            "{e}"
        );
        let missing = OK.replace("spines = 2\n", "");
        let e = Scenario::parse(&missing, "t.toml").unwrap_err();
        assert!(e.message.contains("needs `spines`"), "{e}");
    }

    #[test]
    fn traffic_keys_are_named_and_checked_per_pattern() {
        let poisson = |body: &str| {
            OK.replace(
                "[[flows]]",
                &format!("[[traffic]]\npattern = \"poisson\"\n{body}\n[[flows]]"),
            )
        };
        let e = Scenario::parse(&poisson("cdf = \"websearch\"\nload = \"high\""), "t.toml")
            .unwrap_err();
        assert_eq!(e.key, "traffic[0].load", "{e}");
        assert!(e.message.contains("f64"), "{e}");
        let e = Scenario::parse(
            &poisson("cdf = \"websearch\"\nload = 0.3\npairs = []"),
            "t.toml",
        )
        .unwrap_err();
        assert!(
            e.message
                .contains("`pairs` does not apply to pattern = \"poisson\""),
            "{e}"
        );
        let e = Scenario::parse(&poisson("load = 0.3"), "t.toml").unwrap_err();
        assert!(e.message.contains("needs `cdf`"), "{e}");
        let ok = Scenario::parse(
            &poisson("cdf = \"websearch\"\nload = 0.3\nflow_count = 5"),
            "t.toml",
        )
        .expect("valid poisson traffic");
        assert!(matches!(&ok.traffic[0].pattern, TrafficCfg::Poisson(p) if p.load == 0.3));
        assert_eq!(ok.traffic[0].transport, None);
    }

    #[test]
    fn syntax_error_has_a_line() {
        let e = Scenario::parse("seed = \n[topology", "x.toml").unwrap_err();
        assert!(e.to_string().contains("line"), "{e}");
    }
}
