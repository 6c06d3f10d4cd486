//! The notification point and ACKs of a deployed NIC against HPCC ns-3's,
//! through the NIC API (issue 33, deliverable 3): CNPs per QP at most one
//! per `cnp_interval`, each leaving `NicConfig::cnp_delay` after the
//! marked packet, and ACKs coalesced by time (`NicConfig::ack_interval`).
//! Off (the defaults, ns-3's behaviour) every ACK and CNP leaves at once.

use engine::time::{NS, US};
use engine::Time;
use transport::{
    CcConfig, DcqcnParams, Engine, IrnConfig, Nic, NicConfig, Notification, Packet, PacketKind,
    QpConfig, Transmit, Verb,
};

/// A responder NIC (host 1) with `qps` QPs, QP q facing host 0's QP q,
/// running DCQCN with `notification`.
fn responder(notification: Notification, cfg: NicConfig, qps: u32) -> Nic {
    let p = DcqcnParams {
        notification,
        ..DcqcnParams::conweave()
    };
    let mut nic = Nic::new(NicConfig {
        host: 1,
        cc: CcConfig::Dcqcn(p),
        ..cfg
    })
    .unwrap();
    for q in 0..qps {
        nic.create_qp(QpConfig {
            peer_host: 0,
            peer_qp: q,
            sport: 1,
        })
        .unwrap();
    }
    nic
}

/// WRITE packet `psn` of a `n`-packet message on QP `qp`, sent at `t`.
fn write(qp: u32, psn: u32, n: u32, t: Time, ce: bool) -> Packet {
    Packet {
        src: 0,
        dst: 1,
        src_qp: qp,
        dst_qp: qp,
        sport: 1,
        kind: PacketKind::Request,
        verb: Verb::Write,
        psn,
        payload: 1000,
        wire: 1048,
        priority: 3,
        ce,
        first: psn == 0,
        last: psn + 1 == n,
        msg_len: n as u64 * 1000,
        sent_at: t,
        ..Packet::default()
    }
}

/// Delivers `(time, packet)` in order, running the NIC's timers as they
/// come due and draining its transmit queue after each input; returns
/// every control packet with the time it left.
fn run(nic: &mut Nic, arrivals: &[(Time, Packet)], until: Time) -> Vec<(Time, Packet)> {
    let mut out = vec![];
    let drain = |nic: &mut Nic, t: Time, out: &mut Vec<(Time, Packet)>| {
        while let Transmit::Packet(p) = nic.poll_transmit(t, 0) {
            out.push((t, p));
        }
        while nic.poll_event().is_some() {}
    };
    let timers = |nic: &mut Nic, upto: Time, out: &mut Vec<(Time, Packet)>| {
        while let Some(t) = nic.poll_timeout().filter(|&t| t <= upto) {
            nic.handle_timeout(t);
            drain(nic, t, out);
        }
    };
    for &(t, ref p) in arrivals {
        timers(nic, t, &mut out);
        nic.on_packet(t, p);
        drain(nic, t, &mut out);
    }
    timers(nic, until, &mut out);
    out
}

fn kinds(out: &[(Time, Packet)], kind: PacketKind) -> Vec<(Time, Packet)> {
    out.iter()
        .filter(|(_, p)| p.kind == kind)
        .copied()
        .collect()
}

