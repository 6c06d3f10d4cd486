//! Unit tests of the NIC: scheduling, PFC, ACKs, timers, layout.

use super::*;
use crate::api::WrError;
use crate::engine::irn::IrnConfig;
use crate::packet::{PacketKind, Verb};
use engine::time::{serialization, US};
use std::mem::offset_of;

/// The layout the per-packet path was measured with (see [`Nic`]).
#[test]
fn hot_fields_share_lines() {
    assert_eq!(std::mem::align_of::<Nic>(), 64);
    assert!(offset_of!(Nic, now) + 8 <= 64);
    assert_eq!(offset_of!(Nic, sched), 64);
    let cfg = offset_of!(Nic, cfg);
    assert!(cfg >= 128 && cfg + offset_of!(NicConfig, ctrl_priority) < 192);
    assert_eq!(offset_of!(Nic, stats) % 64, 0);
    assert!(offset_of!(NicStats, rate_decreases) + 8 <= 64);
}

fn nic_with_qps(n: u32) -> Nic {
    let mut nic = Nic::new(NicConfig::default()).unwrap();
    for i in 0..n {
        let q = nic
            .create_qp(QpConfig {
                peer_host: 1,
                peer_qp: i,
                sport: i as u16,
            })
            .unwrap();
        assert_eq!(q, i, "QP numbers are 0, 1, 2, ...");
    }
    nic
}

fn write(nic: &mut Nic, now: Time, qp: QpId, len: u64) {
    nic.post_send(
        now,
        qp,
        WorkRequest {
            wr_id: 1,
            verb: Verb::Write,
            len,
            ..WorkRequest::default()
        },
    )
    .unwrap();
}

/// A data packet from the peer (host 1) to QP `qp`.
fn incoming(qp: QpId, psn: u32, first: bool, last: bool) -> Packet {
    Packet {
        src: 1,
        dst: 0,
        src_qp: qp,
        dst_qp: qp,
        sport: 9,
        kind: PacketKind::Request,
        verb: Verb::Write,
        psn,
        payload: 1000,
        wire: 1048,
        priority: 3,
        ce: false,
        ecn_echo: false,
        first,
        last,
        msg_len: 1000 * (psn as u64 + 1),
        sent_at: 0,
        ..Packet::default()
    }
}

fn unwrap_pkt(t: Transmit) -> Packet {
    match t {
        Transmit::Packet(p) => p,
        other => panic!("expected a packet, got {other:?}"),
    }
}

#[test]
fn idle_then_packets_then_rate_limited() {
    let mut nic = nic_with_qps(1);
    assert_eq!(nic.poll_transmit(0, 0), Transmit::Idle);
    write(&mut nic, 0, 0, 2500);
    let p = unwrap_pkt(nic.poll_transmit(0, 0));
    assert_eq!(
        (p.src, p.dst, p.src_qp, p.dst_qp, p.sport, p.priority),
        (0, 1, 0, 0, 0, 3)
    );
    let ser = serialization(1048, 100_000_000_000);
    assert_eq!(nic.poll_transmit(0, 0), Transmit::At(ser));
    assert_eq!(nic.poll_transmit(ser - 1, 0), Transmit::At(ser));
    assert_eq!(unwrap_pkt(nic.poll_transmit(ser, 0)).psn, 1);
    assert_eq!(unwrap_pkt(nic.poll_transmit(2 * ser, 0)).payload, 500);
    assert_eq!(nic.poll_transmit(3 * ser, 0), Transmit::Idle);
}

#[test]
fn pfc_mask_holds_the_paused_class_only() {
    let mut nic = nic_with_qps(1);
    write(&mut nic, 0, 0, 5000);
    nic.on_packet(0, &incoming(0, 0, true, true));
    let data_paused = 1u8 << 3;
    let ctrl_paused = 1u8 << 0;
    // Control first, even though data is queued; then nothing while the
    // data class is paused.
    let ack = unwrap_pkt(nic.poll_transmit(0, data_paused));
    assert_eq!(
        (ack.kind, ack.psn, ack.wire, ack.priority),
        (PacketKind::Ack, 1, 60, 0)
    );
    assert_eq!(nic.poll_transmit(0, data_paused), Transmit::Idle);
    // Control paused: data goes, the ACK waits.
    nic.on_packet(0, &incoming(0, 1, true, true));
    assert_eq!(
        unwrap_pkt(nic.poll_transmit(0, ctrl_paused)).kind,
        PacketKind::Request
    );
    assert_eq!(unwrap_pkt(nic.poll_transmit(0, 0)).kind, PacketKind::Ack);
    assert_eq!(nic.stats().ctrl_packets_sent, 2);
    assert_eq!(
        nic.poll_transmit(0, data_paused | ctrl_paused),
        Transmit::Idle
    );
}

