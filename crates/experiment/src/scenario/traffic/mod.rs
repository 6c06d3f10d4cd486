//! The `[[flows]]` and `[[traffic]]` sections: their TOML types (each
//! `[[traffic]]` entry one flat table whose keys depend on `pattern`) and
//! their checks, including the limits on how many flows an entry may
//! generate. The build step, from entries to the network's flows, is in
//! `plan.rs`.

pub mod plan;

use super::check::{Check, ScenarioError};
use super::transport::some_engine_kind;
use serde::Deserialize;
use std::path::PathBuf;
use transport::EngineKind;

/// The most flows a scenario may have (all entries together), checked
/// before any is generated.
pub const MAX_FLOWS: u64 = 10_000_000;

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
    /// This flow's engine, overriding `[transport] kind`.
    #[serde(default, deserialize_with = "some_engine_kind")]
    pub transport: Option<EngineKind>,
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

/// One `[[traffic]]` entry: its pattern and, optionally, the engine
/// scheme of its flows (overriding `[transport] kind`, so transports can
/// share a fabric).
#[derive(Debug, Deserialize, Clone)]
#[serde(try_from = "TrafficRaw")]
pub struct Traffic {
    pub pattern: TrafficCfg,
    pub transport: Option<EngineKind>,
    pub messages: MessagesCfg,
}

/// A `[[traffic]]` entry as written: one flat table, so that a wrong type
/// names its key and line; which keys each `pattern` takes is checked when
/// it becomes a [`TrafficCfg`].
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct TrafficRaw {
    pattern: PatternKind,
    #[serde(default, deserialize_with = "some_engine_kind")]
    transport: Option<EngineKind>,
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
                limit: None,
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
    Ns3 {
        file: PathBuf,
        verb: VerbCfg,
        /// Only the first flows of the file (not a TOML key: `rdmalab
        /// bench --flows N` sets it).
        limit: Option<usize>,
    },
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

impl MessagesCfg {
    /// `messages` in 1..=65535 and `sync_ratio` in [0, 1] (whether the
    /// transport takes synchronise operations is checked in `plan.rs`).
    fn validate(&self, key: &str, c: Check) -> Result<(), ScenarioError> {
        if let Some(m) = self.messages {
            if !(1..=u16::MAX as u32).contains(&m) {
                return Err(c.err(
                    format!("{key}.messages"),
                    format!("must be between 1 and 65535, not {m}"),
                ));
            }
        }
        if let Some(r) = self.sync_ratio {
            if !(0.0..=1.0).contains(&r) {
                return Err(c.err(
                    format!("{key}.sync_ratio"),
                    format!("must be between 0 and 1, not {r}"),
                ));
            }
        }
        Ok(())
    }
}

/// Checks every number of the `[[flows]]` and `[[traffic]]` entries that
/// does not depend on the topology (host ids and generated counts are
/// checked as flows are planned).
pub fn validate(flows: &[FlowCfg], traffic: &[Traffic], c: Check) -> Result<(), ScenarioError> {
    let bytes = |key: String, b: u64| c.at_least(&format!("{key}.bytes"), b, 1).map(|_| ());
    for (j, f) in flows.iter().enumerate() {
        let key = format!("flows[{j}]");
        bytes(key.clone(), f.bytes)?;
        c.us(&format!("{key}.start_us"), f.start_us)?;
        f.messages().validate(&key, c)?;
    }
    let mut explicit = flows.len() as u64;
    for (i, t) in traffic.iter().enumerate() {
        let key = format!("traffic[{i}]");
        t.messages.validate(&key, c)?;
        match &t.pattern {
            TrafficCfg::Permutation {
                bytes: b, start_us, ..
            }
            | TrafficCfg::AllToAll {
                bytes: b, start_us, ..
            }
            | TrafficCfg::Incast {
                bytes: b, start_us, ..
            } => {
                bytes(key.clone(), *b)?;
                c.us(&format!("{key}.start_us"), *start_us)?;
            }
            TrafficCfg::LongLived {
                pairs,
                bytes: b,
                start_us,
                ..
            } => {
                bytes(key.clone(), *b)?;
                c.us(&format!("{key}.start_us"), *start_us)?;
                explicit += pairs.len() as u64;
            }
            TrafficCfg::Ns3 { .. } => {}
            TrafficCfg::Poisson(p) => p.validate(&key, c)?,
        }
    }
    if explicit > MAX_FLOWS {
        return Err(c.err(
            "flows",
            format!("{explicit} flows are listed; at most {MAX_FLOWS} are supported"),
        ));
    }
    Ok(())
}

impl PoissonCfg {
    fn validate(&self, key: &str, c: Check) -> Result<(), ScenarioError> {
        if !(self.load > 0.0 && self.load <= 1.0) {
            return Err(c.err(
                format!("{key}.load"),
                format!(
                    "must be in (0, 1] (a fraction of the host link rate), got {}",
                    self.load
                ),
            ));
        }
        c.us(&format!("{key}.start_us"), self.start_us)?;
        match (self.duration_us, self.flow_count) {
            (Some(d), None) => {
                c.us_positive(&format!("{key}.duration_us"), d)?;
            }
            (None, Some(n)) => {
                if n == 0 || n > MAX_FLOWS {
                    return Err(c.err(
                        format!("{key}.flow_count"),
                        format!("must be between 1 and {MAX_FLOWS}, got {n}"),
                    ));
                }
            }
            _ => {
                return Err(c.err(
                    key,
                    "give exactly one of duration_us (> 0) or flow_count (> 0)",
                ))
            }
        }
        if let Some(f) = self.hot_fraction {
            c.fraction(&format!("{key}.hot_fraction"), f)?;
        }
        if let Some(n) = self.group_size {
            c.at_least(&format!("{key}.group_size"), n, 2)?;
        }
        if let Some(b) = self.incast_bytes {
            c.at_least(&format!("{key}.incast_bytes"), b, 1)?;
        }
        if let Some(n) = self.fan_in {
            c.at_least(&format!("{key}.fan_in"), n, 1)?;
        }
        Ok(())
    }
}
