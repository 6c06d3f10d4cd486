//! The closed-loop executor of a collective job: a fabric application
//! ([`fabric::App`]) that runs a [`Plan`] on the job's hosts. At its start
//! it opens one QP pair per rank pair and lane the plan uses; each rank
//! then posts a transfer (a WRITE) once the receives it waits for have
//! arrived at that rank (the responder's completion of their WRITEs),
//! and, on each lane between two ranks, in the plan's order (a
//! connection is a FIFO, so the k-th WRITE completed on a QP is the k-th
//! transfer of its edge). A plan of several segments (a trace's
//! operations) runs them in order on each rank: a rank is done with a
//! segment when it has posted its sends and received its receives of it,
//! and starts the next after that segment's compute delay (a host timer);
//! it posts no transfer of a segment it has not started. A rank's
//! iteration ends with its last segment; it starts the next `compute`
//! later. An iteration's (and a segment's) time runs from its first
//! rank's start to its last rank's end.
//!
//! It is called only on completions of its own QPs and its own timers,
//! never per packet. Touches its own state and the fabric through
//! [`HostCtx`] only.

use super::Job;
use engine::time::NS;
use engine::Time;
use fabric::{App, HostCtx, QpSpec, Scope};
use std::collections::HashMap;
use transport::{Completion, CompletionSide, QpId, SendOptions, Verb, WorkRequest};
use workload::collective::Plan;

/// The transfers of one lane from one rank to another, in plan order.
struct Edge {
    src: u32,
    transfers: Vec<u32>,
    /// The sender's QP.
    qp: QpId,
    /// Transfers posted and received so far, over all iterations
    /// (iteration `k / len`, transfer `transfers[k % len]`).
    posted: u64,
    received: u64,
}

/// A rank's progress.
#[derive(Clone, Copy, Default)]
struct Rank {
    /// The iteration it runs, or the next one during a compute gap.
    iter: u32,
    running: bool,
    /// The segment it runs, or the next one during its compute delay.
    seg: u32,
    /// It has started `seg` (its delay is over).
    entered: bool,
    /// Of `seg`'s sends and receives.
    posted: u32,
    received: u32,
}

/// One iteration's (or one segment's in one iteration) span over its
/// ranks. Earliest and latest, not first and last called: within a
/// window the fabric calls an application from each host in the host's
/// own time order, not in one order across hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Iteration {
    /// The earliest rank's start (`Time::MAX`: none started).
    pub start: Time,
    /// The latest rank's end, once every rank ended it.
    pub end: Option<Time>,
    /// The latest end so far.
    latest: Time,
    /// Ranks that ended it.
    ended: u32,
}

impl Iteration {
    const UNSTARTED: Iteration = Iteration {
        start: Time::MAX,
        end: None,
        latest: 0,
        ended: 0,
    };

    fn begin(&mut self, now: Time) {
        self.start = self.start.min(now);
    }

    /// A rank ended it at `now`; `n` ranks run it.
    fn close(&mut self, now: Time, n: u32) {
        self.ended += 1;
        self.latest = self.latest.max(now);
        if self.ended == n {
            self.end = Some(self.latest);
        }
    }
}

/// A timer token's top bit: the timer ends a rank's compute delay before
/// a segment (without it, the gap before an iteration).
const SEGMENT_TIMER: u64 = 1 << 63;

/// A list per rank (`Vec<Vec<u32>>` packed).
struct PerRank {
    from: Vec<u32>,
    items: Vec<u32>,
}

impl PerRank {
    fn new(n: u32, pairs: impl Iterator<Item = (u32, u32)> + Clone) -> PerRank {
        let mut from = vec![0u32; n as usize + 1];
        for (r, _) in pairs.clone() {
            from[r as usize + 1] += 1;
        }
        for i in 0..n as usize {
            from[i + 1] += from[i];
        }
        let mut at = from.clone();
        let mut items = vec![0; from[n as usize] as usize];
        for (r, x) in pairs {
            items[at[r as usize] as usize] = x;
            at[r as usize] += 1;
        }
        PerRank { from, items }
    }

    fn of(&self, r: u32) -> &[u32] {
        &self.items[self.from[r as usize] as usize..self.from[r as usize + 1] as usize]
    }
}

