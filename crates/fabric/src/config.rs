//! Fabric configuration: switch buffer and PFC, ECN marking per link speed,
//! the load balancer, the egress scheduling, deflection, the switch model and RCM, the NIC template every host starts from and its QP-context cache, and failure
//! handling. Plain data: touches nothing.

use crate::host::qp_cache::QpCacheConfig;
use crate::switch::lb::{EcmpHash, LoadBalancer};
use crate::switch::mmu::MmuConfig;
use crate::switch::queues::voq::SwitchModel;
use crate::switch::rcm::RcmParams;
use crate::switch::{Deflection, Scheduling, Trimming};
use transport::NicConfig;

/// RED-style ECN marking at egress: no mark below `kmin` bytes queued,
/// always above `kmax`, linearly rising probability up to `pmax` between.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EcnSetting {
    /// Applies to ports of this rate and faster (up to the next entry).
    pub rate_bps: u64,
    pub kmin: u64,
    pub kmax: u64,
    pub pmax: f64,
}

/// Which QPs the hosts' flows use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QpSharing {
    /// One QP pair per flow (what applications do with verbs).
    #[default]
    PerFlow,
    /// One QP pair per pair of hosts (and engine), shared by every flow
    /// between them: RDMAvisor's multiplexing. Their messages go in the
    /// QP's order.
    PerPeer,
}

#[derive(Clone, Debug)]
pub struct FabricConfig {
    pub seed: u64,
    pub mmu: MmuConfig,
    /// PFC headroom per switch port; None sizes it from the port's link
    /// (see `mmu::headroom_for`).
    pub headroom: Option<u64>,
    pub ecn_enabled: bool,
    /// Sorted by rate; a port uses the entry with the largest rate not above
    /// its own (or the first entry).
    pub ecn: Vec<EcnSetting>,
    /// How switches choose among equal-cost next hops.
    pub load_balancer: LoadBalancer,
    /// ECMP's hash (`ecmp_hash = "ns3"`: the HPCC ns-3 simulator's, for
    /// topologies imported from its files).
    pub ecmp_hash: EcmpHash,
    /// How switch ports order the queued packets of the NICs' data class.
    pub scheduling: Scheduling,
    /// What a lossy switch does with a packet its full queue refuses.
    pub deflection: Deflection,
    /// Packet trimming at lossy switches (`switch/trim.rs`), off when None.
    pub trimming: Option<Trimming>,
    /// The switch architecture of the data class (`switch/queues/voq/`).
    pub model: SwitchModel,
    /// RCM (`switch/rcm/`; needs the VOQ model), off when None.
    pub rcm: Option<RcmParams>,
    pub nic: NicConfig,
    /// Header bytes per packet the ideal FCT counts (HPCC ns-3's, which
    /// counts 48 whatever its packets carry); None: the data packet's own
    /// less a congestion control's header ([`FabricConfig::ideal_headers`]).
    pub ideal_header_bytes: Option<u32>,
    /// The most header bytes an engine of the run adds to `nic.header_bytes`
    /// (`transport::Engine::extra_header_bytes`: IRN's) when QPs run
    /// engines other than `nic.engine`; the scenario sets it from every
    /// engine its flows use. 0 by default.
    pub engine_header_bytes: u32,
    /// The NICs' QP-context cache (`host/qp_cache.rs`); off by default.
    pub qp_cache: QpCacheConfig,
    pub qp_sharing: QpSharing,
    pub pfc_frame_bytes: u32,
    /// Recompute shortest paths when a link fails or returns (a routing
    /// protocol that converges at once). Without it, packets hashed onto a
    /// dead link are dropped.
    pub reroute_on_failure: bool,
}

impl Default for FabricConfig {
    fn default() -> Self {
        FabricConfig {
            seed: 1,
            mmu: MmuConfig {
                buffer: 9 * 1024 * 1024,
                pfc: true,
                alpha: 1.0 / 8.0,
                reserve: 4096,
                resume_offset: 3072,
                egress_alpha: 1.0,
            },
            headroom: None,
            ecn_enabled: true,
            ecn: vec![EcnSetting {
                rate_bps: 0,
                kmin: 100_000,
                kmax: 400_000,
                pmax: 0.2,
            }],
            load_balancer: LoadBalancer::Ecmp,
            ecmp_hash: EcmpHash::Rdmalab,
            scheduling: Scheduling::Fifo,
            deflection: Deflection::None,
            trimming: None,
            model: SwitchModel::SharedBuffer,
            rcm: None,
            nic: NicConfig::default(),
            ideal_header_bytes: None,
            engine_header_bytes: 0,
            qp_cache: QpCacheConfig::default(),
            qp_sharing: QpSharing::PerFlow,
            pfc_frame_bytes: 64,
            reroute_on_failure: true,
        }
    }
}

impl FabricConfig {
    /// The largest data frame a NIC sends: a full payload, the NIC's
    /// headers and the most its engines add (PFC headroom and the
    /// window budget size from it).
    pub fn max_frame(&self) -> u64 {
        let extra = self
            .engine_header_bytes
            .max(self.nic.engine.extra_header_bytes());
        self.nic.mtu as u64 + self.nic.header_bytes as u64 + extra as u64
    }

    /// Header bytes per packet in the ideal FCT (`FlowResult::ideal`).
    pub fn ideal_headers(&self) -> u32 {
        self.ideal_header_bytes.unwrap_or(
            self.nic
                .header_bytes
                .saturating_sub(self.nic.cc.wire_bytes()),
        )
    }

    pub fn ecn_for(&self, rate_bps: u64) -> Option<EcnSetting> {
        if !self.ecn_enabled {
            return None;
        }
        let mut best = self.ecn.first().copied()?;
        for e in &self.ecn {
            if e.rate_bps <= rate_bps {
                best = *e;
            }
        }
        Some(best)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use transport::{Engine, IrnConfig};

    #[test]
    fn the_largest_frame_counts_the_header_bytes_irn_adds() {
        let mut cfg = FabricConfig::default();
        assert_eq!(cfg.max_frame(), 1000 + 48);
        // A run whose default engine is go-back-N but some flows run IRN.
        cfg.engine_header_bytes = Engine::Irn(IrnConfig::default()).extra_header_bytes();
        assert_eq!(cfg.max_frame(), 1000 + 48 + 20);
        cfg.engine_header_bytes = 0;
        cfg.nic.engine = Engine::Irn(IrnConfig::default());
        assert_eq!(cfg.max_frame(), 1000 + 48 + 20);
    }
}
