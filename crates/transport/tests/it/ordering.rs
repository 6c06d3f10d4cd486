//! The ideal ordering layer (`NicConfig::ordering = OrderingKind::Ideal`)
//! over the chaos channel, moving real bytes: on a channel that reorders
//! without loss, go-back-N under the layer retransmits nothing and the
//! responder's memory equals in-order application, where without the
//! layer it rewinds; with loss as well, the engine still recovers and the
//! memory is right; the counters still say what the channel did; and the
//! layer refuses MP-RDMA, which orders its own packets. Eunomia's layer
//! (`OrderingKind::Eunomia`) and the static bitmap over go-back-N and IRN:
//! the same bytes and completions, with a cap and a memory controller
//! small enough that packets are dropped and NACKed, and every bitmap
//! freed once the connection completes.

use crate::common;

use common::chaos::{Chaos, ChaosWorld, Mem, BASE};
use engine::time::{MS, US};
use engine::Time;
use transport::{
    Engine, EunomiaConfig, IrnConfig, LastPacket, MpRdmaConfig, Nic, NicConfig, OrderingKind,
    PacketKind, RtoLow, StaticBitmapConfig, Verb, WorkRequest,
};

const LEN: usize = 200_000;

/// NIC 0's source bytes: not periodic, so a misplaced packet shows.
fn source() -> Vec<u8> {
    (0..LEN as u64)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect()
}

/// A WRITE of `LEN` bytes, then a SEND of `LEN` bytes into a receive
/// buffer placed after it, over `chaos`; NIC 1's memory is `2 * LEN`.
fn run(engine: Engine, ordering: OrderingKind, chaos: Chaos, seed: u64) -> ChaosWorld {
    let cfg = NicConfig {
        engine,
        ordering,
        rto: MS,
        ..NicConfig::default()
    };
    let mut w = ChaosWorld::new(cfg, chaos, seed)
        .with_memory(Mem::new(source()), Mem::new(vec![0; 2 * LEN]));
    w.post_recv(9, BASE + LEN as u64, LEN as u64);
    w.post_send(
        WorkRequest {
            wr_id: 1,
            verb: Verb::Write,
            len: LEN as u64,
            local_addr: BASE,
            remote_addr: BASE,
            ..WorkRequest::default()
        },
        false,
    );
    w.post_send(
        WorkRequest {
            wr_id: 2,
            verb: Verb::Send,
            len: LEN as u64,
            local_addr: BASE,
            ..WorkRequest::default()
        },
        false,
    );
    w.run_until(2_000 * MS);
    w
}

fn reordering(drop: f64) -> Chaos {
    Chaos {
        drop,
        dup: 0.0,
        reorder: 0.1,
        jitter: 20 * US,
        paths: vec![10 * US],
    }
}

/// NIC 1's memory is the source twice (the WRITE, then the SEND), and
/// every work request completed once at each end that reports it.
fn assert_in_order_result(w: &ChaosWorld) {
    let mems = w.mems.as_ref().unwrap();
    let b = &mems[1].bytes;
    let src = source();
    assert!(b[..LEN] == src[..], "the WRITE's bytes");
    assert!(b[LEN..] == src[..], "the SEND's bytes");
    assert_eq!(mems[1].violations, 0);
    // WRITE and SEND at both ends.
    assert_eq!(w.completions.len(), 4, "{:?}", w.completions);
}

#[test]
fn ideal_layer_removes_reordering_retransmissions_under_go_back_n() {
    let none = run(Engine::GoBackN, OrderingKind::None, reordering(0.0), 3);
    let ideal = run(Engine::GoBackN, OrderingKind::Ideal, reordering(0.0), 3);
    for w in [&none, &ideal] {
        assert_eq!(w.dropped, 0, "lossless");
        assert_in_order_result(w);
    }
    let (sn, si) = (none.nics[0].stats(), ideal.nics[0].stats());
    assert!(sn.retransmitted_packets > 0, "go-back-N rewinds: {sn:?}");
    assert_eq!(si.retransmitted_packets, 0, "{si:?}");
    assert_eq!(si.timeouts, 0);
    let rx = ideal.nics[1].stats();
    assert!(rx.ordering_held > 0 && rx.ordering_max_held > 0, "{rx:?}");
    assert_eq!(rx.out_of_order_dropped, 0, "the engine saw no gap");
    // The counters still say what the channel did, before the layer:
    // every held packet was counted out of order, and every packet once.
    let r = ideal.nics[1].qp_reorder(0).unwrap();
    assert_eq!(r.ooo_packets, rx.ordering_held);
    assert_eq!(r.duplicates, 0);
    assert_eq!(rx.ood.count(), 2 * LEN as u64 / 1000);
    assert_eq!(rx.ood.count() - rx.ood.buckets[0], r.ooo_packets);
    let rn = none.nics[1].qp_reorder(0).unwrap();
    assert!(rn.duplicates > 0);
    eprintln!(
        "reordering channel: retransmitted none {} ideal {}; ooo none {} ideal {}; held at most {}",
        sn.retransmitted_packets,
        si.retransmitted_packets,
        rn.ooo_packets,
        r.ooo_packets,
        rx.ordering_max_held
    );
}