/// A collective job as a fabric application.
pub struct JobApp {
    job: Job,
    plan: Plan,
    /// The job's number among the scenario's (its QPs' source ports).
    index: u32,
    edges: Vec<Edge>,
    edge_of: Vec<u32>,
    /// The edge each receiving (host, QP) belongs to.
    incoming: HashMap<(u32, QpId), u32>,
    /// By rank and segment (`r * segments + s`).
    sends: PerRank,
    receives: PerRank,
    out_edges: PerRank,
    /// The transfers that wait for each transfer.
    waiting: PerRank,
    /// Per transfer: receives it still waits for in its rank's iteration.
    missing: Vec<u32>,
    /// Per transfer: the iterations of it that have arrived.
    arrived: Vec<u32>,
    ranks: Vec<Rank>,
    ranks_left: u32,
    iterations: Vec<Iteration>,
    /// Each started iteration's segments, in order.
    segments: Vec<Iteration>,
    /// (posted, arrived) of each iteration's transfers, when logged.
    log: Option<Vec<(Time, Time)>>,
    /// Why the job stopped early (a work request the NIC refused).
    error: Option<String>,
}

impl JobApp {
    /// The job's application; `index` is its number among the scenario's
    /// jobs. `log` keeps when each transfer was posted and arrived.
    pub fn new(job: Job, plan: Plan, index: u32, log: bool) -> JobApp {
        let n = plan.ranks;
        let t = plan.transfers.len();
        // Edges by (src, dst, lane), each with its transfers in plan order.
        let mut by_key: HashMap<(u32, u32, u32), u32> = HashMap::new();
        let mut edges: Vec<Edge> = Vec::new();
        let mut edge_of = Vec::with_capacity(t);
        for (i, x) in plan.transfers.iter().enumerate() {
            let e = *by_key.entry((x.src, x.dst, x.lane)).or_insert_with(|| {
                edges.push(Edge {
                    src: x.src,
                    transfers: Vec::new(),
                    qp: QpId::MAX,
                    posted: 0,
                    received: 0,
                });
                edges.len() as u32 - 1
            });
            edges[e as usize].transfers.push(i as u32);
            edge_of.push(e);
        }
        let tr = &plan.transfers;
        let segs = plan.segments.len() as u32;
        let key = |r: u32, i: u32| r * segs + plan.segment_of(i as usize);
        let sends = PerRank::new(
            n * segs,
            (0..t as u32).map(|i| (key(tr[i as usize].src, i), i)),
        );
        let receives = PerRank::new(
            n * segs,
            (0..t as u32).map(|i| (key(tr[i as usize].dst, i), i)),
        );
        let out_edges = PerRank::new(n, edges.iter().enumerate().map(|(e, x)| (x.src, e as u32)));
        let waiting = PerRank::new(
            t as u32,
            (0..t).flat_map(|i| plan.deps(i).iter().map(move |&d| (d, i as u32))),
        );
        let iterations = Vec::with_capacity(job.iterations as usize);
        JobApp {
            ranks: vec![Rank::default(); n as usize],
            ranks_left: n,
            missing: vec![0; t],
            arrived: vec![0; t],
            log: log.then(|| vec![(Time::MAX, Time::MAX); t * job.iterations as usize]),
            job,
            plan,
            index,
            edges,
            edge_of,
            incoming: HashMap::new(),
            sends,
            receives,
            out_edges,
            waiting,
            iterations,
            segments: Vec::new(),
            error: None,
        }
    }

    pub fn job(&self) -> &Job {
        &self.job
    }

    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The iterations started so far, in order.
    pub fn iterations(&self) -> &[Iteration] {
        &self.iterations
    }

    /// The segments of the iterations started so far, iteration by
    /// iteration (one no rank has started yet: `start` is `Time::MAX`).
    pub fn segments(&self) -> &[Iteration] {
        &self.segments
    }

