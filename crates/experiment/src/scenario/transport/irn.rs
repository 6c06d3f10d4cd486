//! `[transport.irn]`: single IRN values replacing the defaults
//! (data/params/irn_hpcc.toml: RTO_low 100 us, RTO_high 320 us, N = 3,
//! BDP cap from the topology), checked and turned into an [`IrnConfig`].

use super::super::check::{Check, ScenarioError};
use fabric::Network;
use serde::Deserialize;
use transport::IrnConfig;

#[derive(Debug, Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct IrnOverrides {
    pub rto_low_us: Option<f64>,
    pub rto_high_us: Option<f64>,
    pub n_packets: Option<u32>,
    /// The BDP cap in payload bytes, or "auto" (the default): the largest
    /// base RTT from host 0 times the host link rate.
    pub bdp_bytes: Option<BdpBytes>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BdpBytes {
    Auto,
    Bytes(u64),
}

impl<'de> Deserialize<'de> for BdpBytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = BdpBytes;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a positive byte count or \"auto\"")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<BdpBytes, E> {
                match u64::try_from(v) {
                    Ok(b) if b > 0 => Ok(BdpBytes::Bytes(b)),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Signed(v), &self)),
                }
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<BdpBytes, E> {
                self.visit_i64(i64::try_from(v).unwrap_or(i64::MAX))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<BdpBytes, E> {
                match v {
                    "auto" => Ok(BdpBytes::Auto),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

impl IrnOverrides {
    /// Whether the BDP cap is measured from the built topology.
    pub fn auto_bdp(&self) -> bool {
        self.bdp_bytes.is_none_or(|b| b == BdpBytes::Auto)
    }

    /// IRN parameters; an "auto" BDP cap is left at the default here and
    /// set by [`IrnOverrides::set_auto_bdp`] from the built topology.
    pub fn config(&self, mtu: u32, c: Check) -> Result<IrnConfig, ScenarioError> {
        let mut cfg = IrnConfig::default();
        if let Some(v) = self.rto_low_us {
            cfg.rto_low = c.us_positive("transport.irn.rto_low_us", v)?;
        }
        if let Some(v) = self.rto_high_us {
            cfg.rto_high = c.us_positive("transport.irn.rto_high_us", v)?;
        }
        if let Some(v) = self.n_packets {
            cfg.n_packets = v;
        }
        if let Some(BdpBytes::Bytes(b)) = self.bdp_bytes {
            cfg.bdp_packets = bdp_packets(b, mtu);
        }
        cfg.validate().map_err(|m| c.err("transport.irn", m))?;
        Ok(cfg)
    }

    /// Sets the automatic BDP cap measured on `probe`, the network built once.
    pub fn set_auto_bdp(
        cfg: &mut IrnConfig,
        probe: &Network,
        mtu: u32,
        c: Check,
    ) -> Result<(), ScenarioError> {
        cfg.bdp_packets = bdp_packets(super::cc::largest_rtt_and_bdp(probe).1, mtu);
        cfg.validate()
            .map_err(|m| c.err("transport.irn.bdp_bytes", m))
    }
}

/// The BDP cap in packets of `mtu` payload bytes (at least one).
pub(super) fn bdp_packets(bytes: u64, mtu: u32) -> u32 {
    u32::try_from(bytes.div_ceil(mtu.max(1) as u64).max(1)).unwrap_or(u32::MAX)
}
