//! IRN's parameters ([`IrnConfig`]). Plain data: it imports nothing from
//! the crate, so that the API types (`crate::api`) can hold it.

use engine::time::US;
use engine::Time;

/// IRN parameters of one QP.
///
/// Defaults: RTO_low 100 us, RTO_high 320 us, N = 3 (the values ConWeave's
/// ns-3 runs IRN with, matching the commonly cited paper values), BDP cap
/// 100 packets (ConWeave/TLT's `IrnBdp` attribute default, 100 000 B at
/// 1000-byte payloads). See `data/params/irn_hpcc.toml`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IrnConfig {
    /// Retransmission timeout while fewer than `n_packets` are in flight.
    pub rto_low: Time,
    /// Retransmission timeout otherwise.
    pub rto_high: Time,
    pub n_packets: u32,
    /// BDP cap: packets in flight per QP and direction, and the size of the
    /// receiver's bitmaps.
    pub bdp_packets: u32,
}

impl Default for IrnConfig {
    fn default() -> Self {
        IrnConfig {
            rto_low: 100 * US,
            rto_high: 320 * US,
            n_packets: 3,
            bdp_packets: 100,
        }
    }
}

/// Largest BDP cap accepted (a bitmap of 2^20 packets is already 1 GB in
/// flight at 1000-byte payloads).
pub const MAX_BDP_PACKETS: u32 = 1 << 20;

impl IrnConfig {
    pub fn validate(&self) -> Result<(), String> {
        if self.rto_low == 0 {
            return Err("irn rto_low must be positive".into());
        }
        if self.rto_high < self.rto_low {
            return Err("irn rto_high must be at least rto_low".into());
        }
        if self.n_packets == 0 {
            return Err("irn n_packets must be at least 1".into());
        }
        if self.bdp_packets == 0 || self.bdp_packets > MAX_BDP_PACKETS {
            return Err(format!(
                "irn bdp_packets must be in 1..={MAX_BDP_PACKETS}, got {}",
                self.bdp_packets
            ));
        }
        Ok(())
    }
}