    /// The (host, QP) of every connection's receiving end.
    pub fn receiving_qps(&self) -> impl Iterator<Item = (u32, QpId)> + '_ {
        self.incoming.keys().copied()
    }

    /// Every iteration ran to its end.
    pub fn done(&self) -> bool {
        self.ranks_left == 0
    }

    /// Why the job stopped early, if it did.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// When transfer `t` of iteration `it` was posted and arrived
    /// (`Time::MAX`: not yet); None unless logged.
    pub fn logged(&self, it: u32, t: usize) -> Option<(Time, Time)> {
        let log = self.log.as_ref()?;
        Some(log[it as usize * self.plan.transfers.len() + t])
    }

    /// Opens the QP pairs: one per rank pair and lane that carries a
    /// transfer, in the order the plan first uses them.
    fn connect(&mut self, ctx: &mut HostCtx) -> Result<(), String> {
        let mut pairs: HashMap<(u32, u32, u32), (QpId, QpId)> = HashMap::new();
        for e in 0..self.edges.len() {
            let first = self.edges[e].transfers[0] as usize;
            let x = self.plan.transfers[first];
            let (lo, hi) = (x.src.min(x.dst), x.src.max(x.dst));
            let key = (lo, hi, x.lane);
            let next = pairs.len() as u64;
            let (at_lo, at_hi) = match pairs.get(&key) {
                Some(&p) => p,
                None => {
                    let spec = QpSpec {
                        engine: None,
                        sport: ctx.sport(1 << 62 | (self.index as u64) << 36 | next),
                        tag: self.index,
                    };
                    let (a, b) = (self.job.hosts[lo as usize], self.job.hosts[hi as usize]);
                    let p = ctx
                        .connect(a, b, spec)
                        .map_err(|e| format!("opening a QP pair between hosts {a} and {b}: {e}"))?;
                    pairs.insert(key, p);
                    p
                }
            };
            let (mine, theirs) = if x.src == lo {
                (at_lo, at_hi)
            } else {
                (at_hi, at_lo)
            };
            self.edges[e].qp = mine;
            self.incoming
                .insert((self.job.hosts[x.dst as usize], theirs), e as u32);
        }
        Ok(())
    }

    /// Rank `r` starts its iteration: what already arrived for it is
    /// counted, and it begins the first segment.
    fn start_rank(&mut self, now: Time, r: u32, ctx: &mut HostCtx) {
        let it = self.ranks[r as usize].iter;
        if it as usize == self.iterations.len() {
            self.iterations.push(Iteration::UNSTARTED);
            let segs = self.plan.segments.len();
            self.segments
                .extend(std::iter::repeat_n(Iteration::UNSTARTED, segs));
        }
        self.iterations[it as usize].begin(now);
        let segs = self.plan.segments.len() as u32;
        let arrived = &self.arrived;
        for s in 0..segs {
            for &t in self.sends.of(r * segs + s) {
                let deps = self.plan.deps(t as usize);
                self.missing[t as usize] =
                    deps.iter().filter(|&&d| arrived[d as usize] <= it).count() as u32;
            }
        }
        self.ranks[r as usize] = Rank {
            iter: it,
            running: true,
            ..Rank::default()
        };
        if self.begin_segment(now, r, ctx) {
            self.check_rank(now, r, ctx);
        }
    }

    /// Rank `r` begins its segment: after the segment's compute delay
    /// (false: a timer will enter it), or now (true: entered).
    fn begin_segment(&mut self, now: Time, r: u32, ctx: &mut HostCtx) -> bool {
        let seg = self.ranks[r as usize].seg;
        let delay = self.plan.segments[seg as usize].delay_ns * NS;
        if delay > 0 {
            let host = self.job.hosts[r as usize];
            ctx.arm(host, now + delay, SEGMENT_TIMER | r as u64);
            return false;
        }
        self.enter_segment(now, r, ctx);
        true
    }

    /// Rank `r` starts its segment: what already arrived for it is
    /// counted, and every send with nothing left to wait for goes (the
    /// caller then checks whether the rank is done with it).
    fn enter_segment(&mut self, now: Time, r: u32, ctx: &mut HostCtx) {
        let Rank { iter, seg, .. } = self.ranks[r as usize];
        let segs = self.plan.segments.len() as u32;
        self.segments[(iter * segs + seg) as usize].begin(now);
        let arrived = &self.arrived;
        let received = self
            .receives
            .of(r * segs + seg)
            .iter()
            .filter(|&&t| arrived[t as usize] > iter)
            .count();
        let rank = &mut self.ranks[r as usize];
        rank.entered = true;
        rank.received = received as u32;
        for i in 0..self.out_edges.of(r).len() {
            let e = self.out_edges.of(r)[i];
            self.post_ready(now, e, ctx);
        }
    }

    /// Posts edge `e`'s transfers, in order, while the next is ready (its
    /// inputs arrived, in the segment its rank runs).
    fn post_ready(&mut self, now: Time, e: u32, ctx: &mut HostCtx) {
        let len = self.edges[e as usize].transfers.len() as u64;
        let src = self.edges[e as usize].src;
        let rank = self.ranks[src as usize];
        loop {
            let edge = &self.edges[e as usize];
            let k = edge.posted;
            let t = edge.transfers[(k % len) as usize];
            if !rank.running
                || !rank.entered
                || k / len != rank.iter as u64
                || self.missing[t as usize] > 0
                || self.plan.segment_of(t as usize) != rank.seg
            {
                return;
            }
            let x = self.plan.transfers[t as usize];
            let wr = WorkRequest {
                wr_id: k,
                verb: Verb::Write,
                len: x.bytes,
                ..WorkRequest::default()
            };
            let host = self.job.hosts[src as usize];
            if let Err(err) = ctx.post_send(host, edge.qp, wr, SendOptions::default()) {
                self.stop(
                    format!("host {host} refused a WRITE of {} bytes: {err}", x.bytes),
                    ctx,
                );
                return;
            }
            if let Some(log) = &mut self.log {
                log[rank.iter as usize * self.plan.transfers.len() + t as usize].0 = now;
            }
            self.edges[e as usize].posted += 1;
            self.ranks[src as usize].posted += 1;
        }
    }

    /// Ends rank `r`'s segment if it is whole, and then its iteration
    /// after the last segment; begins the next segment, or the next
    /// iteration now or after the compute gap.
    fn check_rank(&mut self, now: Time, r: u32, ctx: &mut HostCtx) {
        let segs = self.plan.segments.len() as u32;
        let n = self.plan.ranks;
        // A loop, not a recursion, over segments without delay that a
        // rank finishes as it enters them (their inputs arrived early).
        let rank = loop {
            let rank = self.ranks[r as usize];
            let key = r * segs + rank.seg;
            let whole = rank.posted as usize == self.sends.of(key).len()
                && rank.received as usize == self.receives.of(key).len();
            if !rank.running || !rank.entered || !whole {
                return;
            }
            self.segments[(rank.iter * segs + rank.seg) as usize].close(now, n);
            if rank.seg + 1 == segs {
                break rank;
            }
            self.ranks[r as usize] = Rank {
                seg: rank.seg + 1,
                entered: false,
                posted: 0,
                received: 0,
                ..rank
            };
            if !self.begin_segment(now, r, ctx) {
                return;
            }
        };
        self.iterations[rank.iter as usize].close(now, n);
        let next = rank.iter + 1;
        self.ranks[r as usize] = Rank {
            iter: next,
            ..Rank::default()
        };
        if next < self.job.iterations {
            let host = self.job.hosts[r as usize];
            // A host timer even for no gap: the next iteration's posts
            // stay out of this call's loops.
            ctx.arm(host, now + self.job.compute, r as u64);
        } else {
            self.ranks_left -= 1;
            if self.ranks_left == 0 {
                ctx.finish();
            }
        }
    }

    fn stop(&mut self, why: String, ctx: &mut HostCtx) {
        if self.error.is_none() {
            self.error = Some(why);
        }
        for r in &mut self.ranks {
            r.running = false;
        }
        ctx.finish();
    }
}

