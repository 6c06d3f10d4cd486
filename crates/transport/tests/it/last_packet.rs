//! The last packet of a WRITE under Eunomia's layer (§3.5 "WRITE",
//! Appendix A; `EunomiaConfig::last_packet`): with the sender hold, the
//! packet that ends a WRITE with nothing posted after it leaves only once
//! the cumulative ACK covers every earlier PSN (even when the responder
//! coalesces ACKs: the packet before it asks for one), which costs about
//! one RTT against the receiver hold; a SEND is not delayed, nor a held
//! QP's READ responses, nor anything under the ideal layer; and the
//! static bitmap lives only as long as its connection.

use crate::common;

use common::chaos::{Chaos, ChaosWorld};
use engine::time::US;
use engine::Time;
use transport::order::eunomia::{ACK_REQ, LAST, SACK};
use transport::{
    Engine, EunomiaConfig, IrnConfig, LastPacket, Nic, NicConfig, OrderingKind, Packet, PacketKind,
    QpConfig, StaticBitmapConfig, Transmit, Verb, WorkRequest,
};

fn eunomia(last_packet: LastPacket) -> OrderingKind {
    OrderingKind::Eunomia(EunomiaConfig {
        last_packet,
        ..EunomiaConfig::default()
    })
}

fn engines() -> [Engine; 2] {
    [Engine::GoBackN, Engine::Irn(IrnConfig::default())]
}

/// Everything `nic` sends from `now` on, until it has nothing (or waits
/// for input); the time it stopped.
fn drain(nic: &mut Nic, mut now: Time) -> (Vec<Packet>, Time) {
    let mut out = Vec::new();
    loop {
        match nic.poll_transmit(now, 0) {
            Transmit::Packet(p) => out.push(p),
            Transmit::At(t) => now = t,
            Transmit::Idle => return (out, now),
        }
    }
}

fn pair(engine: Engine, ordering: OrderingKind, ack_every: u32) -> (Nic, Nic) {
    let cfg = |host| NicConfig {
        host,
        engine,
        ordering,
        ack_every,
        ..NicConfig::default()
    };
    let (mut a, mut b) = (Nic::new(cfg(0)).unwrap(), Nic::new(cfg(1)).unwrap());
    let qp = |peer_host| QpConfig {
        peer_host,
        peer_qp: 0,
        sport: 1,
    };
    a.create_qp(qp(1)).unwrap();
    b.create_qp(qp(0)).unwrap();
    (a, b)
}

/// A 3-packet SEND then a 2-packet WRITE: PSNs 0-3 go at once, PSN 4
/// (the WRITE's last, the connection's last) waits for the ACK of PSN 3,
/// which the receiver agent sends even with go-back-N coalescing ACKs by
/// four (PSN 3 carries ACK_REQ); only that ACK releases it, with LAST.
#[test]
fn sender_holds_the_last_write_packet_until_everything_before_is_acked() {
    for engine in engines() {
        let (mut a, mut b) = pair(engine, eunomia(LastPacket::SenderHold), 4);
        b.post_recv(0, 7, 3000).unwrap();
        for (wr_id, verb, len) in [(1, Verb::Send, 3000), (2, Verb::Write, 2000)] {
            let wr = WorkRequest {
                wr_id,
                verb,
                len,
                ..WorkRequest::default()
            };
            a.post_send(0, 0, wr).unwrap();
        }
        let (first, held_at) = drain(&mut a, 0);
        let psns: Vec<u32> = first.iter().map(|p| p.psn).collect();
        assert_eq!(psns, [0, 1, 2, 3], "{engine:?}: PSN 4 held");
        let flags: Vec<u8> = first.iter().map(|p| p.mp_flags).collect();
        assert_eq!(flags, [0, 0, 0, ACK_REQ], "{engine:?}");
        for p in &first {
            b.on_packet(US, p);
        }
        let (acks, _) = drain(&mut b, US);
        let covers_all = |p: &Packet| p.kind == PacketKind::Ack && p.psn == 4;
        let (last_ack, early): (Vec<Packet>, Vec<Packet>) = acks.into_iter().partition(covers_all);
        assert!(!last_ack.is_empty(), "{engine:?}: PSN 3 is acknowledged");
        for p in &early {
            a.on_packet(3 * US, p);
            assert!(drain(&mut a, 3 * US).0.is_empty(), "{engine:?}: still held");
        }
        a.on_packet(5 * US, &last_ack[0]);
        let (rest, _) = drain(&mut a, 5 * US);
        assert_eq!(rest.len(), 1, "{engine:?}");
        assert_eq!((rest[0].psn, rest[0].mp_flags & LAST), (4, LAST));
        let st = a.stats();
        assert_eq!(st.eunomia_sender_held, 1);
        assert_eq!(st.eunomia_sender_hold_ps, 5 * US - held_at);
        b.on_packet(6 * US, &rest[0]);
        assert_eq!(b.stats().eunomia_receiver_held, 0, "it came in order");
    }
}

