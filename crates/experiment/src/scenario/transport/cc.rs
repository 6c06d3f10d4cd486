//! The tables of the ACK-driven congestion controls, `[transport.hpcc]`,
//! `[transport.timely]` and `[transport.dctcp]`: a preset (its source in
//! `data/params/cc.toml`) and single values replacing its own, checked by
//! key. HPCC's and DCTCP's window and HPCC's base RTT default to what the
//! topology gives (ns-3's `GLOBAL_T 1`: the largest base RTT from host 0
//! and its bandwidth-delay product), measured by [`measure`] once the
//! network can be built.

use super::super::check::{Check, ScenarioError};
use fabric::Network;
use serde::Deserialize;
use transport::{CcConfig, DctcpParams, HpccParams, TimelyParams};

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum HpccPreset {
    /// The reference runs' config (`config-ws128-hpcc.txt`).
    #[default]
    Ns3,
    /// The paper's maxStage 5 and INT multiplier 1.
    Paper,
}

/// `[transport.hpcc]`.
#[derive(Debug, Deserialize, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct HpccOverrides {
    pub preset: HpccPreset,
    pub eta: Option<f64>,
    pub rai_mbps: Option<f64>,
    pub min_rate_mbps: Option<f64>,
    pub max_stage: Option<u32>,
    pub fast_react: Option<bool>,
    pub window: Option<bool>,
    pub var_win: Option<bool>,
    /// The base window, bytes; default: the topology's largest BDP.
    pub window_bytes: Option<u64>,
    /// The base RTT T, microseconds; default: the topology's largest.
    pub base_rtt_us: Option<f64>,
    pub int_multi: Option<u32>,
}

/// `[transport.timely]`.
#[derive(Debug, Deserialize, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TimelyOverrides {
    pub alpha: Option<f64>,
    pub beta: Option<f64>,
    pub t_low_us: Option<f64>,
    pub t_high_us: Option<f64>,
    pub min_rtt_us: Option<f64>,
    pub rai_mbps: Option<f64>,
    pub rhai_mbps: Option<f64>,
    pub min_rate_mbps: Option<f64>,
}

/// `[transport.dctcp]`.
#[derive(Debug, Deserialize, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpOverrides {
    pub g: Option<f64>,
    pub rai_mbps: Option<f64>,
    pub min_rate_mbps: Option<f64>,
    /// Bound the bytes in flight by a window that follows the rate (as
    /// ns-3's `run.py --cc dctcp`); default true.
    pub window: Option<bool>,
    /// The window at line rate, bytes; default: the topology's largest BDP.
    pub window_bytes: Option<u64>,
}

/// A stand-in for a value [`measure`] fills in (validation wants it
/// positive before the network exists).
const MEASURED: u64 = 1;

impl HpccOverrides {
    pub fn params(&self, c: Check) -> Result<HpccParams, ScenarioError> {
        let mut p = match self.preset {
            HpccPreset::Ns3 => HpccParams::ns3(MEASURED, MEASURED),
            HpccPreset::Paper => HpccParams::paper(MEASURED, MEASURED),
        };
        let k = |n: &str| format!("transport.hpcc.{n}");
        if let Some(x) = self.eta {
            p.eta = c.fraction(&k("eta"), x)?;
        }
        if let Some(x) = self.rai_mbps {
            p.rai_bps = c.mbps(&k("rai_mbps"), x)?;
        }
        if let Some(x) = self.min_rate_mbps {
            p.min_rate_bps = c.mbps(&k("min_rate_mbps"), x)?;
        }
        p.max_stage = self.max_stage.unwrap_or(p.max_stage);
        p.fast_react = self.fast_react.unwrap_or(p.fast_react);
        p.window = self.window.unwrap_or(p.window);
        p.var_win = self.var_win.unwrap_or(p.var_win);
        if let Some(b) = self.window_bytes {
            p.window_bytes = b;
        }
        if let Some(x) = self.base_rtt_us {
            p.base_rtt = c.us_positive(&k("base_rtt_us"), x)?;
        }
        p.int_multi = self.int_multi.unwrap_or(p.int_multi);
        p.validate().map_err(|m| c.err("transport.hpcc", m))?;
        Ok(p)
    }
}

