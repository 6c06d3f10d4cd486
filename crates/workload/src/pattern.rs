//! Traffic patterns: who a source sends to. `Pattern` is what a scenario
//! names; `Chooser` is the pattern resolved against a host list, picking
//! destinations by host index with a fixed number of draws per flow.

use engine::Rng;

use crate::error::WorkloadError;

/// Destination pattern of a Poisson traffic class.
#[derive(Clone, Debug, PartialEq)]
pub enum Pattern {
    /// Uniform over all other hosts (traffic_gen.py).
    AllToAll,
    /// Hosts split into consecutive groups of `size` (in host-list order);
    /// destinations uniform over the other members of the source's group.
    Group { size: u32 },
    /// A random derangement drawn once per run; each host sends only to its
    /// partner.
    Permutation,
    /// With probability `fraction`, a uniformly chosen host of `hot` other
    /// than the source; otherwise uniform over all other hosts (which may
    /// also be hot). A source whose only hot host is itself always draws
    /// uniformly.
    HotSpot { hot: Vec<u32>, fraction: f64 },
    /// Background incast events instead of per-host flows: each event picks
    /// a random receiver and `fan_in` distinct random senders that each send
    /// `bytes` at the same instant. Events arrive as a Poisson process whose
    /// rate makes the incast bytes offer `load` of the total host capacity
    /// (the HPCC paper's incast background). The CDF is not used.
    Incast { fan_in: u32, bytes: u64 },
}

/// A per-source pattern resolved against the host list (indices into it).
#[derive(Clone, Debug)]
pub enum Chooser {
    AllToAll,
    Group { size: usize },
    Permutation { partner: Vec<usize> },
    HotSpot { hot: Vec<usize>, fraction: f64 },
}

impl Chooser {
    /// Validates `pattern` against `hosts` (distinct, at least 2, checked
    /// by the caller). `rng` draws whatever is fixed for the whole run.
    pub fn build(
        pattern: &Pattern,
        hosts: &[u32],
        rng: &mut Rng,
    ) -> Result<Chooser, WorkloadError> {
        let n = hosts.len();
        match pattern {
            Pattern::AllToAll => Ok(Chooser::AllToAll),
            Pattern::Group { size } => {
                let size = *size as usize;
                if size < 2 {
                    return Err(WorkloadError::config(format!(
                        "Group size must be at least 2, got {size}"
                    )));
                }
                if !n.is_multiple_of(size) {
                    return Err(WorkloadError::config(format!(
                        "{n} hosts cannot be split into groups of {size}"
                    )));
                }
                Ok(Chooser::Group { size })
            }
            Pattern::Permutation => Ok(Chooser::Permutation {
                partner: derangement(n, rng),
            }),
            Pattern::HotSpot { hot, fraction } => {
                if hot.is_empty() {
                    return Err(WorkloadError::config("HotSpot needs at least one hot host"));
                }
                if !(0.0..=1.0).contains(fraction) {
                    return Err(WorkloadError::config(format!(
                        "HotSpot fraction must be in [0, 1], got {fraction}"
                    )));
                }
                let mut idx = Vec::with_capacity(hot.len());
                for h in hot {
                    let Some(i) = hosts.iter().position(|x| x == h) else {
                        return Err(WorkloadError::config(format!(
                            "HotSpot host {h} is not one of the generating hosts"
                        )));
                    };
                    if idx.contains(&i) {
                        return Err(WorkloadError::config(format!(
                            "HotSpot host {h} is listed twice"
                        )));
                    }
                    idx.push(i);
                }
                Ok(Chooser::HotSpot {
                    hot: idx,
                    fraction: *fraction,
                })
            }
            Pattern::Incast { .. } => Err(WorkloadError::config(
                "Incast is an event process, not a per-source pattern",
            )),
        }
    }

    /// Destination index for source index `src` among `n` hosts.
    pub fn pick(&self, src: usize, n: usize, rng: &mut Rng) -> usize {
        match self {
            Chooser::AllToAll => other_than(src, 0, n, rng),
            Chooser::Group { size } => {
                let base = src / size * size;
                other_than(src, base, *size, rng)
            }
            Chooser::Permutation { partner } => partner[src],
            Chooser::HotSpot { hot, fraction } => {
                // Always two draws, so one flow's branch does not shift the
                // draws of the next.
                let to_hot = rng.uniform() < *fraction;
                let r = rng.next_u64();
                let own = hot.iter().position(|&h| h == src);
                let choices = hot.len() - usize::from(own.is_some());
                if to_hot && choices > 0 {
                    let mut j = scale(r, choices);
                    if own.is_some_and(|o| j >= o) {
                        j += 1;
                    }
                    hot[j]
                } else {
                    let j = scale(r, n - 1);
                    if j >= src {
                        j + 1
                    } else {
                        j
                    }
                }
            }
        }
    }
}

/// Uniform over [base, base + len) minus `src` (which lies in it), with one
/// draw and no rejection, so the draw count never depends on the outcome.
fn other_than(src: usize, base: usize, len: usize, rng: &mut Rng) -> usize {
    let j = base + rng.below(len as u64 - 1) as usize;
    if j >= src {
        j + 1
    } else {
        j
    }
}

/// `r` mapped uniformly onto [0, n) (the same multiply-shift as Rng::below).
fn scale(r: u64, n: usize) -> usize {
    ((r as u128 * n as u128) >> 64) as usize
}

/// A uniformly random derangement of 0..n (no i maps to itself), for n >= 2:
/// shuffle and retry until there is no fixed point (about e tries on
/// average), which, unlike Sattolo's single cycle, is uniform over all
/// derangements.
pub fn derangement(n: usize, rng: &mut Rng) -> Vec<usize> {
    assert!(n >= 2, "a derangement needs at least 2 elements");
    let mut p: Vec<usize> = (0..n).collect();
    loop {
        rng.shuffle(&mut p);
        if p.iter().enumerate().all(|(i, &j)| i != j) {
            return p;
        }
    }
}
