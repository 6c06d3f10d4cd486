//! The one builder of data packets (requests and READ/atomic responses)
//! for every engine: an engine says what varies ([`Data`]: which packet
//! of which message), [`data_packet`] fills in what the NIC fixes (wire
//! size, class, send time) and leaves the addresses and the source port
//! to the QP (`Qp::next_packet`). Control packets are `ctx.rs`'s.
//!
//! Uses `crate::api` (the NIC's sizes and class, its counters),
//! `crate::memory` and `crate::packet`.

use crate::api::{NicConfig, NicStats};
use crate::memory::Dma;
use crate::packet::{Packet, PacketKind, Verb};
use engine::Time;

/// What an engine's data packet says about itself.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Data {
    /// `Request` or `ReadResponse`.
    pub kind: PacketKind,
    pub verb: Verb,
    /// Its PSN (24 bits on the wire).
    pub psn: u32,
    /// The iPSN: its index among the packets of the bytes `msg_len`
    /// counts (0 on a READ request), from which a switch finds the
    /// message's remaining bytes (`Packet::remaining`).
    pub ipsn: u32,
    pub payload: u32,
    pub first: bool,
    pub last: bool,
    pub msg_len: u64,
    pub addr: u64,
    pub imm: u64,
    pub compare: u64,
    pub wqe_sn: u32,
}

/// The data packet `d` sent at `now`: `payload + header_bytes` on the
/// wire, in the data class; addresses, QPs and source port 0 (the QP
/// fills them).
#[inline(always)]
pub(crate) fn data_packet(cfg: &NicConfig, now: Time, d: Data) -> Packet {
    Packet {
        kind: d.kind,
        verb: d.verb,
        psn: d.psn,
        payload: d.payload,
        wire: d.payload + cfg.header_bytes,
        priority: cfg.data_priority,
        first: d.first,
        last: d.last,
        msg_len: d.msg_len,
        sent_at: now,
        addr: d.addr,
        imm: d.imm,
        compare: d.compare,
        wqe_sn: d.wqe_sn,
        ipsn: d.ipsn,
        ..Packet::default()
    }
}

/// Reads a packet's `len` payload bytes at `addr` through `dma`, counting
/// an address outside the registered memory in `access_errors` (the
/// packet still goes, as an RNIC's would with a completion error).
#[inline(always)]
pub(crate) fn fetch_payload(dma: &mut Dma, stats: &mut NicStats, addr: u64, len: u32) {
    if !dma.fetch(addr, len) {
        stats.access_errors += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nic_fixes_size_class_and_time_and_the_ipsn_is_its_own_field() {
        let cfg = NicConfig {
            header_bytes: 58,
            data_priority: 5,
            ..NicConfig::default()
        };
        let p = data_packet(
            &cfg,
            777,
            Data {
                kind: PacketKind::ReadResponse,
                verb: Verb::Read,
                psn: 9,
                ipsn: 4,
                payload: 1000,
                last: true,
                msg_len: 5000,
                addr: 0x40,
                wqe_sn: 3,
                ..Data::default()
            },
        );
        assert_eq!((p.wire, p.priority, p.sent_at), (1058, 5, 777));
        assert_eq!(
            (p.psn, p.ipsn, p.sack_psn, p.wqe_sn, p.addr),
            (9, 4, 0, 3, 0x40)
        );
        assert_eq!((p.first, p.last), (false, true));
        assert_eq!((p.src, p.dst, p.sport, p.vp, p.mp_flags), (0, 0, 0, 0, 0));
        assert!(!p.ce && !p.ecn_echo);
        assert_eq!(p.remaining(cfg.mtu), 1000);
    }
}