impl TimelyOverrides {
    pub fn params(&self, line_bps: u64, c: Check) -> Result<TimelyParams, ScenarioError> {
        let mut p = TimelyParams::ns3(line_bps);
        let k = |n: &str| format!("transport.timely.{n}");
        if let Some(x) = self.alpha {
            p.alpha = c.fraction(&k("alpha"), x)?;
        }
        if let Some(x) = self.beta {
            p.beta = c.fraction(&k("beta"), x)?;
        }
        for (name, v, f) in [
            ("t_low_us", self.t_low_us, &mut p.t_low),
            ("t_high_us", self.t_high_us, &mut p.t_high),
            ("min_rtt_us", self.min_rtt_us, &mut p.min_rtt),
        ] {
            if let Some(x) = v {
                *f = c.us(&k(name), x)?;
            }
        }
        for (name, v, f) in [
            ("rai_mbps", self.rai_mbps, &mut p.rai_bps),
            ("rhai_mbps", self.rhai_mbps, &mut p.rhai_bps),
            ("min_rate_mbps", self.min_rate_mbps, &mut p.min_rate_bps),
        ] {
            if let Some(x) = v {
                *f = c.mbps(&k(name), x)?;
            }
        }
        p.validate().map_err(|m| c.err("transport.timely", m))?;
        Ok(p)
    }
}

impl DctcpOverrides {
    pub fn params(&self, c: Check) -> Result<DctcpParams, ScenarioError> {
        let mut p = DctcpParams::ns3(MEASURED);
        let k = |n: &str| format!("transport.dctcp.{n}");
        if let Some(x) = self.g {
            p.g = c.fraction(&k("g"), x)?;
        }
        if let Some(x) = self.rai_mbps {
            p.rai_bps = c.mbps(&k("rai_mbps"), x)?;
        }
        if let Some(x) = self.min_rate_mbps {
            p.min_rate_bps = c.mbps(&k("min_rate_mbps"), x)?;
        }
        if let Some(b) = self.window_bytes {
            if b == 0 {
                return Err(c.err(k("window_bytes"), "must be positive (window = false: none)"));
            }
            p.window_bytes = b;
        }
        if self.window == Some(false) {
            p.window_bytes = 0;
        }
        p.validate().map_err(|m| c.err("transport.dctcp", m))?;
        Ok(p)
    }
}

/// Fills in what `cc` takes from the topology and was not given: HPCC's
/// window and base RTT, DCTCP's window. `probe` builds the network (its
/// routes decide the base RTTs); called only if something is measured.
pub fn measure(
    cc: &mut CcConfig,
    hpcc: &HpccOverrides,
    dctcp: &DctcpOverrides,
    probe: impl FnOnce() -> Result<Network, ScenarioError>,
) -> Result<(), ScenarioError> {
    let wanted = match cc {
        CcConfig::Hpcc(_) => hpcc.window_bytes.is_none() || hpcc.base_rtt_us.is_none(),
        CcConfig::Dctcp(_) => dctcp.window != Some(false) && dctcp.window_bytes.is_none(),
        _ => false,
    };
    if !wanted {
        return Ok(());
    }
    let (rtt, bdp) = largest_rtt_and_bdp(&probe()?);
    match cc {
        CcConfig::Hpcc(p) => {
            if hpcc.window_bytes.is_none() {
                p.window_bytes = bdp;
            }
            if hpcc.base_rtt_us.is_none() {
                p.base_rtt = rtt;
            }
        }
        CcConfig::Dctcp(p) => p.window_bytes = bdp,
        _ => {}
    }
    Ok(())
}

/// The largest base RTT from host 0 and the bytes host 0's link sends in
/// it (as IRN's automatic BDP cap; ns-3 takes the largest over all pairs,
/// the same in the symmetric topologies).
pub fn largest_rtt_and_bdp(net: &Network) -> (engine::Time, u64) {
    let rtt = (0..net.host_count())
        .map(|d| net.base_rtt(0, d))
        .max()
        .unwrap_or(0)
        .max(1);
    let bdp = net.host_rate_bps(0) as u128 * rtt as u128 / engine::time::SEC as u128 / 8;
    (rtt, (bdp as u64).max(1))
}