/// Marked packets on two QPs at uneven times (a gap pattern that puts
/// marks just inside and just past the interval): each QP's CNPs are never
/// closer than `cnp_interval`, and a mark that comes once the interval
/// has passed gets its CNP at once.
#[test]
fn cnps_per_qp_are_never_closer_than_the_interval() {
    let interval = 4 * US;
    let mut nic = responder(
        Notification::Cnp {
            cnp_interval: interval,
        },
        NicConfig::default(),
        2,
    );
    let mut arrivals = vec![];
    let (mut t, mut psn) = (0, [0u32; 2]);
    for i in 0..200u64 {
        t += [700, 1300, 2900, 3999, 4001][(i % 5) as usize] * NS / 2;
        let q = (i % 3 == 0) as u32;
        arrivals.push((t, write(q, psn[q as usize], 1000, t, true)));
        psn[q as usize] += 1;
    }
    let out = run(&mut nic, &arrivals, t + 10 * US);
    let cnps = kinds(&out, PacketKind::Cnp);
    for q in 0..2 {
        let times: Vec<Time> = cnps
            .iter()
            .filter(|(_, p)| p.src_qp == q)
            .map(|&(t, _)| t)
            .collect();
        assert!(times.len() > 10, "QP {q}: {} CNPs", times.len());
        for w in times.windows(2) {
            assert!(w[1] - w[0] >= interval, "QP {q}: CNPs at {w:?}");
        }
        // Every mark at least the interval after the QP's last CNP made one.
        let mut last: Option<Time> = None;
        for (at, p) in arrivals.iter().filter(|(_, p)| p.dst_qp == q) {
            let due = last.is_none_or(|l| *at >= l + interval);
            assert_eq!(due, times.contains(at), "QP {q}, mark at {at} ({})", p.psn);
            if due {
                last = Some(*at);
            }
        }
    }
}

/// A CNP leaves `cnp_delay` after its marked packet arrived, not before;
/// the ACK of the same packet leaves at once. With no delay (the
/// default) the CNP leaves with it.
#[test]
fn a_cnp_leaves_after_the_generation_delay() {
    for delay in [0, 3 * US] {
        let mut nic = responder(
            Notification::Cnp { cnp_interval: 0 },
            NicConfig {
                cnp_delay: delay,
                ..NicConfig::default()
            },
            1,
        );
        let at = 10 * US;
        let out = run(&mut nic, &[(at, write(0, 0, 10, at, true))], 20 * US);
        let cnps = kinds(&out, PacketKind::Cnp);
        let acks = kinds(&out, PacketKind::Ack);
        assert_eq!(cnps.len(), 1, "delay {delay}");
        assert_eq!(cnps[0].0, at + delay, "delay {delay}");
        assert_eq!(acks.len(), 1);
        assert_eq!(acks[0].0, at);
        assert!(nic.is_quiescent());
    }
}

/// Packets 100 ns apart, ACKs held 1 us: one ACK per microsecond (the
/// latest PSN, leaving 1 us after the first it covers), the ECN echo of
/// any packet it covers, and the message's last ACK at once. Without the
/// interval every packet is answered when it arrives. IRN coalesces the
/// same way.
#[test]
fn acks_are_coalesced_by_time() {
    for engine in [Engine::GoBackN, Engine::Irn(IrnConfig::default())] {
        for interval in [0, US] {
            let mut nic = responder(
                Notification::AckEcho,
                NicConfig {
                    ack_interval: interval,
                    engine,
                    ..NicConfig::default()
                },
                1,
            );
            let n = 95;
            let arrivals: Vec<_> = (0..n)
                .map(|i| {
                    let t = (i as Time + 1) * 100 * NS;
                    (t, write(0, i, n, t, i == 12))
                })
                .collect();
            let out = run(&mut nic, &arrivals, 20 * US);
            let acks = kinds(&out, PacketKind::Ack);
            let last = arrivals.last().unwrap().0;
            if interval == 0 {
                assert_eq!(acks.len(), n as usize);
                assert!(acks.iter().zip(&arrivals).all(|(a, b)| a.0 == b.0));
                continue;
            }
            // Held from 100 ns, 1.1 us, ...: nine full intervals, then the
            // last packet's ACK at once.
            let times: Vec<Time> = acks.iter().map(|&(t, _)| t).collect();
            let want: Vec<Time> = (0..9).map(|k| (k * 10 + 1) * 100 * NS + US).collect();
            assert_eq!(times[..9], want[..], "{}", engine.name());
            assert_eq!(times[9..], [last]);
            // Cumulative: the first covers packets 0-9 (next expected 10)
            // and echoes packet 12's mark in the second.
            assert_eq!(acks[0].1.psn, 10);
            assert_eq!(acks[9].1.psn, n);
            let echoed: Vec<bool> = acks.iter().map(|(_, p)| p.ecn_echo).collect();
            assert_eq!(echoed.iter().filter(|&&e| e).count(), 1);
            assert!(echoed[1]);
            assert!(nic.is_quiescent());
        }
    }
}
