//! Open-loop Poisson traffic: per-host arrival processes (traffic_gen.py's
//! convention) with a destination `Pattern`, or a Poisson process of incast
//! events. Every host draws from its own random streams, so adding a host
//! or a traffic class leaves everyone else's draws unchanged.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use engine::time::SEC;
use engine::{Rng, StreamKind, Time};

use crate::cdf::Cdf;
use crate::error::WorkloadError;
use crate::flow::FlowSpec;
use crate::pattern::{Chooser, Pattern};

/// When a traffic class stops generating.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Flows start in [start, start + duration).
    Duration(Time),
    /// The first `n` flows in start order over all hosts. For `Incast`,
    /// whole events until at least `n` flows (an event is never cut short).
    Count(u64),
}

/// One open-loop traffic class.
#[derive(Clone, Debug, PartialEq)]
pub struct PoissonConfig {
    /// Host node ids that send and receive (distinct, at least 2).
    pub hosts: Vec<u32>,
    /// Host link capacity in bits per second.
    pub host_bps: u64,
    /// Offered load per host as a fraction of `host_bps`, in (0, 1]. For
    /// `Incast`, the fraction of the total host capacity.
    pub load: f64,
    /// Flow sizes (unused by `Incast`).
    pub cdf: Cdf,
    pub pattern: Pattern,
    /// No flow starts before this time.
    pub start: Time,
    pub stop: Stop,
    /// Copied into every flow; also keys the random streams.
    pub class: u16,
}

/// What a random stream of this module draws; the low bits of its id.
#[derive(Clone, Copy)]
enum Sub {
    Arrival = 0,
    Dest = 1,
    Size = 2,
    // Per-class streams (host field 0) sit above the per-host ones.
    Pattern = 8,
    IncastTime = 9,
    IncastPick = 10,
}

/// The stream for (class, host, purpose): separate streams for arrival
/// times, destinations and sizes mean that changing the pattern keeps the
/// same arrival times and sizes (common random numbers across runs).
fn stream(seed: u64, class: u16, host: u32, sub: Sub) -> Rng {
    let id = (class as u64) << 40 | (host as u64) << 8 | sub as u64;
    Rng::new(seed, StreamKind::Workload, id)
}

impl PoissonConfig {
    /// Checks the parameters; `poisson_flows` calls this first.
    pub fn validate(&self) -> Result<(), WorkloadError> {
        check_hosts(&self.hosts, "hosts", 2)?;
        if self.host_bps == 0 {
            return Err(WorkloadError::config("host_bps must be positive"));
        }
        if !(self.load > 0.0 && self.load <= 1.0) {
            return Err(WorkloadError::config(format!(
                "load must be in (0, 1], got {}",
                self.load
            )));
        }
        if let Stop::Count(n) = self.stop {
            if n > u32::MAX as u64 {
                return Err(WorkloadError::config(format!(
                    "flow count {n} does not fit 32-bit flow ids"
                )));
            }
        }
        if self.start.checked_add(self.end_offset()).is_none() {
            return Err(WorkloadError::config("start + duration overflows time"));
        }
        match self.pattern {
            Pattern::Incast { fan_in, bytes } => {
                if fan_in == 0 || fan_in as usize >= self.hosts.len() {
                    return Err(WorkloadError::config(format!(
                        "Incast fan_in must be in 1..={} for {} hosts, got {fan_in}",
                        self.hosts.len() - 1,
                        self.hosts.len()
                    )));
                }
                if bytes == 0 {
                    return Err(WorkloadError::config("Incast bytes must be positive"));
                }
            }
            _ => {
                if self.cdf.mean() <= 0.0 {
                    return Err(WorkloadError::config(format!(
                        "flow-size distribution {} has mean 0",
                        self.cdf.name()
                    )));
                }
            }
        }
        Ok(())
    }

    /// Mean time between flow arrivals at one host, in picoseconds:
    /// mean_flow_bytes * 8 / (host_bps * load) (traffic_gen.py, payload
    /// bytes). For `Incast`, the mean time between events.
    pub fn mean_gap_ps(&self) -> f64 {
        let bps = self.host_bps as f64 * self.load;
        let bits = match self.pattern {
            // An event carries fan_in * bytes and the whole fabric's hosts
            // share the load.
            Pattern::Incast { fan_in, bytes } => {
                fan_in as f64 * bytes as f64 * 8.0 / self.hosts.len() as f64
            }
            _ => self.cdf.mean() * 8.0,
        };
        bits / bps * SEC as f64
    }

    fn end_offset(&self) -> Time {
        match self.stop {
            Stop::Duration(d) => d,
            Stop::Count(_) => 0,
        }
    }
}

/// Generates the flows of one class, sorted by start time, ties in
/// generation order (host-list position, then each host's sequence; for
/// incast, event then sender draw order). Ids are 0.. in that order.
/// Deterministic in `seed`.
pub fn poisson_flows(cfg: &PoissonConfig, seed: u64) -> Result<Vec<FlowSpec>, WorkloadError> {
    cfg.validate()?;
    match cfg.pattern {
        Pattern::Incast { fan_in, bytes } => Ok(incast_events(cfg, seed, fan_in, bytes)),
        _ => per_host(cfg, seed),
    }
}

