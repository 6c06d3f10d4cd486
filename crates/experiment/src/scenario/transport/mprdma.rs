//! `[transport.mprdma]`: single MP-RDMA values replacing the defaults
//! (Δ 32, L 64, IW 64, 256 VPs, α 1, p 0.01, delayed synchronise, the
//! guarded sender),
//! checked and turned into an [`MpRdmaConfig`].

use super::super::check::{Check, ScenarioError};
use serde::Deserialize;
use transport::{MpRdmaConfig, SenderMode, SyncMode};

/// The largest initial window, in packets (as large as the largest
/// receiver bitmap MP-RDMA accepts).
pub const MAX_INITIAL_WINDOW: u32 = 1 << 20;

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum SyncModeCfg {
    #[default]
    Delayed,
    StopAndWait,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum SenderCfg {
    #[default]
    Guarded,
    Paper,
}

#[derive(Debug, Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct MpRdmaOverrides {
    pub delta: Option<u32>,
    pub l_slots: Option<u32>,
    pub initial_window: Option<u32>,
    pub num_vps: Option<u16>,
    pub alpha: Option<f64>,
    pub probe_p: Option<f64>,
    pub sync_mode: Option<SyncModeCfg>,
    pub sender: Option<SenderCfg>,
}

impl MpRdmaOverrides {
    /// The MP-RDMA parameters, checked.
    pub fn config(&self, c: Check) -> Result<MpRdmaConfig, ScenarioError> {
        if let Some(a) = self.alpha {
            c.non_negative("transport.mprdma.alpha", a)?;
        }
        if let Some(p) = self.probe_p {
            c.fraction("transport.mprdma.probe_p", p)?;
        }
        if let Some(w) = self.initial_window {
            if w > MAX_INITIAL_WINDOW {
                return Err(c.err(
                    "transport.mprdma.initial_window",
                    format!("at most {MAX_INITIAL_WINDOW} packets, got {w}"),
                ));
            }
        }
        let d = MpRdmaConfig::default();
        let m = MpRdmaConfig {
            delta: self.delta.unwrap_or(d.delta),
            l_slots: self.l_slots.unwrap_or(d.l_slots),
            initial_window: self.initial_window.unwrap_or(d.initial_window),
            num_vps: self.num_vps.unwrap_or(d.num_vps),
            alpha: self.alpha.unwrap_or(d.alpha),
            probe_p: self.probe_p.unwrap_or(d.probe_p),
            sync_mode: match self.sync_mode.unwrap_or_default() {
                SyncModeCfg::Delayed => SyncMode::Delayed,
                SyncModeCfg::StopAndWait => SyncMode::StopAndWait,
            },
            sender: match self.sender.unwrap_or_default() {
                SenderCfg::Guarded => SenderMode::Guarded,
                SenderCfg::Paper => SenderMode::Paper,
            },
        };
        m.validate().map_err(|e| c.err("transport.mprdma", e))?;
        Ok(m)
    }
}
