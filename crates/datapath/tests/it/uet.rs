//! `--transport uet` on the real datapath: Ultra Ethernet frames (PDS and
//! SES headers, `transport::uet_frame`) between two endpoints over
//! loopback. Every verb moves verified bytes, the client's data packets
//! leave from all its entropy values' source ports and the server's ACKs
//! come back to them, and every frame of both ends' `--pcap` parses with
//! our own parser; RUD recovers from loss and reordering; and forged UET
//! datagrams from the peer's own address are counted by reason, never
//! panic and never stall the endpoint.

use crate::common;

use std::collections::BTreeSet;
use std::net::UdpSocket;
use std::path::PathBuf;
use std::time::Duration;

use datapath::codec::Framing;
use datapath::endpoint::{Endpoint, Peer};
use datapath::impair::ImpairSpec;
use datapath::session::SERVER_BASE;
use datapath::{ServeOptions, VerbName};
use engine::{Rng, StreamKind};
use transport::uet_frame::{decode, UetWire};
use transport::{Packet, PacketKind};
use wire::uet::frame::UetFrame;
use wire::uet::pds::{Control, Nack, Pds};

const RUD: UetWire = UetWire {
    mtu: 4096,
    ordered: false,
};

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("rdmalab-uet-{}-{name}.pcap", std::process::id()))
}

/// What one end's capture shows: its frames decoded (each with the UDP
/// source and destination ports and whether it carried a checksum), or
/// the first that did not parse.
fn capture(path: &PathBuf) -> Vec<(Packet, u16, u16, bool)> {
    let file = std::fs::read(path).unwrap();
    std::fs::remove_file(path).unwrap();
    let frames = wire::pcap::frames(&file).unwrap();
    assert!(!frames.is_empty(), "{}: no frame", path.display());
    frames
        .iter()
        .map(|(_, f)| {
            let dport = u16::from_be_bytes([f[36], f[37]]);
            let u = UetFrame::parse_on(f, dport).unwrap_or_else(|e| panic!("{e}: {f:?}"));
            let d = decode(f, RUD, dport).unwrap_or_else(|e| panic!("{e}: {f:?}"));
            (d.packet, u.udp.src_port, dport, u.checksummed)
        })
        .collect()
}

/// A transfer of `verb` with both ends capturing; returns the report and
/// both captures (client, server).
#[allow(clippy::type_complexity)]
fn transfer(
    verb: VerbName,
    impair: Option<ImpairSpec>,
) -> (
    datapath::Report,
    Vec<(Packet, u16, u16, bool)>,
    Vec<(Packet, u16, u16, bool)>,
) {
    let name = format!("{verb:?}-{}", impair.is_some());
    let (cpath, spath) = (
        temp(&format!("{name}-client")),
        temp(&format!("{name}-server")),
    );
    let mut port = common::settings(impair, 64);
    port.pcap = Some(spath.clone());
    let (addr, server) = common::serve_with(ServeOptions {
        bind: "127.0.0.1:0".parse().unwrap(),
        port,
        max_bytes: 1 << 30,
        once: true,
        control_ms: 10_000,
        idle_ms: 10_000,
    });
    let mut o = common::options(addr, "uet", verb, 4 << 20);
    o.port.impair = impair.map(|s| ImpairSpec { seed: 4, ..s });
    o.port.pcap = Some(cpath.clone());
    let r = datapath::run(&o).unwrap_or_else(|e| panic!("uet {verb:?}: {e}"));
    server.join().unwrap().unwrap();
    (r, capture(&cpath), capture(&spath))
}

