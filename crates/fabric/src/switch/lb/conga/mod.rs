//! CONGA (Alizadeh et al., SIGCOMM'14), as the ConWeave artifact runs it
//! (`conga-routing.cc`): leaf-to-leaf congestion-aware flowlet routing in
//! a two-tier leaf-spine (`leaves.rs` reads the tiers off the topology).
//!
//! - Every switch fabric port keeps a DRE (`dre.rs`) of the bytes it
//!   sends, whose metric is its rate over line rate in 2^bits steps.
//! - At the source leaf, per flowlet (`../flowlet.rs`, gap `gap`), a new
//!   flowlet takes the uplink with the least max(local metric of the
//!   uplink, Congestion-To-Leaf[destination leaf][uplink]), ties at
//!   random. The packet carries LBTag = the uplink and CE = its metric.
//! - Each later hop toward a leaf raises CE to its egress port's metric.
//! - The destination leaf stores CE in Congestion-From-Leaf[source
//!   leaf][LBTag]; any packet it sends to that leaf carries one (LBTag,
//!   metric) pair back, round robin over the entries written since they
//!   were last fed back, which the receiving leaf stores in its
//!   Congestion-To-Leaf. Entries older than `aging` count as 0 (To-Leaf)
//!   or are not fed back (From-Leaf).
//!
//! The fields CONGA adds to a packet (its source leaf, LBTag, CE and the
//! feedback pair) live in a side table indexed by the packet's arena slot
//! (`hdr.idx`, grown on demand): nothing is paid when CONGA is off, and a
//! slot's fields are rewritten at the packet's first switch (every packet
//! enters the fabric from a host through a leaf). Every packet of every
//! class takes part, data and control alike: CONGA routes all traffic,
//! and all of it loads the links the DREs measure (the artifact routes only
//! data packets by CONGA and counts only theirs).
//!
//! `pick` runs where the ingress pipeline balances (two next hops or
//! more: the source leaf's uplinks), `hop` at every switch hop of every
//! packet (`Balancer::every_hop`). Touches only its own state; reads the
//! ports' rates through the `Sight`.

mod dre;
mod leaves;
#[cfg(test)]
mod tests;

use super::flowlet::{self, Flowlets};
use super::sight::Sight;
use crate::net::arena::Hdr;
use crate::topo::topology::Topology;
use dre::{Dre, DreRule};
use engine::time::US;
use engine::{Rng, StreamKind, Time};
use leaves::{Leaves, DOWN, HOST, NONE};

/// CONGA's parameters (`[switch.conga]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CongaParams {
    /// The DRE's decay period.
    pub dre_period: Time,
    /// The DRE's decay per period, in millionths (1..=1_000_000).
    pub alpha_ppm: u32,
    /// Bits of the congestion metric, 1..=[`CongaParams::MAX_BITS`].
    pub quantization_bits: u32,
    /// The idle gap that ends a flowlet.
    pub gap: Time,
    /// Congestion table entries older than this count as 0.
    pub aging: Time,
    /// Flowlet table entries per leaf,
    /// [`CongaParams::MIN_TABLE`]..=[`CongaParams::MAX_TABLE`].
    pub table: u32,
}

impl CongaParams {
    /// The ConWeave artifact's: a 50 us DRE period, alpha 0.2, 3 bits, a
    /// 100 us flowlet gap, 500 us aging; 4096 flowlet entries, as LetFlow.
    pub const DEFAULT: CongaParams = CongaParams {
        dre_period: 50 * US,
        alpha_ppm: 200_000,
        quantization_bits: 3,
        gap: 100 * US,
        aging: 500 * US,
        table: 4096,
    };
    /// The unit of `alpha_ppm`: alpha 1.
    pub const ALPHA_UNIT: u32 = dre::ALPHA_UNIT as u32;
    pub const MAX_BITS: u32 = 8;
    pub const MIN_TABLE: u32 = flowlet::MIN_TABLE;
    pub const MAX_TABLE: u32 = flowlet::MAX_TABLE;

    /// Whether CONGA can run on `topo`, and if not why.
    pub fn check(topo: &Topology) -> Result<(), String> {
        Leaves::of(topo).map(|_| ())
    }
}

/// No feedback on a packet.
const NO_FEEDBACK: u16 = u16::MAX;

