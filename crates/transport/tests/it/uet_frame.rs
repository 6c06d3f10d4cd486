//! `transport::uet_frame`: every kind of packet the UET engine sends
//! comes back from its Ultra Ethernet frame as it left (less the fields
//! UET does not carry, which the engine does not read); what the headers
//! cannot carry is refused; random and mutated bytes never panic, and
//! what decodes re-encodes to the same packet.

use proptest::prelude::*;
use transport::packet::{Packet, PacketKind, Verb};
use transport::uet::TRIMMED;
use transport::uet_frame::{decode, encode, UetWire};
use wire::uet::frame::UetFrame;
use wire::uet::pds::Pds;
use wire::{Endpoint, Error};

const PORT: u16 = 4793;

/// A packet of `kind` (0..9) as the engine makes it, with the fields
/// UET does not carry at the values decoding gives them.
#[allow(clippy::too_many_arguments)]
fn shaped(
    kind: u8,
    mtu: u32,
    ipsn: u32,
    payload: u32,
    base: u64,
    msg_len: u32,
    bits: u64,
    off: i32,
) -> Packet {
    let p = Packet::default();
    let off_b = u64::from(ipsn) * u64::from(mtu);
    match kind {
        0 | 1 => Packet {
            kind: PacketKind::Request,
            verb: if kind == 0 { Verb::Write } else { Verb::Send },
            first: ipsn == 0,
            last: bits & 1 != 0,
            ipsn,
            payload,
            addr: if kind == 0 { base + off_b } else { off_b },
            msg_len: u64::from(msg_len),
            ..p
        },
        2 => Packet {
            kind: PacketKind::Request,
            verb: Verb::Read,
            first: true,
            last: true,
            addr: base,
            msg_len: u64::from(msg_len),
            ..p
        },
        3 => {
            let len = u64::from(msg_len).max((off_b + u64::from(payload)).saturating_sub(bits & 1));
            Packet {
                kind: PacketKind::ReadResponse,
                verb: Verb::Read,
                first: ipsn == 0,
                last: off_b + u64::from(payload) >= len,
                ipsn,
                payload,
                msg_len: len,
                ..p
            }
        }
        4 | 5 => Packet {
            kind: if kind == 4 {
                PacketKind::Ack
            } else {
                PacketKind::ReadAck
            },
            verb: if kind == 4 { Verb::Write } else { Verb::Read },
            addr: if kind == 4 { bits } else { 0 },
            sack_psn: off as u32,
            ..p
        },
        6 | 7 => Packet {
            kind: PacketKind::Nack,
            mp_flags: if kind == 6 { TRIMMED } else { 0 },
            sack_psn: off as u32,
            ..p
        },
        _ => Packet {
            kind: PacketKind::ReadNack,
            verb: Verb::Read,
            sack_psn: off as u32,
            ..p
        },
    }
}

fn packet() -> impl Strategy<Value = (UetWire, Packet, Vec<u8>)> {
    (
        (
            0u8..9,
            64u32..=4096,
            any::<bool>(),
            0u32..2000,
            any::<u64>(),
        ),
        (0u32..1 << 24, -2000i32..2000, 0u16..=0xffff, 0u16..=0xffff),
        (
            1u16..,
            1u16..,
            0u8..8,
            any::<bool>(),
            any::<bool>(),
            0u32..=0xffff,
        ),
        (0u64..1 << 48, any::<u32>(), any::<u64>()),
    )
        .prop_map(|(a, b, c, d)| {
            let (kind, mtu, ordered, ipsn, pay) = a;
            let (psn, off, sqp, dqp) = b;
            let (sport, vp, priority, ce, echo, wqe) = c;
            let (base, msg_len, bits) = d;
            let data = kind <= 3 && kind != 2;
            let payload = if data {
                (pay % u64::from(mtu + 1)) as u32
            } else {
                0
            };
            let mut p = shaped(kind, mtu, ipsn, payload, base, msg_len, bits, off);
            p.src = 1;
            p.dst = 2;
            p.src_qp = u32::from(sqp);
            p.dst_qp = u32::from(dqp);
            p.sport = sport;
            p.priority = priority;
            p.ce = ce;
            if p.kind == PacketKind::Request || p.kind == PacketKind::ReadResponse {
                p.psn = psn;
                p.wqe_sn = wqe;
            } else {
                // The cumulative PSN, and the one the ACK or NACK names.
                p.psn = psn;
                p.sack_psn = psn.wrapping_add(off as u32) & 0xff_ffff;
                p.ecn_echo = echo;
                if matches!(p.kind, PacketKind::Ack | PacketKind::Nack) {
                    p.vp = vp;
                }
            }
            let bytes = (0..payload).map(|i| (i * 7 + 3) as u8).collect();
            (UetWire { mtu, ordered }, p, bytes)
        })
}

