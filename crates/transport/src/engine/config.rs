//! [`Engine`]: the transport engine of a QP (its loss recovery and
//! receive-side ordering: go-back-N, IRN, MP-RDMA), one variant per engine
//! with its configuration, chosen per NIC ([`crate::NicConfig::engine`])
//! or per QP ([`crate::Nic::create_qp_with`]); and [`StateBytes`], the NIC
//! state each keeps per QP. (The per-QP runtime state of an engine is
//! `crate::engine::EngineState`.)
//!
//! Plain configuration: it uses only the engines' `config` files (and
//! IRN's plain `headers`), so that the API types (`crate::api`) can hold it.

use crate::engine::irn::config::IrnConfig;
use crate::engine::irn::headers::MAX_EXTRA_HEADER_BYTES;
use crate::engine::mprdma::config::{state_bytes, MpRdmaConfig};
use crate::engine::uet::config::UetConfig;
use crate::packet::Verb;

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Engine {
    /// RoCEv2 RC: in-order reception, go-back-N, one RTO.
    #[default]
    GoBackN,
    /// IRN: selective repeat, BDP flow control, out-of-order placement.
    Irn(IrnConfig),
    /// MP-RDMA: many virtual paths (UDP source ports), one ECN window,
    /// out-of-order placement tracked by a 2-bit bitmap (see
    /// [`crate::mprdma`]). WRITE and SEND only.
    MpRdma(MpRdmaConfig),
    /// The Ultra Ethernet Transport's PDS (see [`crate::engine::uet`]):
    /// RUD or ROD delivery, coalesced ACKs with a SACK bitmap.
    Uet(UetConfig),
}

/// NIC memory one QP needs for its engine (both halves: the
/// requester and the responder of the QP), in the spirit of Eunomia's
/// Table 1 (bitmaps vs other per-connection variables). Counted from this
/// implementation's state, not from a hardware design: PSNs and sequence
/// numbers as 3-byte (24-bit, as in the BTH) fields, timers as 4 bytes,
/// bitmaps at one bit per tracked packet. Queues of WQEs, which RoCE NICs
/// keep anyway, are not counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StateBytes {
    pub bitmap_bytes: u64,
    pub other_bytes: u64,
}

/// Bytes of one PSN or sequence-number field.
const PSN: u64 = 3;
/// Bytes of one timer deadline.
const TIMER: u64 = 4;

impl Engine {
    pub fn validate(&self) -> Result<(), String> {
        match self {
            Engine::GoBackN => Ok(()),
            Engine::Irn(c) => c.validate(),
            Engine::MpRdma(c) => c.validate().map_err(|e| format!("mprdma: {e}")),
            Engine::Uet(c) => c.validate(),
        }
    }

    /// Whether its QPs carry work requests of `verb` (MP-RDMA: WRITE and
    /// SEND only); `crate::check_work_request` asks.
    pub fn carries(&self, verb: Verb) -> bool {
        match self {
            Engine::GoBackN | Engine::Irn(_) | Engine::Uet(_) => true,
            Engine::MpRdma(_) => matches!(verb, Verb::Write | Verb::Send),
        }
    }

    /// Whether it places received packets in order itself (MP-RDMA's
    /// bitmap), so that no ordering layer (`crate::order`) may sit under
    /// it: it answers no `expected_request_psn`. UET too: RUD places every
    /// packet as it comes, ROD takes them only in order.
    pub fn orders_itself(&self) -> bool {
        matches!(self, Engine::MpRdma(_) | Engine::Uet(_))
    }

    /// Whether its responder answers request packets one by one through
    /// the shared halves (`crate::rc::halves`: go-back-N and IRN), whose
    /// cumulative ACKs the NIC may coalesce by time (`crate::held`).
    pub fn acks_each_packet(&self) -> bool {
        matches!(self, Engine::GoBackN | Engine::Irn(_))
    }

    /// Whether it keeps its own window control (MP-RDMA's per-ACK ECN
    /// window): a congestion control that reads ACKs
    /// ([`crate::CcConfig::reads_acks`]) cannot run under it, as its
    /// ACKs are per path and not the cumulative ones such a control reads.
    pub fn keeps_own_window(&self) -> bool {
        matches!(self, Engine::MpRdma(_))
    }

    /// Whether it honours a work request's synchronise flag (MP-RDMA):
    /// the NIC counts such messages, and its gate may need a timer after
    /// a post. The others deliver in order anyway.
    pub fn honours_sync(&self) -> bool {
        matches!(self, Engine::MpRdma(_))
    }

    /// Whether it spreads a QP's packets over many paths (UDP source
    /// ports) itself (MP-RDMA's virtual paths, UET's entropy values): the
    /// real datapath then gives the QP more than one socket.
    pub fn multipath(&self) -> bool {
        matches!(self, Engine::MpRdma(_) | Engine::Uet(_))
    }

    /// The most header bytes its data packets carry beyond the NIC's
    /// `header_bytes` (IRN's §5 fields: `crate::engine::irn::headers`),
    /// so that the fabric's largest frame counts them.
    pub fn extra_header_bytes(&self) -> u32 {
        match self {
            Engine::Irn(_) => MAX_EXTRA_HEADER_BYTES,
            Engine::GoBackN | Engine::MpRdma(_) | Engine::Uet(_) => 0,
        }
    }

    pub fn state_bytes(&self) -> StateBytes {
        match self {
            // Requester: snd_una, snd_nxt, snd_max, acked, the READ re-issue
            // marker, RTO; responder: ePSN, READ response PSN high mark,
            // NAK-sent flag and ACK coalescing counter (1 byte each).
            Engine::GoBackN => StateBytes {
                bitmap_bytes: 0,
                other_bytes: 7 * PSN + TIMER + 2,
            },
            Engine::Irn(c) => irn_state_bytes(c),
            // IRN's state over the window, plus the ACK coalescing counter.
            Engine::Uet(c) => {
                let mut b = irn_state_bytes(&c.windows());
                b.other_bytes += 1;
                b
            }
            // Go-back-N's RC state plus what MP-RDMA adds
            // (`crate::engine::mprdma::state_fields`, hardware widths; 2 bits per
            // bitmap slot).
            Engine::MpRdma(c) => {
                let bitmap = (2 * c.l_slots as u64).div_ceil(8);
                let extra = state_bytes(c) as u64;
                StateBytes {
                    bitmap_bytes: bitmap,
                    other_bytes: 7 * PSN + TIMER + 2 + extra - bitmap,
                }
            }
        }
    }
}

/// IRN's state (as UET's, which runs on its windows). Per PSN space
/// (request, response): sender una, nxt, recovery point, retransmit
/// pointer, lost-below mark, RTO and the SACK bitmap; receiver ePSN and
/// arrived bitmap. The responder adds the "last" bitmap (the 2-bitmap)
/// and the receive-WQE and read sequence counters; the requester its two
/// WQE SN counters.
fn irn_state_bytes(c: &IrnConfig) -> StateBytes {
    let bits = c.bdp_packets as u64;
    StateBytes {
        bitmap_bytes: (5 * bits).div_ceil(8),
        other_bytes: 2 * (5 * PSN + TIMER + PSN) + 4 * PSN,
    }
}
