//! encode then decode gives the packet back, for any packet in the wire
//! ranges; out-of-range fields are refused, never truncated.

use crate::frame;

use proptest::prelude::*;
use transport::frame::{decode, encode_sim};
use transport::packet::{Packet, PacketKind, Verb};
use wire::roce::RoceFrame;
use wire::{Endpoint, Error};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn decode_inverts_encode((p, payload) in frame::packet()) {
        let mut out = vec![0xee; 3]; // encode appends
        encode_sim(&p, &payload, &mut out).unwrap();
        let frame = &out[3..];
        let d = decode(frame).unwrap();
        prop_assert_eq!(d.packet, Packet { wire: frame.len() as u32, ..p });
        prop_assert_eq!(d.payload, &payload[..]);
        prop_assert_eq!(d.src, Endpoint::sim(p.src).unwrap());
        prop_assert_eq!(d.dst, Endpoint::sim(p.dst).unwrap());
        // Every frame is 4-byte aligned after the UDP header and has the
        // RoCEv2 port.
        let r = RoceFrame::parse(frame).unwrap();
        prop_assert_eq!((frame.len() - 42) % 4, 0);
        prop_assert_eq!(r.udp.dst_port, 4791);
        prop_assert_eq!(r.udp.src_port, p.sport);
    }

    #[test]
    fn a_flipped_bit_is_caught_or_harmless((p, payload) in frame::packet(), at in any::<prop::sample::Index>(), bit in 0u8..8) {
        let mut out = Vec::new();
        encode_sim(&p, &payload, &mut out).unwrap();
        let i = at.index(out.len());
        out[i] ^= 1 << bit;
        // The IPv4 checksum covers its header, the ICRC the UDP header
        // and everything after it, but for BTH byte 4 (FECN, BECN,
        // reserved: masked). Nothing covers the MACs. A zero UDP
        // checksum made nonzero is checked (and almost surely wrong).
        let unchecked = i < 12 || i == 46;
        match decode(&out) {
            Ok(d) => prop_assert!(unchecked || i == 40 || i == 41, "byte {} bit {} passed: {:?}", i, bit, d.packet),
            Err(e) => prop_assert!(!unchecked, "byte {} bit {}: {}", i, bit, e),
        }
    }
}

#[test]
fn out_of_range_fields_are_refused() {
    let ok = Packet {
        kind: PacketKind::Request,
        verb: Verb::Send,
        payload: 4,
        ..Packet::default()
    };
    let mut out = Vec::new();
    encode_sim(&ok, &[1, 2, 3, 4], &mut out).unwrap();
    let cases = [
        (Packet { psn: 1 << 24, ..ok }, "psn"),
        (
            Packet {
                dst_qp: 1 << 24,
                ..ok
            },
            "dst_qp",
        ),
        (
            Packet {
                src_qp: u32::MAX,
                ..ok
            },
            "src_qp",
        ),
        (
            Packet {
                wqe_sn: 1 << 24,
                ..ok
            },
            "wqe_sn",
        ),
        (Packet { priority: 8, ..ok }, "priority"),
        // A switch's own control packet (ConWeave's) has no RoCEv2 frame.
        (
            Packet {
                kind: PacketKind::SwitchControl,
                ..ok
            },
            "kind",
        ),
        (Packet { payload: 5, ..ok }, "payload"),
        (Packet { src: 1 << 24, ..ok }, "src/dst"),
        (
            Packet {
                kind: PacketKind::ReadResponse,
                verb: Verb::FetchAdd,
                ..ok
            },
            "payload",
        ),
    ];
    for (p, field) in cases {
        let mut out = Vec::new();
        match encode_sim(&p, &[1, 2, 3, 4], &mut out) {
            Err(Error::Unrepresentable { field: f, .. }) => assert_eq!(f, field),
            other => panic!("{field}: {other:?}"),
        }
        assert!(out.is_empty(), "{field}: nothing appended");
    }
    let big = Packet {
        payload: 65_536,
        ..ok
    };
    assert!(matches!(
        encode_sim(&big, &vec![0; 65_536], &mut out),
        Err(Error::Unrepresentable {
            field: "payload",
            ..
        })
    ));
}
