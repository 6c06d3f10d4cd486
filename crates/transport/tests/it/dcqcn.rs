//! DCQCN through the NIC API: notification point (ECN echo / CNP packets),
//! reaction point (rate cut, alpha, recovery), the rate limiter following
//! the rate, and a bottleneck where DCQCN keeps the queue short.

use crate::common;

use common::{Bottleneck, World, A, B};
use engine::time::{serialization, MS, NS, US};
use engine::Time;
use transport::{
    CcConfig, DcqcnParams, Nic, NicConfig, Notification, Packet, PacketKind, QpConfig, Transmit,
    Verb, WorkRequest,
};

const LINE: u64 = 100_000_000_000;

fn dcqcn_nic(p: DcqcnParams) -> Nic {
    let mut nic = Nic::new(NicConfig {
        cc: CcConfig::Dcqcn(p),
        ..NicConfig::default()
    })
    .unwrap();
    nic.create_qp(QpConfig {
        peer_host: 1,
        peer_qp: 0,
        sport: 1,
    })
    .unwrap();
    nic
}

fn ack(psn: u32, ecn_echo: bool) -> Packet {
    Packet {
        src: 1,
        dst: 0,
        src_qp: 0,
        dst_qp: 0,
        sport: 1,
        kind: PacketKind::Ack,
        verb: Verb::Write,
        psn,
        payload: 0,
        wire: 60,
        priority: 0,
        ce: false,
        ecn_echo,
        first: false,
        last: false,
        msg_len: 0,
        sent_at: 0,
        ..Packet::default()
    }
}

fn alpha(nic: &Nic, t: Time) -> f64 {
    match nic.qp_cc(0).unwrap().state() {
        Some(transport::CcState::Dcqcn(d)) => d.alpha_at(t),
        s => panic!("not DCQCN: {s:?}"),
    }
}

/// Sends one packet at `t`, then polls as told by `Transmit::At` until the
/// next one goes; returns the gap between the two.
fn gap_after_send(nic: &mut Nic, t: Time) -> Time {
    match nic.poll_transmit(t, 0) {
        Transmit::Packet(p) => assert_eq!(p.wire, 1048),
        other => panic!("{other:?}"),
    }
    let mut now = t;
    loop {
        match nic.poll_transmit(now, 0) {
            Transmit::At(a) => now = a,
            Transmit::Packet(_) => return now - t,
            Transmit::Idle => panic!("idle"),
        }
    }
}

#[test]
fn ecn_echo_acks_cut_the_rate_and_alpha_grows() {
    let p = DcqcnParams::conweave();
    let mut nic = dcqcn_nic(p);
    nic.post_send(
        0,
        0,
        WorkRequest {
            wr_id: 1,
            verb: Verb::Write,
            len: 100 * 1_000_000,
            ..WorkRequest::default()
        },
    )
    .unwrap();
    let ser_line = serialization(1048, LINE);
    assert_eq!(gap_after_send(&mut nic, 0), ser_line);
    // First notification at 1 us: alpha = 1, the cut comes at 5 us + 1 ns.
    nic.on_packet(US, &ack(1, true));
    assert_eq!(alpha(&nic, US), 1.0);
    assert_eq!(nic.qp_rate_bps_at(0, 5 * US).unwrap(), LINE);
    let cut = nic.qp_rate_bps_at(0, 5 * US + NS).unwrap();
    let a4 = (1.0 - p.g).powi(4);
    assert_eq!(cut, (LINE as f64 * (1.0 - a4 / 2.0)) as u64);
    // The rate limiter follows the new rate.
    let t = 6 * US;
    assert_eq!(gap_after_send(&mut nic, t), serialization(1048, cut));
    assert_eq!(nic.stats().rate_decreases, 1);
    assert_eq!(nic.stats().cnps_received, 1);
    // Quiet for 2 ms: alpha decays; then an ECN-echo ACK every microsecond.
    let start = 2 * MS;
    let low = alpha(&nic, start);
    assert!(low < 1e-3, "{low}");
    let mut prev = low;
    let mut rate_before = nic.qp_rate_bps_at(0, start).unwrap();
    for i in 1..=100u64 {
        let t = start + i * US;
        nic.on_packet(t, &ack(2, true));
        let a = alpha(&nic, t);
        if i > 1 {
            assert!(a > prev, "alpha grows while marks keep coming ({i})");
        }
        prev = a;
        let r = nic.qp_rate_bps_at(0, t).unwrap();
        assert!(r <= rate_before);
        rate_before = r;
    }
    assert!(nic.stats().rate_decreases >= 20);
    assert_eq!(nic.stats().cnps_received, 101);
    let r = nic.qp_rate_bps_at(0, start + 100 * US).unwrap();
    assert!(r < LINE / 4, "rate {r}");
    assert!(r >= p.min_rate_bps);
    // Still sending, paced by the reduced rate in force when the next goes.
    let t = start + 100 * US + 500 * NS;
    let g = gap_after_send(&mut nic, t);
    assert_eq!(
        g,
        serialization(1048, nic.qp_rate_bps_at(0, t + g).unwrap())
    );
    assert!(g > 4 * serialization(1048, LINE));
}

