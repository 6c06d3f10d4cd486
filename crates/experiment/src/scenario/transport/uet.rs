//! `[transport.uet]`: the Ultra Ethernet Transport's values replacing the
//! defaults (RUD, an ACK every 4 packets, RTO 100 us, the window's cap
//! from the topology as IRN's, oblivious spraying over 64 entropy
//! values), checked and turned into a [`UetConfig`].

use super::super::check::{Check, ScenarioError};
use super::irn::{bdp_packets, BdpBytes};
use fabric::Network;
use serde::Deserialize;
use transport::{EvPolicy, UetConfig, UetMode};

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum UetModeCfg {
    #[default]
    Rud,
    Rod,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum EvPolicyCfg {
    #[default]
    Oblivious,
    Reps,
    Bitmap,
}

#[derive(Debug, Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct UetOverrides {
    /// PDS delivery mode: "rud" (reliable unordered, the default) or
    /// "rod" (reliable ordered).
    pub mode: Option<UetModeCfg>,
    /// The receiver's ACK coalescing: one ACK every this many packets.
    pub ack_every: Option<u32>,
    pub rto_us: Option<f64>,
    /// Bytes in flight per connection (the window's cap and the
    /// receiver's bitmap), or "auto" (the default): the largest base RTT
    /// from host 0 times the host link rate, as IRN's `bdp_bytes`.
    pub bdp_bytes: Option<BdpBytes>,
    /// How each data packet's entropy value (UDP source port) is chosen:
    /// "oblivious" (the default), "reps" or "bitmap".
    pub ev_policy: Option<EvPolicyCfg>,
    /// Entropy values per connection (default 64; ROD: must be 1).
    pub evs: Option<u16>,
}

impl UetOverrides {
    /// Whether the window's cap is measured from the built topology.
    pub fn auto_bdp(&self) -> bool {
        self.bdp_bytes.is_none_or(|b| b == BdpBytes::Auto)
    }

    /// UET's parameters; an "auto" cap is left at the default here and set
    /// by [`UetOverrides::set_auto_bdp`] from the built topology.
    pub fn config(&self, mtu: u32, c: Check) -> Result<UetConfig, ScenarioError> {
        let mut cfg = UetConfig::default();
        if let Some(m) = self.mode {
            cfg.mode = match m {
                UetModeCfg::Rud => UetMode::Rud,
                UetModeCfg::Rod => UetMode::Rod,
            };
        }
        if let Some(p) = self.ev_policy {
            cfg.ev_policy = match p {
                EvPolicyCfg::Oblivious => EvPolicy::Oblivious,
                EvPolicyCfg::Reps => EvPolicy::Reps,
                EvPolicyCfg::Bitmap => EvPolicy::Bitmap,
            };
        }
        if let Some(v) = self.evs {
            cfg.evs = v;
        }
        if let Some(v) = self.ack_every {
            cfg.ack_every = v;
        }
        if let Some(v) = self.rto_us {
            cfg.rto = c.us_positive("transport.uet.rto_us", v)?;
        }
        if let Some(BdpBytes::Bytes(b)) = self.bdp_bytes {
            cfg.max_in_flight = bdp_packets(b, mtu);
        }
        validate(&cfg, c)?;
        Ok(cfg)
    }

    /// Sets the automatic cap measured on `probe`, the network built once.
    pub fn set_auto_bdp(
        cfg: &mut UetConfig,
        probe: &Network,
        mtu: u32,
        c: Check,
    ) -> Result<(), ScenarioError> {
        // Never below the ACK coalescing count, which the cap must hold.
        let bdp = bdp_packets(super::cc::largest_rtt_and_bdp(probe).1, mtu);
        cfg.max_in_flight = bdp.max(cfg.ack_every);
        validate(cfg, c)
    }
}

/// The checks of [`UetConfig::validate`], each naming its key.
fn validate(cfg: &UetConfig, c: Check) -> Result<(), ScenarioError> {
    cfg.validate().map_err(|m| {
        let key = if m.contains("ack_every") {
            "transport.uet.ack_every"
        } else if m.contains("max_in_flight") {
            "transport.uet.bdp_bytes"
        } else if m.contains("evs") {
            "transport.uet.evs"
        } else {
            "transport.uet"
        };
        c.err(key, m)
    })
}
