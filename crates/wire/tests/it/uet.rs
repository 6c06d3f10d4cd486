//! UET's PDS and SES headers and frames: bytes placed where the UE 1.0
//! layout puts them (hand-checked prologues and fields), every header
//! round-trips, no input panics the parser, truncation and bad checksums
//! are named, and a field too wide for its place is refused with nothing
//! written.

use std::net::Ipv4Addr;

use proptest::prelude::*;
use wire::ethernet::EthernetRepr;
use wire::ipv4::Ipv4Repr;
use wire::udp::UdpRepr;
use wire::uet::frame::{self, UetFrame};
use wire::uet::pds::{
    Ack, AckExt, AckRequest, CcState, Control, Nack, Pds, Request, RequestCc, RequestTarget,
};
use wire::uet::ses::{
    Continuation, Response, ResponseData, ResponseOpcode, Ses, SesOpcode, StandardRequest,
};
use wire::uet::{UetHeaders, UET_PORT};
use wire::Error;

fn rud(target: RequestTarget) -> Request {
    Request {
        ordered: false,
        retransmit: false,
        ack_request: true,
        psn: 0x0102_0304,
        clear_psn_offset: -2,
        spdcid: 0x0a0b,
        target,
        cc: None,
    }
}

fn write_first() -> StandardRequest {
    StandardRequest {
        opcode: SesOpcode::Write,
        delivery_complete: false,
        initiator_error: false,
        relative: true,
        header_data_present: false,
        end_of_message: false,
        message_id: 0x1234,
        index_generation: 7,
        job_id: 0x00ab_cdef,
        pid_on_fep: 0x0321,
        resource_index: 0x0456,
        buffer_offset: 0x1122_3344_5566_7788,
        initiator: 0x9900_aabb,
        memory_key: 0xcafe,
        continuation: Continuation::Start { header_data: 0 },
        request_length: 65536,
    }
}

fn emit(h: &UetHeaders) -> Vec<u8> {
    let mut out = Vec::new();
    h.emit(&mut out).unwrap();
    assert_eq!(out.len(), h.wire_len());
    out
}

#[test]
fn a_rud_request_puts_type_next_header_flags_and_fields_where_the_layout_says() {
    let h = UetHeaders {
        pds: Pds::Request(rud(RequestTarget::Established { dpdcid: 0x0c0d })),
        ses: Ses::None,
    };
    // type 2 in the top 5 bits, next header 0, AR (0x08) in the flags.
    assert_eq!(
        emit(&h),
        [0x10, 0x08, 0xff, 0xfe, 1, 2, 3, 4, 0x0a, 0x0b, 0x0c, 0x0d]
    );

    let mut rod = rud(RequestTarget::Syn {
        use_reserved: true,
        psn_offset: 0x0abc,
    });
    rod.ordered = true;
    rod.retransmit = true;
    let h = UetHeaders {
        pds: Pds::Request(rod),
        ses: Ses::Standard(write_first()),
    };
    let bytes = emit(&h);
    // type 3 (ROD), next header 3 (standard request) in bits 10..7, RETX|AR|SYN.
    assert_eq!(
        u16::from_be_bytes([bytes[0], bytes[1]]),
        (3 << 11) | (3 << 7) | 0x1c
    );
    // SYN: the destination PDC's place holds the mode bit and the 12-bit offset.
    assert_eq!(bytes[10..12], [0x8a, 0xbc]);
    let ses = &bytes[12..];
    assert_eq!(ses.len(), 44);
    assert_eq!(ses[0], 0x01, "opcode WRITE");
    assert_eq!(ses[1], 0x08 | 0x01, "REL and SOM");
    assert_eq!(ses[2..4], [0x12, 0x34]);
    assert_eq!(ses[4..8], [7, 0xab, 0xcd, 0xef]);
    assert_eq!(ses[8..12], [0x03, 0x21, 0x04, 0x56]);
    assert_eq!(ses[40..44], 65536u32.to_be_bytes());
    let (back, rest) = UetHeaders::parse(&bytes).unwrap();
    assert_eq!(back, h);
    assert!(rest.is_empty());
}