/// ACKs in the data class (ns-3's switches' class for them): a PAUSE of
/// that class holds them, unless `ctrl_ignores_pause` (ns-3's host ACK
/// queue), which sends them while data waits.
#[test]
fn acks_in_a_paused_class_wait_unless_they_ignore_pause() {
    let paused = 1u8 << 3;
    for ignores in [false, true] {
        let cfg = NicConfig {
            ctrl_priority: 3,
            ctrl_ignores_pause: ignores,
            ..NicConfig::default()
        };
        let mut nic = Nic::new(cfg).unwrap();
        let qp = QpConfig {
            peer_host: 1,
            peer_qp: 0,
            sport: 0,
        };
        nic.create_qp(qp).unwrap();
        write(&mut nic, 0, 0, 5000);
        nic.on_packet(0, &incoming(0, 0, true, true));
        match nic.poll_transmit(0, paused) {
            Transmit::Packet(ack) => {
                assert!(ignores);
                assert_eq!((ack.kind, ack.priority), (PacketKind::Ack, 3));
                assert_eq!(nic.poll_transmit(0, paused), Transmit::Idle);
            }
            t => assert!(!ignores && t == Transmit::Idle, "{t:?}"),
        }
    }
}

/// A QP of `nic` whose congestion control is DCQCN with notifications
/// echoed on ACKs (HPCC's "mlx" model).
fn ack_echo_qp(nic: &mut Nic) -> QpId {
    let cc = crate::CcConfig::Dcqcn(crate::DcqcnParams::default());
    assert_eq!(cc.notification(), crate::Notification::AckEcho);
    let cfg = QpConfig {
        peer_host: 1,
        peer_qp: 0,
        sport: 0,
    };
    nic.create_qp_with(cfg, cc, crate::Engine::GoBackN).unwrap()
}

#[test]
fn ack_echoes_sent_at_and_ce() {
    let mut nic = Nic::new(NicConfig::default()).unwrap();
    assert_eq!(ack_echo_qp(&mut nic), 0);
    let mut p = incoming(0, 0, true, true);
    p.ce = true;
    p.sent_at = 1234;
    nic.on_packet(5 * US, &p);
    let ack = unwrap_pkt(nic.poll_transmit(5 * US, 0));
    assert!(ack.ecn_echo);
    assert_eq!(ack.sent_at, 1234);
    assert_eq!(nic.stats().cnps_sent, 1);
}

/// HPCC's echo: the ACK answering a data packet carries back the hop
/// records that came with it, one that answers a packet without any
/// carries none, and so does every packet that is not an ACK or NACK.
#[test]
fn the_responder_echoes_the_records_of_the_packet_an_ack_answers() {
    let mut nic = nic_with_qps(1);
    let mut int = IntStack::default();
    int.push(crate::IntHop::new(3 * US, 4096, 800, 100_000_000_000, 1));
    let mut with = incoming(0, 0, true, true);
    with.sent_at = 100;
    let mut without = incoming(0, 1, true, true);
    without.sent_at = 200;
    nic.int_received(&with, int);
    nic.on_packet(US, &with);
    nic.on_packet(2 * US, &without);
    let ack = unwrap_pkt(nic.poll_transmit(2 * US, 0));
    assert_eq!((ack.kind, ack.sent_at), (PacketKind::Ack, 100));
    assert_eq!(nic.int_sent(&ack), Some(int));
    let ack = unwrap_pkt(nic.poll_transmit(2 * US, 0));
    assert_eq!((ack.kind, ack.sent_at), (PacketKind::Ack, 200));
    assert_eq!(nic.int_sent(&ack), None, "no records came with it");
    // The records of a data packet the NIC sends are the switches'.
    write(&mut nic, 2 * US, 0, 1000);
    nic.int_received(&with, int);
    let data = unwrap_pkt(nic.poll_transmit(2 * US, 0));
    assert_eq!(data.kind, PacketKind::Request);
    assert_eq!(nic.int_sent(&data), None);
}

