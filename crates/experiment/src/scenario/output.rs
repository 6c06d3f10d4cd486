//! The `[output]` section: which time series to sample (queue bytes and
//! utilisation of ports, flow throughput and rate, ECN marking ratios, the
//! ordering layer's NIC memory, RCM's per-port state) and how often, the pcap trace and the PFC record,
//! the warm-up and FCT windows of the statistics (`crate::measured`); its
//! checks and its build step (the network's sampling and capture).

use super::check::{us, Check, ScenarioError};
use super::port_select::{self, PortItem, PortList};
use fabric::Network;
use serde::Deserialize;

pub use fabric::MAX_SAMPLED_VALUES;

/// The shortest sampling interval, in microseconds (10 ns).
pub const MIN_SAMPLE_US: f64 = 0.01;

/// Time series to record (written to `series.csv` with `--out`).
#[derive(Debug, Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct OutputCfg {
    /// Sampling interval in microseconds; no series without it.
    pub sample_us: Option<f64>,
    /// The window of time sampled, in microseconds (default: the whole
    /// run): the samples a run without it records, from `from_us` to
    /// `until_us`.
    pub from_us: Option<f64>,
    pub until_us: Option<f64>,
    /// Egress ports to sample, each as [node, peer] or a selector by
    /// level ("all", "tor_up", ...; `port_select`): queue bytes and
    /// utilisation of the link direction node -> peer.
    #[serde(default)]
    pub ports: PortList,
    /// Flow ids (rows of flows.csv) whose throughput and sending rate to sample.
    #[serde(default)]
    pub flows: Vec<u32>,
    /// Egress ports, each as [node, peer], whose ECN marking ratio to
    /// sample; summary.json also gets their totals over the run.
    #[serde(default)]
    pub ecn_ports: Vec<[String; 2]>,
    /// The ordering layer's NIC memory (`fabric::ORDERING_SERIES`; needs
    /// a bitmap layer); summary.json's `ordering` block also gets each
    /// series' average over the samples.
    #[serde(default)]
    pub ordering_memory: bool,
    /// Switch ports, each as [node, peer], whose RCM state to sample
    /// (`fabric::RCM_SERIES`; needs `[switch.rcm] enabled`).
    #[serde(default)]
    pub rcm_ports: Vec<[String; 2]>,
    /// Switches whose buffer occupancy (bytes their MMU holds) to
    /// sample: their names, or "all".
    #[serde(default)]
    pub buffers: SwitchList,
    /// A pcap trace of the hosts' ports (`trace.pcap` with `--out`).
    pub pcap: Option<PcapCfg>,
    /// Every PFC frame a port receives (`pfc.csv` with `--out`).
    #[serde(default)]
    pub pfc: bool,
    /// The warm-up, in microseconds: FCT statistics count only the flows
    /// that start at or after it (`crate::measured`).
    pub warmup_us: Option<f64>,
    /// The window of start time, in microseconds, of the mean FCT over
    /// time (`fct_over_time.csv`).
    pub fct_window_us: Option<f64>,
}

/// `buffers = "all"` or `buffers = ["leaf0", "spine1"]`.
#[derive(Debug, Deserialize, Clone)]
#[serde(untagged)]
pub enum SwitchList {
    All(String),
    Names(Vec<String>),
}

impl Default for SwitchList {
    fn default() -> SwitchList {
        SwitchList::Names(Vec::new())
    }
}

impl SwitchList {
    fn is_empty(&self) -> bool {
        matches!(self, SwitchList::Names(v) if v.is_empty())
    }

    /// The switches' node ids, errors naming `output.buffers`.
    fn resolve(&self, net: &Network, c: Check) -> Result<Vec<u32>, ScenarioError> {
        let topo = net.topology();
        let switch = |i: usize| topo.nodes[i].kind == fabric::NodeKind::Switch;
        match self {
            SwitchList::All(a) if a == "all" => Ok((0..topo.nodes.len())
                .filter(|&i| switch(i))
                .map(|i| i as u32)
                .collect()),
            SwitchList::All(a) => Err(c.err(
                "output.buffers",
                format!("expected \"all\" or a list of switch names, got {a:?}"),
            )),
            SwitchList::Names(names) => names
                .iter()
                .enumerate()
                .map(|(i, n)| match topo.node_by_name(n) {
                    Some(id) if switch(id as usize) => Ok(id),
                    Some(_) => Err(c.err(
                        format!("output.buffers[{i}]"),
                        format!("{n:?} is a host, not a switch"),
                    )),
                    None => Err(c.err(format!("output.buffers[{i}]"), format!("no node {n:?}"))),
                })
                .collect(),
        }
    }
}

