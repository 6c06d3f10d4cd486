//! The `[[faults]]` section: link failures and repairs, loss, rate and
//! ECN changes at a time; its TOML types, its checks (times, loss
//! probabilities, rates that would round to nothing) and its build step
//! (the network's faults).

use super::check::{Check, ScenarioError};
use super::switch::{red, RED_RULE};
use fabric::{Fault, FaultAction, Network};
use serde::Deserialize;

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct FaultCfg {
    /// The two node names the link joins, e.g. ["spine0", "tor1"].
    pub link: [String; 2],
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
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FaultActionCfg {
    Down,
    Up,
    Loss,
    Rate,
    Ecn,
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
        })
    }
}

/// Checks every fault's time and action.
pub fn validate(faults: &[FaultCfg], c: Check) -> Result<(), ScenarioError> {
    for (i, f) in faults.iter().enumerate() {
        let key = format!("faults[{i}]");
        c.us(&format!("{key}.at_us"), f.at_us)?;
        f.action(&key, c)?;
    }
    Ok(())
}

/// Adds every fault to the network (links found by their ends' names).
pub fn build(faults: &[FaultCfg], net: &mut Network, c: Check) -> Result<(), ScenarioError> {
    for (i, fc) in faults.iter().enumerate() {
        let key = format!("faults[{i}]");
        let (link, forward) = net.find_link(&fc.link[0], &fc.link[1]).ok_or_else(|| {
            c.err(
                format!("{key}.link"),
                format!("no link joins {:?} and {:?}", fc.link[0], fc.link[1]),
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