#[test]
fn ideal_layer_with_loss_still_recovers_correct_memory() {
    for seed in 0..6 {
        for engine in [Engine::GoBackN, Engine::Irn(IrnConfig::default())] {
            let w = run(engine, OrderingKind::Ideal, reordering(0.02), seed);
            assert!(w.dropped > 0, "seed {seed}: lossy");
            assert_in_order_result(&w);
            assert!(w.nics[0].stats().retransmitted_packets > 0);
            assert!(w.nics[0].is_quiescent() && w.nics[1].is_quiescent());
        }
    }
}

#[test]
fn ideal_layer_keeps_in_order_runs_unchanged() {
    let clean = || Chaos {
        drop: 0.0,
        dup: 0.0,
        reorder: 0.0,
        jitter: 0,
        paths: vec![10 * US],
    };
    let none = run(Engine::GoBackN, OrderingKind::None, clean(), 1);
    let ideal = run(Engine::GoBackN, OrderingKind::Ideal, clean(), 1);
    assert_in_order_result(&ideal);
    assert_eq!(none.completions, ideal.completions, "same times");
    assert_eq!(none.nics[1].stats(), ideal.nics[1].stats());
}

#[test]
fn ideal_layer_refuses_mprdma() {
    let cfg = NicConfig {
        engine: Engine::MpRdma(MpRdmaConfig::default()),
        ordering: OrderingKind::Ideal,
        ..NicConfig::default()
    };
    let e = Nic::new(cfg).err().expect("refused");
    assert!(e.to_string().contains("mprdma"), "{e}");
    let mut nic = Nic::new(NicConfig {
        ordering: OrderingKind::Ideal,
        ..NicConfig::default()
    })
    .unwrap();
    let qp = transport::QpConfig {
        peer_host: 1,
        peer_qp: 0,
        sport: 1,
    };
    let mp = Engine::MpRdma(MpRdmaConfig::default());
    assert!(nic
        .create_qp_with(qp, transport::CcConfig::None, mp)
        .is_err());
}

fn eunomia(block_bits: u32, cap_bits: u32, memory_bytes: u32) -> OrderingKind {
    OrderingKind::Eunomia(EunomiaConfig {
        block_bits,
        cap_bits,
        memory_bytes,
        ..EunomiaConfig::default()
    })
}

/// `kind` (a bitmap layer) with its WRITEs' last packets held at `last`.
fn with_last(kind: OrderingKind, last: LastPacket) -> OrderingKind {
    match kind {
        OrderingKind::Eunomia(c) => OrderingKind::Eunomia(EunomiaConfig {
            last_packet: last,
            ..c
        }),
        OrderingKind::StaticBitmap(c) => OrderingKind::StaticBitmap(StaticBitmapConfig {
            last_packet: last,
            ..c
        }),
        k => k,
    }
}