/// `pcap = { flows = [0, 3], max_packets = 100000 }`: which flows' packets
/// (all when left out) and how many records at most.
#[derive(Debug, Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct PcapCfg {
    pub flows: Option<Vec<u32>>,
    pub max_packets: Option<u64>,
}

impl OutputCfg {
    /// The warm-up and FCT window (checked by [`OutputCfg::validate`]).
    pub fn measure(&self) -> crate::measured::Measure {
        crate::measured::Measure {
            warmup: self.warmup_us.map_or(0, us),
            window: self.fct_window_us.map(us),
        }
    }

    /// Checks the interval (and that one is given when anything is
    /// sampled), and, where the window's end is known (`until_us`, or the
    /// run's `stop_ms`), that the series fit [`MAX_SAMPLED_VALUES`].
    pub fn validate(&self, c: Check, stop_ms: Option<f64>) -> Result<(), ScenarioError> {
        if let Some(w) = self.warmup_us {
            c.us("output.warmup_us", w)?;
        }
        if let Some(w) = self.fct_window_us {
            c.us_positive("output.fct_window_us", w)?;
        }
        match self.sample_us {
            Some(interval) => {
                c.us_positive("output.sample_us", interval)?;
                if interval < MIN_SAMPLE_US {
                    return Err(c.err(
                        "output.sample_us",
                        format!("must be at least {MIN_SAMPLE_US} (10 ns), got {interval}"),
                    ));
                }
                // Selectors are counted once the topology is built.
                let buffers = match &self.buffers {
                    SwitchList::Names(n) => n.len(),
                    SwitchList::All(_) => 0,
                };
                self.check_values(c, stop_ms, interval, self.ports.pairs(), buffers)?;
            }
            None if self.from_us.is_some() || self.until_us.is_some() => {
                return Err(c.err(
                    "output.sample_us",
                    "needed with output.from_us or output.until_us",
                ));
            }
            None if !self.ports.is_empty()
                || !self.buffers.is_empty()
                || !self.flows.is_empty()
                || !self.ecn_ports.is_empty()
                || !self.rcm_ports.is_empty()
                || self.ordering_memory =>
            {
                return Err(c.err(
                    "output.sample_us",
                    "needed to sample ports, buffers, flows, ECN ports, RCM ports or the ordering memory",
                ));
            }
            None => {}
        }
        Ok(())
    }

    /// Refuses more than [`MAX_SAMPLED_VALUES`] where the window's end is
    /// known (`until_us`, or the run's `stop_ms`), with `ports` sampled
    /// ports and `buffers` sampled switches.
    fn check_values(
        &self,
        c: Check,
        stop_ms: Option<f64>,
        interval: f64,
        ports: usize,
        buffers: usize,
    ) -> Result<(), ScenarioError> {
        let end_us = match (self.until_us, stop_ms) {
            (Some(u), Some(s)) => Some(u.min(s * 1000.0)),
            (u, s) => u.or(s.map(|s| s * 1000.0)),
        };
        let Some(end) = end_us else {
            return Ok(());
        };
        let samples = ((end - self.from_us.unwrap_or(0.0)) / interval).max(0.0);
        let series = 2 * ports
            + 2 * self.flows.len()
            + self.ecn_ports.len()
            + 5 * self.rcm_ports.len()
            + if self.ordering_memory { 4 } else { 0 }
            + buffers;
        let values = samples * series as f64;
        if values > MAX_SAMPLED_VALUES as f64 {
            return Err(c.err(
                "output.sample_us",
                format!(
                    "{values:.0} sampled values ({series} series of {samples:.0} \
                     samples): at most {MAX_SAMPLED_VALUES}; sample less often or \
                     over a shorter window (output.until_us)"
                ),
            ));
        }
        Ok(())
    }