/// Where a packet goes: an ACK or NACK to the port it echoes.
fn port_of(p: &Packet) -> u16 {
    match p.kind {
        PacketKind::Ack | PacketKind::Nack => p.vp,
        _ => PORT,
    }
}

fn frame_of(p: &Packet, w: UetWire, payload: &[u8]) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    let (src, dst) = (Endpoint::sim(p.src)?, Endpoint::sim(p.dst)?);
    encode(p, w, &src, &dst, port_of(p), payload, &mut out).map(|()| out)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn decode_inverts_encode((w, p, payload) in packet()) {
        let frame = frame_of(&p, w, &payload).unwrap();
        let d = decode(&frame, w, port_of(&p)).unwrap();
        prop_assert_eq!(d.packet, Packet { wire: frame.len() as u32, ..p });
        prop_assert_eq!(d.payload, &payload[..]);
        let f = UetFrame::parse_on(&frame, port_of(&p)).unwrap();
        prop_assert!(f.checksummed);
        prop_assert_eq!(f.udp.src_port, p.sport);
    }

    /// A packet of the other delivery mode is refused (the spec's PDC
    /// mode mismatch); control packets are never of a mode.
    #[test]
    fn the_other_mode_is_refused((w, p, payload) in packet()) {
        let frame = frame_of(&p, w, &payload).unwrap();
        let other = UetWire { ordered: !w.ordered, ..w };
        let data = matches!(p.kind, PacketKind::Request | PacketKind::ReadResponse);
        prop_assert_eq!(decode(&frame, other, port_of(&p)).is_err(), data);
    }

    /// Any byte changed: decoding returns (the UDP checksum catches most),
    /// and what decodes encodes to the same frame.
    #[test]
    fn mutated_frames_never_panic((w, p, payload) in packet(), at in any::<prop::sample::Index>(), v in any::<u8>()) {
        let mut frame = frame_of(&p, w, &payload).unwrap();
        let i = at.index(frame.len());
        frame[i] = v;
        // With the UDP checksum zeroed ("none"), the parsers behind it see
        // the change.
        frame[40] = 0;
        frame[41] = 0;
        if let Ok(d) = decode(&frame, w, port_of(&p)) {
            let again = frame_of(&Packet { src: 1, dst: 2, ..d.packet }, w, d.payload);
            let d2 = again.as_ref().map(|f| decode(f, w, port_of(&d.packet)).map(|x| x.packet));
            prop_assert!(matches!(d2, Ok(Ok(q)) if Packet { wire: 0, src: 1, dst: 2, ..q } == Packet { wire: 0, src: 1, dst: 2, ..d.packet }), "byte {} = {}: {:?}", i, v, d.packet);
        }
    }

    #[test]
    fn random_bytes_never_panic(buf in prop::collection::vec(any::<u8>(), 0..200), mtu in 0u32..5000) {
        let _ = decode(&buf, UetWire { mtu, ordered: false }, PORT);
    }
}

