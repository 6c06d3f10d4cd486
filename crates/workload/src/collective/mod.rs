//! Collective operations as pure step plans, independent of any fabric:
//! for `n` ranks, the bytes per rank, the channels and the chunk size,
//! which rank sends how many bytes to which rank, on which lane (a
//! channel's own connections), at which step, and which of its earlier
//! receives each send waits for. An executor runs a plan closed-loop:
//! a send goes once every receive it names has arrived at its rank.
//!
//! This file holds the names ([`Collective`], [`Algorithm`]), the
//! request ([`Spec`]), the plan ([`Plan`], [`Transfer`]) and the splits
//! every algorithm shares ([`split`], [`Pieces`]); each algorithm is a
//! module of its own that only appends transfers through [`Builder`]:
//! `ring.rs` (ring all-reduce, all-gather, reduce-scatter; the broadcast
//! pipeline), `tree.rs` (NCCL's double binary tree), `halving_doubling.rs`
//! (recursive halving-doubling, with MPICH's fold for other than powers
//! of two), `direct.rs` (direct all-reduce and all-to-all) and
//! `pairwise.rs` (pairwise all-to-all). A new algorithm is one module and
//! one line in [`plan`]. `sequence.rs` joins collectives over groups of
//! ranks into one plan of consecutive segments (a trace's operations).
//!
//! Sizes. `bytes` is the buffer per rank as nccl-tests sizes it (the
//! whole gathered buffer for all-gather, the whole send buffer for
//! reduce-scatter and all-to-all). It is cut at byte granularity: first
//! over the channels, then into the algorithm's pieces, parts that differ
//! by at most one byte (the first ones get the extra bytes), where NCCL
//! cuts at element granularity; no byte is added or lost, so the total
//! volume is exact. With `chunk_bytes`, every piece is cut into the same
//! number of chunks, `ceil(largest piece / chunk_bytes)`, again as equal
//! as bytes allow, so chunk `j` of one step meets chunk `j` of the next.
//! A size too small to give every piece (or chunk) at least one byte is
//! refused, naming `bytes` or `chunk_bytes`.

mod direct;
mod halving_doubling;
mod pairwise;
mod ring;
mod sequence;
mod tree;

pub use sequence::{sequence, Op};
pub use tree::{double_tree, Tree};

use std::fmt;

/// The collective operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Collective {
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
    Broadcast,
}

impl Collective {
    pub const ALL: [Collective; 5] = [
        Collective::AllReduce,
        Collective::AllGather,
        Collective::ReduceScatter,
        Collective::AllToAll,
        Collective::Broadcast,
    ];

    /// As scenario files and outputs spell it.
    pub fn name(self) -> &'static str {
        match self {
            Collective::AllReduce => "all_reduce",
            Collective::AllGather => "all_gather",
            Collective::ReduceScatter => "reduce_scatter",
            Collective::AllToAll => "all_to_all",
            Collective::Broadcast => "broadcast",
        }
    }

    pub fn from_name(s: &str) -> Option<Collective> {
        Collective::ALL.into_iter().find(|c| c.name() == s)
    }

    /// The algorithms that run it, the first the default.
    pub fn algorithms(self) -> &'static [Algorithm] {
        match self {
            Collective::AllReduce => &[
                Algorithm::Ring,
                Algorithm::Tree,
                Algorithm::HalvingDoubling,
                Algorithm::Direct,
            ],
            Collective::AllGather | Collective::ReduceScatter | Collective::Broadcast => {
                &[Algorithm::Ring]
            }
            Collective::AllToAll => &[Algorithm::Pairwise, Algorithm::Direct],
        }
    }

    /// nccl-tests' bus bandwidth factor for `n` ranks: busbw = algbw x
    /// this (2(n-1)/n for all-reduce; (n-1)/n for all-gather,
    /// reduce-scatter and all-to-all; 1 for broadcast).
    pub fn bus_factor(self, n: u32) -> f64 {
        let n = n as f64;
        match self {
            Collective::AllReduce => 2.0 * (n - 1.0) / n,
            Collective::AllGather | Collective::ReduceScatter | Collective::AllToAll => {
                (n - 1.0) / n
            }
            Collective::Broadcast => 1.0,
        }
    }
}

/// The algorithms; which collective each runs is [`Collective::algorithms`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    Ring,
    Tree,
    HalvingDoubling,
    Direct,
    Pairwise,
}