#[test]
fn every_verb_moves_verified_bytes_over_sprayed_ports() {
    for verb in [VerbName::Write, VerbName::Send, VerbName::Read] {
        let (r, client, server) = transfer(verb, None);
        assert_eq!(
            r.latencies_ns.len(),
            16,
            "{verb:?}: every message completed"
        );
        assert_eq!(r.job.paths, 8);
        let requests: Vec<_> = client
            .iter()
            .filter(|(p, ..)| p.kind == PacketKind::Request)
            .collect();
        assert!(!requests.is_empty(), "{verb:?}");
        // Sent frames carry the UDP checksum the sender computed; received
        // ones are rebuilt after the kernel checked and stripped it.
        assert!(requests.iter().all(|(.., sum)| *sum), "{verb:?}");
        let sports: BTreeSet<u16> = requests.iter().map(|(_, s, ..)| *s).collect();
        let base = *sports.first().unwrap();
        if verb != VerbName::Read {
            // Enough requests for the oblivious spray to visit every EV.
            assert_eq!(sports.len(), 8, "{verb:?}: {sports:?}");
            assert!(sports.iter().all(|s| s - base < 8), "{sports:?}");
            // The server's ACKs go back to the port each echoes, and the
            // client reads the echo there.
            let acks: Vec<_> = client
                .iter()
                .filter(|(p, ..)| p.kind == PacketKind::Ack)
                .collect();
            assert!(!acks.is_empty());
            assert!(acks.iter().all(|(p, _, d, sum)| p.vp == *d && !sum));
            let echoed: BTreeSet<u16> = acks.iter().map(|(_, _, d, _)| *d).collect();
            assert!(echoed.len() > 1, "{echoed:?}");
            assert!(echoed.is_subset(&sports), "{echoed:?} {sports:?}");
        } else {
            let data = server
                .iter()
                .filter(|(p, ..)| p.kind == PacketKind::ReadResponse)
                .count();
            let acked = client
                .iter()
                .filter(|(p, ..)| p.kind == PacketKind::ReadAck)
                .count();
            assert!(data >= 1024 && acked > 0, "{data} {acked}");
        }
        // The server saw the same frames arrive, from the same ports.
        let arrived: BTreeSet<u16> = server
            .iter()
            .filter(|(p, ..)| p.kind == PacketKind::Request)
            .map(|(_, s, ..)| *s)
            .collect();
        assert_eq!(arrived, sports, "{verb:?}");
    }
}

#[test]
fn rud_recovers_from_loss_and_reordering() {
    let spec = ImpairSpec::parse("loss=0.02,reorder=0.02,reorder_us=100,seed=3").unwrap();
    let (r, client, _) = transfer(VerbName::Write, Some(spec));
    assert!(r.impaired.dropped > 0, "the client's layer dropped nothing");
    assert!(
        r.retransmitted > 0,
        "loss recovered without retransmitting?"
    );
    assert_eq!(r.latencies_ns.len(), 16);
    // Some ACK carried a SACK bitmap (a gap the receiver saw).
    assert!(client
        .iter()
        .any(|(p, ..)| p.kind == PacketKind::Ack && p.addr != 0));
}