/// A QP whose WRITE's last packet is held still sends its READ
/// responses.
#[test]
fn a_held_write_does_not_hold_read_responses() {
    let (mut a, mut b) = pair(Engine::GoBackN, eunomia(LastPacket::SenderHold), 1);
    let write = WorkRequest {
        wr_id: 1,
        verb: Verb::Write,
        len: 2000,
        ..WorkRequest::default()
    };
    a.post_send(0, 0, write).unwrap();
    let read = WorkRequest {
        wr_id: 2,
        verb: Verb::Read,
        len: 3000,
        ..WorkRequest::default()
    };
    b.post_send(0, 0, read).unwrap();
    let (reqs, _) = drain(&mut b, 0);
    assert_eq!(reqs.len(), 1);
    let (first, _) = drain(&mut a, 0);
    assert_eq!(first.len(), 1, "the WRITE's last packet is held");
    a.on_packet(US, &reqs[0]);
    let (out, _) = drain(&mut a, US);
    assert!(
        out.iter().all(|p| p.kind == PacketKind::ReadResponse) && out.len() == 3,
        "{out:?}"
    );
}

fn reordering() -> Chaos {
    Chaos {
        drop: 0.0,
        dup: 0.0,
        reorder: 0.2,
        jitter: 8 * US,
        paths: vec![10 * US],
    }
}

/// One message of `verb` (20 packets) over the reordering channel.
fn run(engine: Engine, ordering: OrderingKind, verb: Verb, seed: u64) -> ChaosWorld {
    let cfg = NicConfig {
        engine,
        ordering,
        ..NicConfig::default()
    };
    let mut w = ChaosWorld::new(cfg, reordering(), seed);
    w.post_recv(9, 0, 20_000);
    w.post_send(
        WorkRequest {
            wr_id: 1,
            verb,
            len: 20_000,
            ..WorkRequest::default()
        },
        false,
    );
    w.run_until(100_000 * US);
    assert!(w.nics[0].is_quiescent() && w.nics[1].is_quiescent());
    w
}

/// When the requester completed.
fn finish(w: &ChaosWorld) -> Time {
    let c = w.completions.iter().find(|(i, _)| *i == 0).expect("done");
    c.1.at
}

/// When NIC 0 first sent the message's last packet (PSN 19), and when
/// every PSN before it had been acknowledged at NIC 0: by a cumulative ACK
/// past it or, as IRN's sender counts them, by a SACK of Eunomia's
/// receiver agent (a tracked packet is placed).
fn last_sent_and_covered(w: &ChaosWorld) -> (Time, Time) {
    let sent = w
        .sent
        .iter()
        .find(|(_, i, p)| *i == 0 && p.kind == PacketKind::Request && p.psn == 19)
        .expect("sent")
        .0;
    let acked = |psn: u32| {
        w.arrived
            .iter()
            .find(|(_, i, p)| {
                *i == 0
                    && p.kind == PacketKind::Ack
                    && (p.psn > psn || (p.mp_flags & SACK != 0 && p.sack_psn == psn))
            })
            .expect("acknowledged")
            .0
    };
    (sent, (0..19).map(acked).max().unwrap())
}