impl Algorithm {
    pub const ALL: [Algorithm; 5] = [
        Algorithm::Ring,
        Algorithm::Tree,
        Algorithm::HalvingDoubling,
        Algorithm::Direct,
        Algorithm::Pairwise,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Ring => "ring",
            Algorithm::Tree => "tree",
            Algorithm::HalvingDoubling => "halving_doubling",
            Algorithm::Direct => "direct",
            Algorithm::Pairwise => "pairwise",
        }
    }

    pub fn from_name(s: &str) -> Option<Algorithm> {
        Algorithm::ALL.into_iter().find(|a| a.name() == s)
    }
}

/// What to plan. Ranks are numbered `0..ranks` (the executor maps them
/// to hosts); rank 0 is the broadcast's root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spec {
    pub collective: Collective,
    pub algorithm: Algorithm,
    pub ranks: u32,
    /// The buffer per rank, as nccl-tests sizes it.
    pub bytes: u64,
    /// Parallel rings or trees, each on connections of its own.
    pub channels: u32,
    /// Pipelining: the largest chunk a step's piece is cut into (0: a
    /// piece is one message).
    pub chunk_bytes: u64,
}

/// The most transfers one plan may hold (about 64 bytes each in the plan
/// and the executor: about 1 GB): a larger
/// request is refused before anything is allocated.
pub const MAX_TRANSFERS: u64 = 1 << 24;

/// The most channels a collective may have (NCCL's `MAXCHANNELS`).
pub const MAX_CHANNELS: u32 = 64;

/// Why a spec cannot be planned: the key at fault and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanError {
    pub key: &'static str,
    pub message: String,
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

impl std::error::Error for PlanError {}

fn refuse(key: &'static str, message: impl Into<String>) -> PlanError {
    PlanError {
        key,
        message: message.into(),
    }
}

/// One message: `bytes` from rank `src` to rank `dst` on `lane`, at
/// `step` of its algorithm, once the transfers [`Plan::deps`] names (all
/// received at `src`) have arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub src: u32,
    pub dst: u32,
    pub lane: u32,
    pub step: u32,
    pub bytes: u64,
    deps_from: u32,
    deps_to: u32,
}

/// One collective of a plan: the transfers from the previous segment's
/// `end` to its own. A rank takes part in one segment at a time, in
/// order: it starts segment `k + 1` `delay_ns` after it has posted its
/// sends and received its receives of segment `k` (the compute between
/// two operations of a trace). A plan of one collective is one segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// One past its last transfer.
    pub end: u32,
    pub collective: Collective,
    pub algorithm: Algorithm,
    /// Ranks of each group that runs it (groups run it side by side).
    pub ranks: u32,
    /// The buffer per rank, as nccl-tests sizes it.
    pub bytes: u64,
    /// Compute before a rank starts it, in nanoseconds.
    pub delay_ns: u64,
}

/// A planned collective: transfers in an order every executor may follow
/// (each one's dependencies come before it, and on each lane between two
/// ranks the transfers are in the order they go: a connection is a FIFO).
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub ranks: u32,
    /// Connections per rank pair: channels, times two for the double
    /// binary tree (each tree of a channel on its own, as NCCL's).
    pub lanes: u32,
    pub transfers: Vec<Transfer>,
    deps: Vec<u32>,
    /// In transfer order, covering them all.
    pub segments: Vec<Segment>,
}

impl Plan {
    /// The segment transfer `i` belongs to.
    pub fn segment_of(&self, i: usize) -> u32 {
        self.segments.partition_point(|s| s.end as usize <= i) as u32
    }

    /// The transfers `i` waits for (indices into `transfers`).
    pub fn deps(&self, i: usize) -> &[u32] {
        let t = &self.transfers[i];
        &self.deps[t.deps_from as usize..t.deps_to as usize]
    }

    /// Bytes rank `r` sends.
    pub fn sent_by(&self, r: u32) -> u64 {
        self.transfers
            .iter()
            .filter(|t| t.src == r)
            .map(|t| t.bytes)
            .sum()
    }

    /// Bytes sent by every rank together.
    pub fn total_bytes(&self) -> u64 {
        self.transfers.iter().map(|t| t.bytes).sum()
    }

    /// Steps: one more than the largest step number.
    pub fn steps(&self) -> u32 {
        self.transfers.iter().map(|t| t.step + 1).max().unwrap_or(0)
    }

    /// Checks what executors rely on: ranks and lanes in range, no rank
    /// sends to itself, each dependency an earlier transfer received by
    /// the sender, and segments covering the transfers in order.
    pub fn check(&self) -> Result<(), String> {
        let ends: Vec<u32> = self.segments.iter().map(|s| s.end).collect();
        if ends.last() != Some(&(self.transfers.len() as u32)) || !ends.is_sorted() {
            return Err(format!(
                "segments ending at {ends:?} do not cover the transfers"
            ));
        }
        for (i, t) in self.transfers.iter().enumerate() {
            if t.src >= self.ranks || t.dst >= self.ranks || t.src == t.dst || t.lane >= self.lanes
            {
                return Err(format!("transfer {i}: {t:?} out of range"));
            }
            for &d in self.deps(i) {
                if d as usize >= i || self.transfers[d as usize].dst != t.src {
                    return Err(format!(
                        "transfer {i} waits for {d}, not an earlier receive"
                    ));
                }
            }
        }
        Ok(())
    }
}

