//! `[transport.eunomia]` and `[transport.static_bitmap]`: the bitmap
//! ordering layers' parameters (defaults: `transport::EunomiaConfig`'s,
//! the paper's FPGA, and `transport::StaticBitmapConfig`'s, §4's 256
//! bits), checked and put into the [`OrderingKind`] that `ordering`
//! names.

use super::super::check::{Check, ScenarioError};
use serde::Deserialize;
use transport::{EunomiaConfig, OrderingKind, StaticBitmapConfig};

#[derive(Debug, Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct EunomiaOverrides {
    /// Bits of one bitmap block (a multiple of 8).
    pub block_bits: Option<u32>,
    /// The most bits one connection's bitmap may reach.
    pub cap_bits: Option<u32>,
    /// Bytes of each NIC's memory controller.
    pub memory_bytes: Option<u32>,
}

#[derive(Debug, Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct StaticBitmapOverrides {
    /// Bits of every connection's bitmap.
    pub bits: Option<u32>,
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
        }),
        OrderingKind::StaticBitmap(d) => OrderingKind::StaticBitmap(StaticBitmapConfig {
            bits: fixed.bits.unwrap_or(d.bits),
        }),
        k => k,
    };
    kind.validate()
        .map_err(|e| c.err(format!("transport.{}.{}", kind.name(), e.key), e.message))?;
    Ok(kind)
}