/// Under go-back-N and IRN, with and without loss, holding a WRITE's last
/// packet at either end: the bytes and the completions of in-order
/// application; the controller empty at the end (every bitmap made was
/// freed, the static one too: it lives as long as its connection); with a
/// cap far below the reordering degree, packets beyond it are dropped and
/// NACKed and still recovered.
#[test]
fn eunomia_keeps_memory_right_under_both_engines() {
    let layers = [
        ("paper", eunomia(16, 256, 2048)),
        ("small cap", eunomia(8, 16, 2048)),
        // One connection's metadata (16 + 2 x 8 bytes) and two blocks.
        ("full controller", eunomia(16, 128, 36)),
        (
            "static",
            OrderingKind::StaticBitmap(StaticBitmapConfig {
                bits: 24,
                ..StaticBitmapConfig::default()
            }),
        ),
    ];
    for (name, layer) in layers {
        let (mut tracked, mut dropped) = (0, 0);
        for last in [LastPacket::SenderHold, LastPacket::ReceiverHold] {
            for seed in 0..4 {
                for engine in [Engine::GoBackN, Engine::Irn(IrnConfig::default())] {
                    for drop in [0.0, 0.02] {
                        let w = run(engine, with_last(layer, last), reordering(drop), seed);
                        assert_in_order_result(&w);
                        assert!(w.nics[0].is_quiescent() && w.nics[1].is_quiescent());
                        let rx = w.nics[1].stats();
                        tracked += rx.eunomia_sacks_sent;
                        dropped += rx.eunomia_beyond_cap_dropped + rx.eunomia_untracked_dropped;
                        assert_eq!(rx.ordering_held, rx.eunomia_sacks_sent);
                        assert!(rx.eunomia_bitmaps_made > 0, "{name}: {rx:?}");
                        assert_eq!(rx.eunomia_bitmaps_made, rx.eunomia_bitmaps_freed);
                        let m = w.nics[1].order_memory().expect("a bitmap layer");
                        assert_eq!(m.bitmap_bytes + m.metadata_bytes, 0, "{name}");
                        if let OrderingKind::Eunomia(_) = layer {
                            assert!(m.peak_bytes > 0);
                        } else {
                            // One connection at a time: 3 bytes of bitmap
                            // and 9 of state.
                            assert_eq!(m.peak_bytes, 12, "{name}");
                            assert_eq!(w.nics[1].qp_bitmap_bits(0).unwrap(), (0, 24));
                        }
                        // The SEND follows the WRITE: its last packet is
                        // not the connection's, and nothing is held.
                        assert_eq!(w.nics[0].stats().eunomia_sender_held, 0);
                    }
                }
            }
        }
        assert!(tracked > 0, "{name}");
        if name != "paper" {
            assert!(dropped > 0, "{name}: the bitmap could not track everything");
        }
        eprintln!("{name}: {tracked} tracked, {dropped} dropped and NACKed");
    }
}

/// On a channel that reorders within the cap and loses nothing, go-back-N
/// under Eunomia retransmits nothing, and the SACKs are ignored.
#[test]
fn eunomia_removes_reordering_retransmissions_within_the_cap() {
    let chaos = Chaos {
        drop: 0.0,
        dup: 0.0,
        reorder: 0.1,
        jitter: 5 * US,
        paths: vec![10 * US],
    };
    let w = run(Engine::GoBackN, eunomia(16, 256, 2048), chaos, 3);
    assert_in_order_result(&w);
    let (tx, rx) = (w.nics[0].stats(), w.nics[1].stats());
    assert!(rx.eunomia_sacks_sent > 0);
    assert_eq!(rx.eunomia_nacks_sent, 0, "{rx:?}");
    assert_eq!(tx.retransmitted_packets, 0, "{tx:?}");
    assert_eq!(rx.out_of_order_dropped, 0, "the engine saw no gap");
}

#[test]
fn eunomia_refuses_mprdma() {
    let cfg = NicConfig {
        engine: Engine::MpRdma(MpRdmaConfig::default()),
        ordering: eunomia(16, 256, 2048),
        ..NicConfig::default()
    };
    let e = Nic::new(cfg).err().expect("refused");
    assert!(e.to_string().contains("mprdma"), "{e}");
}

