//! The transport's packets on fixed vectors: a CNP captured on a Mellanox
//! ConnectX-4 Lx (scapy's test/contrib/roce.uts; its header-level checks
//! are crates/wire/tests/it/vectors.rs) decodes to the transport's CNP and
//! re-encodes to the captured bytes; ACK and NAK carry IBA's PSN and
//! syndrome; the NIC's QP n is QP n + 2 on the wire, and a frame to QP 0
//! or 1 (IBA's management QPs) is refused.

use transport::frame::{decode, encode, QPN_BASE};
use transport::packet::{Packet, PacketKind, Verb};
use wire::bth::Opcode;
use wire::roce::{self, RoceFrame};
use wire::Endpoint;

fn connectx_cnp() -> Vec<u8> {
    wire::vectors::CONNECTX_CNP.to_vec()
}

#[test]
fn the_connectx_cnp_decodes_and_re_encodes() {
    let f = connectx_cnp();
    let d = decode(&f).unwrap();
    assert_eq!(d.packet.kind, PacketKind::Cnp);
    // The NIC's QP numbers start after IBA's reserved QP 0 and 1.
    assert_eq!(d.packet.dst_qp, 0x118 - QPN_BASE);
    assert_eq!(d.packet.priority, 6, "DSCP 48 is class selector 6");
    assert!(
        !d.packet.ecn_echo,
        "a CNP's BECN is its format, not an echo"
    );
    assert_eq!(d.packet.wire, 74);
    // Re-encoded, it is the captured frame but for the IPv4
    // identification (we send 0), hence the IPv4 checksum and the ICRC.
    let mut out = Vec::new();
    encode(&d.packet, &d.src, &d.dst, d.payload, &mut out).unwrap();
    assert_eq!(out.len(), f.len());
    let differ: Vec<usize> = (0..f.len()).filter(|&i| out[i] != f[i]).collect();
    assert!(
        differ
            .iter()
            .all(|i| [18, 19, 24, 25, 70, 71, 72, 73].contains(i)),
        "{differ:?}"
    );
}

#[test]
fn acks_carry_ibta_psn_and_syndrome() {
    // Our ACK's psn is the next PSN expected; IBA's ACK names the last
    // PSN acknowledged. A NAK names the expected PSN with syndrome 0x60.
    let ends = (Endpoint::sim(1).unwrap(), Endpoint::sim(2).unwrap());
    for (kind, bth_psn, syndrome) in [
        (PacketKind::Ack, 0xff_ffff, 0x1f),
        (PacketKind::Nack, 0, 0x60),
    ] {
        let p = Packet {
            kind,
            verb: Verb::Write,
            dst_qp: 7,
            psn: 0,
            src: 1,
            dst: 2,
            ..Packet::default()
        };
        let mut out = Vec::new();
        encode(&p, &ends.0, &ends.1, &[], &mut out).unwrap();
        let r = RoceFrame::parse(&out).unwrap();
        assert_eq!(r.iba.bth.opcode, Opcode::Acknowledge);
        assert_eq!(r.iba.bth.psn, bth_psn, "{kind:?}");
        assert_eq!(out[roce::BTH_AT + 12], syndrome, "{kind:?}");
        assert!(r.data.is_empty(), "nothing IBA cannot say: no extension");
        let mut back = decode(&out).unwrap().packet;
        back.wire = 0;
        assert_eq!(back, p);
    }
}

#[test]
fn the_nics_first_qp_is_qp_2_on_the_wire_and_qp_0_and_1_are_refused() {
    let ends = (Endpoint::sim(1).unwrap(), Endpoint::sim(2).unwrap());
    let p = Packet {
        kind: PacketKind::Request,
        verb: Verb::Write,
        first: true,
        last: true,
        src: 1,
        dst: 2,
        src_qp: 5,
        msg_len: 4,
        payload: 4,
        ..Packet::default()
    };
    let mut out = Vec::new();
    encode(&p, &ends.0, &ends.1, b"abcd", &mut out).unwrap();
    let r = RoceFrame::parse(&out).unwrap();
    assert_eq!(r.iba.bth.dest_qp, 2, "the NIC's QP 0");
    let back = decode(&out).unwrap().packet;
    assert_eq!((back.dst_qp, back.src_qp), (0, 5));
    // The same frame to the management QPs, checksums valid.
    for qp in [0, 1] {
        let mut iba = r.iba;
        iba.bth.dest_qp = qp;
        let mut bad = Vec::new();
        roce::emit(&mut bad, &r.eth, &r.ip, &r.udp, &iba, &[r.data]).unwrap();
        assert!(RoceFrame::parse(&bad).is_ok());
        let e = decode(&bad).unwrap_err();
        assert!(format!("{e}").contains("management"), "QP {qp}: {e}");
    }
    // The NIC's largest QP number is the wire's largest, 2^24 - 1.
    let top = Packet {
        dst_qp: (1 << 24) - 1 - QPN_BASE,
        ..p
    };
    out.clear();
    encode(&top, &ends.0, &ends.1, b"abcd", &mut out).unwrap();
    assert_eq!(
        RoceFrame::parse(&out).unwrap().iba.bth.dest_qp,
        (1 << 24) - 1
    );
    let over = Packet {
        dst_qp: top.dst_qp + 1,
        ..p
    };
    assert!(encode(&over, &ends.0, &ends.1, b"abcd", &mut out).is_err());
}