/// Over a channel that reorders 20% of packets by up to 8 us on a 10 us
/// path: a WRITE completes about one RTT later with the sender hold than
/// with the receiver hold, its last packet leaving only once every earlier
/// PSN is acknowledged (with the receiver hold it goes before, and waits
/// at the receiver when it overtakes); a SEND completes at the same
/// instant with either.
#[test]
fn sender_hold_costs_a_write_one_rtt_and_a_send_nothing() {
    // Serialisation of a 1000-byte packet and an ACK at 100 Gb/s is well
    // under 1 us: the round trip is the two 10 us paths.
    let rtt = 20 * US;
    for engine in engines() {
        let (mut delays, mut overtook) = (Vec::new(), 0);
        for seed in 0..8 {
            let s = run(engine, eunomia(LastPacket::SenderHold), Verb::Write, seed);
            let r = run(engine, eunomia(LastPacket::ReceiverHold), Verb::Write, seed);
            let (sent, covered) = last_sent_and_covered(&s);
            assert!(
                sent >= covered,
                "{engine:?} seed {seed}: sent before acknowledged"
            );
            let (sent_r, covered_r) = last_sent_and_covered(&r);
            assert!(
                sent_r < covered_r,
                "{engine:?} seed {seed}: the receiver hold waits for nothing"
            );
            let st = s.nics[0].stats();
            assert_eq!(st.eunomia_sender_held, 1);
            assert!(st.eunomia_sender_hold_ps >= rtt, "{st:?}");
            assert_eq!(r.nics[0].stats().eunomia_sender_held, 0);
            overtook += r.nics[1].stats().eunomia_receiver_held;
            assert_eq!(
                r.nics[1].stats().eunomia_receiver_held_bytes,
                1000 * r.nics[1].stats().eunomia_receiver_held
            );
            delays.push(finish(&s) as i64 - finish(&r) as i64);

            let s = run(engine, eunomia(LastPacket::SenderHold), Verb::Send, seed);
            let r = run(engine, eunomia(LastPacket::ReceiverHold), Verb::Send, seed);
            assert_eq!(
                finish(&s),
                finish(&r),
                "{engine:?} seed {seed}: a SEND is not held"
            );
            assert_eq!(s.nics[0].stats().eunomia_sender_held, 0);
        }
        let mean = delays.iter().sum::<i64>() / delays.len() as i64;
        eprintln!("{engine:?}: WRITE finishes later by {delays:?} ps (mean {mean}); last packet overtook {overtook} times");
        assert!(
            delays
                .iter()
                .all(|&d| d > rtt as i64 / 2 && d < 2 * rtt as i64),
            "{engine:?}: {delays:?}"
        );
        assert!(overtook > 0, "{engine:?}: the receiver hold was exercised");
    }
}

/// A static bitmap is made at a connection's first request packet and
/// freed when it completes: the NIC's memory counts only live
/// connections, and a QP used again makes a new one.
#[test]
fn static_bitmap_lives_as_long_as_its_connection() {
    let fixed = OrderingKind::StaticBitmap(StaticBitmapConfig {
        last_packet: LastPacket::ReceiverHold,
        ..StaticBitmapConfig::default()
    });
    let (mut a, mut b) = pair(Engine::GoBackN, fixed, 1);
    assert_eq!(b.order_memory().unwrap().peak_bytes, 0, "no connection yet");
    for round in 1..=2u64 {
        let wr = WorkRequest {
            wr_id: round,
            verb: Verb::Write,
            len: 3000,
            ..WorkRequest::default()
        };
        a.post_send(0, 0, wr).unwrap();
        let (pkts, now) = drain(&mut a, round * 100 * US);
        assert_eq!(pkts.len(), 3);
        b.on_packet(now, &pkts[0]);
        let m = b.order_memory().unwrap();
        assert_eq!((m.bitmap_bytes, m.metadata_bytes), (32, 9), "live");
        assert_eq!(b.qp_bitmap_bits(0).unwrap(), (256, 256));
        b.on_packet(now, &pkts[2]);
        b.on_packet(now, &pkts[1]);
        let m = b.order_memory().unwrap();
        assert_eq!((m.bitmap_bytes, m.metadata_bytes), (0, 0), "freed");
        assert_eq!(m.peak_bytes, 41, "one connection at a time");
        assert_eq!(b.qp_bitmap_bits(0).unwrap(), (0, 256));
        let st = b.stats();
        assert_eq!(
            (st.eunomia_bitmaps_made, st.eunomia_bitmaps_freed),
            (round, round)
        );
        let (acks, _) = drain(&mut b, now);
        for p in &acks {
            a.on_packet(now + US, p);
        }
    }
    // The requester's side never received a request: no bitmap.
    assert_eq!(a.order_memory().unwrap().peak_bytes, 0);
}

/// The ideal layer holds nothing back: a WRITE's last packet leaves before
/// the ACK of the packets before it.
#[test]
fn ideal_layer_does_not_hold_the_last_packet() {
    for engine in engines() {
        let w = run(engine, OrderingKind::Ideal, Verb::Write, 1);
        let (sent, covered) = last_sent_and_covered(&w);
        assert!(sent < covered, "{engine:?}");
        assert_eq!(w.nics[0].stats().eunomia_sender_held, 0);
    }
}
