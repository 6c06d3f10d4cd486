//! The transport's packets on fixed vectors: a CNP captured on a Mellanox
//! ConnectX-4 Lx (scapy's test/contrib/roce.uts; its header-level checks
//! are crates/wire/tests/it/vectors.rs) decodes to the transport's CNP and
//! re-encodes to the captured bytes; ACK and NAK carry IBA's PSN and
//! syndrome.

use transport::frame::{decode, encode};
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
    assert_eq!(d.packet.dst_qp, 0x118);
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
