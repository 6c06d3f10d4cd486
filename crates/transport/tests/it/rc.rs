//! RoCEv2 RC with go-back-N between two NICs over a simulated channel.

use crate::common;

use common::{Action, World, A, B};
use engine::time::{serialization, MS, NS, US};
use engine::{Rng, StreamKind, Time};
use transport::{NicConfig, PacketKind, Verb, WorkRequest};

const MB: u64 = 1_000_000;

fn wr(wr_id: u64, verb: Verb, len: u64) -> WorkRequest {
    WorkRequest {
        wr_id,
        verb,
        len,
        ..WorkRequest::default()
    }
}

fn world() -> World {
    let mut w = World::with_config(NicConfig::default(), US);
    w.connect(1);
    w
}

#[test]
fn write_1mb_lossless_at_line_rate() {
    let mut w = world();
    w.post_send(A, 0, wr(7, Verb::Write, MB));
    w.run();
    let sa = *w.nics[A].stats();
    let sb = *w.nics[B].stats();
    assert_eq!(sa.data_packets_sent, MB.div_ceil(1000));
    assert_eq!(sa.data_bytes_sent, MB);
    assert_eq!(sa.data_wire_bytes_sent, MB + 1000 * 48);
    assert_eq!(sa.retransmitted_packets, 0);
    assert_eq!(sa.timeouts, 0);
    assert_eq!(sa.acks_received, 1000);
    assert_eq!(sb.ctrl_packets_sent, 1000);
    assert_eq!(sb.out_of_order_dropped, 0);
    // Back-to-back packets at line rate: the last arrives 1000 serialisation
    // times plus one delay after the start.
    let ser = serialization(1048, 100_000_000_000);
    assert_eq!(ser, 83_840);
    let gaps: Vec<Time> = w
        .data_sent(A)
        .map(|(t, _, _)| *t)
        .collect::<Vec<_>>()
        .windows(2)
        .map(|p| p[1] - p[0])
        .collect();
    assert!(
        gaps.iter().all(|&g| g == ser),
        "packets back to back at line rate"
    );
    let resp = w.completions.iter().find(|(n, _)| *n == B).unwrap().1;
    assert_eq!((resp.wr_id, resp.verb, resp.len), (0, Verb::Write, MB));
    assert_eq!(resp.at, 1000 * ser + US);
    let req = w.completions.iter().find(|(n, _)| *n == A).unwrap().1;
    assert_eq!((req.wr_id, req.len), (7, MB));
    assert_eq!(
        req.at,
        1000 * ser + US + serialization(60, 100_000_000_000) + US
    );
    assert_eq!(w.completions.len(), 2);
    // One timer armed for the whole transfer, none at the responder.
    assert_eq!(w.arm_timers, [1, 0]);
    assert!(w.nics[A].is_quiescent() && w.nics[B].is_quiescent());
}

/// Index in `sent` of the second transmission of `psn` by `nic`, and the
/// highest PSN sent before it.
fn tail_before_retransmission(w: &World, nic: usize, kind: PacketKind, psn: u32) -> u32 {
    let mut seen = false;
    let mut hi = 0;
    for (_, n, p) in &w.sent {
        if *n != nic || p.kind != kind {
            continue;
        }
        if p.psn == psn {
            if seen {
                return hi;
            }
            seen = true;
        }
        hi = hi.max(p.psn);
    }
    panic!("psn {psn} not retransmitted");
}

fn drop_once(from: usize, kind: PacketKind, psn: u32) -> common::Rule {
    let mut done = false;
    Box::new(move |_, f, p| {
        if !done && f == from && p.kind == kind && p.psn == psn {
            done = true;
            Action::Drop
        } else {
            Action::Deliver
        }
    })
}