/// What CONGA adds to a packet.
#[derive(Clone, Copy, Debug)]
struct Tag {
    /// The leaf it entered the fabric at, or [`NONE`]: no CONGA fields
    /// (a packet between hosts of one leaf, or past its destination leaf).
    src: u16,
    /// The source leaf's uplink it took.
    lbtag: u16,
    /// The feedback it carries to its destination leaf: an uplink of that
    /// leaf (or [`NO_FEEDBACK`]) and its metric toward the source leaf.
    fb_tag: u16,
    fb_metric: u8,
    /// The most congested metric of its path so far.
    ce: u8,
}

const UNTAGGED: Tag = Tag {
    src: NONE,
    lbtag: 0,
    fb_tag: NO_FEEDBACK,
    fb_metric: 0,
    ce: 0,
};

/// A congestion table entry.
#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    /// When it was last written (0 and a 0 metric: never).
    at: Time,
    metric: u8,
    /// From-Leaf: written since it was last fed back.
    fresh: bool,
}

pub(crate) struct Conga {
    flowlets: Flowlets,
    state: State,
}

/// All of CONGA but the flowlet tables (which call into it to choose).
struct State {
    rule: DreRule,
    aging: Time,
    leaves: Leaves,
    /// Each switch's random stream (the source leaves' ties).
    rngs: Vec<Rng>,
    /// Each port's DRE, by port id (used at switch fabric ports only).
    dre: Vec<Dre>,
    /// Congestion-To-Leaf and Congestion-From-Leaf: entry `(leaf x leaves
    /// + other) x uplinks + uplink` is `leaf`'s of `other`'s uplink (From)
    /// or of its own toward `other` (To).
    to_leaf: Vec<Entry>,
    from_leaf: Vec<Entry>,
    /// Per (leaf, other leaf): the From-Leaf uplink to feed back first.
    turn: Vec<u16>,
    /// Each packet's CONGA fields, by arena slot.
    tags: Vec<Tag>,
}

impl Conga {
    pub fn new(p: CongaParams, seed: u64, topo: &Topology) -> Result<Conga, String> {
        let leaves = Leaves::of(topo)?;
        let switches = topo.switch_count() as u32;
        let pairs = leaves.count * leaves.count;
        Ok(Conga {
            flowlets: Flowlets::new(p.gap, p.table, switches),
            state: State {
                rule: DreRule::new(p.dre_period, p.alpha_ppm, p.quantization_bits),
                aging: p.aging,
                rngs: (0..switches as u64)
                    .map(|s| Rng::new(seed, StreamKind::LoadBalance, s))
                    .collect(),
                dre: vec![Dre::default(); 2 * topo.links.len()],
                to_leaf: vec![Entry::default(); pairs * leaves.uplinks],
                from_leaf: vec![Entry::default(); pairs * leaves.uplinks],
                turn: vec![0; pairs],
                tags: Vec::new(),
                leaves,
            },
        })
    }

    /// The next hop of `hdr` at switch `s` among `hops` (two or more: in
    /// a leaf-spine, a source leaf's uplinks toward another leaf).
    #[inline(always)]
    pub fn pick(&mut self, s: u32, hdr: &Hdr, hops: &[u32], sight: Sight) -> u32 {
        let state = &mut self.state;
        self.flowlets.port(s, hdr, hops, sight.now, || {
            state.best_uplink(s, hdr.dst, hops, &sight)
        })
    }

    /// A packet leaves switch `s` (which it entered by port `in_port`) by
    /// port `out`: see [`State::hop`].
    pub fn hop(&mut self, s: u32, in_port: u32, out: u32, hdr: &Hdr, sight: Sight) {
        self.state.hop(s, in_port, out, hdr, sight);
    }
}

impl State {
    /// The first of the `uplinks` entries of (`leaf`, `other`).
    fn row(&self, leaf: u16, other: u16) -> usize {
        (leaf as usize * self.leaves.count + other as usize) * self.leaves.uplinks
    }

    /// Port `p`'s current metric.
    fn local(&mut self, p: u32, sight: &Sight) -> u8 {
        let x = self.dre[p as usize].value(&self.rule, sight.now);
        self.rule.metric(x, sight.ports[p as usize].rate_bps())
    }