/// Without congestion control no reaction point would act on a
/// notification: a CE-marked write gets a plain ACK, a CE-marked READ
/// request no CNP, and none is counted as sent.
#[test]
fn without_congestion_control_marks_are_not_notified() {
    let mut nic = nic_with_qps(1);
    let mut p = incoming(0, 0, true, true);
    p.ce = true;
    nic.on_packet(5 * US, &p);
    let ack = unwrap_pkt(nic.poll_transmit(5 * US, 0));
    assert_eq!(ack.kind, PacketKind::Ack);
    assert!(!ack.ecn_echo);
    let mut read = incoming(0, 1, true, true);
    read.verb = Verb::Read;
    read.payload = 0;
    read.wire = 48;
    read.ce = true;
    nic.on_packet(6 * US, &read);
    while let Transmit::Packet(q) = nic.poll_transmit(7 * US, 0) {
        assert_ne!(q.kind, PacketKind::Cnp, "{q:?}");
        assert!(!q.ecn_echo, "{q:?}");
    }
    assert_eq!(nic.stats().cnps_sent, 0);
}

#[test]
fn invalid_packets_are_counted_and_dropped() {
    let mut nic = nic_with_qps(1);
    let mut p = incoming(0, 0, true, true);
    p.dst_qp = 5;
    nic.on_packet(0, &p);
    let mut p = incoming(0, 0, true, true);
    p.src = 7;
    nic.on_packet(0, &p);
    let mut ack = incoming(0, 0, false, false);
    ack.kind = PacketKind::Ack;
    ack.psn = 1000; // never sent
    nic.on_packet(0, &ack);
    assert_eq!(nic.stats().malformed_dropped, 3);
    assert_eq!(nic.poll_transmit(0, 0), Transmit::Idle);
    assert!(nic.poll_event().is_none());
}

/// One timer entry for many ACKs; a timeout handled before the deadline
/// re-arms for the new deadline; none when nothing is outstanding.
#[test]
fn timers_are_not_flooded() {
    let mut nic = nic_with_qps(1);
    let rto = nic.config().rto;
    assert_eq!(nic.poll_timeout(), None);
    write(&mut nic, 0, 0, 100_000);
    let mut t = 0;
    let mut ack = incoming(0, 0, false, false);
    ack.kind = PacketKind::Ack;
    for i in 0..50 {
        let p = unwrap_pkt(nic.poll_transmit(t, 0));
        t += serialization(p.wire as u64, 100_000_000_000);
        // Acknowledge all but the packet just sent.
        ack.psn = i;
        nic.on_packet(t, &ack);
    }
    assert_eq!(nic.poll_timeout(), Some(rto));
    assert_eq!(nic.timers.len(), 1, "one entry for fifty ACKs");
    // Early (progress moved the deadline): re-armed for the new one.
    nic.handle_timeout(rto);
    assert_eq!(nic.poll_timeout(), Some(t + rto));
    assert_eq!(nic.stats().timeouts, 0);
    // Too early, or repeated: nothing.
    nic.handle_timeout(rto);
    assert_eq!(nic.poll_timeout(), Some(t + rto));
    // Expiry: go back to snd_una = 49.
    nic.handle_timeout(t + rto);
    assert_eq!(nic.stats().timeouts, 1);
    assert_eq!(nic.poll_timeout(), None, "nothing outstanding until resent");
    let p = unwrap_pkt(nic.poll_transmit(t + rto, 0));
    assert_eq!(p.psn, 49);
    assert_eq!(nic.stats().retransmitted_packets, 1);
    assert_eq!(nic.poll_timeout(), Some(2 * rto + t));
    assert!(nic.poll_event().is_none());
}