#[test]
fn write_with_one_drop_retransmits_the_go_back_n_tail() {
    let mut w = world();
    w.rule = drop_once(A, PacketKind::Request, 500);
    w.post_send(A, 0, wr(1, Verb::Write, MB));
    w.run();
    let sa = *w.nics[A].stats();
    let sb = *w.nics[B].stats();
    let hi = tail_before_retransmission(&w, A, PacketKind::Request, 500);
    let tail = (hi - 500 + 1) as u64;
    assert_eq!(sa.retransmitted_packets, tail);
    assert_eq!(sa.data_packets_sent, 1000 + tail);
    assert_eq!(sa.nacks_received, 1);
    assert_eq!(sa.timeouts, 0);
    assert_eq!(
        sb.out_of_order_dropped,
        tail - 1,
        "501..=hi dropped at the responder"
    );
    // The tail is about one round trip of packets: the NACK leaves when 501
    // arrives and comes back one delay later.
    let ser = serialization(1048, 100_000_000_000);
    let rtt_pkts = (2 * US + ser + serialization(60, 100_000_000_000)) / ser;
    assert!(tail.abs_diff(rtt_pkts) <= 2, "tail {tail} vs ~{rtt_pkts}");
    assert_eq!(w.req_done(A, 0), vec![(1, MB)]);
    assert_eq!(w.resp_done(B, 0), vec![(0, Verb::Write, MB)]);
}

#[test]
fn dropped_ack_is_covered_by_the_next_cumulative_ack() {
    let mut w = world();
    w.rule = drop_once(B, PacketKind::Ack, 101);
    w.post_send(A, 0, wr(1, Verb::Write, MB));
    w.run();
    let sa = *w.nics[A].stats();
    assert_eq!(
        (sa.acks_received, sa.timeouts, sa.retransmitted_packets),
        (999, 0, 0)
    );
    assert_eq!(w.req_done(A, 0), vec![(1, MB)]);
}

#[test]
fn dropped_last_ack_is_recovered_by_timeout() {
    let mut w = world();
    w.rule = drop_once(B, PacketKind::Ack, 1000);
    w.post_send(A, 0, wr(1, Verb::Write, MB));
    w.run();
    let sa = *w.nics[A].stats();
    let sb = *w.nics[B].stats();
    assert_eq!(sa.timeouts, 1);
    assert_eq!(
        sa.retransmitted_packets, 1,
        "only the unacknowledged last packet"
    );
    assert_eq!(sb.duplicates_received, 1);
    assert_eq!(w.req_done(A, 0), vec![(1, MB)]);
    assert_eq!(
        w.resp_done(B, 0).len(),
        1,
        "the duplicate does not complete again"
    );
    let done = w.completions.iter().find(|(n, _)| *n == A).unwrap().1.at;
    // The deadline was last restarted by the ACK of PSN 998.
    assert!(done > 4 * MS && done < 4 * MS + 100 * US, "{done}");
}

#[test]
fn dropped_nack_is_recovered_by_timeout() {
    let mut w = world();
    let mut dropped_data = false;
    let mut dropped_nack = false;
    w.rule = Box::new(move |_, f, p| {
        if f == A && p.kind == PacketKind::Request && p.psn == 500 && !dropped_data {
            dropped_data = true;
            return Action::Drop;
        }
        if f == B && p.kind == PacketKind::Nack && !dropped_nack {
            dropped_nack = true;
            return Action::Drop;
        }
        Action::Deliver
    });
    w.post_send(A, 0, wr(1, Verb::Write, MB));
    w.run();
    let sa = *w.nics[A].stats();
    let sb = *w.nics[B].stats();
    assert_eq!(sa.timeouts, 1);
    assert_eq!(sa.nacks_received, 0);
    assert_eq!(
        sb.out_of_order_dropped, 499,
        "one NACK for the whole gap, then silence"
    );
    assert_eq!(sa.retransmitted_packets, 500, "everything from 500 again");
    assert_eq!(w.req_done(A, 0), vec![(1, MB)]);
}

#[test]
fn reordered_packet_triggers_nack_and_completes() {
    let mut w = world();
    let mut done = false;
    w.rule = Box::new(move |_, f, p| {
        if !done && f == A && p.kind == PacketKind::Request && p.psn == 10 {
            done = true;
            Action::Delay(500 * NS)
        } else {
            Action::Deliver
        }
    });
    w.post_send(A, 0, wr(1, Verb::Write, 100_000));
    w.run();
    let sa = *w.nics[A].stats();
    // NACK(10) when 11 overtakes 10; when the late 10 fills the hole, the
    // packets dropped meanwhile (11..) open a new gap episode: NACK(11).
    let nacks: Vec<u32> = w
        .sent
        .iter()
        .filter(|(_, n, p)| *n == B && p.kind == PacketKind::Nack)
        .map(|(_, _, p)| p.psn)
        .collect();
    assert_eq!(nacks, vec![10, 11]);
    assert_eq!(sa.nacks_received, 2);
    assert!(sa.retransmitted_packets > 0);
    assert_eq!(sa.timeouts, 0);
    assert_eq!(w.req_done(A, 0), vec![(1, 100_000)]);
    assert_eq!(w.resp_done(B, 0), vec![(0, Verb::Write, 100_000)]);
}

