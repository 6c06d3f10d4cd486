//! The `[[jobs]]` section: collective jobs (AI training traffic), each a
//! collective run closed-loop for some iterations on its ranks' hosts,
//! beside the `[[traffic]]` flows, or a SimAI workload file's
//! collectives in order (`trace`). Its TOML type, the checks that need no
//! topology (names, counts, times, the ranks' list or range), and the
//! build step: the hosts of each job (a list, a range, or a placement
//! among the hosts earlier jobs left free), its plan (from the trace
//! read through the scenario's [`Source`]), and its application on the
//! network. Every error names `jobs[i].KEY`, and a trace's its line.

use super::check::{Check, ScenarioError, Source};
use crate::jobs::Job;
use engine::time::NS;
use engine::{Rng, StreamKind, Time};
use fabric::{AppId, Network};
use serde::Deserialize;
use std::collections::BTreeSet;
use std::path::Path;
use workload::collective::{plan, Algorithm, Collective, Plan, Spec};

/// The most iterations a job may run.
pub const MAX_ITERATIONS: u32 = 1_000_000;

#[derive(Debug, Deserialize, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JobCfg {
    /// For outputs; `job<i>` by default.
    pub name: Option<String>,
    /// Required unless `trace` is given.
    pub collective: Option<String>,
    /// A SimAI workload file (relative to the scenario's folder): its
    /// collectives and compute, in place of `collective` and `bytes`.
    pub trace: Option<String>,
    /// The collective's first algorithm by default (all-reduce and the
    /// ring ones: "ring"; all-to-all: "pairwise").
    pub algorithm: Option<String>,
    /// Host numbers: a list, or an inclusive range string "0..15".
    pub ranks: Option<RanksCfg>,
    /// Or a placement rule for `size` ranks.
    pub placement: Option<PlacementCfg>,
    pub size: Option<u32>,
    /// The buffer per rank, as nccl-tests sizes it; required unless
    /// `trace` is given.
    pub bytes: Option<u64>,
    #[serde(default = "one")]
    pub channels: u32,
    /// 0: a step's piece is one message.
    #[serde(default)]
    pub chunk_bytes: u64,
    #[serde(default = "one")]
    pub iterations: u32,
    #[serde(default)]
    pub compute_us: f64,
    #[serde(default)]
    pub start_us: f64,
}

fn one() -> u32 {
    1
}

#[derive(Debug, Deserialize, Clone, PartialEq)]
#[serde(untagged)]
pub enum RanksCfg {
    List(Vec<u32>),
    Range(String),
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PlacementCfg {
    /// The lowest free hosts: whole racks, as the built-in topologies
    /// number hosts rack by rack.
    Packed,
    /// Free hosts at an even stride over the free ones: across racks.
    Spread,
    /// Free hosts drawn at random from the run's seed.
    Random,
}

impl JobCfg {
    /// The collective, or None for a trace job (which gives neither
    /// `collective`, `algorithm` nor `bytes`).
    fn collective(&self, key: &str, c: Check) -> Result<Option<Collective>, ScenarioError> {
        if self.trace.is_some() {
            for (k, given) in [
                ("collective", self.collective.is_some()),
                ("algorithm", self.algorithm.is_some()),
                ("bytes", self.bytes.is_some()),
            ] {
                if given {
                    return Err(c.err(
                        format!("{key}.{k}"),
                        "a trace job takes its collectives, their algorithms (each \
                         collective's default) and sizes from the trace: give either trace \
                         or collective with bytes",
                    ));
                }
            }
            return Ok(None);
        }
        let (Some(name), Some(_)) = (&self.collective, self.bytes) else {
            let k = if self.collective.is_none() {
                "collective"
            } else {
                "bytes"
            };
            return Err(c.err(
                format!("{key}.{k}"),
                "missing: a job needs collective and bytes, or a trace",
            ));
        };
        Collective::from_name(name).map(Some).ok_or_else(|| {
            let names: Vec<_> = Collective::ALL.iter().map(|c| c.name()).collect();
            c.err(
                format!("{key}.collective"),
                format!("unknown collective {name:?} (known: {})", names.join(", ")),
            )
        })
    }

