//! The shared benchmark scenarios (bench/README.md): the HPCC ns-3 topology
//! and flow files that htsim and ns-3 ran, embedded in the binary, built
//! with the fabric settings of ns3-hpcc-config-ws128-dcqcn.txt (RoCEv2,
//! PFC, per-packet ACKs, 1000-byte payloads, go-back-N, ECMP) in two modes:
//! `line-rate` (no congestion control, what htsim ran) and `dcqcn` (what
//! ns-3 ran).

use crate::build::Built;
use fabric::{EcnSetting, FabricConfig, Flow, Network};
use transport::Verb;

pub struct BenchSpec {
    pub name: &'static str,
    pub topology: &'static str,
    pub flows: &'static str,
    /// Packet-hops the scenario must produce (bench/README.md).
    pub expected_hops: &'static str,
}

const K8: &str = include_str!("../../../bench/topo-fattree-k8-100g.txt");
const K16: &str = include_str!("../../../bench/topo-fattree-k16-100g.txt");
pub const NS3_CONFIG: &str = include_str!("../../../bench/ns3-hpcc-config-ws128-dcqcn.txt");

pub const SCENARIOS: [BenchSpec; 4] = [
    BenchSpec {
        name: "p128",
        topology: K8,
        flows: include_str!("../../../bench/flows-p128.txt"),
        expected_hops: "2.984 M",
    },
    BenchSpec {
        name: "ws128",
        topology: K8,
        flows: include_str!("../../../bench/flows-ws128.txt"),
        expected_hops: "41.21 M",
    },
    BenchSpec {
        name: "a2a128",
        topology: K8,
        flows: include_str!("../../../bench/flows-a2a128.txt"),
        expected_hops: "18.59 M",
    },
    BenchSpec {
        name: "p1024",
        topology: K16,
        flows: include_str!("../../../bench/flows-p1024.txt"),
        expected_hops: "24.02 M",
    },
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    LineRate,
    Dcqcn,
}

impl Mode {
    pub const ALL: [Mode; 2] = [Mode::LineRate, Mode::Dcqcn];

    pub fn name(self) -> &'static str {
        match self {
            Mode::LineRate => "line-rate",
            Mode::Dcqcn => "dcqcn",
        }
    }

    pub fn parse(s: &str) -> Result<Mode, String> {
        Mode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| format!("unknown bench mode {s:?}: expected line-rate or dcqcn"))
    }
}

pub fn find(name: &str) -> Result<&'static BenchSpec, String> {
    SCENARIOS.iter().find(|s| s.name == name).ok_or_else(|| {
        let names: Vec<_> = SCENARIOS.iter().map(|s| s.name).collect();
        format!(
            "unknown bench scenario {name:?}: expected one of {}",
            names.join(", ")
        )
    })
}

/// The fabric of the ns-3 configuration file: its buffer size, ECN maps
/// and payload size; PFC on with HPCC's dynamic threshold (alpha 1/8).
pub fn fabric_config(mode: Mode) -> Result<FabricConfig, String> {
    let origin = "bench/ns3-hpcc-config-ws128-dcqcn.txt";
    let c = workload::ns3::parse_config(NS3_CONFIG, origin).map_err(|e| e.to_string())?;
    fn e<T>(r: Result<T, workload::WorkloadError>) -> Result<T, String> {
        r.map_err(|e| e.to_string())
    }
    let mut cfg = FabricConfig::default();
    cfg.mmu.buffer = e(c.get_u64("BUFFER_SIZE"))? * 1024 * 1024;
    cfg.mmu.pfc = true;
    cfg.nic.mtu = e(c.get_u64("PACKET_PAYLOAD_SIZE"))? as u32;
    cfg.nic.ack_every = e(c.get_u64("L2_ACK_INTERVAL"))? as u32;
    let kmin = e(c.rate_map("KMIN_MAP"))?;
    let kmax = e(c.rate_map("KMAX_MAP"))?;
    let pmax = e(c.rate_map("PMAX_MAP"))?;
    cfg.ecn = kmin
        .iter()
        .zip(&kmax)
        .zip(&pmax)
        .map(|((&(rate, kmin), &(_, kmax)), &(_, pmax))| EcnSetting {
            rate_bps: rate,
            kmin: (kmin * 1000.0) as u64,
            kmax: (kmax * 1000.0) as u64,
            pmax,
        })
        .collect();
    cfg.ecn_enabled = mode == Mode::Dcqcn;
    if mode == Mode::Dcqcn {
        let us = |k: &str| -> Result<u64, String> { Ok((e(c.get_f64(k))? * 1e6).round() as u64) };
        let mut p = transport::DcqcnParams::hpcc(100_000_000_000);
        p.alpha_resume_interval = us("ALPHA_RESUME_INTERVAL")?;
        p.rate_decrease_interval = us("RATE_DECREASE_INTERVAL")?;
        p.rp_timer = us("RP_TIMER")?;
        p.g = e(c.get_f64("EWMA_GAIN"))?;
        p.fast_recovery_times = e(c.get_u64("FAST_RECOVERY_TIMES"))? as u32;
        p.rai_bps = e(c.get_rate("RATE_AI"))?;
        p.rhai_bps = e(c.get_rate("RATE_HAI"))?;
        p.min_rate_bps = e(c.get_rate("MIN_RATE"))?;
        p.clamp_target_rate = e(c.get_u64("CLAMP_TARGET_RATE"))? != 0;
        p.validate()?;
        cfg.nic.cc = transport::CcConfig::Dcqcn(p);
    }
    Ok(cfg)
}

/// Builds one benchmark run; `flow_limit` keeps only the first flows (the
/// tiny input CI runs).
pub fn build(
    spec: &BenchSpec,
    mode: Mode,
    seed: u64,
    flow_limit: Option<usize>,
) -> Result<Built, String> {
    let origin = format!("bench/{}", spec.name);
    let imported = crate::ns3::import_topology(spec.topology, &origin)?;
    let mut flows = workload::ns3::parse_flows(spec.flows, &origin).map_err(|e| e.to_string())?;
    if let Some(map) = &imported.ns3_hosts {
        crate::ns3::map_hosts(&mut flows, map, &origin)?;
    }
    if let Some(n) = flow_limit {
        flows.truncate(n);
    }
    let mut cfg = fabric_config(mode)?;
    cfg.seed = seed;
    let mut net = Network::new(imported.topo, cfg)?;
    for f in &flows {
        net.add_flow(Flow {
            src: f.src,
            dst: f.dst,
            bytes: f.bytes,
            start: f.start,
            verb: Verb::Write,
            class: 0,
            reliability: 0,
            messages: 1,
            sync_per_10k: 0,
        })?;
    }
    Ok(Built {
        net,
        classes: vec![format!("bench:{}", spec.name)],
        stop: None,
    })
}

/// Peak resident memory of this process in MB (Linux; 0 elsewhere).
pub fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}