    /// Sets the network's sampling (ports found by their ends' names or
    /// by level); `stop_ms` is the run's.
    pub fn build(
        &self,
        net: &mut Network,
        c: Check,
        stop_ms: Option<f64>,
    ) -> Result<(), ScenarioError> {
        if self.pfc {
            net.set_pfc_log();
        }
        if let Some(w) = self.fct_window_us {
            let window = c.us_positive("output.fct_window_us", w)?;
            let last = net.flows().iter().map(|f| f.flow.start).max().unwrap_or(0);
            if last / window >= crate::measured::MAX_FCT_WINDOWS {
                return Err(c.err(
                    "output.fct_window_us",
                    format!(
                        "{} windows of {w} us up to the last flow's start: at most {}",
                        last / window + 1,
                        crate::measured::MAX_FCT_WINDOWS
                    ),
                ));
            }
        }
        if let Some(p) = &self.pcap {
            net.set_pcap(fabric::PcapSpec {
                flows: p.flows.clone(),
                max_packets: p.max_packets.unwrap_or(fabric::pcap::DEFAULT_MAX_PACKETS),
            })
            .map_err(|(field, m)| c.err(format!("output.pcap.{field}"), m))?;
        }
        let Some(interval) = self.sample_us else {
            return Ok(());
        };
        let from = match self.from_us {
            Some(v) => c.us("output.from_us", v)?,
            None => 0,
        };
        let until = match self.until_us {
            Some(v) => {
                let t = c.us_positive("output.until_us", v)?;
                if t <= from {
                    return Err(c.err(
                        "output.until_us",
                        format!("must be after output.from_us, got {v}"),
                    ));
                }
                Some(t)
            }
            None => None,
        };
        // Egress port ids of `[node, peer]` pairs, errors naming `key[i]`.
        let port_ids = |key: &str, pairs: &[[String; 2]]| -> Result<Vec<u32>, ScenarioError> {
            pairs
                .iter()
                .enumerate()
                .map(|(i, [a, b])| {
                    let (link, forward) = net.find_link(a, b).ok_or_else(|| {
                        c.err(
                            format!("{key}[{i}]"),
                            format!("no link joins {a:?} and {b:?}"),
                        )
                    })?;
                    Ok(2 * link + if forward { 0 } else { 1 })
                })
                .collect()
        };
        let bitmaps = (0..net.host_count()).any(|h| net.nic(h).order_memory().is_some());
        if self.ordering_memory && !bitmaps {
            return Err(c.err(
                "output.ordering_memory",
                "needs a bitmap ordering layer ([transport] ordering = \"eunomia\" or \"static_bitmap\")",
            ));
        }
        let mut ports = Vec::new();
        for (i, item) in self.ports.items().iter().enumerate() {
            let key = match &self.ports {
                PortList::One(_) => "output.ports".to_string(),
                PortList::Many(_) => format!("output.ports[{i}]"),
            };
            match item {
                PortItem::Pair(pair) => ports.extend(
                    port_ids("output.ports", std::slice::from_ref(pair)).map_err(|_| {
                        c.err(
                            &key,
                            format!("no link joins {:?} and {:?}", pair[0], pair[1]),
                        )
                    })?,
                ),
                PortItem::Selector(sel) => {
                    let got =
                        port_select::select(net.topology(), sel).map_err(|m| c.err(&key, m))?;
                    if got.is_empty() {
                        return Err(
                            c.err(&key, format!("{sel:?} selects no port in this topology"))
                        );
                    }
                    ports.extend(got);
                }
            }
        }
        // A port named twice is sampled once, where it came first.
        let mut seen = std::collections::HashSet::new();
        ports.retain(|&p| seen.insert(p));
        let switches = self.buffers.resolve(net, c)?;
        self.check_values(c, stop_ms, interval, ports.len(), switches.len())?;
        let ecn_ports = port_ids("output.ecn_ports", &self.ecn_ports)?;
        let rcm_ports = port_ids("output.rcm_ports", &self.rcm_ports)?;
        if !rcm_ports.is_empty() && net.rcm_stats().is_none() {
            return Err(c.err(
                "output.rcm_ports",
                "needs RCM ([switch.rcm] enabled = true)",
            ));
        }
        net.set_sampling(fabric::SampleSpec {
            interval: us(interval),
            from,
            until,
            ports,
            flows: self.flows.clone(),
            ecn_ports,
            ordering_memory: self.ordering_memory,
            rcm_ports,
            switches,
        })
        .map_err(|m| c.err("output", m))
    }
}