#[test]
fn an_ack_cc_carries_the_sack_bitmap_and_nscc_state_after_its_twelve_bytes() {
    let ack = Ack {
        ecn_marked: true,
        retransmit: false,
        probe: false,
        request: AckRequest::ClearPsn,
        cack_psn: 100,
        ack_psn_offset: 5,
        spdcid: 1,
        dpdcid: 2,
        ext: Some(AckExt {
            mpr: 64,
            sack_offset: 1,
            sack_bitmap: 0b1011,
            cc: CcState::Nscc {
                service_time: 300,
                restore_cwnd: true,
                cwnd_penalty: 3,
                received_bytes: 0x0001_0000,
                ooo_count: 4,
            },
        }),
    };
    let h = UetHeaders {
        pds: Pds::Ack(ack),
        ses: Ses::Response(Response {
            list: 0,
            opcode: ResponseOpcode::Default,
            return_code: 1,
            message_id: 9,
            resource_index_generation: 0,
            job_id: 1,
            modified_length: 4096,
        }),
    };
    let bytes = emit(&h);
    assert_eq!(bytes.len(), 12 + 20 + 12);
    // ACK_CC is type 8; next header 4 (response); M (0x20) and REQ=1 (0x02).
    assert_eq!(
        u16::from_be_bytes([bytes[0], bytes[1]]),
        (8 << 11) | (4 << 7) | 0x22
    );
    assert_eq!(bytes[12], 0x00, "CC type NSCC in the top nibble");
    assert_eq!(bytes[13], 64);
    assert_eq!(bytes[16..24], 0b1011u64.to_be_bytes());
    assert_eq!(
        bytes[24..32],
        [0x01, 0x2c, 0x83, 0x01, 0x00, 0x00, 0x00, 0x04]
    );
    assert_eq!(UetHeaders::parse(&bytes).unwrap().0, h);
}

#[test]
fn a_trimmed_nack_and_a_control_packet_round_trip() {
    let nack = Pds::Nack(Nack {
        ecn_marked: false,
        retransmit: false,
        nack_type: false,
        code: wire::uet::pds::NACK_TRIMMED,
        vendor_code: 0,
        psn: 77,
        spdcid: 3,
        dpdcid: 4,
        payload: 78,
    });
    let h = UetHeaders {
        pds: nack,
        ses: Ses::None,
    };
    let bytes = emit(&h);
    assert_eq!(bytes.len(), 16);
    assert_eq!(bytes[0] >> 3, 10, "NACK is type 10");
    assert_eq!(bytes[2], 1, "code: trimmed");
    assert_eq!(UetHeaders::parse(&bytes).unwrap().0, h);

    let ctl = Pds::Control(Control {
        ctl_type: 6,
        retransmit: false,
        ack_request: true,
        syn: false,
        probe_opaque: 0xbeef,
        psn: 1,
        spdcid: 5,
        dpdcid: 6,
        payload: 1,
    });
    let h = UetHeaders {
        pds: ctl,
        ses: Ses::None,
    };
    let bytes = emit(&h);
    assert_eq!(
        (u16::from_be_bytes([bytes[0], bytes[1]]) >> 7) & 0xf,
        6,
        "the control type sits where the next header would"
    );
    assert_eq!(UetHeaders::parse(&bytes).unwrap().0, h);
    // A control packet cannot carry an SES header.
    let mut out = vec![0xaa];
    let bad = UetHeaders {
        pds: ctl,
        ses: Ses::Standard(write_first()),
    };
    assert!(matches!(
        bad.emit(&mut out),
        Err(Error::Unrepresentable { .. })
    ));
}