impl App for JobApp {
    fn on_start(&mut self, now: Time, ctx: &mut HostCtx) {
        if let Err(why) = self.connect(ctx) {
            return self.stop(why, ctx);
        }
        for r in 0..self.plan.ranks {
            self.start_rank(now, r, ctx);
        }
    }

    fn on_completion(&mut self, now: Time, host: u32, c: Completion, ctx: &mut HostCtx) {
        if c.side != CompletionSide::Responder {
            return;
        }
        let Some(&e) = self.incoming.get(&(host, c.qp)) else {
            return;
        };
        let edge = &mut self.edges[e as usize];
        let len = edge.transfers.len() as u64;
        let (it, t) = (
            edge.received / len,
            edge.transfers[(edge.received % len) as usize],
        );
        edge.received += 1;
        self.arrived[t as usize] += 1;
        if let Some(log) = &mut self.log {
            log[it as usize * self.plan.transfers.len() + t as usize].1 = now;
        }
        let r = self.plan.transfers[t as usize].dst;
        let rank = self.ranks[r as usize];
        if !rank.running || rank.iter as u64 != it {
            // Early: counted when the rank starts that iteration.
            return;
        }
        // One for a later segment, or for this one during its delay, is
        // counted when the rank starts that segment.
        if rank.entered && self.plan.segment_of(t as usize) == rank.seg {
            self.ranks[r as usize].received += 1;
        }
        for i in 0..self.waiting.of(t).len() {
            let u = self.waiting.of(t)[i];
            self.missing[u as usize] -= 1;
            if self.missing[u as usize] == 0 {
                self.post_ready(now, self.edge_of[u as usize], ctx);
            }
        }
        self.check_rank(now, r, ctx);
    }

    /// Rank `token` starts its next iteration, or (with
    /// [`SEGMENT_TIMER`]) its next segment.
    fn on_timer(&mut self, now: Time, _scope: Scope, token: u64, ctx: &mut HostCtx) {
        if self.error.is_some() {
            return;
        }
        let r = token as u32;
        if token & SEGMENT_TIMER != 0 {
            self.enter_segment(now, r, ctx);
            self.check_rank(now, r, ctx);
        } else {
            self.start_rank(now, r, ctx);
        }
    }
}
