//! SimAI's workload files (what AICB writes and SimAI reads: astra-sim
//! 1.0's text format with SimAI's header), read into a plan of
//! collectives for a job of `n` ranks.
//!
//! The file: a header line (the parallelism policy, then `key: value`
//! pairs: `model_parallel_NPU_group` (the tensor-parallel size), `ep`,
//! `pp`, `vpp`, `ga`, `all_gpus`, `checkpoints`, `checkpoint_initiates`,
//! `pp_comm`), the number of layers, then a line per layer: its name, a
//! reserved number, then for the forward pass, the input gradient and the
//! weight gradient each a compute time (nanoseconds: SimAI's tick), a
//! communication type and its size in bytes, and last an update time.
//!
//! One pass (an iteration of the job) runs, on every rank and one
//! operation at a time: each layer's forward compute and communication in
//! order, then, from the last layer back, its input-gradient compute and
//! communication (none for the first layer, as SimAI) and its
//! weight-gradient compute and communication. Forward and input-gradient
//! communication runs in the tensor-parallel groups (`tp` consecutive
//! ranks), weight-gradient communication in the data-parallel groups
//! (ranks `tp` apart); a `_EP` suffix runs it in the expert-parallel
//! groups (`ep` consecutive members of a data-parallel group) and `_DP_EP`
//! across them (members `ep` apart). Compute accumulates into the delay
//! before the next communication; what follows the last one is the
//! program's `tail_ns`. Every error names the file and line.
//!
//! Touches nothing but the text it is given.

use crate::collective::{plan, sequence, Collective, Op, Plan, Spec};
use crate::WorkloadError;

/// The most layers a file may list.
pub const MAX_LAYERS: usize = 100_000;
/// The longest compute time a field, or a pass in all, may give, in
/// nanoseconds (1000 s).
pub const MAX_COMPUTE_NS: u64 = 1_000_000_000_000;

/// The parallelism policies read (SimAI's transformer loops and pure data
/// parallelism).
const POLICIES: [&str; 3] = [
    "HYBRID_TRANSFORMER_FWD_IN_BCKWD",
    "HYBRID_TRANSFORMER",
    "DATA",
];
/// The operators, each with its collective.
const OPERATORS: [(&str, Collective); 4] = [
    ("ALLREDUCE", Collective::AllReduce),
    ("ALLGATHER", Collective::AllGather),
    ("REDUCESCATTER", Collective::ReduceScatter),
    ("ALLTOALL", Collective::AllToAll),
];

/// Which ranks run a communication together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Group {
    /// Tensor parallel: `tp` consecutive ranks.
    Tp,
    /// Data parallel: ranks `tp` apart.
    Dp,
    /// Expert parallel: `ep` consecutive members of a data-parallel group.
    Ep,
    /// Members of a data-parallel group `ep` apart.
    DpEp,
}

#[derive(Clone, Copy, Debug)]
struct Comm {
    collective: Collective,
    group: Group,
    bytes: u64,
}

#[derive(Clone, Copy, Debug)]
struct Phase {
    compute_ns: u64,
    comm: Option<Comm>,
}

#[derive(Clone, Debug)]
struct Layer {
    line: usize,
    fwd: Phase,
    ig: Phase,
    wg: Phase,
}

/// A workload file, read.
#[derive(Clone, Debug)]
pub struct Workload {
    origin: String,
    /// Tensor-parallel and expert-parallel sizes.
    tp: u32,
    ep: u32,
    all_gpus: Option<u32>,
    layers: Vec<Layer>,
}

/// A workload as one plan: its collectives in order (segments), and the
/// compute after the last one.
#[derive(Clone, Debug)]
pub struct Program {
    pub plan: Plan,
    pub tail_ns: u64,
}

