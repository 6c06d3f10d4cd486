//! Every received datagram is hostile. A transfer completes, verified,
//! while another socket sprays garbage at the server; and forged packets
//! from the peer's own address (random bytes, mutated frames, frames
//! with valid checksums for an unknown QP, an address outside the
//! region, a PSN far outside the window, a replay) are each counted by
//! reason and dropped, and nothing lands outside the registered region.

use crate::common;

use std::net::UdpSocket;
use std::time::Duration;

use datapath::codec;
use datapath::endpoint::Peer;
use datapath::session::SERVER_BASE;
use datapath::VerbName;
use engine::{Rng, StreamKind};
use transport::{Packet, Verb};

#[test]
fn a_transfer_survives_a_spray_of_garbage() {
    let (addr, server) = common::serve_once(None, 64);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sprayer = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let s = UdpSocket::bind("127.0.0.1:0").unwrap();
            let mut rng = Rng::new(5, StreamKind::Host, 0);
            let mut sent = 0u64;
            let mut buf = vec![0u8; 2048];
            while !stop.load(std::sync::atomic::Ordering::Relaxed) && sent < 200_000 {
                let n = rng.below(buf.len() as u64) as usize;
                for b in &mut buf[..n] {
                    *b = rng.next_u64() as u8;
                }
                if s.send_to(&buf[..n], addr).is_ok() {
                    sent += 1;
                }
            }
            sent
        })
    };
    let o = common::options(addr, "irn", VerbName::Write, 8 << 20);
    let report = datapath::run(&o);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let sent = sprayer.join().unwrap();
    let report = report.unwrap();
    server.join().unwrap().unwrap();
    let unknown = report
        .server_drops
        .iter()
        .find(|(k, _)| k == "unknown_peer")
        .map(|(_, n)| *n)
        .unwrap();
    assert!(sent > 0 && unknown > 0, "sprayed {sent}, counted {unknown}");
}

#[test]
fn forged_packets_are_counted_by_reason_and_stay_inside_the_region() {
    let (mut ep, local) = common::responder("roce", 4096);
    let attacker = UdpSocket::bind("127.0.0.1:0").unwrap();
    let std::net::SocketAddr::V4(from) = attacker.local_addr().unwrap() else {
        panic!("bound to IPv4");
    };
    ep.add_peer(Peer {
        addr: from,
        ports: 1,
    });
    let stranger = UdpSocket::bind("127.0.0.1:0").unwrap();

    let mut rng = Rng::new(9, StreamKind::Host, 1);
    let mut frame = Vec::new();
    let dgram = |p: &Packet, payload: &[u8], frame: &mut Vec<u8>| {
        codec::Framing::Roce
            .encode(p, from, local, payload, frame)
            .unwrap();
        frame[wire::roce::BTH_AT..].to_vec()
    };
    let payload = vec![0xab; 1024];
    let good = dgram(
        &common::write(100, 0, SERVER_BASE, 1024, from.port()),
        &payload,
        &mut frame,
    );
    let mut sends: Vec<Vec<u8>> = Vec::new();
    // 100 random buffers.
    for _ in 0..100 {
        let n = rng.below(300) as usize;
        sends.push((0..n).map(|_| rng.next_u64() as u8).collect());
    }
    // 50 mutations of a valid frame: one byte changed each.
    for _ in 0..50 {
        let mut m = good.clone();
        let i = rng.below(m.len() as u64) as usize;
        m[i] ^= 1 + rng.below(255) as u8;
        sends.push(m);
    }
    // Valid checksums, forged contents.
    sends.push(dgram(
        &common::write(100, 5, SERVER_BASE, 1024, from.port()),
        &payload,
        &mut frame,
    ));
    sends.push(dgram(
        &common::write(100, 0, SERVER_BASE + 4000, 1024, from.port()),
        &payload,
        &mut frame,
    ));
    sends.push(dgram(
        &common::write(100, 0, u64::MAX - 10, 1024, from.port()),
        &payload,
        &mut frame,
    ));
    sends.push(good.clone());
    sends.push(good.clone());
    sends.push(dgram(
        &common::write(100 + 5000, 0, SERVER_BASE, 1024, from.port()),
        &payload,
        &mut frame,
    ));
    for s in &sends {
        attacker.send_to(s, local).unwrap();
        // Paced, so no datagram is lost to the socket buffer.
        ep.turn(Duration::ZERO).unwrap();
    }
    stranger.send_to(&good, local).unwrap();
    for _ in 0..200 {
        ep.turn(Duration::from_millis(1)).unwrap();
    }
    let d = ep.drops;
    assert_eq!(d.unknown_peer, 1, "{d:?}");
    assert_eq!(d.truncated + d.malformed + d.checksum, 150, "{d:?}");
    assert!(d.checksum >= 40, "mutations are caught by the ICRC: {d:?}");
    let s = ep.nic.stats();
    assert_eq!(s.malformed_dropped, 1, "the unknown QP");
    assert_eq!(s.access_errors, 2, "outside the region, twice");
    assert_eq!(s.duplicates_received, 1, "the replay");
    assert!(s.out_of_order_dropped >= 1, "the PSN far ahead");
    let bytes = ep.mem.bytes();
    assert!(
        bytes[..1024].iter().all(|&b| b == 0xab),
        "the one good write landed"
    );
    assert!(
        bytes[1024..].iter().all(|&b| b == 0),
        "nothing else was written"
    );
}