/// §3.5: a completion only once everything before it has arrived. A
/// 3-packet SEND and a 1-packet WRITE arrive last-first; the responder
/// reports nothing until the first packet fills the gap, then the SEND's
/// completion before the WRITE's, each once; the requester gets SACKs
/// (which go-back-N ignores) and no NACK. The WRITE's last packet, with
/// the receiver hold, waited in host memory: counted with its bytes.
#[test]
fn eunomia_completes_only_when_everything_before_arrived() {
    for engine in [Engine::GoBackN, Engine::Irn(IrnConfig::default())] {
        let cfg = |host| NicConfig {
            host,
            engine,
            ordering: with_last(eunomia(16, 256, 2048), LastPacket::ReceiverHold),
            ..NicConfig::default()
        };
        let (mut a, mut b) = (Nic::new(cfg(0)).unwrap(), Nic::new(cfg(1)).unwrap());
        let qp = |peer_host| transport::QpConfig {
            peer_host,
            peer_qp: 0,
            sport: 1,
        };
        a.create_qp(qp(1)).unwrap();
        b.create_qp(qp(0)).unwrap();
        b.post_recv(0, 7, 3000).unwrap();
        for (wr_id, verb, len) in [(1, Verb::Send, 3000), (2, Verb::Write, 1000)] {
            let wr = WorkRequest {
                wr_id,
                verb,
                len,
                ..WorkRequest::default()
            };
            a.post_send(0, 0, wr).unwrap();
        }
        let (mut pkts, mut now) = (Vec::new(), 0);
        loop {
            match a.poll_transmit(now, 0) {
                transport::Transmit::Packet(p) => pkts.push(p),
                transport::Transmit::At(t) => now = t,
                transport::Transmit::Idle => break,
            }
        }
        assert_eq!(pkts.len(), 4);
        assert!(pkts
            .iter()
            .all(|p| p.mp_flags & transport::order::eunomia::LAST == 0 || p.psn == 3));
        let completions = |b: &mut Nic| {
            std::iter::from_fn(|| b.poll_event())
                .map(|transport::Event::Completion(c)| c.wr_id)
                .collect::<Vec<_>>()
        };
        for p in pkts[1..].iter().rev() {
            b.on_packet(US, p);
            assert!(
                completions(&mut b).is_empty(),
                "{engine:?}: nothing before PSN 0"
            );
        }
        b.on_packet(2 * US, &pkts[0]);
        assert_eq!(
            completions(&mut b),
            vec![7, 0],
            "{engine:?}: SEND, then WRITE"
        );
        let st = b.stats();
        assert_eq!((st.eunomia_sacks_sent, st.eunomia_nacks_sent), (3, 0));
        assert_eq!(st.eunomia_bitmaps_made, 1);
        assert_eq!(
            st.eunomia_bitmaps_freed, 1,
            "freed once the last PSN passed"
        );
        assert_eq!(b.order_memory().unwrap().peak_bytes, 50);
        let held = (st.eunomia_receiver_held, st.eunomia_receiver_held_bytes);
        assert_eq!(held, (1, 1000), "the WRITE's one packet");
        assert_eq!(a.stats().eunomia_sender_held, 0);
    }
}

/// Go-back-N under Eunomia's layer, one 50-packet SEND whose packet `lost`
/// is lost once: the layer SACKs every later packet (they fit in its
/// cap), so nothing NACKs the hole and only the sender's timer recovers
/// it. Returns when the requester completed and how many timeouts fired.
fn eunomia_hole(rto: Time, rto_low: Option<RtoLow>, lost: u32) -> (Time, u64) {
    let cfg = NicConfig {
        ordering: OrderingKind::Eunomia(EunomiaConfig::default()),
        rto,
        rto_low,
        ..NicConfig::default()
    };
    let mut w = common::World::with_config(cfg, US);
    w.connect(1);
    let mut dropped = false;
    w.rule = Box::new(move |_, from, p| {
        if !dropped && from == common::A && p.kind == PacketKind::Request && p.psn == lost {
            dropped = true;
            common::Action::Drop
        } else {
            common::Action::Deliver
        }
    });
    w.post_recv(common::B, 0, 0, 50_000);
    w.post_send(
        common::A,
        0,
        WorkRequest {
            wr_id: 1,
            verb: Verb::Send,
            len: 50_000,
            ..WorkRequest::default()
        },
    );
    w.run();
    let done = w
        .completions
        .iter()
        .find(|(n, c)| *n == common::A && c.wr_id == 1)
        .expect("the SEND completes")
        .1
        .at;
    (done, w.nics[common::A].stats().timeouts)
}

#[test]
fn eunomia_recovers_a_loss_with_irn_timeouts_instead_of_go_back_n_s() {
    // §3.2.3: "the existing timeout mechanism at the sender NICs such as in IRN".
    let gbn = NicConfig::default().rto;
    assert_eq!(gbn, 4 * MS);
    let (late, timeouts) = eunomia_hole(gbn, None, 20);
    assert_eq!(timeouts, 1);
    assert!(late > 4 * MS, "waits for go-back-N's timeout: {late}");
    // IRN's: RTO_high in the NIC's `rto` (`[transport.eunomia] timeouts =
    // "irn"` sets both). The hole's last progress left about 30 packets
    // in flight, so RTO_high (320 us) recovers it.
    let irn = RtoLow {
        rto: 100 * US,
        below_packets: 3,
    };
    let (soon, timeouts) = eunomia_hole(320 * US, Some(irn), 20);
    assert_eq!(timeouts, 1);
    assert!(soon > 320 * US && soon < 500 * US, "{soon}");
    // The last packet lost: its last progress left one packet in flight,
    // so RTO_low (100 us) recovers it.
    let (tail, timeouts) = eunomia_hole(320 * US, Some(irn), 49);
    assert_eq!(timeouts, 1);
    assert!(tail > 100 * US && tail < 250 * US, "{tail}");
    let cfg = NicConfig {
        rto: 320 * US,
        rto_low: Some(irn),
        ..NicConfig::default()
    };
    assert_eq!((cfg.rto_for(2), cfg.rto_for(3)), (100 * US, 320 * US));
}