#[test]
fn every_prefix_of_a_packet_is_refused_as_truncated() {
    let h = UetHeaders {
        pds: Pds::Request(rud(RequestTarget::Established { dpdcid: 1 })),
        ses: Ses::Standard(write_first()),
    };
    let bytes = emit(&h);
    for n in 0..bytes.len() {
        match UetHeaders::parse(&bytes[..n]) {
            Err(Error::Truncated { need, have, .. }) => assert!(have < need, "prefix {n}"),
            other => panic!("prefix of {n} bytes: {other:?}"),
        }
    }
}

#[test]
fn unspoken_types_reserved_values_and_other_versions_are_named() {
    let reason = |bytes: &[u8]| match UetHeaders::parse(bytes) {
        Err(Error::Malformed { reason, .. }) => reason,
        other => panic!("{bytes:?}: {other:?}"),
    };
    let mut b = [0u8; 64];
    b[0] = 1 << 3; // TSS
    assert!(reason(&b).contains("does not speak"));
    b[0] = 31 << 3;
    assert!(reason(&b).contains("reserved PDS type"));
    // An ACK whose REQ field is 3.
    b[0] = 7 << 3;
    b[1] = 0x06;
    assert!(reason(&b).contains("ACK request"));
    // A request announcing a small SES header.
    let mut req = emit(&UetHeaders {
        pds: Pds::Request(rud(RequestTarget::Established { dpdcid: 1 })),
        ses: Ses::None,
    });
    req[1] |= 1 << 7;
    req.resize(80, 0);
    assert!(reason(&req).contains("small or medium"));
    // A standard request of SES version 1.
    let mut std = emit(&UetHeaders {
        pds: Pds::Request(rud(RequestTarget::Established { dpdcid: 1 })),
        ses: Ses::Standard(write_first()),
    });
    std[13] |= 0x40;
    assert!(reason(&std).contains("version"));
}

#[test]
fn a_field_wider_than_its_place_is_refused_and_nothing_is_written() {
    let mut r = write_first();
    r.job_id = 1 << 24;
    let h = UetHeaders {
        pds: Pds::Request(rud(RequestTarget::Established { dpdcid: 1 })),
        ses: Ses::Standard(r),
    };
    let mut out = vec![1, 2, 3];
    let e = h.emit(&mut out).unwrap_err();
    assert_eq!(
        e,
        Error::Unrepresentable {
            field: "ses.job_id",
            reason: "the value is wider than its field"
        }
    );
    let (eth, ip, udp) = addressing();
    let mut out = vec![1, 2, 3];
    assert!(frame::emit(&mut out, &eth, &ip, &udp, &h, &[b"x"]).is_err());
    assert_eq!(
        out,
        [1, 2, 3],
        "a refused frame leaves the buffer as it was"
    );
}

fn addressing() -> (EthernetRepr, Ipv4Repr, UdpRepr) {
    let eth = EthernetRepr {
        dst: [2, 0, 0, 0, 0, 2],
        src: [2, 0, 0, 0, 0, 1],
        ethertype: 0,
    };
    let ip = Ipv4Repr {
        src: Ipv4Addr::new(10, 0, 0, 1),
        dst: Ipv4Addr::new(10, 0, 0, 2),
        dscp: 26,
        ecn: wire::ipv4::ECN_ECT0,
        ident: 1,
        ttl: 64,
        payload_len: 0,
    };
    // The source port is the packet's entropy value.
    let udp = UdpRepr {
        src_port: 0xc123,
        dst_port: UET_PORT,
    };
    (eth, ip, udp)
}