/// Reads a workload file; `origin` names it in errors.
pub fn parse(text: &str, origin: &str) -> Result<Workload, WorkloadError> {
    let err = |line: usize, m: String| WorkloadError::parse(origin, line, m);
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty());
    let (hl, header) = lines.next().ok_or_else(|| err(1, "empty file".into()))?;
    let mut tokens = header.split_whitespace();
    let policy = tokens.next().unwrap_or_default();
    if !POLICIES.contains(&policy) {
        return Err(err(
            hl,
            format!(
                "unknown parallelism policy {policy:?} (known: {})",
                POLICIES.join(", ")
            ),
        ));
    }
    let (mut tp, mut ep, mut all_gpus) = (1u32, 1u32, None);
    while let Some(key) = tokens.next() {
        let mut number = |what: &str| -> Result<u32, WorkloadError> {
            let v = tokens.next().unwrap_or_default();
            v.parse::<u32>()
                .map_err(|_| err(hl, format!("{what} {v:?}: expected a whole number")))
        };
        match key {
            "model_parallel_NPU_group:" => tp = number(key)?,
            "ep:" => ep = number(key)?,
            "all_gpus:" => all_gpus = Some(number(key)?),
            "vpp:" | "pp_comm:" | "pp_comm" => {
                number(key)?;
            }
            "pp:" | "ga:" if number(key)? != 1 => {
                return Err(err(
                    hl,
                    format!(
                        "{key} other than 1 is not supported (pipeline stages and gradient \
                         accumulation are not simulated)"
                    ),
                ))
            }
            "pp:" | "ga:" => {}
            "checkpoints:" | "checkpoint_initiates:" if number(key)? != 0 => {
                return Err(err(
                    hl,
                    format!("{key} activation recomputation is not supported: give 0"),
                ))
            }
            "checkpoints:" | "checkpoint_initiates:" => {}
            other => return Err(err(hl, format!("unknown header key {other:?}"))),
        }
    }
    for (key, v) in [("model_parallel_NPU_group", tp), ("ep", ep)] {
        if v == 0 {
            return Err(err(hl, format!("{key}: must be at least 1")));
        }
    }
    let (cl, count) = lines
        .next()
        .ok_or_else(|| err(hl + 1, "missing the number of layers".into()))?;
    let count: usize = count
        .parse()
        .ok()
        .filter(|&c| (1..=MAX_LAYERS).contains(&c))
        .ok_or_else(|| {
            err(
                cl,
                format!("{count:?}: expected the number of layers, 1 to {MAX_LAYERS}"),
            )
        })?;
    let mut layers = Vec::with_capacity(count);
    for (line, text) in lines {
        if layers.len() == count {
            return Err(err(
                line,
                format!("more layers than the {count} line {cl} gives"),
            ));
        }
        layers.push(layer(line, text, &err)?);
    }
    if layers.len() < count {
        return Err(err(
            text.lines().count().max(1),
            format!("{} layers, but line {cl} gives {count}", layers.len()),
        ));
    }
    Ok(Workload {
        origin: origin.to_string(),
        tp,
        ep,
        all_gpus,
        layers,
    })
}

/// One layer's line: name, reserved, then three (compute, type, size)
/// and the update time.
fn layer(
    line: usize,
    text: &str,
    err: &dyn Fn(usize, String) -> WorkloadError,
) -> Result<Layer, WorkloadError> {
    let f: Vec<&str> = text.split_whitespace().collect();
    if f.len() != 12 {
        return Err(err(
            line,
            format!(
                "{} fields; a layer has 12: name, reserved, then compute time, communication \
                 type and size for the forward pass, input gradient and weight gradient, and an \
                 update time",
                f.len()
            ),
        ));
    }
    let number = |i: usize, what: &str, max: u64| -> Result<u64, WorkloadError> {
        f[i].parse::<u64>()
            .ok()
            .filter(|&v| v <= max)
            .ok_or_else(|| err(line, format!("{what} {:?}: expected 0 to {max}", f[i])))
    };
    let phase = |at: usize, name: &str, plain: Group| -> Result<Phase, WorkloadError> {
        let compute_ns = number(at, &format!("{name} compute time"), MAX_COMPUTE_NS)?;
        let bytes = number(at + 2, &format!("{name} communication size"), u64::MAX)?;
        let op = f[at + 1];
        let comm = if op == "NONE" {
            None
        } else {
            let (base, group) = match op.strip_suffix("_DP_EP") {
                Some(b) => (b, Group::DpEp),
                None => match op.strip_suffix("_EP") {
                    Some(b) => (b, Group::Ep),
                    None => (op, plain),
                },
            };
            let collective = OPERATORS
                .iter()
                .find(|(n, _)| *n == base)
                .map(|&(_, c)| c)
                .ok_or_else(|| {
                    let known: Vec<&str> = OPERATORS.iter().map(|(n, _)| *n).collect();
                    err(
                        line,
                        format!(
                            "unknown operator {op:?} in the {name} (known: {}, each also with \
                             _EP or _DP_EP, and NONE)",
                            known.join(", ")
                        ),
                    )
                })?;
            Some(Comm {
                collective,
                group,
                bytes,
            })
        };
        Ok(Phase { compute_ns, comm })
    };
    if f[1].parse::<i64>().is_err() {
        return Err(err(
            line,
            format!("reserved field {:?}: expected a number", f[1]),
        ));
    }
    let layer = Layer {
        line,
        fwd: phase(2, "forward pass", Group::Tp)?,
        ig: phase(5, "input gradient", Group::Tp)?,
        wg: phase(8, "weight gradient", Group::Dp)?,
    };
    number(11, "update time", MAX_COMPUTE_NS)?;
    Ok(layer)
}