/// What algorithms append transfers through.
pub(crate) struct Builder {
    plan: Plan,
}

impl Builder {
    /// Appends `p`'s transfers with its rank `r` as `map[r]` and its lane
    /// `l` as `lane + l`, each waiting for what it waited for in `p`.
    pub fn append(&mut self, p: &Plan, map: &[u32], lane: u32) {
        let offset = self.plan.transfers.len() as u32;
        for (i, t) in p.transfers.iter().enumerate() {
            let deps = self.deps(&[]);
            for &d in p.deps(i) {
                self.plan.deps.push(d + offset);
            }
            let deps = Deps(deps.0, self.plan.deps.len() as u32);
            let (src, dst) = (map[t.src as usize], map[t.dst as usize]);
            self.send_after(src, dst, lane + t.lane, t.step, t.bytes, deps);
        }
    }

    /// Stores a list of dependencies that several transfers share.
    pub fn deps(&mut self, deps: &[u32]) -> Deps {
        let from = self.plan.deps.len() as u32;
        self.plan.deps.extend_from_slice(deps);
        Deps(from, self.plan.deps.len() as u32)
    }

    /// Appends a transfer that waits for `deps`; returns its index.
    pub fn send_after(
        &mut self,
        src: u32,
        dst: u32,
        lane: u32,
        step: u32,
        bytes: u64,
        deps: Deps,
    ) -> u32 {
        let p = &mut self.plan;
        p.transfers.push(Transfer {
            src,
            dst,
            lane,
            step,
            bytes,
            deps_from: deps.0,
            deps_to: deps.1,
        });
        p.transfers.len() as u32 - 1
    }

    /// Appends a transfer; returns its index.
    pub fn send(
        &mut self,
        src: u32,
        dst: u32,
        lane: u32,
        step: u32,
        bytes: u64,
        deps: &[u32],
    ) -> u32 {
        let deps = self.deps(deps);
        self.send_after(src, dst, lane, step, bytes, deps)
    }
}

/// A stored list of dependencies ([`Builder::deps`]).
#[derive(Clone, Copy)]
pub(crate) struct Deps(u32, u32);

/// `total` cut into `parts` parts that differ by at most one byte, the
/// first ones the larger.
pub fn split(total: u64, parts: u64) -> impl Iterator<Item = u64> + Clone {
    let (q, r) = (total / parts, total % parts);
    (0..parts).map(move |i| q + u64::from(i < r))
}

/// A channel's share of the buffer cut into an algorithm's pieces, and
/// each piece into the same number of chunks.
#[derive(Clone, Debug)]
pub(crate) struct Pieces {
    pieces: Vec<u64>,
    /// Chunks per piece.
    pub chunks: u32,
}

impl Pieces {
    /// The chunk sizes of piece `k`.
    pub fn chunks_of(&self, k: u32) -> impl Iterator<Item = u64> + Clone {
        split(self.pieces[k as usize], self.chunks as u64)
    }

    /// Bytes of pieces `range`.
    pub fn bytes(&self, range: std::ops::Range<u32>) -> u64 {
        self.pieces[range.start as usize..range.end as usize]
            .iter()
            .sum()
    }
}

/// What every algorithm is given: the spec and each channel's pieces.
pub(crate) struct Cut<'a> {
    pub spec: &'a Spec,
    /// By channel.
    pub channels: Vec<Pieces>,
}

impl Cut<'_> {
    /// Each channel's share cut into `pieces` pieces, each of those into
    /// chunks of at most `chunk_bytes`; refused when a piece or a chunk
    /// would be empty.
    fn new(spec: &Spec, pieces: u64) -> Result<Cut<'_>, PlanError> {
        let need = spec.channels as u64 * pieces;
        if spec.bytes < need {
            return Err(refuse(
                "bytes",
                format!(
                    "{} bytes cannot be cut into {} channels x {pieces} pieces of at least one byte \
                     ({} {} over {} ranks): give at least {need}",
                    spec.bytes,
                    spec.channels,
                    spec.collective.name(),
                    spec.algorithm.name(),
                    spec.ranks
                ),
            ));
        }
        let mut channels = Vec::with_capacity(spec.channels as usize);
        for share in split(spec.bytes, spec.channels as u64) {
            let pieces: Vec<u64> = split(share, pieces).collect();
            let (largest, smallest) = (pieces[0], *pieces.last().unwrap());
            let chunks = match spec.chunk_bytes {
                0 => 1,
                c => largest.div_ceil(c),
            };
            if chunks > smallest || chunks > u32::MAX as u64 {
                return Err(refuse(
                    "chunk_bytes",
                    format!(
                        "{} cuts pieces of {largest} bytes into {chunks} chunks, more than the \
                         {smallest} bytes of the smallest piece",
                        spec.chunk_bytes
                    ),
                ));
            }
            channels.push(Pieces {
                pieces,
                chunks: chunks as u32,
            });
        }
        Ok(Cut { spec, channels })
    }

    pub fn n(&self) -> u32 {
        self.spec.ranks
    }
}