#[test]
fn what_the_headers_cannot_carry_is_refused() {
    let w = UetWire {
        mtu: 1024,
        ordered: false,
    };
    let ok = Packet {
        kind: PacketKind::Request,
        verb: Verb::Write,
        first: true,
        last: true,
        payload: 4,
        msg_len: 4,
        sport: 5000,
        ..Packet::default()
    };
    assert!(frame_of(&ok, w, &[1, 2, 3, 4]).is_ok());
    let cases = [
        (
            Packet {
                verb: Verb::WriteImm,
                ..ok
            },
            "verb",
        ),
        (
            Packet {
                verb: Verb::FetchAdd,
                ..ok
            },
            "verb",
        ),
        (Packet { imm: 1, ..ok }, "imm"),
        (
            Packet {
                wqe_sn: 1 << 16,
                ..ok
            },
            "wqe_sn",
        ),
        (
            Packet {
                dst_qp: 1 << 16,
                ..ok
            },
            "dst_qp",
        ),
        (Packet { psn: 1 << 24, ..ok }, "psn"),
        (
            Packet {
                msg_len: 1 << 32,
                ..ok
            },
            "msg_len",
        ),
        (
            Packet {
                first: true,
                ipsn: 1,
                ..ok
            },
            "ipsn",
        ),
        (
            Packet {
                kind: PacketKind::Cnp,
                payload: 0,
                msg_len: 0,
                first: false,
                last: false,
                ..ok
            },
            "kind",
        ),
    ];
    for (p, field) in cases {
        let payload = vec![0; p.payload as usize];
        match frame_of(&p, w, &payload) {
            Err(Error::Unrepresentable { field: f, .. }) => assert_eq!(f, field, "{p:?}"),
            other => panic!("{p:?}: {other:?}"),
        }
    }
}

/// Hand-checked bytes: a WRITE's middle packet on a RUD connection, and
/// the ACK_CC that answers with a SACK bitmap.
#[test]
fn frames_have_the_fields_the_spec_places() {
    let w = UetWire {
        mtu: 1024,
        ordered: false,
    };
    let data = Packet {
        kind: PacketKind::Request,
        verb: Verb::Write,
        src_qp: 3,
        dst_qp: 4,
        sport: 0xc001,
        psn: 0x12_3456,
        ipsn: 2,
        payload: 8,
        addr: 0x1_0000 + 2048,
        msg_len: 5000,
        wqe_sn: 9,
        ..Packet::default()
    };
    let f = frame_of(&data, w, &[0xab; 8]).unwrap();
    let pds = &f[42..];
    // RUD request (type 2), next header 3 (standard SES), no flags.
    assert_eq!(&pds[..2], &[0x11, 0x80]);
    assert_eq!(&pds[4..8], &[0, 0x12, 0x34, 0x56]);
    assert_eq!(&pds[8..12], &[0, 3, 0, 4]);
    let ses = &pds[12..];
    assert_eq!(ses[0], 0x01); // WRITE
    assert_eq!(ses[1], 0); // neither SOM nor EOM
    assert_eq!(&ses[2..4], &[0, 9]); // message id
    assert_eq!(&ses[12..20], &0x1_0000u64.to_be_bytes()); // buffer offset
    assert_eq!(&ses[34..36], &[0, 8]); // payload length
    assert_eq!(&ses[36..40], &2048u32.to_be_bytes()); // message offset
    assert_eq!(&ses[40..44], &5000u32.to_be_bytes()); // request length
    assert_eq!(&f[f.len() - 8..], &[0xab; 8]);

    let ack = Packet {
        kind: PacketKind::Ack,
        src_qp: 4,
        dst_qp: 3,
        psn: 100,
        sack_psn: 103,
        addr: 0b101,
        vp: 0xc001,
        ecn_echo: true,
        ..Packet::default()
    };
    let f = frame_of(&ack, w, &[]).unwrap();
    let h = UetFrame::parse_on(&f, 0xc001).unwrap().headers;
    let Pds::Ack(a) = h.pds else { panic!("{h:?}") };
    assert_eq!((a.cack_psn, a.ack_psn_offset, a.ecn_marked), (99, 4, true));
    let e = a.ext.unwrap();
    assert_eq!((e.sack_offset, e.sack_bitmap), (2, 0b101));
    assert_eq!(u16::from_be_bytes([f[36], f[37]]), 0xc001);
}