/// A QP whose deadline is earlier than every timer armed moves
/// `poll_timeout` earlier; timers due at once run one per
/// `handle_timeout`, `poll_timeout` staying due until all have run.
#[test]
fn earlier_deadline_moves_the_timeout_and_each_runs_once() {
    let mut nic = nic_with_qps(1);
    let rto = nic.config().rto;
    let irn = IrnConfig {
        rto_low: 10 * US,
        rto_high: 10 * US,
        ..IrnConfig::default()
    };
    let cfg = QpConfig {
        peer_host: 1,
        peer_qp: 1,
        sport: 1,
    };
    let q1 = nic
        .create_qp_with(cfg, CcConfig::None, Engine::Irn(irn))
        .unwrap();
    write(&mut nic, 0, 0, 1000);
    unwrap_pkt(nic.poll_transmit(0, 0));
    assert_eq!(nic.poll_timeout(), Some(rto));
    write(&mut nic, US, q1, 1000);
    unwrap_pkt(nic.poll_transmit(US, 0));
    assert_eq!(nic.poll_timeout(), Some(11 * US), "moved earlier");
    // Both due: one per call, earliest first.
    let late = rto + 11 * US;
    nic.handle_timeout(late);
    assert_eq!(nic.stats().timeouts, 1);
    assert_eq!(nic.poll_timeout(), Some(rto), "the other is still due");
    nic.handle_timeout(late);
    assert_eq!(nic.stats().timeouts, 2);
    assert_eq!(nic.poll_timeout(), None);
    nic.handle_timeout(late);
    assert_eq!(nic.stats().timeouts, 2, "nothing left: harmless");
}

/// Only the QPs with data are visited, in round-robin order, however
/// many QPs exist.
#[test]
fn ten_thousand_qps_round_robin_over_active_ones() {
    let mut nic = nic_with_qps(10_000);
    for qp in [9_999, 17, 4_242] {
        write(&mut nic, 0, qp, 3000);
    }
    let ser = serialization(1048, 100_000_000_000);
    let mut order = vec![];
    let mut t = 0;
    loop {
        match nic.poll_transmit(t, 0) {
            Transmit::Packet(p) => {
                order.push(p.src_qp);
                t += ser;
            }
            Transmit::At(a) => t = a,
            Transmit::Idle => break,
        }
    }
    assert_eq!(
        order,
        vec![9_999, 17, 4_242, 9_999, 17, 4_242, 9_999, 17, 4_242]
    );
}

#[test]
fn read_responses_share_the_qp_with_requests() {
    let mut nic = nic_with_qps(1);
    write(&mut nic, 0, 0, 3000);
    let mut rq = incoming(0, 0, true, true);
    rq.verb = Verb::Read;
    rq.payload = 0;
    rq.msg_len = 3000;
    nic.on_packet(0, &rq);
    let mut kinds = vec![];
    let mut t = 0;
    loop {
        match nic.poll_transmit(t, 0) {
            Transmit::Packet(p) => {
                kinds.push(p.kind);
                t += serialization(p.wire as u64, 100_000_000_000);
            }
            Transmit::At(a) => t = a,
            Transmit::Idle => break,
        }
    }
    use PacketKind::*;
    assert_eq!(
        kinds,
        vec![
            Request,
            ReadResponse,
            Request,
            ReadResponse,
            Request,
            ReadResponse
        ]
    );
}

/// Configuration mistakes are errors naming the field, never panics.
#[test]
fn invalid_configs_are_errors() {
    let err = |cfg| Nic::new(cfg).err().map(|e| e.to_string());
    let d = NicConfig::default;
    assert_eq!(
        err(NicConfig { rto: 0, ..d() }).as_deref(),
        Some("rto must be positive")
    );
    assert_eq!(
        err(NicConfig { mtu: 0, ..d() }).as_deref(),
        Some("mtu must be positive")
    );
    assert_eq!(
        err(NicConfig {
            rto: crate::api::MAX_RTO + 1,
            ..d()
        })
        .as_deref(),
        Some("rto must be at most one hour")
    );
    assert_eq!(
        err(NicConfig {
            mtu: u32::MAX - 10,
            ..d()
        })
        .as_deref(),
        Some("mtu + header_bytes must fit in 32 bits")
    );
    let bad_irn = Engine::Irn(IrnConfig {
        rto_low: 0,
        ..IrnConfig::default()
    });
    let e = err(NicConfig {
        engine: bad_irn,
        ..d()
    });
    assert_eq!(e.as_deref(), Some("irn rto_low must be positive"));
    // A QP's own engine is checked when it is created.
    let mut nic = nic_with_qps(1);
    let cfg = QpConfig {
        peer_host: 1,
        peer_qp: 1,
        sport: 1,
    };
    let got = nic.create_qp_with(cfg, CcConfig::None, bad_irn);
    assert!(
        matches!(&got, Err(QpError::Config(e)) if e.to_string() == "irn rto_low must be positive"),
        "{got:?}"
    );
    assert_eq!(nic.num_qps(), 1, "nothing created");
}