#[test]
fn a_frame_carries_a_udp_checksum_that_catches_any_changed_byte() {
    let (eth, ip, udp) = addressing();
    let h = UetHeaders {
        pds: Pds::Request(rud(RequestTarget::Established { dpdcid: 1 })),
        ses: Ses::Standard(write_first()),
    };
    let payload = [0x5au8; 300];
    let mut out = Vec::new();
    frame::emit(
        &mut out,
        &eth,
        &ip,
        &udp,
        &h,
        &[&payload[..100], &payload[100..]],
    )
    .unwrap();
    let f = UetFrame::parse(&out).unwrap();
    assert!(f.checksummed);
    assert_eq!(f.headers, h);
    assert_eq!(f.payload, &payload[..]);
    assert_eq!(f.udp, udp);
    assert_eq!(f.len, out.len());
    let udp_at = frame::PDS_AT - 8;
    for i in udp_at + 8..out.len() {
        let mut bad = out.clone();
        bad[i] ^= 0x10;
        assert!(
            matches!(
                UetFrame::parse(&bad),
                Err(Error::Checksum { layer: "udp", .. })
            ),
            "byte {i} changed"
        );
    }
    // A zero checksum is allowed by UDP: the frame parses, unverified.
    let mut zero = out.clone();
    zero[udp_at + 6] = 0;
    zero[udp_at + 7] = 0;
    assert!(!UetFrame::parse(&zero).unwrap().checksummed);
    // Another port is named.
    assert!(matches!(
        UetFrame::parse_on(&out, 4791),
        Err(Error::Malformed { layer: "udp", .. })
    ));
}

fn any_request() -> impl Strategy<Value = Pds> {
    (
        any::<(bool, bool, bool, u32, i16, u16)>(),
        prop_oneof![
            any::<u16>().prop_map(|dpdcid| RequestTarget::Established { dpdcid }),
            (any::<bool>(), 0u16..4096).prop_map(|(use_reserved, psn_offset)| RequestTarget::Syn {
                use_reserved,
                psn_offset
            }),
        ],
        proptest::option::of(
            (any::<u8>(), 0u32..1 << 24).prop_map(|(ccc_id, credit_target)| RequestCc {
                ccc_id,
                credit_target,
            }),
        ),
    )
        .prop_map(
            |((ordered, retransmit, ack_request, psn, clear_psn_offset, spdcid), target, cc)| {
                Pds::Request(Request {
                    ordered,
                    retransmit,
                    ack_request,
                    psn,
                    clear_psn_offset,
                    spdcid,
                    target,
                    cc,
                })
            },
        )
}

fn any_ack() -> impl Strategy<Value = Pds> {
    let cc = prop_oneof![
        (any::<(u16, bool, u16)>(), 0u8..128, 0u32..1 << 24).prop_map(
            |((service_time, restore_cwnd, ooo_count), cwnd_penalty, received_bytes)| {
                CcState::Nscc {
                    service_time,
                    restore_cwnd,
                    cwnd_penalty,
                    received_bytes,
                    ooo_count,
                }
            }
        ),
        (0u32..1 << 24, any::<u16>())
            .prop_map(|(credit, ooo_count)| CcState::Credit { credit, ooo_count }),
    ];
    let ext = proptest::option::of((any::<(u8, u16, u64)>(), cc).prop_map(
        |((mpr, sack_offset, sack_bitmap), cc)| AckExt {
            mpr,
            sack_offset,
            sack_bitmap,
            cc,
        },
    ));
    (any::<(bool, bool, bool, u32, i16, u16, u16)>(), 0u8..3, ext).prop_map(
        |((ecn_marked, retransmit, probe, cack_psn, ack_psn_offset, spdcid, dpdcid), req, ext)| {
            Pds::Ack(Ack {
                ecn_marked,
                retransmit,
                probe,
                request: [AckRequest::None, AckRequest::ClearPsn, AckRequest::ClosePdc]
                    [usize::from(req)],
                cack_psn,
                ack_psn_offset,
                spdcid,
                dpdcid,
                ext,
            })
        },
    )
}