#[test]
fn read_completes_with_its_length() {
    let mut w = world();
    w.post_send(A, 0, wr(3, Verb::Read, MB));
    w.run();
    let sa = *w.nics[A].stats();
    let sb = *w.nics[B].stats();
    assert_eq!(sa.data_packets_sent, 1, "one READ request");
    assert_eq!(sb.data_packets_sent, 1000, "1000 READ responses");
    assert_eq!(sb.data_bytes_sent, MB);
    assert_eq!(sb.ctrl_packets_sent, 0, "READ needs no ACKs");
    assert_eq!(w.req_done(A, 0), vec![(3, MB)]);
    assert!(w.resp_done(B, 0).is_empty());
    let ser = serialization(1048, 100_000_000_000);
    let req_ser = serialization(48, 100_000_000_000);
    let done = w.completions[0].1.at;
    assert_eq!(
        done,
        req_ser + US + 1000 * ser + US,
        "responses at line rate"
    );
}

#[test]
fn read_with_lost_response_reissues_from_the_gap() {
    let mut w = world();
    w.rule = drop_once(B, PacketKind::ReadResponse, 300);
    w.post_send(A, 0, wr(3, Verb::Read, MB));
    w.run();
    let sa = *w.nics[A].stats();
    let sb = *w.nics[B].stats();
    assert_eq!(sa.read_reissues, 1);
    assert_eq!(
        sa.data_packets_sent, 2,
        "original and re-issued READ request"
    );
    assert_eq!(sa.retransmitted_packets, 1);
    assert_eq!(sa.timeouts, 0);
    // The re-issued request asks for the remainder from PSN 300.
    let reissue = w.data_sent(A).nth(1).unwrap().2;
    assert_eq!((reissue.psn, reissue.msg_len), (300, MB - 300_000));
    // The responder restarts from 300; responses it had queued beyond the
    // gap are replaced, so only the tail already sent is sent twice.
    let hi = tail_before_retransmission(&w, B, PacketKind::ReadResponse, 300);
    assert_eq!(sb.retransmitted_packets, (hi - 300 + 1) as u64);
    assert_eq!(sb.data_packets_sent, 1000 + sb.retransmitted_packets);
    assert_eq!(sa.out_of_order_dropped, (hi - 300) as u64);
    assert_eq!(w.req_done(A, 0), vec![(3, MB)]);
}

#[test]
fn lost_tail_read_response_recovered_by_timeout() {
    let mut w = world();
    w.rule = drop_once(B, PacketKind::ReadResponse, 9);
    w.post_send(A, 0, wr(3, Verb::Read, 10_000));
    w.run();
    let sa = *w.nics[A].stats();
    assert_eq!(sa.timeouts, 1);
    assert_eq!(w.req_done(A, 0), vec![(3, 10_000)]);
}

#[test]
fn send_recv_complete_in_order_with_lengths() {
    let mut w = world();
    for (id, len) in [(11, 8000), (12, 100), (13, 4000)] {
        w.post_recv(B, 0, id, len);
    }
    w.post_send(A, 0, wr(1, Verb::Send, 5000));
    w.post_send(A, 0, wr(2, Verb::Send, 0));
    w.post_send(A, 0, wr(3, Verb::Send, 2500));
    w.run();
    assert_eq!(w.req_done(A, 0), vec![(1, 5000), (2, 0), (3, 2500)]);
    assert_eq!(
        w.resp_done(B, 0),
        vec![
            (11, Verb::Send, 5000),
            (12, Verb::Send, 0),
            (13, Verb::Send, 2500)
        ]
    );
}