impl Workload {
    /// The plan of one pass over `ranks` ranks, each collective with its
    /// default algorithm, cut in `channels` and `chunk_bytes` as a
    /// `[[jobs]]` entry's. A communication whose group is one rank, or of
    /// 0 bytes, moves nothing and is left out.
    pub fn program(
        &self,
        ranks: u32,
        channels: u32,
        chunk_bytes: u64,
    ) -> Result<Program, WorkloadError> {
        let err = |line: usize, m: String| WorkloadError::parse(&self.origin, line, m);
        if self.all_gpus.is_some_and(|a| a != ranks) {
            return Err(err(
                1,
                format!(
                    "all_gpus: {} GPUs, but the job has {ranks} ranks",
                    self.all_gpus.unwrap_or(0)
                ),
            ));
        }
        if !ranks.is_multiple_of(self.tp) || !(ranks / self.tp).is_multiple_of(self.ep) {
            return Err(err(
                1,
                format!(
                    "{ranks} ranks do not divide into tensor-parallel groups of {} and \
                     expert-parallel groups of {}",
                    self.tp, self.ep
                ),
            ));
        }
        let mut ops: Vec<Op> = Vec::new();
        let (mut delay, mut total) = (0u64, 0u64);
        let mut run = |phase: &Phase, line: usize, name: &str| -> Result<(), WorkloadError> {
            delay += phase.compute_ns;
            total += phase.compute_ns;
            if total > MAX_COMPUTE_NS {
                return Err(err(
                    line,
                    format!("the pass computes for more than {MAX_COMPUTE_NS} ns in all"),
                ));
            }
            let Some(c) = phase.comm else { return Ok(()) };
            let groups = self.groups(ranks, c.group);
            if groups[0].len() < 2 || c.bytes == 0 {
                return Ok(());
            }
            let spec = Spec {
                collective: c.collective,
                algorithm: c.collective.algorithms()[0],
                ranks: groups[0].len() as u32,
                bytes: c.bytes,
                channels,
                chunk_bytes,
            };
            let plan = plan(&spec).map_err(|e| err(line, format!("{name}: {e}")))?;
            ops.push(Op {
                plan,
                groups,
                delay_ns: delay,
            });
            delay = 0;
            Ok(())
        };
        for l in &self.layers {
            run(&l.fwd, l.line, "forward pass")?;
        }
        for (i, l) in self.layers.iter().enumerate().rev() {
            let ig = Phase {
                comm: l.ig.comm.filter(|_| i > 0),
                ..l.ig
            };
            run(&ig, l.line, "input gradient")?;
            run(&l.wg, l.line, "weight gradient")?;
        }
        let tail_ns = delay;
        let last = self.layers.last().map_or(1, |l| l.line);
        if ops.is_empty() {
            return Err(err(
                last,
                format!("no communication between the {ranks} ranks in the whole pass"),
            ));
        }
        let plan = sequence(ranks, &ops).map_err(|e| err(last, e.to_string()))?;
        Ok(Program { plan, tail_ns })
    }

    /// The groups of `ranks` ranks for a communication of `g`.
    fn groups(&self, ranks: u32, g: Group) -> Vec<Vec<u32>> {
        let (tp, ep) = (self.tp, self.ep);
        let dp = ranks / tp;
        // Data-parallel group `i`: ranks i, i + tp, i + 2 tp, ...
        let member = |i: u32, k: u32| i + k * tp;
        match g {
            Group::Tp => (0..dp).map(|b| (b * tp..(b + 1) * tp).collect()).collect(),
            Group::Dp => (0..tp)
                .map(|i| (0..dp).map(|k| member(i, k)).collect())
                .collect(),
            Group::Ep => (0..tp)
                .flat_map(|i| {
                    (0..dp / ep)
                        .map(move |b| (b * ep..(b + 1) * ep).map(|k| member(i, k)).collect())
                })
                .collect(),
            Group::DpEp => (0..tp)
                .flat_map(|i| {
                    (0..ep).map(move |j| (0..dp / ep).map(|b| member(i, b * ep + j)).collect())
                })
                .collect(),
        }
    }
}
