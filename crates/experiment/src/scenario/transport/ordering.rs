//! `[transport.eunomia]` and `[transport.static_bitmap]`: the bitmap
//! ordering layers' parameters (defaults: `transport::EunomiaConfig`'s,
//! the paper's FPGA, and `transport::StaticBitmapConfig`'s, §4's 256
//! bits), checked and put into the [`OrderingKind`] that `ordering`
//! names.

use super::super::check::{Check, ScenarioError};
use serde::Deserialize;
use transport::{EunomiaConfig, LastPacket, OrderingKind, StaticBitmapConfig};

#[derive(Debug, Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct EunomiaOverrides {
    /// Bits of one bitmap block (a multiple of 8).
    pub block_bits: Option<u32>,
    /// The most bits one connection's bitmap may reach.
    pub cap_bits: Option<u32>,
    /// Bytes of each NIC's memory controller.
    pub memory_bytes: Option<u32>,
    /// Where a WRITE's last packet waits (`transport::LastPacket::NAMES`).
    pub last_packet: Option<String>,
    /// The sender's timeouts under go-back-N ([`TIMEOUTS`]): "transport"
    /// (`transport.rto_us`, the default) or "irn" (§3.2.3: IRN's RTO_low
    /// while fewer than N packets are in flight, else RTO_high, from
    /// `[transport.irn]`).
    pub timeouts: Option<String>,
}

/// `[transport.eunomia] timeouts`' choices.
pub const TIMEOUTS: [&str; 2] = ["transport", "irn"];

impl EunomiaOverrides {
    /// Whether go-back-N's sender runs IRN's two timeouts
    /// (`timeouts = "irn"`); an unknown choice names the key.
    pub fn irn_timeouts(&self, c: Check) -> Result<bool, ScenarioError> {
        match self.timeouts.as_deref() {
            None | Some("transport") => Ok(false),
            Some("irn") => Ok(true),
            Some(other) => Err(c.err(
                "transport.eunomia.timeouts",
                format!(
                    "unknown choice \"{other}\"; accepted: {}",
                    TIMEOUTS.join(", ")
                ),
            )),
        }
    }
}

#[derive(Debug, Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct StaticBitmapOverrides {
    /// Bits of every connection's bitmap.
    pub bits: Option<u32>,
    /// As `EunomiaOverrides::last_packet`.
    pub last_packet: Option<String>,
}

/// `kind` (from `ordering`) with the parameters of its table; an error
/// names the key.
pub fn with_parameters(
    kind: OrderingKind,
    eunomia: &EunomiaOverrides,
    fixed: &StaticBitmapOverrides,
    c: Check,
) -> Result<OrderingKind, ScenarioError> {
    let kind = match kind {
        OrderingKind::Eunomia(d) => OrderingKind::Eunomia(EunomiaConfig {
            block_bits: eunomia.block_bits.unwrap_or(d.block_bits),
            cap_bits: eunomia.cap_bits.unwrap_or(d.cap_bits),
            memory_bytes: eunomia.memory_bytes.unwrap_or(d.memory_bytes),
            last_packet: last_packet(&eunomia.last_packet, d.last_packet, "eunomia", c)?,
        }),
        OrderingKind::StaticBitmap(d) => OrderingKind::StaticBitmap(StaticBitmapConfig {
            bits: fixed.bits.unwrap_or(d.bits),
            last_packet: last_packet(&fixed.last_packet, d.last_packet, "static_bitmap", c)?,
        }),
        k => k,
    };
    kind.validate()
        .map_err(|e| c.err(format!("transport.{}.{}", kind.name(), e.key), e.message))?;
    Ok(kind)
}

/// `[transport.<layer>] last_packet`, or `default` when not given.
fn last_packet(
    name: &Option<String>,
    default: LastPacket,
    layer: &str,
    c: Check,
) -> Result<LastPacket, ScenarioError> {
    let Some(name) = name else {
        return Ok(default);
    };
    LastPacket::from_name(name).ok_or_else(|| {
        c.err(
            format!("transport.{layer}.last_packet"),
            format!(
                "unknown choice \"{name}\"; accepted: {}",
                LastPacket::NAMES.join(", ")
            ),
        )
    })
}