    fn algorithm(&self, key: &str, coll: Collective, c: Check) -> Result<Algorithm, ScenarioError> {
        let Some(name) = &self.algorithm else {
            return Ok(coll.algorithms()[0]);
        };
        let valid: Vec<_> = coll.algorithms().iter().map(|a| a.name()).collect();
        let a = Algorithm::from_name(name).ok_or_else(|| {
            let names: Vec<_> = Algorithm::ALL.iter().map(|a| a.name()).collect();
            c.err(
                format!("{key}.algorithm"),
                format!("unknown algorithm {name:?} (known: {})", names.join(", ")),
            )
        })?;
        if !coll.algorithms().contains(&a) {
            return Err(c.err(
                format!("{key}.algorithm"),
                format!(
                    "\"{name}\" does not run {} (its algorithms: {})",
                    coll.name(),
                    valid.join(", ")
                ),
            ));
        }
        Ok(a)
    }

    /// The listed hosts (None with a placement), each at most once.
    fn listed(&self, key: &str, c: Check) -> Result<Option<Vec<u32>>, ScenarioError> {
        let k = format!("{key}.ranks");
        let hosts = match (&self.ranks, self.placement, self.size) {
            (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
                return Err(c.err(&k, "give either ranks or placement with size, not both"))
            }
            (None, None, _) => return Err(c.err(&k, "give ranks, or placement with size")),
            (None, Some(_), None) => {
                return Err(c.err(
                    format!("{key}.size"),
                    "placement needs size (the number of ranks)",
                ))
            }
            (None, Some(_), Some(_)) => return Ok(None),
            (Some(RanksCfg::List(l)), None, None) => l.clone(),
            (Some(RanksCfg::Range(s)), None, None) => {
                let bad = || {
                    c.err(
                        &k,
                        format!("{s:?}: expected a range like \"0..15\" (inclusive) or a list"),
                    )
                };
                let (a, b) = s.split_once("..").ok_or_else(bad)?;
                let a: u32 = a.trim().parse().map_err(|_| bad())?;
                let b: u32 = b.trim().parse().map_err(|_| bad())?;
                if a > b {
                    return Err(bad());
                }
                if b - a >= super::check::MAX_NODES as u32 {
                    return Err(c.err(&k, format!("{s:?}: more ranks than a topology has hosts")));
                }
                (a..=b).collect()
            }
        };
        let mut seen = BTreeSet::new();
        if let Some(d) = hosts.iter().find(|&&h| !seen.insert(h)) {
            return Err(c.err(&k, format!("host {d} is listed twice")));
        }
        Ok(Some(hosts))
    }
}

/// Checks every `[[jobs]]` entry as far as no topology is needed.
pub fn validate(jobs: &[JobCfg], c: Check) -> Result<(), ScenarioError> {
    for (i, j) in jobs.iter().enumerate() {
        let key = format!("jobs[{i}]");
        if let Some(coll) = j.collective(&key, c)? {
            j.algorithm(&key, coll, c)?;
            c.at_least(&format!("{key}.bytes"), j.bytes.unwrap_or(0), 1)?;
        }
        let n = match j.listed(&key, c)? {
            Some(l) => l.len() as u64,
            None => j.size.unwrap_or(0) as u64,
        };
        let k = if j.ranks.is_some() { "ranks" } else { "size" };
        c.at_least(&format!("{key}.{k}"), n, 2)?;
        c.at_least(&format!("{key}.channels"), j.channels, 1)?;
        c.at_least(&format!("{key}.iterations"), j.iterations, 1)?;
        if j.iterations > MAX_ITERATIONS {
            return Err(c.err(
                format!("{key}.iterations"),
                format!("at most {MAX_ITERATIONS}, got {}", j.iterations),
            ));
        }
        c.us(&format!("{key}.compute_us"), j.compute_us)?;
        c.us(&format!("{key}.start_us"), j.start_us)?;
        if j.name
            .as_deref()
            .is_some_and(|n| n.is_empty() || n.contains([',', '"', '\n']))
        {
            return Err(c.err(
                format!("{key}.name"),
                "must be non-empty, without commas, quotes or newlines",
            ));
        }
    }
    let mut names = BTreeSet::new();
    for (i, j) in jobs.iter().enumerate() {
        if !names.insert(name(j, i)) {
            return Err(c.err(
                format!("jobs[{i}].name"),
                format!("{:?} names another job too", name(j, i)),
            ));
        }
    }
    Ok(())
}

fn name(j: &JobCfg, i: usize) -> String {
    j.name.clone().unwrap_or_else(|| format!("job{i}"))
}

/// Each job's hosts, plan and application, added to `net`; returns the
/// applications' ids. Placements take hosts no earlier job took.
pub fn build(
    jobs: &[JobCfg],
    net: &mut Network,
    seed: u64,
    mprdma: bool,
    src: Source,
    c: Check,
) -> Result<Vec<AppId>, ScenarioError> {
    if mprdma && !jobs.is_empty() {
        return Err(c.err(
            "jobs",
            "collective jobs wait for the responder's completion of each WRITE, which MP-RDMA \
             does not report: run them under another transport.kind",
        ));
    }
    let hosts = net.host_count();
    let mut taken: BTreeSet<u32> = BTreeSet::new();
    let mut planned: Vec<(Job, Plan)> = Vec::with_capacity(jobs.len());
    for (i, j) in jobs.iter().enumerate() {
        let key = format!("jobs[{i}]");
        let coll = j.collective(&key, c)?;
        let ranks = match j.listed(&key, c)? {
            Some(list) => {
                if let Some(bad) = list.iter().find(|&&h| h >= hosts) {
                    return Err(c.err(
                        format!("{key}.ranks"),
                        format!("host {bad} does not exist (there are {hosts} hosts)"),
                    ));
                }
                list
            }
            None => {
                place(j, i, &taken, hosts, seed).map_err(|m| c.err(format!("{key}.size"), m))?
            }
        };
        taken.extend(ranks.iter().copied());
        let n = ranks.len() as u32;
        let (p, tail) = match coll {
            Some(coll) => (spec_plan(j, &key, coll, n, c)?, 0),
            None => {
                let tkey = format!("{key}.trace");
                let path = j.trace.as_deref().unwrap_or_default();
                let (text, shown) = src.read(Path::new(path)).map_err(|m| c.err(&tkey, m))?;
                let bad = |e: workload::WorkloadError| c.err(&tkey, e.to_string());
                let w = workload::simai::parse(&text, &shown).map_err(bad)?;
                let prog = w.program(n, j.channels, j.chunk_bytes).map_err(bad)?;
                (prog.plan, prog.tail_ns * NS)
            }
        };
        let job = Job {
            name: name(j, i),
            hosts: ranks,
            iterations: j.iterations,
            // A trace's compute after its last collective joins the gap.
            compute: c.us(&format!("{key}.compute_us"), j.compute_us)? + tail,
            start: c.us(&format!("{key}.start_us"), j.start_us)?,
        };
        planned.push((job, p));
    }
    crate::jobs::add(net, planned, false).map_err(|m| c.err("jobs", m))
}

/// The plan of a job that names its collective.
fn spec_plan(
    j: &JobCfg,
    key: &str,
    coll: Collective,
    n: u32,
    c: Check,
) -> Result<Plan, ScenarioError> {
    let spec = Spec {
        collective: coll,
        algorithm: j.algorithm(key, coll, c)?,
        ranks: n,
        bytes: j.bytes.unwrap_or(0),
        channels: j.channels,
        chunk_bytes: j.chunk_bytes,
    };
    plan(&spec).map_err(|e| {
        let k = if e.key == "ranks" && j.ranks.is_none() {
            "size"
        } else {
            e.key
        };
        c.err(format!("{key}.{k}"), e.message)
    })
}

/// `size` hosts by the job's placement among those not `taken`.
fn place(
    j: &JobCfg,
    i: usize,
    taken: &BTreeSet<u32>,
    hosts: u32,
    seed: u64,
) -> Result<Vec<u32>, String> {
    let size = j.size.unwrap_or(0) as usize;
    let mut free: Vec<u32> = (0..hosts).filter(|h| !taken.contains(h)).collect();
    if size > free.len() {
        return Err(format!(
            "{size} ranks, but only {} of the {hosts} hosts are free (earlier jobs took the others)",
            free.len()
        ));
    }
    Ok(match j.placement.expect("checked") {
        PlacementCfg::Packed => free[..size].to_vec(),
        PlacementCfg::Spread => (0..size).map(|r| free[r * free.len() / size]).collect(),
        PlacementCfg::Random => {
            let mut rng = Rng::new(seed, StreamKind::Workload, 1 << 32 | i as u64);
            rng.shuffle(&mut free);
            free.truncate(size);
            free
        }
    })
}

/// The last job's start (0 without jobs).
pub fn last_start(jobs: &[JobCfg]) -> Time {
    jobs.iter()
        .map(|j| super::check::us(j.start_us))
        .max()
        .unwrap_or(0)
}