#[test]
fn forged_uet_datagrams_are_counted_by_reason() {
    let (mut ep, local) = common::responder("uet", 4096);
    let attacker = UdpSocket::bind("127.0.0.1:0").unwrap();
    let std::net::SocketAddr::V4(from) = attacker.local_addr().unwrap() else {
        panic!("bound to IPv4");
    };
    ep.add_peer(Peer {
        addr: from,
        ports: 1,
    });
    let w = UetWire {
        mtu: 1024,
        ordered: false,
    };
    let dgram = |p: &Packet, w: UetWire, payload: &[u8]| {
        let mut frame = Vec::new();
        Framing::Uet(w)
            .encode(p, from, local, payload, &mut frame)
            .unwrap();
        frame[wire::uet::frame::PDS_AT..].to_vec()
    };
    let sport = from.port();
    let payload = vec![0xab; 1024];
    let good = dgram(
        &common::write(100, 0, SERVER_BASE, 1024, sport),
        w,
        &payload,
    );
    let headers = |pds: Pds| {
        let mut b = Vec::new();
        pds.emit(0, &mut b).unwrap();
        b
    };
    let mut wide_psn = good.clone();
    wide_psn[4] = 1; // PSN 2^24 + 100
    let mut atomic = good.clone();
    atomic[12] = 0x03; // SES opcode: atomic
    let middle = Packet {
        first: false,
        ipsn: 1,
        addr: SERVER_BASE + 1024,
        msg_len: 2048,
        ..common::write(101, 0, 0, 1024, sport)
    };
    let mut short_said = dgram(&middle, w, &payload);
    // The SES payload length says 768 of the 1024 bytes.
    short_said[12 + 34] = 0x03;
    short_said[12 + 35] = 0;
    let truncated = [vec![], good[..10].to_vec(), good[..50].to_vec()];
    let malformed = [
        dgram(
            &common::write(100, 0, SERVER_BASE, 1024, sport),
            UetWire { ordered: true, ..w },
            &payload,
        ),
        headers(Pds::Control(Control {
            ctl_type: 1,
            retransmit: false,
            ack_request: false,
            syn: false,
            probe_opaque: 0,
            psn: 100,
            spdcid: 0,
            dpdcid: 0,
            payload: 0,
        })),
        headers(Pds::Nack(Nack {
            ecn_marked: false,
            retransmit: false,
            nack_type: false,
            code: 0x04,
            vendor_code: 0,
            psn: 100,
            spdcid: 0,
            dpdcid: 0,
            payload: 0,
        })),
        wide_psn,
        atomic,
        short_said,
    ];
    let mut sends: Vec<Vec<u8>> = truncated.to_vec();
    sends.extend(malformed.iter().cloned());
    // Right headers, forged contents: an unknown QP, addresses outside
    // the region, the one good WRITE and its replay, a PSN far ahead.
    sends.push(dgram(
        &common::write(100, 5, SERVER_BASE, 1024, sport),
        w,
        &payload,
    ));
    sends.push(dgram(
        &common::write(100, 0, SERVER_BASE + 4000, 1024, sport),
        w,
        &payload,
    ));
    sends.push(dgram(
        &common::write(100, 0, u64::MAX - 10, 1024, sport),
        w,
        &payload,
    ));
    sends.push(good.clone());
    sends.push(good.clone());
    sends.push(dgram(
        &common::write(100 + 5000, 0, SERVER_BASE, 1024, sport),
        w,
        &payload,
    ));
    let turn = |ep: &mut Endpoint, s: &[u8]| {
        attacker.send_to(s, local).unwrap();
        // Paced, so no datagram is lost to the socket buffer.
        ep.turn(Duration::ZERO).unwrap();
    };
    for s in &sends {
        turn(&mut ep, s);
    }
    for _ in 0..50 {
        ep.turn(Duration::from_millis(1)).unwrap();
    }
    let d = ep.drops;
    assert_eq!((d.truncated, d.malformed, d.checksum), (3, 6, 0), "{d:?}");
    assert_eq!(ep.io.datagrams_received, sends.len() as u64);
    let s = ep.nic.stats();
    assert_eq!(s.malformed_dropped, 1, "the unknown QP");
    assert_eq!(s.access_errors, 2, "outside the region, twice");
    assert_eq!(s.duplicates_received, 1, "the replay");
    assert!(s.beyond_window_dropped >= 1, "the PSN far ahead: {s:?}");
    let bytes = ep.mem.bytes();
    assert!(
        bytes[..1024].iter().all(|&b| b == 0xab),
        "the good WRITE landed"
    );
    assert!(
        bytes[1024..].iter().all(|&b| b == 0),
        "nothing else was written"
    );

    // Then 100 random buffers and 200 random mutations of a frame: each
    // counted, the endpoint turning on.
    let mut rng = Rng::new(9, StreamKind::Host, 1);
    let before = d.truncated + d.malformed;
    for i in 0..300 {
        let m = if i < 100 {
            let n = rng.below(300) as usize;
            (0..n).map(|_| rng.next_u64() as u8).collect()
        } else {
            let mut m = good.clone();
            let at = rng.below(m.len() as u64) as usize;
            m[at] ^= 1 + rng.below(255) as u8;
            m
        };
        turn(&mut ep, &m);
    }
    for _ in 0..50 {
        ep.turn(Duration::from_millis(1)).unwrap();
    }
    assert_eq!(ep.io.datagrams_received, sends.len() as u64 + 300);
    let after = ep.drops.truncated + ep.drops.malformed;
    assert!(after - before >= 100, "{:?}", ep.drops);
}
