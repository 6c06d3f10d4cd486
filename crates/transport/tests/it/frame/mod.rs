//! Packets for the property and fuzz tests: any packet the transport could
//! emit, with its fields in their wire ranges.

use proptest::prelude::*;
use transport::frame::{KINDS, VERBS};
use transport::packet::{Packet, PacketKind};

/// A value of `bits` bits, often 0 or the largest (the edges), else any.
fn edgy(bits: u32) -> impl Strategy<Value = u64> {
    let max = if bits == 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    };
    prop_oneof![Just(0), Just(max), 0..=max]
}

/// A NIC's QP number: often 0 or the largest (the wire's 2^24 - 1 less
/// IBA's two reserved QPs), else any.
fn qp() -> impl Strategy<Value = u64> {
    let max = u64::from((1 << 24) - 1 - transport::frame::QPN_BASE);
    prop_oneof![Just(0), Just(max), 0..=max]
}

prop_compose! {
    /// A packet and its payload bytes.
    pub fn packet()(
        kind in prop::sample::select(&KINDS[..]),
        verb in prop::sample::select(&VERBS[..]),
        first in any::<bool>(),
        last in any::<bool>(),
        (src, dst) in (0u32..1 << 24, 0u32..1 << 24),
        (src_qp, dst_qp, psn, wqe_sn) in (qp(), qp(), edgy(24), edgy(24)),
        sport in any::<u16>(),
        priority in 0u8..8,
        (ce, ecn_echo) in (any::<bool>(), any::<bool>()),
        (msg_len, addr, imm, compare, sent_at) in (edgy(64), edgy(64), edgy(64), edgy(64), edgy(64)),
        sack_or_ipsn in edgy(32),
        vp in any::<u16>(),
        mp_flags in any::<u8>(),
        len in prop_oneof![Just(0usize), 1usize..9, 9usize..4200],
        seed in any::<u8>(),
    ) -> (Packet, Vec<u8>) {
        let len = if kind == PacketKind::ReadResponse && verb.is_atomic() { 8 } else { len };
        let payload: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_mul(31) ^ seed).collect();
        let mut p = Packet {
            src,
            dst,
            src_qp: src_qp as u32,
            dst_qp: dst_qp as u32,
            sport,
            kind,
            verb,
            psn: psn as u32,
            payload: len as u32,
            wire: 0,
            priority,
            ce,
            ecn_echo,
            first,
            last,
            msg_len,
            sent_at,
            addr,
            imm,
            compare,
            wqe_sn: wqe_sn as u32,
            sack_psn: 0,
            ipsn: 0,
            vp,
            mp_flags,
        };
        // One of the two, as the transport makes them: the wire has one
        // field for both.
        if p.is_data() {
            p.ipsn = sack_or_ipsn as u32;
        } else {
            p.sack_psn = sack_or_ipsn as u32;
        }
        (p, payload)
    }
}
