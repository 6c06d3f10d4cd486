//! The Ultra Ethernet Transport's parameters ([`UetConfig`]): the PDS
//! delivery mode ([`UetMode`]), ACK coalescing, the retransmission
//! timeout, the packets a connection may have in flight, the choice
//! of entropy values ([`EvPolicy`]) and the sender's window control
//! ([`UetCc`]; NSCC's parameters are the NIC's, `NicConfig::nscc`: every
//! QP holds its engine's configuration, and 12 more bytes here would
//! grow the QPs of every engine by a cache line). Plain data: it imports
//! only IRN's configuration (whose selective-repeat windows UET's PDS
//! runs on), so that the API types (`crate::api`) can hold it.

use crate::engine::irn::config::{IrnConfig, MAX_BDP_PACKETS};
use engine::time::US;
use engine::Time;

/// The PDS delivery mode of a connection (UE 1.0, PDS "RUD" and "ROD").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UetMode {
    /// Reliable unordered delivery: every packet is placed as it arrives;
    /// a message completes when all its packets have arrived.
    #[default]
    Rud,
    /// Reliable ordered delivery: the receiver takes packets only in PSN
    /// order and NACKs the others (the sender resends from the gap), so
    /// bytes are placed in order. It keeps one path: `evs` must be 1.
    Rod,
}

/// How a sender chooses each data packet's entropy value (its UDP source
/// port), as the UEC simulator does (see `crate::engine::uet::entropy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EvPolicy {
    /// Spray over every EV, a round at a time.
    #[default]
    Oblivious,
    /// Recycle EVs whose ACKs came back unmarked (REPS).
    Reps,
    /// Skip EVs penalised by ECN echoes and NACKs.
    Bitmap,
}

/// The sender's window control of a UET connection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UetCc {
    /// NSCC (`crate::engine::uet::nscc`), with the NIC's parameters: the
    /// default, as in the UEC simulator, whose default sender control it
    /// is.
    #[default]
    Nscc,
    /// None: the PSN window (`max_in_flight`) only.
    None,
}

/// The most entropy values per connection (UDP source ports `sport +
/// 0..evs`).
pub const MAX_EVS: u16 = 4096;

/// UET parameters of one QP.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UetConfig {
    pub mode: UetMode,
    /// The receiver acknowledges every `ack_every` data packets (and at
    /// once a message's last packet, a packet that closes a gap, a
    /// duplicate and a CE-marked packet). The spec coalesces ACKs by a
    /// byte or packet count; the UEC simulator (htsim `UecSink`) by 16 KiB,
    /// 4 of its 4 KiB packets, hence the default 4.
    pub ack_every: u32,
    /// Retransmission timeout (one value; the spec leaves it to the
    /// implementation).
    pub rto: Time,
    /// Packets in flight per connection and direction, and the size of
    /// the receiver's tracking bitmap (the spec's maximum outstanding
    /// PSNs).
    pub max_in_flight: u32,
    pub ev_policy: EvPolicy,
    /// Entropy values per connection: data packets leave with source
    /// ports `sport + 0..evs` (default 64, htsim's `-paths`).
    pub evs: u16,
    pub cc: UetCc,
}

impl Default for UetConfig {
    fn default() -> Self {
        UetConfig {
            mode: UetMode::Rud,
            ack_every: 4,
            rto: 100 * US,
            max_in_flight: 100,
            ev_policy: EvPolicy::Oblivious,
            evs: 64,
            cc: UetCc::Nscc,
        }
    }
}

impl UetConfig {
    pub fn validate(&self) -> Result<(), String> {
        if self.rto == 0 {
            return Err("uet rto must be positive".into());
        }
        if self.max_in_flight == 0 || self.max_in_flight > MAX_BDP_PACKETS {
            return Err(format!(
                "uet max_in_flight must be in 1..={MAX_BDP_PACKETS}, got {}",
                self.max_in_flight
            ));
        }
        // The receiver acknowledges only every `ack_every` packets: a
        // window smaller than that would wait for a timeout each time.
        if self.ack_every == 0 || self.ack_every > self.max_in_flight {
            return Err(format!(
                "uet ack_every must be in 1..=max_in_flight ({}), got {}",
                self.max_in_flight, self.ack_every
            ));
        }
        if self.evs == 0 || self.evs > MAX_EVS {
            return Err(format!(
                "uet evs must be in 1..={MAX_EVS}, got {}",
                self.evs
            ));
        }
        // ROD takes packets only in order; sprayed over paths of different
        // delays they would arrive out of order and be dropped.
        if self.mode == UetMode::Rod && self.evs > 1 {
            return Err(format!(
                "uet evs must be 1 with mode = \"rod\" (ordered delivery keeps one path), got {}",
                self.evs
            ));
        }
        Ok(())
    }

    /// The selective-repeat windows' parameters: one timeout whatever is
    /// in flight, the window's cap.
    pub(crate) fn windows(&self) -> IrnConfig {
        IrnConfig {
            rto_low: self.rto,
            rto_high: self.rto,
            n_packets: 1,
            bdp_packets: self.max_in_flight,
        }
    }
}