#[test]
fn send_without_receive_waits_for_timeout() {
    let mut w = world();
    w.post_send(A, 0, wr(1, Verb::Send, 5000));
    w.run_until(MS);
    assert!(w.req_done(A, 0).is_empty());
    assert_eq!(w.nics[B].stats().rnr_drops, 1);
    assert_eq!(
        w.nics[B].stats().nacks_received + w.nics[B].stats().ctrl_packets_sent,
        0,
        "no NACK storm"
    );
    w.post_recv(B, 0, 9, 5000);
    w.run();
    assert_eq!(w.nics[A].stats().timeouts, 1);
    assert_eq!(w.req_done(A, 0), vec![(1, 5000)]);
    assert_eq!(w.resp_done(B, 0), vec![(9, Verb::Send, 5000)]);
}

fn mixed(w: &mut World, drop_some: bool) {
    if drop_some {
        let mut n = 0u32;
        w.rule = Box::new(move |_, _, p| {
            n += 1;
            if p.is_data() && (n == 5 || n == 40 || n == 77 || n == 130) {
                Action::Drop
            } else {
                Action::Deliver
            }
        });
    }
    let wrs = [
        wr(1, Verb::Write, 10_000),
        wr(2, Verb::Read, 5_000),
        wr(3, Verb::Send, 3_000),
        wr(4, Verb::Write, 0),
        wr(5, Verb::Read, 0),
        wr(6, Verb::Send, 1_500),
        wr(7, Verb::Read, 100_000),
        wr(8, Verb::Write, 1),
    ];
    w.post_recv(B, 0, 103, 3000);
    w.post_recv(B, 0, 106, 3000);
    for x in wrs {
        w.post_send(A, 0, x);
    }
    w.run();
    assert_eq!(
        w.req_done(A, 0),
        wrs.iter().map(|x| (x.wr_id, x.len)).collect::<Vec<_>>()
    );
    assert_eq!(
        w.resp_done(B, 0),
        vec![
            (0, Verb::Write, 10_000),
            (103, Verb::Send, 3_000),
            (0, Verb::Write, 0),
            (106, Verb::Send, 1_500),
            (0, Verb::Write, 1),
        ]
    );
}

#[test]
fn mixed_work_requests_complete_in_post_order() {
    let mut w = world();
    mixed(&mut w, false);
    assert_eq!(w.nics[A].stats().retransmitted_packets, 0);
}

#[test]
fn mixed_work_requests_complete_in_post_order_with_losses() {
    let mut w = world();
    mixed(&mut w, true);
    let s = w.nics[A].stats().retransmitted_packets + w.nics[B].stats().retransmitted_packets;
    assert!(s > 0);
}

/// Random loss of any packet, both directions, many WRs on 3 QPs from both
/// sides: everything completes exactly once, in post order.
#[test]
fn random_loss_completes_everything_exactly_once() {
    for seed in 1u64..=6 {
        let loss = [0.01, 0.03, 0.05][seed as usize % 3];
        let cfg = NicConfig {
            rto: 50 * US,
            ack_every: if seed > 3 { 3 } else { 1 },
            ..NicConfig::default()
        };
        let mut w = World::with_config(cfg, US);
        w.connect(3);
        let mut rng = Rng::new(seed, StreamKind::LinkLoss, 0);
        w.rule = Box::new(move |_, _, _| {
            if rng.bernoulli(loss) {
                Action::Drop
            } else {
                Action::Deliver
            }
        });
        let mut gen = Rng::new(seed, StreamKind::Workload, 0);
        let mut expect_req = vec![vec![vec![]; 3]; 2];
        let mut expect_resp = vec![vec![vec![]; 3]; 2];
        let mut id = 0;
        for _ in 0..300 {
            let nic = gen.below(2) as usize;
            let qp = gen.below(3) as u32;
            let verb = [Verb::Write, Verb::Read, Verb::Send][gen.below(3) as usize];
            let len = if gen.bernoulli(0.1) {
                0
            } else {
                gen.below(30_000)
            };
            id += 1;
            if verb == Verb::Send {
                w.post_recv(1 - nic, qp, 10_000 + id, len);
                expect_resp[1 - nic][qp as usize].push((10_000 + id, verb, len));
            } else if verb == Verb::Write {
                expect_resp[1 - nic][qp as usize].push((0, verb, len));
            }
            expect_req[nic][qp as usize].push((id, len));
            w.post_send(nic, qp, wr(id, verb, len));
        }
        w.run();
        for nic in [A, B] {
            for qp in 0..3 {
                assert_eq!(
                    w.req_done(nic, qp),
                    expect_req[nic][qp as usize],
                    "seed {seed} nic {nic} qp {qp}"
                );
                assert_eq!(
                    w.resp_done(nic, qp),
                    expect_resp[nic][qp as usize],
                    "seed {seed} nic {nic} qp {qp}"
                );
            }
            assert!(w.nics[nic].is_quiescent());
        }
        let drops = w.sent.len() - w.delivered.len();
        println!(
            "seed {seed} loss {loss}: {} packets sent, {drops} lost, stats A {:?}",
            w.sent.len(),
            w.nics[A].stats()
        );
        assert!(drops > 0, "seed {seed}: some packets were lost");
        let s = w.nics[A].stats();
        assert!(s.retransmitted_packets > 0);
    }
}