/// One arrival process of a host.
struct Source {
    arrival: Rng,
    dest: Rng,
    size: Rng,
}

fn per_host(cfg: &PoissonConfig, seed: u64) -> Result<Vec<FlowSpec>, WorkloadError> {
    let n = cfg.hosts.len();
    let mut pattern_rng = stream(seed, cfg.class, 0, Sub::Pattern);
    let chooser = Chooser::build(&cfg.pattern, &cfg.hosts, &mut pattern_rng)?;
    let gap = cfg.mean_gap_ps();
    let (end, limit) = match cfg.stop {
        Stop::Duration(d) => (cfg.start + d, u32::MAX as u64),
        Stop::Count(c) => (Time::MAX, c),
    };

    let mut sources: Vec<Source> = cfg
        .hosts
        .iter()
        .map(|&h| Source {
            arrival: stream(seed, cfg.class, h, Sub::Arrival),
            dest: stream(seed, cfg.class, h, Sub::Dest),
            size: stream(seed, cfg.class, h, Sub::Size),
        })
        .collect();
    // Min-heap of (next arrival, host position): popping it yields flows in
    // (start, host position) order, and each host's own flows in sequence.
    let mut heap: BinaryHeap<Reverse<(Time, usize)>> = sources
        .iter_mut()
        .enumerate()
        .map(|(i, s)| Reverse((next_arrival(cfg.start, gap, &mut s.arrival), i)))
        .collect();

    let mut flows = Vec::new();
    while let Some(Reverse((t, i))) = heap.pop() {
        if t >= end {
            // This host is past the end; the others may not be yet.
            continue;
        }
        if flows.len() as u64 >= limit {
            if let Stop::Count(_) = cfg.stop {
                break;
            }
            return Err(WorkloadError::config(
                "more than 2^32 - 1 flows: shorten the duration",
            ));
        }
        let s = &mut sources[i];
        let dst = chooser.pick(i, n, &mut s.dest);
        flows.push(FlowSpec {
            id: flows.len() as u32,
            src: cfg.hosts[i],
            dst: cfg.hosts[dst],
            bytes: cfg.cdf.sample(&mut s.size),
            start: t,
            class: cfg.class,
        });
        let next = next_arrival(t, gap, &mut s.arrival);
        if next < Time::MAX {
            heap.push(Reverse((next, i)));
        }
    }
    Ok(flows)
}

/// `t` plus an exponential gap of mean `mean_ps`, rounded to a picosecond
/// (the rounding bias, under half a picosecond, is far below any gap).
fn next_arrival(t: Time, mean_ps: f64, rng: &mut Rng) -> Time {
    t.saturating_add(rng.exponential(mean_ps).round() as Time)
}

fn incast_events(cfg: &PoissonConfig, seed: u64, fan_in: u32, bytes: u64) -> Vec<FlowSpec> {
    let n = cfg.hosts.len();
    let fan_in = fan_in as usize;
    let mut time_rng = stream(seed, cfg.class, 0, Sub::IncastTime);
    let mut pick_rng = stream(seed, cfg.class, 0, Sub::IncastPick);
    let gap = cfg.mean_gap_ps();
    let mut flows = Vec::new();
    let mut others: Vec<usize> = Vec::with_capacity(n - 1);
    let mut t = cfg.start;
    loop {
        t = next_arrival(t, gap, &mut time_rng);
        let done = match cfg.stop {
            Stop::Duration(d) => t >= cfg.start + d,
            Stop::Count(c) => flows.len() as u64 >= c,
        };
        if done || t == Time::MAX {
            return flows;
        }
        let dst = pick_rng.below(n as u64) as usize;
        others.clear();
        others.extend((0..n).filter(|&j| j != dst));
        // Partial Fisher-Yates: the first fan_in slots are a uniform sample
        // of distinct senders.
        for k in 0..fan_in {
            let j = k + pick_rng.below((others.len() - k) as u64) as usize;
            others.swap(k, j);
            flows.push(FlowSpec {
                id: flows.len() as u32,
                src: cfg.hosts[others[k]],
                dst: cfg.hosts[dst],
                bytes,
                start: t,
                class: cfg.class,
            });
        }
    }
}

/// Hosts must be distinct and at least `min` of them.
pub(crate) fn check_hosts(hosts: &[u32], what: &str, min: usize) -> Result<(), WorkloadError> {
    if hosts.len() < min {
        return Err(WorkloadError::config(format!(
            "{what}: need at least {min} hosts, got {}",
            hosts.len()
        )));
    }
    let mut sorted = hosts.to_vec();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(WorkloadError::config(format!(
            "{what}: host {} is listed twice",
            w[0]
        )));
    }
    Ok(())
}
