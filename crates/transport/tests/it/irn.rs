//! IRN between two NICs over the simulated channel of `common`: selective
//! retransmission, BDP flow control, the two timeouts, READ responses with
//! read (N)ACKs, and goodput under random loss against go-back-N.

use crate::common;

use common::{Action, World, A, B};
use engine::time::US;
use engine::{Rng, StreamKind, Time};
use transport::{Engine, IrnConfig, NicConfig, PacketKind, Verb, WorkRequest};

const MB: u64 = 1_000_000;

fn wr(wr_id: u64, verb: Verb, len: u64) -> WorkRequest {
    WorkRequest {
        wr_id,
        verb,
        len,
        ..WorkRequest::default()
    }
}

fn cfg(rel: Engine) -> NicConfig {
    NicConfig {
        engine: rel,
        ..NicConfig::default()
    }
}

fn irn() -> Engine {
    Engine::Irn(IrnConfig::default())
}

fn world(rel: Engine) -> World {
    let mut w = World::with_config(cfg(rel), US);
    w.connect(1);
    w
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
fn one_loss_retransmits_only_that_packet() {
    let mut w = world(irn());
    w.rule = drop_once(A, PacketKind::Request, 500);
    w.post_send(A, 0, wr(1, Verb::Write, MB));
    w.run();
    let (sa, sb) = (*w.nics[A].stats(), *w.nics[B].stats());
    assert_eq!(sa.retransmitted_packets, 1);
    assert_eq!(sa.data_packets_sent, 1001);
    assert_eq!(sa.timeouts, 0);
    assert_eq!(sb.out_of_order_dropped, 0, "nothing is dropped for order");
    // Every packet after the hole is NACKed with itself as SACK until the
    // retransmission fills it.
    let nacks: Vec<(u32, u32)> = w
        .sent
        .iter()
        .filter(|(_, n, p)| *n == B && p.kind == PacketKind::Nack)
        .map(|(_, _, p)| (p.psn, p.sack_psn))
        .collect();
    assert!(!nacks.is_empty());
    assert!(nacks
        .iter()
        .enumerate()
        .all(|(i, &n)| n == (500, 501 + i as u32)));
    assert_eq!(w.req_done(A, 0), vec![(1, MB)]);
    assert_eq!(w.resp_done(B, 0), vec![(0, Verb::Write, MB)]);
}

#[test]
fn bdp_cap_bounds_packets_in_flight() {
    let cap = 20;
    let rel = Engine::Irn(IrnConfig {
        bdp_packets: cap,
        ..IrnConfig::default()
    });
    // A 10 us one-way delay: a BDP of ~240 packets, far above the cap.
    let mut w = World::with_config(cfg(rel), 10 * US);
    w.connect(1);
    w.post_send(A, 0, wr(1, Verb::Write, MB));
    w.run();
    // Replay the trace: in flight = sent - cumulatively acknowledged.
    let mut events: Vec<(Time, i64, u32)> = w
        .sent
        .iter()
        .filter(|(_, n, p)| *n == A && p.is_data())
        .map(|(t, _, p)| (*t, 1, p.psn))
        .chain(
            w.delivered
                .iter()
                .filter(|(_, n, p)| *n == A && p.kind == PacketKind::Ack)
                .map(|(t, _, p)| (*t, 0, p.psn)),
        )
        .collect();
    events.sort();
    let (mut una, mut max_sent, mut peak) = (0u32, 0u32, 0u32);
    for (_, is_sent, psn) in events {
        if is_sent == 1 {
            max_sent = max_sent.max(psn + 1);
        } else {
            una = una.max(psn);
        }
        peak = peak.max(max_sent - una);
    }
    assert_eq!(peak, cap);
    assert_eq!(w.req_done(A, 0), vec![(1, MB)]);
}

#[test]
fn tail_loss_is_recovered_by_rto_low_and_bulk_loss_by_rto_high() {
    let c = IrnConfig::default();
    // The last packet lost: 1 in flight < N, RTO_low.
    let mut w = world(irn());
    w.rule = drop_once(A, PacketKind::Request, 99);
    w.post_send(A, 0, wr(1, Verb::Write, 100_000));
    w.run();
    assert_eq!(w.nics[A].stats().timeouts, 1);
    let done = w.completions.iter().find(|(n, _)| *n == A).unwrap().1.at;
    assert!(done > c.rto_low && done < c.rto_low + 20 * US, "{done}");
    // Every packet from 90 on lost once, ACKs included: 10 in flight, RTO_high.
    let mut w = world(irn());
    let mut seen = std::collections::HashSet::new();
    w.rule = Box::new(move |_, _, p| {
        if p.kind == PacketKind::Request && p.psn >= 90 && seen.insert(p.psn) {
            Action::Drop
        } else {
            Action::Deliver
        }
    });
    w.post_send(A, 0, wr(1, Verb::Write, 100_000));
    w.run();
    let done = w.completions.iter().find(|(n, _)| *n == A).unwrap().1.at;
    assert!(done > c.rto_high && done < c.rto_high + 20 * US, "{done}");
}

#[test]
fn read_responses_are_acknowledged_and_repaired_selectively() {
    let mut w = world(irn());
    w.rule = drop_once(B, PacketKind::ReadResponse, 300);
    w.post_send(A, 0, wr(3, Verb::Read, MB));
    w.post_send(A, 0, wr(4, Verb::Write, 5000));
    w.run();
    let (sa, sb) = (*w.nics[A].stats(), *w.nics[B].stats());
    assert_eq!(sb.data_packets_sent, 1001, "one response resent");
    assert_eq!(sb.retransmitted_packets, 1);
    assert_eq!(sa.read_reissues, 0);
    // Request PSNs 0 (READ) and 1..6 (WRITE): response PSNs are separate.
    let req_psns: Vec<u32> = w.data_sent(A).map(|(_, _, p)| p.psn).collect();
    assert_eq!(req_psns, (0..6).collect::<Vec<_>>());
    let read_acks = w
        .sent
        .iter()
        .filter(|(_, n, p)| *n == A && p.kind == PacketKind::ReadAck)
        .count();
    let read_nacks = w
        .sent
        .iter()
        .filter(|(_, n, p)| *n == A && p.kind == PacketKind::ReadNack)
        .count();
    assert_eq!(
        read_acks + read_nacks,
        1000,
        "one read (N)ACK per response that arrives"
    );
    assert!(read_nacks > 0);
    assert_eq!(w.req_done(A, 0), vec![(3, MB), (4, 5000)]);
}

#[test]
fn lost_tail_read_response_is_recovered_by_the_read_responder_timeout() {
    let mut w = world(irn());
    w.rule = drop_once(B, PacketKind::ReadResponse, 9);
    w.post_send(A, 0, wr(3, Verb::Read, 10_000));
    w.run();
    let sb = *w.nics[B].stats();
    assert_eq!((sb.timeouts, sb.retransmitted_packets), (1, 1));
    assert_eq!(w.req_done(A, 0), vec![(3, 10_000)]);
}

/// Goodput of one 20 MB WRITE with 1% of data packets lost at random.
fn goodput_under_loss(rel: Engine) -> f64 {
    let mut w = world(rel);
    let mut rng = Rng::new(1, StreamKind::LinkLoss, 0);
    w.rule = Box::new(move |_, f, p| {
        if f == A && p.is_data() && rng.uniform() < 0.01 {
            Action::Drop
        } else {
            Action::Deliver
        }
    });
    let bytes = 20 * MB;
    w.post_send(A, 0, wr(1, Verb::Write, bytes));
    w.run();
    let done = w.completions.iter().find(|(n, _)| *n == A).unwrap().1.at;
    bytes as f64 * 8.0 / (done as f64 / engine::time::SEC as f64) / 1e9
}

#[test]
fn one_percent_loss_irn_goodput_well_above_go_back_n() {
    let irn = goodput_under_loss(irn());
    let gbn = goodput_under_loss(Engine::GoBackN);
    eprintln!("1% loss, 100G, 1 us links: IRN {irn:.2} Gb/s, go-back-N {gbn:.2} Gb/s");
    // IRN loses most of its time to the few retransmissions that are lost
    // again (only RTO_high recovers them); go-back-N resends a BDP per loss.
    assert!(irn > 3.0 * gbn, "IRN {irn:.2} vs go-back-N {gbn:.2} Gb/s");
}

/// The wire size of every request packet A sends for a WRITE, a WRITE with
/// immediate and a SEND of 2500 bytes (3 packets each), a READ and a
/// fetch-and-add, less their payload: the NIC's 48 header bytes, plus
/// under IRN what its §5 adds (the RETH on every WRITE packet, the
/// recv_WQE_SN and offset on SEND packets, the recv_WQE_SN on the last
/// WRITE with immediate packet, the read_WQE_SN on READ/atomic requests).
fn request_headers(rel: Engine) -> Vec<(Verb, u32)> {
    let mut w = world(rel);
    for _ in 0..2 {
        w.post_recv(B, 0, 0, 2500);
    }
    let verbs = [
        Verb::Write,
        Verb::WriteImm,
        Verb::Send,
        Verb::Read,
        Verb::FetchAdd,
    ];
    for (i, v) in verbs.into_iter().enumerate() {
        let len = if v.is_atomic() { 8 } else { 2500 };
        w.post_send(A, 0, wr(i as u64, v, len));
    }
    w.run();
    assert_eq!(w.req_done(A, 0).len(), 5, "every message completes");
    w.sent
        .iter()
        .filter(|(_, n, p)| *n == A && p.kind == PacketKind::Request)
        .map(|(_, _, p)| (p.verb, p.wire - p.payload))
        .collect()
}

#[test]
fn irn_requests_carry_the_header_fields_of_its_section_5() {
    use Verb::*;
    let gbn = request_headers(Engine::GoBackN);
    assert!(gbn.iter().all(|&(_, h)| h == 48), "{gbn:?}");
    assert_eq!(
        request_headers(irn()),
        vec![
            (Write, 48),
            (Write, 48 + 16),
            (Write, 48 + 16),
            (WriteImm, 48),
            (WriteImm, 48 + 16),
            (WriteImm, 48 + 16 + 4),
            (Send, 48 + 8),
            (Send, 48 + 8),
            (Send, 48 + 8),
            (Read, 48 + 4),
            (FetchAdd, 48 + 4),
        ]
    );
}