/// With memory windows set, a peer reaches only what was opened to it:
/// a WRITE inside its write window lands and a READ inside its read
/// window is answered, while a WRITE outside any window, a WRITE into a
/// read-only window and a READ of a write-only window are dropped
/// before the NIC and counted (the NIC never sees them: its PSN stays).
#[test]
fn with_windows_a_peer_reaches_only_what_was_opened_to_it() {
    use datapath::window::{Access, Windows};
    let (mut ep, local) = common::responder("roce", 8192);
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    peer.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let std::net::SocketAddr::V4(from) = peer.local_addr().unwrap() else {
        panic!("bound to IPv4");
    };
    let host = ep.add_peer(Peer {
        addr: from,
        ports: 1,
    });
    let mut w = Windows::default();
    w.open(host, SERVER_BASE, 1024, Access::Write);
    w.open(host, SERVER_BASE + 4096, 1024, Access::Read);
    ep.windows = Some(w);
    let mut frame = Vec::new();
    let mut dgram = |p: &Packet, payload: &[u8]| {
        codec::Framing::Roce
            .encode(p, from, local, payload, &mut frame)
            .unwrap();
        frame[wire::roce::BTH_AT..].to_vec()
    };
    let read = |psn: u32, addr: u64, len: u32| Packet {
        verb: Verb::Read,
        payload: 0,
        msg_len: u64::from(len),
        ..common::write(psn, 0, addr, 0, from.port())
    };
    let payload = vec![0xab; 1024];
    let sport = from.port();
    let sends = [
        // Outside every window, into a read-only one, a READ of a
        // write-only one: all with the PSN the NIC expects next.
        dgram(
            &common::write(100, 0, SERVER_BASE + 1024, 1024, sport),
            &payload,
        ),
        dgram(
            &common::write(100, 0, SERVER_BASE + 4096, 1024, sport),
            &payload,
        ),
        dgram(&read(100, SERVER_BASE, 1024), &[]),
        // Inside: the WRITE lands, then the READ is answered.
        dgram(&common::write(100, 0, SERVER_BASE, 1024, sport), &payload),
        dgram(&read(101, SERVER_BASE + 4096, 1024), &[]),
    ];
    for s in &sends {
        peer.send_to(s, local).unwrap();
        ep.turn(Duration::ZERO).unwrap();
    }
    for _ in 0..50 {
        ep.turn(Duration::from_millis(1)).unwrap();
    }
    assert_eq!(ep.drops.outside_window, 3, "{:?}", ep.drops);
    let s = ep.nic.stats();
    assert_eq!(
        (s.access_errors, s.duplicates_received, s.malformed_dropped),
        (0, 0, 0),
        "the NIC saw only the two good ones"
    );
    let bytes = ep.mem.bytes();
    assert!(bytes[..1024].iter().all(|&b| b == 0xab), "the WRITE landed");
    assert!(bytes[1024..].iter().all(|&b| b == 0), "nothing else did");
    // The READ's response (and the WRITE's ACK) came back to the peer.
    let mut got = vec![0u8; 2048];
    let mut sizes = Vec::new();
    while let Ok(n) = peer.recv(&mut got) {
        sizes.push(n);
        if n > 1024 {
            break;
        }
    }
    assert!(
        sizes.iter().any(|&n| n > 1024),
        "no READ response: {sizes:?}"
    );
}