    /// The hop of least max(local, remote) congestion, ties at random.
    fn best_uplink(&mut self, s: u32, dst: u32, hops: &[u32], sight: &Sight) -> u32 {
        let src = self.leaves.of_switch[s as usize];
        let dst = self.leaves.of_host[dst as usize];
        let row = (src != NONE && dst != NONE).then(|| self.row(src, dst));
        let mut costs = [0u8; 256];
        let (mut best, mut ties) = (u8::MAX, 0);
        for (i, &p) in hops.iter().enumerate() {
            let local = self.local(p, sight);
            let k = self.leaves.role[p as usize];
            let remote = match row {
                Some(row) if k != HOST && k != DOWN => {
                    let e = self.to_leaf[row + k as usize];
                    if sight.now.saturating_sub(e.at) > self.aging {
                        0
                    } else {
                        e.metric
                    }
                }
                _ => 0,
            };
            costs[i] = local.max(remote);
            if costs[i] < best {
                (best, ties) = (costs[i], 0);
            }
            ties += (costs[i] == best) as u64;
        }
        let mut n = self.rngs[s as usize].below(ties);
        for (i, &c) in costs[..hops.len()].iter().enumerate() {
            if c == best {
                if n == 0 {
                    return hops[i];
                }
                n -= 1;
            }
        }
        unreachable!("a best hop exists")
    }

    /// A packet leaves switch `s` (which it entered by port `in_port`) by
    /// port `out`: its DRE counts it, and its CONGA fields are written
    /// (at its source leaf), raised (at a spine) or read into the tables
    /// (at its destination leaf).
    fn hop(&mut self, s: u32, in_port: u32, out: u32, hdr: &Hdr, sight: Sight) {
        let now = sight.now;
        let i = hdr.idx as usize;
        if i >= self.tags.len() {
            self.tags.resize((i + 1).next_power_of_two(), UNTAGGED);
        }
        let out_role = self.leaves.role[out as usize];
        let metric = if out_role == HOST {
            0
        } else {
            let x = self.dre[out as usize].add(&self.rule, now, hdr.wire());
            self.rule.metric(x, sight.ports[out as usize].rate_bps())
        };
        if self.leaves.role[in_port as usize] == HOST {
            // From a host: the source leaf (a leaf's ports face hosts or
            // are uplinks).
            let src = self.leaves.of_switch[s as usize];
            let dst = self.leaves.of_host[hdr.dst as usize];
            self.tags[i] = if out_role == HOST || dst == NONE {
                UNTAGGED
            } else {
                let (fb_tag, fb_metric) = self.feedback(src, dst, now);
                Tag {
                    src,
                    lbtag: out_role,
                    fb_tag,
                    fb_metric,
                    ce: metric,
                }
            };
            return;
        }
        let tag = self.tags[i];
        if tag.src == NONE {
            return;
        }
        if out_role != HOST {
            self.tags[i].ce = tag.ce.max(metric);
            return;
        }
        // Toward a host: the destination leaf.
        let leaf = self.leaves.of_switch[s as usize];
        let from = self.row(leaf, tag.src) + tag.lbtag as usize;
        self.from_leaf[from] = Entry {
            at: now,
            metric: tag.ce,
            fresh: true,
        };
        if tag.fb_tag != NO_FEEDBACK {
            let to = self.row(leaf, tag.src) + tag.fb_tag as usize;
            self.to_leaf[to] = Entry {
                at: now,
                metric: tag.fb_metric,
                fresh: false,
            };
        }
        self.tags[i] = UNTAGGED;
    }

    /// The feedback a packet from leaf `src` to leaf `dst` carries: the
    /// next entry of From-Leaf[`dst`] at `src`, in turn, written since it
    /// was last fed back and not aged out; none if there is none.
    fn feedback(&mut self, src: u16, dst: u16, now: Time) -> (u16, u8) {
        let n = self.leaves.uplinks;
        let row = self.row(src, dst);
        let turn = &mut self.turn[src as usize * self.leaves.count + dst as usize];
        let mut next = *turn as usize;
        for _ in 0..n {
            // In turn, without a division per step.
            let k = next;
            next = if k + 1 == n { 0 } else { k + 1 };
            let e = &mut self.from_leaf[row + k];
            if e.fresh && now.saturating_sub(e.at) <= self.aging {
                e.fresh = false;
                *turn = next as u16;
                return (k as u16, e.metric);
            }
        }
        (NO_FEEDBACK, 0)
    }
}