/// Plans `spec`: the algorithm's transfers, or why it cannot be planned
/// (the key at fault). Refuses before allocating a plan over
/// [`MAX_TRANSFERS`].
pub fn plan(spec: &Spec) -> Result<Plan, PlanError> {
    if !spec.collective.algorithms().contains(&spec.algorithm) {
        let names: Vec<_> = spec
            .collective
            .algorithms()
            .iter()
            .map(|a| a.name())
            .collect();
        return Err(refuse(
            "algorithm",
            format!(
                "\"{}\" does not run {} (its algorithms: {})",
                spec.algorithm.name(),
                spec.collective.name(),
                names.join(", ")
            ),
        ));
    }
    if spec.ranks < 2 {
        return Err(refuse(
            "ranks",
            format!("a collective needs at least 2 ranks, got {}", spec.ranks),
        ));
    }
    if spec.channels == 0 {
        return Err(refuse("channels", "must be at least 1, got 0"));
    }
    if spec.channels > MAX_CHANNELS {
        return Err(refuse(
            "channels",
            format!(
                "at most {MAX_CHANNELS} (NCCL's most), got {}",
                spec.channels
            ),
        ));
    }
    let n = spec.ranks as u64;
    let (pieces, lanes) = match (spec.collective, spec.algorithm) {
        (Collective::Broadcast, _) => (1, 1),
        (Collective::AllReduce, Algorithm::Tree) => (2, 2),
        (Collective::AllReduce, Algorithm::HalvingDoubling) => {
            (halving_doubling::power_below(spec.ranks) as u64, 1)
        }
        _ => (n, 1),
    };
    let cut = Cut::new(spec, pieces)?;
    // Messages each rank sends per chunk of a piece (the tree's: up once
    // and down to at most two children, in each of two trees).
    let per_rank = match (spec.collective, spec.algorithm) {
        (Collective::AllReduce, Algorithm::Tree) => 6,
        (Collective::AllReduce, _) => 2 * n,
        (Collective::Broadcast, _) => 1,
        _ => n,
    };
    let estimate =
        (n * per_rank * spec.channels as u64).saturating_mul(cut.channels[0].chunks as u64);
    if estimate > MAX_TRANSFERS {
        return Err(refuse(
            "chunk_bytes",
            format!(
                "about {estimate} messages for {n} ranks, {} channels and chunks of {}; at most \
                 {MAX_TRANSFERS}: give larger chunks or fewer channels",
                spec.channels, spec.chunk_bytes
            ),
        ));
    }
    let mut b = Builder {
        plan: Plan {
            ranks: spec.ranks,
            lanes: spec.channels * lanes,
            ..Plan::default()
        },
    };
    match (spec.collective, spec.algorithm) {
        (Collective::AllReduce, Algorithm::Ring) => ring::all_reduce(&cut, &mut b),
        (Collective::AllGather, _) => ring::all_gather(&cut, &mut b),
        (Collective::ReduceScatter, _) => ring::reduce_scatter(&cut, &mut b),
        (Collective::Broadcast, _) => ring::broadcast(&cut, &mut b),
        (Collective::AllReduce, Algorithm::Tree) => tree::all_reduce(&cut, &mut b),
        (Collective::AllReduce, Algorithm::HalvingDoubling) => {
            halving_doubling::all_reduce(&cut, &mut b)
        }
        (Collective::AllReduce, _) => direct::all_reduce(&cut, &mut b),
        (Collective::AllToAll, Algorithm::Direct) => direct::all_to_all(&cut, &mut b),
        (Collective::AllToAll, _) => pairwise::all_to_all(&cut, &mut b),
    }
    b.plan.segments.push(Segment {
        end: b.plan.transfers.len() as u32,
        collective: spec.collective,
        algorithm: spec.algorithm,
        ranks: spec.ranks,
        bytes: spec.bytes,
        delay_ns: 0,
    });
    debug_assert_eq!(b.plan.check(), Ok(()));
    Ok(b.plan)
}
