//! The shared benchmark scenarios (bench/README.md) as scenario files
//! embedded in the binary (`bench/<name>.toml` with the HPCC ns-3
//! topology and flow files they name), built by the one scenario builder.
//! `LARGE` holds the ones a bare `rdmalab bench` skips (a 1024-rank ring
//! all-reduce, a permutation on a 16,000-host fat tree). Each file is mode `dcqcn` (what ns-3 ran, with the settings of
//! ns3-hpcc-config-ws128-dcqcn.txt); mode `line-rate` (what htsim ran) is
//! the same file without congestion control and ECN; modes `hpcc`,
//! `timely` and `dctcp` the same file under those controls with their
//! `ns3` presets. The files queue ACKs in the data class at the switches,
//! as ns-3's do, and the ns-3-compared ones send ns-3's packet sizes
//! (`transport.ns3_nic`; docs/ns3_validation.md); mode `line-rate`
//! puts ACKs above data and keeps our sizes, as htsim ran.

use crate::build::Built;
use crate::scenario::{CcKind, Files, Scenario, TrafficCfg, TransportCfg};
pub use fabric::EcmpHash;
use std::path::Path;

pub struct BenchSpec {
    pub name: &'static str,
    /// The scenario file's text (`bench/<name>.toml`).
    pub scenario: &'static str,
    /// Packet-hops the scenario must produce (bench/README.md).
    pub expected_hops: &'static str,
}

/// The files the bench scenarios name, by the names they use.
const FILES: &[(&str, &str)] = &[
    (
        "topo-fattree-k8-100g.txt",
        include_str!("../../../bench/topo-fattree-k8-100g.txt"),
    ),
    (
        "topo-fattree-k16-100g.txt",
        include_str!("../../../bench/topo-fattree-k16-100g.txt"),
    ),
    (
        "flows-p128.txt",
        include_str!("../../../bench/flows-p128.txt"),
    ),
    (
        "flows-ws128.txt",
        include_str!("../../../bench/flows-ws128.txt"),
    ),
    (
        "flows-a2a128.txt",
        include_str!("../../../bench/flows-a2a128.txt"),
    ),
    (
        "flows-p1024.txt",
        include_str!("../../../bench/flows-p1024.txt"),
    ),
];

/// The ns-3 configuration the bench files' settings come from (a test
/// checks that they still agree).
pub const NS3_CONFIG: &str = include_str!("../../../bench/ns3-hpcc-config-ws128-dcqcn.txt");

pub const SCENARIOS: [BenchSpec; 4] = [
    BenchSpec {
        name: "p128",
        scenario: include_str!("../../../bench/p128.toml"),
        expected_hops: "2.984 M",
    },
    BenchSpec {
        name: "ws128",
        scenario: include_str!("../../../bench/ws128.toml"),
        expected_hops: "41.21 M",
    },
    BenchSpec {
        name: "a2a128",
        scenario: include_str!("../../../bench/a2a128.toml"),
        expected_hops: "18.59 M",
    },
    BenchSpec {
        name: "p1024",
        scenario: include_str!("../../../bench/p1024.toml"),
        expected_hops: "24.02 M",
    },
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    LineRate,
    Dcqcn,
    Hpcc,
    Timely,
    Dctcp,
}

impl Mode {
    /// The modes a bench run without `--mode` runs.
    pub const ALL: [Mode; 2] = [Mode::LineRate, Mode::Dcqcn];
    /// The other congestion controls, run only when named.
    pub const OTHER_CC: [Mode; 3] = [Mode::Hpcc, Mode::Timely, Mode::Dctcp];

    pub fn name(self) -> &'static str {
        match self {
            Mode::LineRate => "line-rate",
            Mode::Dcqcn => "dcqcn",
            Mode::Hpcc => "hpcc",
            Mode::Timely => "timely",
            Mode::Dctcp => "dctcp",
        }
    }

    pub fn parse(s: &str) -> Result<Mode, String> {
        Mode::ALL
            .into_iter()
            .chain(Mode::OTHER_CC)
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown bench mode {s:?}: expected line-rate, dcqcn, hpcc, timely or dctcp"
                )
            })
    }
}