/// Calls about a QP that does not exist, and work requests its engine
/// cannot carry, are refused with an error and change nothing.
#[test]
fn bad_calls_are_errors() {
    let mut nic = nic_with_qps(1);
    let wr = WorkRequest {
        verb: Verb::Write,
        len: 1000,
        ..WorkRequest::default()
    };
    assert_eq!(nic.post_send(0, 7, wr), Err(QpError::Unknown(7)));
    assert_eq!(nic.post_recv(7, 0, 10), Err(QpError::Unknown(7)));
    assert_eq!(nic.qp_engine(7), Err(QpError::Unknown(7)));
    assert_eq!(
        nic.qp_rate_bps_at(u32::MAX, 0),
        Err(QpError::Unknown(u32::MAX))
    );
    assert!(nic.qp_cc(7).is_err());
    // More packets than a PSN counts.
    let huge = WorkRequest {
        len: u64::MAX,
        ..wr
    };
    assert_eq!(
        nic.post_send(0, 0, huge),
        Err(QpError::Refused(0, WrError::TooLong(u64::MAX)))
    );
    // MP-RDMA carries WRITE and SEND only.
    let mp = Engine::MpRdma(crate::engine::mprdma::MpRdmaConfig::default());
    let cfg = QpConfig {
        peer_host: 1,
        peer_qp: 1,
        sport: 1,
    };
    let q = nic.create_qp_with(cfg, CcConfig::None, mp).unwrap();
    let read = WorkRequest {
        verb: Verb::Read,
        ..wr
    };
    let e = nic.post_send(0, q, read).unwrap_err();
    assert_eq!(e, QpError::Refused(q, WrError::Unsupported(Verb::Read)));
    assert_eq!(e.to_string(), "QP 1: the engine does not carry Read");
    assert_eq!(nic.poll_transmit(0, 0), Transmit::Idle, "nothing posted");
    assert!(nic.is_quiescent());
}

/// Destroyed mid-transfer, with a control packet queued, data ready and a
/// timer armed: nothing of it is sent or due any more, a packet for it is
/// counted as malformed, a call about it is refused, and the other QP
/// goes on.
#[test]
fn destroyed_qp_leaves_nothing_behind() {
    let mut nic = nic_with_qps(2);
    write(&mut nic, 0, 0, 10_000);
    write(&mut nic, 0, 1, 3000);
    let first = unwrap_pkt(nic.poll_transmit(0, 0));
    assert_eq!(first.src_qp, 0);
    assert_eq!(nic.poll_timeout(), Some(nic.config().rto));
    nic.on_packet(0, &incoming(0, 0, true, true));
    nic.destroy_qp(0).unwrap();
    assert_eq!(nic.poll_timeout(), None, "its timer is gone");
    let mut t = 0;
    let mut sent = vec![];
    loop {
        match nic.poll_transmit(t, 0) {
            Transmit::Packet(p) => sent.push((p.src_qp, p.kind, p.psn)),
            Transmit::At(next) => t = next,
            Transmit::Idle => break,
        }
    }
    let want: Vec<_> = (0..3).map(|psn| (1, PacketKind::Request, psn)).collect();
    assert_eq!(sent, want, "no ACK, no data of QP 0; all of QP 1");
    nic.on_packet(t, &incoming(0, 1, false, true));
    let mut ack = incoming(0, 0, false, false);
    ack.kind = PacketKind::Ack;
    ack.psn = 1;
    nic.on_packet(t, &ack);
    assert_eq!(nic.stats().malformed_dropped, 2);
    assert_eq!(nic.poll_transmit(t, 0), Transmit::Idle);
    assert_eq!(
        nic.post_send(t, 0, WorkRequest::default()),
        Err(QpError::Destroyed(0))
    );
    assert_eq!(nic.post_recv(0, 0, 10), Err(QpError::Destroyed(0)));
    assert_eq!(nic.qp_engine(0), Err(QpError::Destroyed(0)));
    assert_eq!(nic.destroy_qp(0), Err(QpError::Destroyed(0)));
    assert_eq!(nic.destroy_qp(2), Err(QpError::Unknown(2)));
    assert_eq!(nic.num_qps(), 2);
    // Numbers are not reused; QP 1 still works.
    let cfg = QpConfig {
        peer_host: 1,
        peer_qp: 2,
        sport: 2,
    };
    assert_eq!(nic.create_qp(cfg), Ok(2));
    assert_eq!(nic.qp_bytes(), 3 * Nic::QP_BYTES, "nothing boxed");
    let mut ack = incoming(1, 0, false, false);
    ack.kind = PacketKind::Ack;
    ack.psn = 3;
    nic.on_packet(t, &ack);
    let done: Vec<_> = std::iter::from_fn(|| nic.poll_event())
        .map(|Event::Completion(c)| (c.qp, c.side))
        .collect();
    use crate::api::CompletionSide::*;
    assert_eq!(
        done,
        vec![(0, Responder), (1, Requester)],
        "QP 0's completion reported before it was destroyed stays"
    );
    assert!(nic.is_quiescent());
}