/// After one cut with HPCC's parameters (no target clamp at stage 0) the
/// target stays at line rate, so every RP period halves the gap (rounded
/// down): line rate is back after floor(log2(gap)) + 1 periods, no sooner.
#[test]
fn recovers_to_line_rate_in_the_expected_number_of_rp_periods() {
    let p = DcqcnParams::hpcc(LINE);
    let mut nic = dcqcn_nic(p);
    nic.on_packet(0, &ack(0, true));
    let t_dec = 4 * US + NS;
    let cut = nic.qp_rate_bps_at(0, t_dec).unwrap();
    assert!(cut < LINE * 52 / 100 && cut > LINE / 2, "cut to {cut}");
    let gap = LINE - cut;
    let n = (63 - gap.leading_zeros()) as u64 + 1;
    assert_eq!(n, 36, "floor(log2({gap})) + 1");
    let at = |k: u64| t_dec + k * p.rp_timer;
    assert!(nic.qp_rate_bps_at(0, at(1)).unwrap() > cut);
    assert_eq!(nic.qp_rate_bps_at(0, at(1) - 1).unwrap(), cut);
    assert_eq!(LINE - nic.qp_rate_bps_at(0, at(1)).unwrap(), gap / 2);
    assert!(nic.qp_rate_bps_at(0, at(n - 1)).unwrap() < LINE);
    assert_eq!(nic.qp_rate_bps_at(0, at(n)).unwrap(), LINE);
    assert_eq!(nic.qp_rate_bps_at(0, at(n) + 10 * MS).unwrap(), LINE);
    // No timer was needed for any of this.
    assert!(nic.poll_event().is_none());
}

#[test]
fn min_rate_is_respected_and_paces_the_qp() {
    let p = DcqcnParams::hpcc(LINE);
    let mut nic = dcqcn_nic(p);
    nic.post_send(
        0,
        0,
        WorkRequest {
            wr_id: 1,
            verb: Verb::Write,
            len: 1_000_000,
            ..WorkRequest::default()
        },
    )
    .unwrap();
    let _ = nic.poll_transmit(0, 0);
    for i in 0..400u64 {
        nic.on_packet(i * US, &ack(1, true));
        assert!(nic.qp_rate_bps_at(0, i * US).unwrap() >= p.min_rate_bps);
    }
    assert_eq!(nic.qp_rate_bps_at(0, 400 * US).unwrap(), p.min_rate_bps);
    // 1048 bytes at 1 Gb/s: 8.384 us between packets.
    let t = 400 * US;
    assert_eq!(gap_after_send(&mut nic, t), 8_384 * NS);
}

/// Feeds 100 CE-marked WRITE packets, 1 us apart, to a responder NIC and
/// returns (CNP packets, ACKs with ecn_echo, ACKs).
fn notification_point(notification: Notification) -> (usize, usize, usize) {
    let p = DcqcnParams {
        notification,
        ..DcqcnParams::conweave()
    };
    let mut nic = Nic::new(NicConfig {
        host: 1,
        cc: CcConfig::Dcqcn(p),
        ..NicConfig::default()
    })
    .unwrap();
    nic.create_qp(QpConfig {
        peer_host: 0,
        peer_qp: 0,
        sport: 1,
    })
    .unwrap();
    let mut out = vec![];
    for i in 0..100u32 {
        let t = i as Time * US;
        let pkt = Packet {
            src: 0,
            dst: 1,
            src_qp: 0,
            dst_qp: 0,
            sport: 1,
            kind: PacketKind::Request,
            verb: Verb::Write,
            psn: i,
            payload: 1000,
            wire: 1048,
            priority: 3,
            ce: true,
            ecn_echo: false,
            first: i == 0,
            last: i == 99,
            msg_len: 100_000,
            sent_at: t,
            ..Packet::default()
        };
        nic.on_packet(t, &pkt);
        while let Transmit::Packet(c) = nic.poll_transmit(t, 0) {
            out.push(c);
        }
    }
    let cnps = out.iter().filter(|c| c.kind == PacketKind::Cnp).count();
    let echo = out
        .iter()
        .filter(|c| c.kind == PacketKind::Ack && c.ecn_echo)
        .count();
    let acks = out.iter().filter(|c| c.kind == PacketKind::Ack).count();
    assert!(out
        .iter()
        .all(|c| c.wire == 60 && c.dst == 0 && c.priority == 0));
    (cnps, echo, acks)
}