fn any_ses() -> impl Strategy<Value = Ses> {
    let std = (
        any::<(bool, bool, bool, bool, bool, u16, u8)>(),
        (
            0u32..1 << 24,
            0u16..4096,
            0u16..4096,
            any::<(u64, u32, u64, u32)>(),
        ),
        prop_oneof![
            any::<u64>().prop_map(|header_data| Continuation::Start { header_data }),
            (0u16..1 << 14, any::<u32>()).prop_map(|(payload_length, message_offset)| {
                Continuation::Rest {
                    payload_length,
                    message_offset,
                }
            }),
        ],
        0usize..5,
    )
        .prop_map(
            |(
                (dc, ie, rel, hd, eom, message_id, gen),
                (job_id, pid, ri, (off, init, key, len)),
                c,
                op,
            )| {
                Ses::Standard(StandardRequest {
                    opcode: [
                        SesOpcode::NoOp,
                        SesOpcode::Write,
                        SesOpcode::Read,
                        SesOpcode::Send,
                        SesOpcode::TaggedSend,
                    ][op],
                    delivery_complete: dc,
                    initiator_error: ie,
                    relative: rel,
                    header_data_present: hd,
                    end_of_message: eom,
                    message_id,
                    index_generation: gen,
                    job_id,
                    pid_on_fep: pid,
                    resource_index: ri,
                    buffer_offset: off,
                    initiator: init,
                    memory_key: key,
                    continuation: c,
                    request_length: len,
                })
            },
        );
    let rsp = (
        0u8..4,
        0usize..3,
        0u8..64,
        any::<(u16, u8, u32)>(),
        0u32..1 << 24,
    )
        .prop_map(
            |(list, op, return_code, (message_id, gen, modified_length), job_id)| {
                Ses::Response(Response {
                    list,
                    opcode: [
                        ResponseOpcode::Default,
                        ResponseOpcode::Response,
                        ResponseOpcode::NoResponse,
                    ][op],
                    return_code,
                    message_id,
                    resource_index_generation: gen,
                    job_id,
                    modified_length,
                })
            },
        );
    let data = (
        0u8..4,
        0u8..64,
        any::<(u16, u16, u32, u32)>(),
        0u32..1 << 24,
        0u16..1 << 14,
    )
        .prop_map(
            |(
                list,
                return_code,
                (message_id, read_id, modified_length, message_offset),
                job_id,
                payload_length,
            )| {
                Ses::ResponseData(ResponseData {
                    list,
                    return_code,
                    message_id,
                    job_id,
                    read_request_message_id: read_id,
                    payload_length,
                    modified_length,
                    message_offset,
                })
            },
        );
    prop_oneof![Just(Ses::None), std, rsp, data]
}

proptest! {
    #[test]
    fn every_header_pair_round_trips(pds in prop_oneof![any_request(), any_ack()], ses in any_ses(), tail in proptest::collection::vec(any::<u8>(), 0..8)) {
        let h = UetHeaders { pds, ses };
        let mut bytes = emit(&h);
        bytes.extend_from_slice(&tail);
        let (back, rest) = UetHeaders::parse(&bytes).unwrap();
        prop_assert_eq!(back, h);
        prop_assert_eq!(rest, &tail[..]);
    }

    #[test]
    fn any_bytes_parse_or_fail_without_panicking_and_a_parse_re_emits_to_itself(bytes in proptest::collection::vec(any::<u8>(), 0..96), first in 0u8..32) {
        let mut bytes = bytes;
        if let Some(b) = bytes.first_mut() {
            // Steer half of the inputs onto real PDS types.
            *b = (first << 3) | (*b & 7);
        }
        if let Ok((h, rest)) = UetHeaders::parse(&bytes) {
            // Reserved bits are dropped, so compare what the bytes mean.
            let again = emit(&h);
            prop_assert_eq!(again.len() + rest.len(), bytes.len());
            prop_assert_eq!(UetHeaders::parse(&again).unwrap().0, h);
        }
        let _ = UetFrame::parse(&bytes);
    }
}