/// Messages whose PSNs would span more than the serial order allows are
/// refused when posted, for every engine, and the QP goes on.
#[test]
fn a_post_beyond_the_psn_span_is_refused() {
    use crate::psn::MAX_PSN_SPAN;
    for engine in [
        Engine::GoBackN,
        Engine::Irn(IrnConfig::default()),
        Engine::MpRdma(crate::engine::mprdma::MpRdmaConfig::default()),
    ] {
        let mut nic = Nic::new(NicConfig {
            mtu: 1,
            engine,
            ..NicConfig::default()
        })
        .unwrap();
        let cfg = QpConfig {
            peer_host: 1,
            peer_qp: 0,
            sport: 1,
        };
        let qp = nic.create_qp(cfg).unwrap();
        let wr = |len| WorkRequest {
            verb: Verb::Write,
            len,
            ..WorkRequest::default()
        };
        nic.post_send(0, qp, wr(MAX_PSN_SPAN as u64 - 10)).unwrap();
        assert_eq!(
            nic.post_send(0, qp, wr(11)),
            Err(QpError::Refused(qp, WrError::PsnSpan(11))),
            "{engine:?}"
        );
        nic.post_send(0, qp, wr(10)).unwrap();
        assert!(matches!(nic.poll_transmit(0, 0), Transmit::Packet(_)));
    }
}

/// Reserve then connect: a QP made before its peer's number was known
/// sends to the number it is given later, and takes packets only from it.
#[test]
fn connect_qp_points_a_reserved_qp_at_its_peer() {
    let mut nic = nic_with_qps(1);
    nic.connect_qp(0, 7).unwrap();
    write(&mut nic, 0, 0, 100);
    let p = unwrap_pkt(nic.poll_transmit(0, 0));
    assert_eq!(p.dst_qp, 7);
    assert_eq!(nic.connect_qp(5, 1), Err(QpError::Unknown(5)));
    nic.destroy_qp(0).unwrap();
    assert_eq!(nic.connect_qp(0, 1), Err(QpError::Destroyed(0)));
}

/// Reserve, then create: the number is held while another QP is made, a
/// packet for it meanwhile is dropped as malformed and a call refused;
/// made, it sends from its PSN; a live QP or an unknown number cannot
/// be made so.
#[test]
fn a_reserved_qp_is_made_later_at_its_number() {
    let mut nic = Nic::new(NicConfig::default()).unwrap();
    assert_eq!(nic.reserve_qp(), Ok(0));
    let cfg = |peer_qp| QpConfig {
        peer_host: 1,
        peer_qp,
        sport: 9,
    };
    assert_eq!(nic.create_qp(cfg(1)), Ok(1));
    nic.on_packet(0, &incoming(0, 0, true, true));
    assert_eq!(nic.stats().malformed_dropped, 1);
    assert_eq!(nic.post_recv(0, 0, 10), Err(QpError::Destroyed(0)));
    let psns = InitialPsns {
        sq_psn: 5,
        rq_psn: 0,
    };
    nic.create_reserved_qp(0, cfg(0), psns).unwrap();
    write(&mut nic, 0, 0, 1000);
    let p = unwrap_pkt(nic.poll_transmit(0, 0));
    assert_eq!((p.src_qp, p.dst_qp, p.psn), (0, 0, 5));
    assert_eq!(
        nic.create_reserved_qp(1, cfg(1), psns),
        Err(QpError::Unknown(1))
    );
    assert_eq!(
        nic.create_reserved_qp(7, cfg(1), psns),
        Err(QpError::Unknown(7))
    );
}