/// Benchmarks that take minutes: run only when named (`--scenario`).
pub const LARGE: [BenchSpec; 2] = [
    BenchSpec {
        name: "ar1024",
        scenario: include_str!("../../../bench/ar1024.toml"),
        expected_hops: "2514 M",
    },
    BenchSpec {
        name: "p16k",
        scenario: include_str!("../../../bench/p16k.toml"),
        expected_hops: "380.4 M",
    },
];

pub fn find(name: &str) -> Result<&'static BenchSpec, String> {
    let all = || SCENARIOS.iter().chain(LARGE.iter());
    all().find(|s| s.name == name).ok_or_else(|| {
        let names: Vec<_> = all().map(|s| s.name).collect();
        format!(
            "unknown bench scenario {name:?}: expected one of {}",
            names.join(", ")
        )
    })
}

/// The scenario of one benchmark run: the embedded file in `mode`, keeping
/// only the first `flow_limit` flows when given (the tiny input CI runs).
pub fn scenario(
    spec: &BenchSpec,
    mode: Mode,
    flow_limit: Option<usize>,
) -> Result<Scenario, String> {
    scenario_with(spec, mode, flow_limit, EcmpHash::default())
}

/// [`scenario`] with ECMP's hash set (`bench --ecmp-hash ns3`: the paths
/// the HPCC ns-3 simulator's flows took, for `rdmalab compare`).
pub fn scenario_with(
    spec: &BenchSpec,
    mode: Mode,
    flow_limit: Option<usize>,
    ecmp_hash: EcmpHash,
) -> Result<Scenario, String> {
    let file = format!("bench/{}.toml", spec.name);
    let mut sc = Scenario::parse(spec.scenario, &file).map_err(|e| e.to_string())?;
    sc.name = Some(spec.name.to_string());
    let t = &mut sc.transport;
    match mode {
        Mode::LineRate => {
            // What htsim ran: ACKs above data, our packet sizes.
            t.cc = CcKind::None;
            t.ctrl_priority = TransportCfg::default().ctrl_priority;
            t.ns3_nic = false;
            sc.switch.ecn = false;
        }
        Mode::Dcqcn => {}
        Mode::Hpcc => t.cc = CcKind::Hpcc,
        Mode::Timely => t.cc = CcKind::Timely,
        Mode::Dctcp => t.cc = CcKind::Dctcp,
    }
    sc.switch.ecmp_hash = ecmp_hash;
    for t in &mut sc.traffic {
        if let TrafficCfg::Ns3 { limit, .. } = &mut t.pattern {
            *limit = flow_limit;
        }
    }
    Ok(sc)
}

/// What a benchmark run ran ([`crate::ran`]): its scenario, and as its
/// text the embedded file with every argument that changes the run.
pub fn ran(
    spec: &BenchSpec,
    mode: Mode,
    flow_limit: Option<usize>,
    ecmp_hash: EcmpHash,
) -> Result<crate::ran::Ran, String> {
    let sc = scenario_with(spec, mode, flow_limit, ecmp_hash)?;
    let text = format!(
        "{}\n# bench --mode {} --flows {flow_limit:?} --ecmp-hash {ecmp_hash:?}\n",
        spec.scenario,
        mode.name()
    );
    let mut ran = crate::ran::Ran::new(&sc, &text, &[]);
    // The file is ours and its modes turn its DCQCN settings off on
    // purpose: settings without effect are for the user's own files.
    let inert = sc.no_effect();
    ran.warnings.retain(|w| !inert.contains(w));
    Ok(ran)
}

/// Builds one benchmark run.
pub fn build(
    spec: &BenchSpec,
    mode: Mode,
    seed: u64,
    flow_limit: Option<usize>,
) -> Result<Built, String> {
    build_with(spec, mode, seed, flow_limit, EcmpHash::default(), None)
}

/// [`build`] with ECMP's hash set ([`scenario_with`]).
pub fn build_with(
    spec: &BenchSpec,
    mode: Mode,
    seed: u64,
    flow_limit: Option<usize>,
    ecmp_hash: EcmpHash,
    threads: Option<u32>,
) -> Result<Built, String> {
    let sc = scenario_with(spec, mode, flow_limit, ecmp_hash)?;
    let path = format!("bench/{}.toml", spec.name);
    let files = Files::Embedded(FILES);
    let mut built = crate::build::build_from(&sc, Path::new(&path), Some(seed), files, threads)
        .map_err(|e| e.to_string())?;
    built.classes = vec![format!("bench:{}", spec.name)];
    Ok(built)
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