/// A WRITE whose packets disagree with the length its RETH announced is
/// refused before the NIC, counted as `length_mismatch` and answered
/// with IBA's NAK "invalid request" (AETH syndrome 0x61): a last packet
/// that ends 1040 bytes into a message announced as 3072, and a first
/// packet carrying 1024 bytes of a message announced as 100. Neither's
/// bytes land, and the message announced as 3072 never completes.
#[test]
fn a_write_that_disagrees_with_its_reth_length_is_naked_and_counted() {
    let (mut ep, local) = common::responder("roce", 4096);
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    peer.set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let std::net::SocketAddr::V4(from) = peer.local_addr().unwrap() else {
        panic!("bound to IPv4");
    };
    ep.add_peer(Peer {
        addr: from,
        ports: 1,
    });
    let mut frame = Vec::new();
    let mut dgram = |p: &Packet, payload: &[u8]| {
        codec::Framing::Roce
            .encode(p, from, local, payload, &mut frame)
            .unwrap();
        frame[wire::roce::BTH_AT..].to_vec()
    };
    let sport = from.port();
    let first = Packet {
        last: false,
        msg_len: 3072,
        ..common::write(100, 0, SERVER_BASE, 1024, sport)
    };
    let short_last = Packet {
        first: false,
        ipsn: 1,
        msg_len: 3072,
        ..common::write(101, 0, SERVER_BASE + 1024, 16, sport)
    };
    let sends = [
        dgram(&first, &[0xab; 1024]),
        dgram(&short_last, &[0xcd; 16]),
    ];
    for s in &sends {
        peer.send_to(s, local).unwrap();
        ep.turn(Duration::ZERO).unwrap();
    }
    // A second responder: a first packet longer than its message.
    let (mut ep2, local2) = common::responder("roce", 4096);
    ep2.add_peer(Peer {
        addr: from,
        ports: 1,
    });
    let long_first = Packet {
        last: false,
        msg_len: 100,
        ..common::write(100, 0, SERVER_BASE, 1024, sport)
    };
    let mut frame2 = Vec::new();
    codec::Framing::Roce
        .encode(&long_first, from, local2, &[0xee; 1024], &mut frame2)
        .unwrap();
    peer.send_to(&frame2[wire::roce::BTH_AT..], local2).unwrap();
    // Wait (bounded) for both NAKs: opcode Acknowledge (0x11), AETH
    // syndrome 0x61 after the 12-byte BTH.
    let deadline = std::time::Instant::now() + Duration::from_secs(3);
    let mut naks = Vec::new();
    let mut buf = vec![0u8; 4096];
    while naks.len() < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "NAKs from {naks:?}; drops {:?} and {:?}",
            ep.drops,
            ep2.drops
        );
        ep.turn(Duration::from_millis(1)).unwrap();
        ep2.turn(Duration::from_millis(1)).unwrap();
        while let Ok((n, src)) = peer.recv_from(&mut buf) {
            if n > 12 && buf[0] == 0x11 && buf[12] == 0x61 {
                // To the sender's QP 0: QP 2 on the wire (IBA reserves 0
                // and 1 for management).
                assert_eq!(buf[5..8], [0, 0, 2], "the NAK's destination QP");
                naks.push(src);
            }
        }
    }
    assert_eq!(ep.drops.length_mismatch, 1, "{:?}", ep.drops);
    assert_eq!(ep2.drops.length_mismatch, 1, "{:?}", ep2.drops);
    assert!(ep.completions.is_empty() && ep2.completions.is_empty());
    let bytes = ep.mem.bytes();
    assert!(bytes[..1024].iter().all(|&b| b == 0xab), "the first landed");
    assert!(
        bytes[1024..].iter().all(|&b| b == 0),
        "the short last did not"
    );
    assert!(
        ep2.mem.bytes().iter().all(|&b| b == 0),
        "the long first did not"
    );
}

/// Every datagram received is counted under a reason when dropped, an
/// empty one too: from the peer's address it is `truncated`, from
/// anyone else `unknown_peer`.
#[test]
fn empty_datagrams_are_counted_as_received_and_dropped() {
    let (mut ep, local) = common::responder("roce", 4096);
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    let std::net::SocketAddr::V4(from) = peer.local_addr().unwrap() else {
        panic!("bound to IPv4");
    };
    ep.add_peer(Peer {
        addr: from,
        ports: 1,
    });
    let stranger = UdpSocket::bind("127.0.0.1:0").unwrap();
    for _ in 0..3 {
        peer.send_to(&[], local).unwrap();
        stranger.send_to(&[], local).unwrap();
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(3);
    while ep.drops.truncated + ep.drops.unknown_peer < 6 {
        assert!(
            std::time::Instant::now() < deadline,
            "counted {:?} of 6 empty datagrams, received {}",
            ep.drops,
            ep.io.datagrams_received
        );
        ep.turn(Duration::from_millis(1)).unwrap();
    }
    assert_eq!((ep.drops.truncated, ep.drops.unknown_peer), (3, 3));
    assert_eq!(ep.io.datagrams_received, 6);
}
