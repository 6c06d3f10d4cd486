//! `[transport.uet]`: the Ultra Ethernet Transport's values replacing the
//! defaults (RUD, an ACK every 4 packets, RTO 100 us, the window's cap
//! from the topology as IRN's, oblivious spraying over 64 entropy
//! values, NSCC), checked and turned into a [`UetConfig`]; with
//! `[transport.uet.nscc]`, NSCC's values (its base RTT measured from the
//! topology by default).

use super::super::check::{Check, ScenarioError};
use super::irn::{bdp_packets, BdpBytes};
use fabric::Network;
use serde::Deserialize;
use std::num::NonZeroU32;
use transport::uet::nscc::{NsccParams, MAX_WND_BDPS};
use transport::{EvPolicy, UetCc, UetConfig, UetMode};

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

/// `cc`: the sender's window control.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum UetCcCfg {
    #[default]
    Nscc,
    None,
}

/// `[transport.uet.nscc]`: NSCC's values replacing htsim's.
#[derive(Debug, Deserialize, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NsccOverrides {
    /// The network's base RTT; default: the topology's largest.
    pub base_rtt_us: Option<f64>,
    /// Default: 0.75 base RTT.
    pub target_qdelay_us: Option<f64>,
    pub qa_gate: Option<u8>,
    pub quick_adapt: Option<bool>,
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
    /// The sender's window control: "nscc" (the default) or "none".
    pub cc: Option<UetCcCfg>,
    pub nscc: Option<NsccOverrides>,
}

impl UetOverrides {
    /// Whether the window's cap is measured from the built topology.
    pub fn auto_bdp(&self) -> bool {
        self.bdp_bytes.is_none_or(|b| b == BdpBytes::Auto)
    }

    /// Whether NSCC runs.
    pub fn nscc_on(&self) -> bool {
        self.cc.unwrap_or_default() == UetCcCfg::Nscc
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
        if !self.nscc_on() {
            cfg.cc = UetCc::None;
        }
        validate(&cfg, c)?;
        Ok(cfg)
    }

    /// NSCC's parameters (the NIC's), each checked by key; an automatic
    /// base RTT is left at the default here and set by
    /// [`UetOverrides::measure_nscc`].
    pub fn nscc_params(&self, c: Check) -> Result<NsccParams, ScenarioError> {
        let mut p = NsccParams::default();
        let Some(o) = &self.nscc else {
            return Ok(p);
        };
        let key = |k: &str| format!("transport.uet.nscc.{k}");
        if let Some(v) = o.base_rtt_us {
            p.base_rtt_ns = ns_u32(c.us_positive(&key("base_rtt_us"), v)?);
        }
        if let Some(v) = o.target_qdelay_us {
            let t = ns_u32(c.us_positive(&key("target_qdelay_us"), v)?);
            p.target_qdelay_ns = Some(
                NonZeroU32::new(t)
                    .ok_or_else(|| c.err(key("target_qdelay_us"), "at least 1 ns"))?,
            );
        }
        p.qa_gate = o.qa_gate.unwrap_or(p.qa_gate);
        p.quick_adapt = o.quick_adapt.unwrap_or(p.quick_adapt);
        p.validate().map_err(|m| nscc_error(m, c))?;
        Ok(p)
    }

    /// Whether NSCC's base RTT is measured from the built topology.
    pub fn auto_base_rtt(&self) -> bool {
        self.nscc.as_ref().is_none_or(|n| n.base_rtt_us.is_none())
    }

    /// Sets NSCC's automatic base RTT, the largest of `probe`.
    pub fn measure_nscc(&self, p: &mut NsccParams, probe: &Network) {
        if self.auto_base_rtt() {
            p.base_rtt_ns = ns_u32(super::cc::largest_rtt_and_bdp(probe).0);
        }
    }

    /// Sets the automatic cap measured on `probe`, the network built once:
    /// one BDP, or under NSCC its largest window, 1.5 BDP (htsim's
    /// `_maxwnd`).
    pub fn set_auto_bdp(
        cfg: &mut UetConfig,
        probe: &Network,
        mtu: u32,
        c: Check,
    ) -> Result<(), ScenarioError> {
        let bdp = super::cc::largest_rtt_and_bdp(probe).1;
        let bdps = if cfg.cc == UetCc::Nscc {
            MAX_WND_BDPS
        } else {
            1.0
        };
        // Never below the ACK coalescing count, which the cap must hold.
        let bytes = (bdp as f64 * bdps).ceil() as u64;
        cfg.max_in_flight = bdp_packets(bytes, mtu).max(cfg.ack_every);
        validate(cfg, c)
    }
}

/// `t` in nanoseconds, saturated (NSCC's check refuses more than 1 s).
fn ns_u32(t: engine::Time) -> u32 {
    u32::try_from(t / engine::time::NS).unwrap_or(u32::MAX)
}

/// NSCC's check's message under its key (`uet nscc.<key> ...`).
fn nscc_error(m: String, c: Check) -> ScenarioError {
    let k = m
        .strip_prefix("uet nscc.")
        .and_then(|r| r.split(' ').next());
    c.err(format!("transport.uet.nscc.{}", k.unwrap_or("")), m)
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
