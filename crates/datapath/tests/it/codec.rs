//! Unit tests of `codec.rs` (moved from the file, which the library's
//! `test = false` no longer compiles as a test harness).

use datapath::codec::*;
use std::net::SocketAddrV4;
use transport::Packet;
use wire::roce::BTH_AT;

use transport::{PacketKind, Verb};

fn data_packet(sport: u16) -> Packet {
    Packet {
        kind: PacketKind::Request,
        verb: Verb::Write,
        sport,
        dst_qp: 3,
        src_qp: 2,
        psn: 77,
        payload: 5,
        first: true,
        last: true,
        msg_len: 5,
        addr: 0x1000,
        ..Packet::default()
    }
}

#[test]
fn a_datagram_decodes_to_its_packet_and_a_flipped_bit_is_caught() {
    let from: SocketAddrV4 = "127.0.0.1:40000".parse().unwrap();
    let to: SocketAddrV4 = "127.0.0.2:5000".parse().unwrap();
    let p = data_packet(40000);
    let mut frame = Vec::new();
    Framing::Roce
        .encode(&p, from, to, b"hello", &mut frame)
        .unwrap();
    let dgram = frame[BTH_AT..].to_vec();
    let mut buf = vec![0u8; BTH_AT + dgram.len()];
    let mut head = Vec::new();
    buf[BTH_AT..].copy_from_slice(&dgram);
    let n = rebuild(&mut head, &mut buf, dgram.len(), from, to, 0b10).unwrap();
    let d = Framing::Roce.decode(&buf[..n], to.port()).unwrap();
    assert_eq!(d.payload, b"hello");
    assert_eq!(
        (d.packet.psn, d.packet.dst_qp, d.packet.addr),
        (77, 3, 0x1000)
    );
    assert_eq!(d.packet.sport, 40000);
    assert_eq!(&buf[..], &frame[..], "the rebuilt frame is the sent one");
    // The ICRC covers the ports and addresses: another sender's
    // datagram does not pass.
    let other: SocketAddrV4 = "127.0.0.1:40001".parse().unwrap();
    buf[BTH_AT..].copy_from_slice(&dgram);
    let n = rebuild(&mut head, &mut buf, dgram.len(), other, to, 0).unwrap();
    assert!(Framing::Roce.decode(&buf[..n], to.port()).is_err());
    for bit in [0, 13, 8 * dgram.len() - 1] {
        let mut bad = dgram.clone();
        bad[bit / 8] ^= 1 << (bit % 8);
        buf[BTH_AT..].copy_from_slice(&bad);
        let n = rebuild(&mut head, &mut buf, bad.len(), from, to, 0).unwrap();
        assert!(
            Framing::Roce.decode(&buf[..n], to.port()).is_err(),
            "bit {bit}"
        );
    }
    // ECN CE from the IP header reaches the packet.
    buf[BTH_AT..].copy_from_slice(&dgram);
    let n = rebuild(&mut head, &mut buf, dgram.len(), from, to, 0b11).unwrap();
    assert!(
        Framing::Roce
            .decode(&buf[..n], to.port())
            .unwrap()
            .packet
            .ce
    );
}
