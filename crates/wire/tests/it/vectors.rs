//! Fixed vectors from outside this crate: a CNP captured on a Mellanox
//! ConnectX-4 Lx (from scapy's test/contrib/roce.uts, "RoCE CNP captured
//! on ConnectX-4 Lx"), and scapy's own UC SEND example in the same file
//! (its IPv4 and UDP checksums and ICRC as scapy computes them), plus
//! hand-checked bytes of the headers we emit. The transport's packets on
//! these vectors: crates/transport/tests/it/frame_vectors.rs.

use std::net::Ipv4Addr;

use wire::bth::{Bth, Opcode};
use wire::ethernet::EthernetRepr;
use wire::iba::IbaHeaders;
use wire::icrc::icrc;
use wire::ipv4::{self, Ipv4Repr};
use wire::roce::{self, RoceFrame};
use wire::udp::{self, UdpRepr};
use wire::Error;

fn hex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s
        .bytes()
        .filter(u8::is_ascii_hexdigit)
        .map(|c| (c as char).to_digit(16).unwrap() as u8)
        .collect();
    digits.chunks(2).map(|d| (d[0] << 4) | d[1]).collect()
}

fn connectx_cnp() -> Vec<u8> {
    wire::vectors::CONNECTX_CNP.to_vec()
}

#[test]
fn icrc_matches_a_connectx_cnp() {
    let f = connectx_cnp();
    assert_eq!(f.len(), 74);
    assert_eq!(icrc(&f[14..34], &f[34..70]), [0x82, 0xfd, 0x00, 0x2a]);
    // One flipped bit in a covered field changes it; in a masked one
    // (TTL, TOS, BECN) it does not.
    let mut g = f.clone();
    g[51] ^= 1; // the last PSN byte
    assert_ne!(icrc(&g[14..34], &g[34..70]), [0x82, 0xfd, 0x00, 0x2a]);
    let mut g = f.clone();
    g[22] = 1; // TTL
    g[15] = 0; // TOS
    g[46] = 0; // BECN
    assert_eq!(icrc(&g[14..34], &g[34..70]), [0x82, 0xfd, 0x00, 0x2a]);
}

#[test]
fn ipv4_checksum_matches_the_connectx_cnp() {
    let f = connectx_cnp();
    assert_eq!(ipv4::checksum(&f[14..34]), 0, "a right header sums to 0");
    let mut h = f[14..34].to_vec();
    h[10] = 0;
    h[11] = 0;
    assert_eq!(ipv4::checksum(&h), 0x9161);
}

#[test]
fn the_connectx_cnp_parses_and_decodes() {
    let f = connectx_cnp();
    let r = RoceFrame::parse(&f).unwrap();
    assert_eq!(r.iba.bth.opcode, Opcode::Cnp);
    assert_eq!(r.iba.bth.dest_qp, 0x118);
    assert!(r.iba.bth.becn && !r.iba.bth.fecn);
    assert_eq!((r.iba.bth.psn, r.iba.bth.pkey), (0, 0xffff));
    assert_eq!((r.ip.dscp, r.ip.ecn), (48, ipv4::ECN_ECT0));
    assert_eq!(r.ip.src, Ipv4Addr::new(10, 0, 17, 1));
    assert!(r.data.is_empty());
    // With the captured identification, the layers emit the very frame.
    let mut out = Vec::new();
    roce::emit(
        &mut out,
        &r.eth,
        &Ipv4Repr {
            ident: 0x718c,
            ..r.ip
        },
        &r.udp,
        &r.iba,
        &[],
    )
    .unwrap();
    assert_eq!(out, f);
}

#[test]
fn icrc_and_checksums_match_scapys_uc_example() {
    // scapy's "RoCE layer" test: UC SEND only, migreq 1, pad count 2,
    // 18 payload bytes and 2 pad bytes; scapy asserts IPv4 checksum
    // 0xb4d5, UDP checksum 0xaca2 and ICRC 0x78f353f3. The bytes below
    // are the frame scapy 2.8.0 builds from that test's layers (printed
    // with a local scapy; its ICRC covers a payload and a pad, which the
    // CNP has not).
    let f = hex("248a07a8fa22 248a07a8fa22 0800
                 4501 0040 0478 4000 4011 b4d5 c0a80007 c0a80007
                 c000 12b7 002c aca2
                 24 60 ffff 00 0000d3 00 cf1710
                 4630818be28935d90e9a95505401be885e50 0000
                 78f353f3");
    assert_eq!(f.len(), 14 + 64);
    assert_eq!(ipv4::checksum(&f[14..34]), 0);
    let ip = Ipv4Addr::new(192, 168, 0, 7);
    assert_eq!(udp::checksum(ip, ip, &f[34..]), 0, "UDP checksum 0xaca2");
    assert_eq!(icrc(&f[14..34], &f[34..74]), [0x78, 0xf3, 0x53, 0xf3]);
    // UC is not ours to parse.
    assert!(matches!(
        RoceFrame::parse(&f),
        Err(Error::Malformed { layer: "bth", .. })
    ));
}

#[test]
fn emitted_headers_have_the_ibta_layout() {
    // RDMA WRITE only to QP 0x123456, PSN 0xabcdef, AckReq, BECN: the
    // BTH then the RETH (VA, R_Key, DMA length).
    let mut iba = IbaHeaders::new(Bth {
        opcode: Opcode::WriteOnly,
        solicited: false,
        migreq: false,
        pad: 0,
        pkey: 0xffff,
        fecn: false,
        becn: true,
        dest_qp: 0x12_3456,
        ack_req: true,
        psn: 0xab_cdef,
    });
    iba.reth = Some(wire::iba::Reth {
        va: 0x0102_0304_0506_0708,
        rkey: 0x1122_3344,
        len: 4096,
    });
    let mut out = Vec::new();
    iba.emit(&mut out).unwrap();
    assert_eq!(
        out,
        hex("0a 00 ffff 40 123456 80 abcdef 0102030405060708 11223344 00001000")
    );
    let ip = Ipv4Repr {
        src: Ipv4Addr::new(10, 0, 0, 1),
        dst: Ipv4Addr::new(10, 0, 0, 2),
        dscp: 26,
        ecn: ipv4::ECN_CE,
        ident: 0,
        ttl: 64,
        payload_len: 0,
    };
    let mut frame = Vec::new();
    let eth = EthernetRepr {
        dst: [2, 0, 0, 0, 0, 2],
        src: [2, 0, 0, 0, 0, 1],
        ethertype: 0,
    };
    let udp = UdpRepr {
        src_port: 0xc000,
        dst_port: udp::ROCE_PORT,
    };
    roce::emit(&mut frame, &eth, &ip, &udp, &iba, &[b"abc"]).unwrap();
    // 3 payload bytes take one pad byte, counted in the BTH.
    assert_eq!(frame.len(), 14 + 20 + 8 + 12 + 16 + 4 + 4);
    assert_eq!(frame[43] >> 4 & 3, 1);
    assert_eq!(&frame[12..16], &[0x08, 0x00, 0x45, 26 << 2 | 3]);
    let r = RoceFrame::parse(&frame).unwrap();
    assert_eq!(r.data, b"abc");
    assert_eq!(r.iba.reth, iba.reth);
}
