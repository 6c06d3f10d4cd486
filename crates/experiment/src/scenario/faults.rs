//! The `[[faults]]` section: link failures and repairs, loss, reordering,
//! rate and ECN changes at a time, and recurring random failures
//! (`action = "random_failures"`); its TOML types, its checks (times, loss
//! probabilities, rates that would round to nothing, failure schedules
//! that fail no link) and its build step (the network's faults).

use super::check::{Check, ScenarioError};
use super::switch::{red, RED_RULE};
use fabric::{Fault, FaultAction, Network, RandomFailures};
use serde::Deserialize;

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct FaultCfg {
    /// The two node names the link joins, e.g. ["spine0", "tor1"] (not
    /// for random_failures).
    pub link: Option<[String; 2]>,
    #[serde(default)]
    pub at_us: f64,
    pub action: FaultActionCfg,
    /// "both" (default), or "forward" (from link[0] to link[1]) or "backward".
    #[serde(default)]
    pub direction: DirectionCfg,
    /// For action = "loss": the drop probability.
    pub loss: Option<f64>,
    /// For action = "rate": the new rate.
    pub gbps: Option<f64>,
    /// For action = "ecn": the port's RED marking from now on (e.g. a
    /// misconfigured switch).
    pub kmin_kb: Option<f64>,
    pub kmax_kb: Option<f64>,
    pub pmax: Option<f64>,
    /// For action = "random_failures": the fraction (0, 1] of the
    /// switch-to-switch links failed at each interval (rounded up to a
    /// count), the interval, and when the failures stop (`at_us`
    /// is when they start). For action = "reorder": the share 0..1 of the
    /// packets delayed.
    pub fraction: Option<f64>,
    /// For action = "reorder": a delayed packet arrives later by a delay
    /// uniform in (0, delay_us].
    pub delay_us: Option<f64>,
    pub interval_us: Option<f64>,
    pub stop_us: Option<f64>,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FaultActionCfg {
    Down,
    Up,
    Loss,
    Rate,
    Ecn,
    Reorder,
    RandomFailures,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum DirectionCfg {
    #[default]
    Both,
    Forward,
    Backward,
}

impl FaultCfg {
    /// The action, checked; `key` is `faults[i]`.
    fn action(&self, key: &str, c: Check) -> Result<FaultAction, ScenarioError> {
        Ok(match self.action {
            FaultActionCfg::Down => FaultAction::Down,
            FaultActionCfg::Up => FaultAction::Up,
            FaultActionCfg::Loss => match self.loss {
                Some(l) if (0.0..=1.0).contains(&l) => FaultAction::Loss(l),
                _ => {
                    return Err(c.err(
                        format!("{key}.loss"),
                        format!(
                            "action \"loss\" needs loss = 0..1, got {}",
                            self.loss.map_or("nothing".into(), |l| l.to_string())
                        ),
                    ))
                }
            },
            FaultActionCfg::Ecn => match (self.kmin_kb, self.kmax_kb, self.pmax) {
                (Some(lo), Some(hi), Some(p)) => FaultAction::Ecn(
                    red(lo, hi, p)
                        .ok_or_else(|| c.err(key, format!("action \"ecn\" {RED_RULE}")))?,
                ),
                _ => return Err(c.err(key, "action \"ecn\" needs kmin_kb, kmax_kb and pmax")),
            },
            FaultActionCfg::Rate => match self.gbps {
                Some(g) => FaultAction::Rate(c.gbps(&format!("{key}.gbps"), g)?),
                None => return Err(c.err(format!("{key}.gbps"), "action \"rate\" needs gbps > 0")),
            },
            FaultActionCfg::Reorder => {
                let fraction = match self.fraction {
                    Some(f) if (0.0..=1.0).contains(&f) => f,
                    f => {
                        return Err(c.err(
                            format!("{key}.fraction"),
                            format!(
                                "action \"reorder\" needs fraction = 0..1, got {}",
                                f.map_or("nothing".into(), |f| f.to_string())
                            ),
                        ))
                    }
                };
                let delay_key = format!("{key}.delay_us");
                let delay_us = self
                    .delay_us
                    .ok_or_else(|| c.err(&delay_key, "action \"reorder\" needs delay_us > 0"))?;
                FaultAction::Reorder {
                    fraction,
                    delay: c.us_positive(&delay_key, delay_us)?,
                }
            }
            FaultActionCfg::RandomFailures => unreachable!("random_failures is a schedule"),
        })
    }

    /// A random failure schedule's fraction, start, interval and stop,
    /// checked; `key` is `faults[i]`.
    fn schedule(&self, key: &str, c: Check) -> Result<(f64, RandomFailures), ScenarioError> {
        if self.link.is_some() {
            return Err(c.err(
                format!("{key}.link"),
                "action \"random_failures\" draws its links: give no link",
            ));
        }
        let need = |k: &str, v: Option<f64>| {
            v.ok_or_else(|| {
                c.err(
                    format!("{key}.{k}"),
                    format!("action \"random_failures\" needs {k}"),
                )
            })
        };
        let fraction = need("fraction", self.fraction)?;
        if !(fraction > 0.0 && fraction <= 1.0) {
            return Err(c.err(
                format!("{key}.fraction"),
                format!("must be in (0, 1], got {fraction}"),
            ));
        }
        let interval_key = format!("{key}.interval_us");
        let interval = c.us_positive(&interval_key, need("interval_us", self.interval_us)?)?;
        let start = c.us(&format!("{key}.at_us"), self.at_us)?;
        let stop_key = format!("{key}.stop_us");
        let stop = c.us(&stop_key, need("stop_us", self.stop_us)?)?;
        if stop <= start {
            return Err(c.err(stop_key, format!("must be after at_us ({} us)", self.at_us)));
        }
        // Each set is a global event and the stall detector waits for the
        // last: a set every picosecond, or sets until 4e12 us, made a run
        // that never ended.
        let sets = (stop - start) / interval;
        if sets > MAX_FAILURE_SETS {
            return Err(c.err(
                interval_key,
                format!(
                    "{sets} failure sets between at_us and stop_us: at most {MAX_FAILURE_SETS}                      (a longer interval or an earlier stop)"
                ),
            ));
        }
        Ok((
            fraction,
            RandomFailures {
                start,
                interval,
                stop,
                count: 0,
            },
        ))
    }
}

/// The most failure sets one schedule may draw.
const MAX_FAILURE_SETS: u64 = 1_000_000;

/// Checks every fault's time and action.
pub fn validate(faults: &[FaultCfg], c: Check) -> Result<(), ScenarioError> {
    for (i, f) in faults.iter().enumerate() {
        let key = format!("faults[{i}]");
        c.us(&format!("{key}.at_us"), f.at_us)?;
        if f.action == FaultActionCfg::RandomFailures {
            f.schedule(&key, c)?;
        } else {
            if f.link.is_none() {
                return Err(c.err(
                    format!("{key}.link"),
                    "missing: the two node names the link joins",
                ));
            }
            f.action(&key, c)?;
        }
    }
    Ok(())
}

/// Adds every fault to the network (links found by their ends' names).
pub fn build(faults: &[FaultCfg], net: &mut Network, c: Check) -> Result<(), ScenarioError> {
    for (i, fc) in faults.iter().enumerate() {
        let key = format!("faults[{i}]");
        if fc.action == FaultActionCfg::RandomFailures {
            let (fraction, spec) = fc.schedule(&key, c)?;
            let links = net.switch_links().len();
            // The fewest links that make at least `fraction` of them, so
            // that fractions apart fail different counts where the links
            // allow (Eunomia's 1% and 2% of 64: 1 and 2 links, where
            // rounding failed 1 for both).
            let count = (fraction * links as f64).ceil() as u32;
            net.add_random_failures(RandomFailures { count, ..spec })
                .map_err(|m| c.err(&key, m))?;
            continue;
        }
        let Some([a, b]) = &fc.link else {
            return Err(c.err(
                format!("{key}.link"),
                "missing: the two node names the link joins",
            ));
        };
        let (link, forward) = net.find_link(a, b).ok_or_else(|| {
            c.err(
                format!("{key}.link"),
                format!("no link joins {a:?} and {b:?}"),
            )
        })?;
        let action = fc.action(&key, c)?;
        let a_to_b = match fc.direction {
            DirectionCfg::Both => None,
            DirectionCfg::Forward => Some(forward),
            DirectionCfg::Backward => Some(!forward),
        };
        net.add_fault(Fault {
            at: c.us(&format!("{key}.at_us"), fc.at_us)?,
            link,
            a_to_b,
            action,
        })
        .map_err(|m| c.err(&key, m))?;
    }
    Ok(())
}