#[test]
fn notification_point_modes() {
    assert_eq!(notification_point(Notification::AckEcho), (0, 100, 100));
    assert_eq!(
        notification_point(Notification::Cnp { cnp_interval: 0 }),
        (100, 0, 100)
    );
    // At most one CNP per 50 us: at 0 and 50 us.
    assert_eq!(
        notification_point(Notification::Cnp {
            cnp_interval: 50 * US
        }),
        (2, 0, 100)
    );
    assert_eq!(
        notification_point(Notification::Cnp {
            cnp_interval: 4 * US
        }),
        (25, 0, 100)
    );
}

/// A 100G sender into a 25G bottleneck that marks above 100 KB: without
/// congestion control the queue grows to most of the transfer; DCQCN keeps
/// it short and still uses the bottleneck.
#[test]
fn dcqcn_keeps_the_bottleneck_queue_short() {
    let run = |cc: CcConfig| {
        let cfg = NicConfig {
            cc,
            ..NicConfig::default()
        };
        let mut w = World::with_config(cfg, US);
        w.connect(1);
        w.bottleneck = Some(Bottleneck::new(25_000_000_000, 100_000));
        w.post_send(
            A,
            0,
            WorkRequest {
                wr_id: 1,
                verb: Verb::Write,
                len: 20_000_000,
                ..WorkRequest::default()
            },
        );
        w.run();
        assert_eq!(w.req_done(A, 0), vec![(1, 20_000_000)]);
        let done = w.completions.iter().find(|(n, _)| *n == A).unwrap().1.at;
        let backlog = w.bottleneck.as_ref().unwrap().max_backlog;
        (
            done,
            backlog,
            *w.nics[A].stats(),
            *w.nics[B].stats(),
            w.arm_timers,
        )
    };
    let (done_none, q_none, _, _, _) = run(CcConfig::None);
    let (done_dcqcn, q_dcqcn, sa, sb, arms) = run(CcConfig::Dcqcn(DcqcnParams::conweave()));
    // 20 MB at 25 Gb/s (with 4.8% header overhead) is 6.7 ms.
    let ideal = serialization(20_000 * 1048, 25_000_000_000);
    println!(
        "none: {} us, max queue {} B; dcqcn: {} us, max queue {} B, decreases {}, cnps {}",
        done_none / US,
        q_none,
        done_dcqcn / US,
        q_dcqcn,
        sa.rate_decreases,
        sa.cnps_received
    );
    assert!(q_none > 10_000_000, "no CC: queue {q_none}");
    assert!(q_dcqcn < 1_000_000, "DCQCN: queue {q_dcqcn}");
    assert!(sa.rate_decreases > 0 && sa.cnps_received > 0 && sb.cnps_sent == sa.cnps_received);
    assert!(
        done_dcqcn < ideal * 3 / 2,
        "DCQCN too slow: {done_dcqcn} vs ideal {ideal}"
    );
    assert!(done_none >= ideal);
    assert_eq!(sa.retransmitted_packets, 0);
    // DCQCN needs no timer events: only the retransmission timer's.
    assert!(arms[A] <= 5, "{arms:?}");
}

/// A QP paced at a very low rate is re-examined when the rate-increase
/// timer fires, so the increase shortens its wait at once (as HPCC's
/// `ChangeRate` moves `m_nextAvail`), instead of after the old, long gap.
#[test]
fn rate_increase_releases_a_paced_qp_at_the_increase_time() {
    let p = DcqcnParams {
        min_rate_bps: 1_000_000,
        ..DcqcnParams::hpcc(LINE)
    };
    let mut nic = dcqcn_nic(p);
    for i in 0..200u64 {
        nic.on_packet(i * US, &ack(0, true));
    }
    // Last CNP at 199 us; last decrease at the check of 200 us + 1 ns.
    assert_eq!(nic.qp_rate_bps_at(0, 210 * US).unwrap(), p.min_rate_bps);
    let t_inc = 200 * US + NS + p.rp_timer;
    assert!(nic.qp_rate_bps_at(0, t_inc).unwrap() > LINE / 3);
    let t = 210 * US;
    nic.post_send(
        t,
        0,
        WorkRequest {
            wr_id: 1,
            verb: Verb::Write,
            len: 10_000,
            ..WorkRequest::default()
        },
    )
    .unwrap();
    // At 1 Mb/s the next packet would wait 8.384 ms; the increase at t_inc
    // lets it go right then.
    assert_eq!(gap_after_send(&mut nic, t), t_inc - t);
    assert!(t_inc - t < serialization(1048, p.min_rate_bps));
}