#[test]
fn round_robin_is_fair_across_three_qps() {
    let mut w = World::with_config(NicConfig::default(), US);
    w.connect(3);
    for qp in 0..3 {
        w.post_send(A, qp, wr(qp as u64, Verb::Write, 200_000));
    }
    w.run();
    let order: Vec<u32> = w.data_sent(A).map(|(_, _, p)| p.src_qp).collect();
    assert_eq!(order.len(), 600);
    let mut count = [0i64; 3];
    for q in order {
        count[q as usize] += 1;
        let max = *count.iter().max().unwrap();
        let min = *count.iter().min().unwrap();
        assert!(max - min <= 1, "{count:?}");
    }
    for qp in 0..3 {
        assert_eq!(w.req_done(A, qp), vec![(qp as u64, 200_000)]);
    }
}

#[test]
fn pfc_pause_of_the_data_class_stops_data_but_not_acks() {
    let mut w = world();
    w.paused[A] = 1 << 3;
    w.post_send(A, 0, wr(1, Verb::Write, 10_000));
    w.post_send(B, 0, wr(2, Verb::Write, 10_000));
    w.run_until(MS);
    let sa = *w.nics[A].stats();
    assert_eq!(sa.data_packets_sent, 0, "data class paused");
    assert_eq!(sa.ctrl_packets_sent, 10, "ACKs still flow");
    assert_eq!(w.req_done(B, 0), vec![(2, 10_000)]);
    assert!(w.req_done(A, 0).is_empty());
    w.paused[A] = 0;
    w.kick(A);
    w.run();
    assert_eq!(w.req_done(A, 0), vec![(1, 10_000)]);
    assert_eq!(w.nics[A].stats().timeouts, 0);
}

#[test]
fn pfc_pause_of_the_ctrl_class_holds_acks_but_not_data() {
    let mut w = world();
    w.paused[B] = 1 << 0;
    w.post_send(A, 0, wr(1, Verb::Write, 10_000));
    w.run_until(MS);
    assert_eq!(w.nics[B].stats().ctrl_packets_sent, 0);
    assert_eq!(
        w.resp_done(B, 0),
        vec![(0, Verb::Write, 10_000)],
        "data arrived"
    );
    w.paused[B] = 0;
    w.kick(B);
    w.run();
    assert_eq!(w.nics[B].stats().ctrl_packets_sent, 10);
    assert_eq!(w.req_done(A, 0), vec![(1, 10_000)]);
}

#[test]
fn ack_coalescing_acks_every_nth_and_the_last() {
    let cfg = NicConfig {
        ack_every: 4,
        ..NicConfig::default()
    };
    let mut w = World::with_config(cfg, US);
    w.connect(1);
    w.post_send(A, 0, wr(1, Verb::Write, 10_000));
    w.run();
    // 10 packets: ACKs after 4, 8 and the last.
    let acks: Vec<u32> = w
        .sent
        .iter()
        .filter(|(_, n, p)| *n == B && p.kind == PacketKind::Ack)
        .map(|(_, _, p)| p.psn)
        .collect();
    assert_eq!(acks, vec![4, 8, 10]);
    assert_eq!(w.req_done(A, 0), vec![(1, 10_000)]);
}
