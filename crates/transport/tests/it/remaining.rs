//! Every engine's data packets carry their message's remaining bytes
//! (`Packet::remaining`: `msg_len` less the iPSN's packets), what an SRPT
//! switch ranks them by: a WRITE's and a SEND's packets count down from
//! the message's length, a READ request counts every byte it asks for and
//! its responses count down, a re-issued READ (go-back-N) counts the
//! remainder it asks for; control packets count 0; Eunomia's metadata
//! leaves it alone.

use crate::common;

use common::{Action, World, A, B};
use engine::time::US;
use transport::{
    Engine, IrnConfig, MpRdmaConfig, NicConfig, OrderingKind, PacketKind, Verb, WorkRequest,
};

const MTU: u64 = 1000;

fn world(engine: Engine) -> World {
    let cfg = NicConfig {
        engine,
        ..NicConfig::default()
    };
    assert_eq!(cfg.mtu as u64, MTU);
    let mut w = World::with_config(cfg, US);
    w.connect(1);
    w
}

fn post(w: &mut World, verb: Verb, len: u64) {
    if verb == Verb::Send {
        w.post_recv(B, 0, 1, len);
    }
    let wr = WorkRequest {
        wr_id: 1,
        verb,
        len,
        ..WorkRequest::default()
    };
    w.post_send(A, 0, wr);
    w.run();
    assert_eq!(w.req_done(A, 0), vec![(1, len)]);
}

/// The remaining bytes of `nic`'s data packets, in the order sent.
fn remaining(w: &World, nic: usize) -> Vec<u64> {
    w.data_sent(nic)
        .map(|(_, _, p)| p.remaining(MTU as u32))
        .collect()
}

fn engines() -> [Engine; 3] {
    [
        Engine::GoBackN,
        Engine::Irn(IrnConfig::default()),
        Engine::MpRdma(MpRdmaConfig::default()),
    ]
}

#[test]
fn writes_and_sends_count_down_from_the_message_length() {
    for engine in engines() {
        for verb in [Verb::Write, Verb::Send] {
            let mut w = world(engine);
            post(&mut w, verb, 2500);
            assert_eq!(remaining(&w, A), [2500, 1500, 500], "{engine:?} {verb:?}");
            // Acknowledgements rank first.
            let ctrl: Vec<u64> = w
                .sent
                .iter()
                .filter(|(_, n, p)| *n == B && !p.is_data())
                .map(|(_, _, p)| p.remaining(MTU as u32))
                .collect();
            assert!(!ctrl.is_empty() && ctrl.iter().all(|&r| r == 0));
        }
    }
}

/// Eunomia's sender agent stamps its metadata without touching the key.
#[test]
fn the_key_survives_eunomias_metadata() {
    for ordering in ["eunomia", "static_bitmap"] {
        for engine in &engines()[..2] {
            let cfg = NicConfig {
                engine: *engine,
                ordering: OrderingKind::from_name(ordering).unwrap(),
                ..NicConfig::default()
            };
            let mut w = World::with_config(cfg, US);
            w.connect(1);
            post(&mut w, Verb::Write, 2500);
            assert_eq!(remaining(&w, A), [2500, 1500, 500], "{engine:?} {ordering}");
        }
    }
}

#[test]
fn a_read_counts_the_responders_bytes() {
    for engine in &engines()[..2] {
        let mut w = world(*engine);
        post(&mut w, Verb::Read, 2500);
        assert_eq!(remaining(&w, A), [2500], "{engine:?}: the request");
        assert_eq!(remaining(&w, B), [2500, 1500, 500], "{engine:?}");
    }
}

/// Go-back-N re-issues a READ from the first missing response, asking for
/// the remainder: its request and the responses from there count what is
/// left of the original message.
#[test]
fn a_reissued_read_counts_its_remainder() {
    let mut w = world(Engine::GoBackN);
    let mut dropped = false;
    w.rule = Box::new(move |_, from, p| {
        if !dropped && from == B && p.kind == PacketKind::ReadResponse && p.psn == 3 {
            dropped = true;
            Action::Drop
        } else {
            Action::Deliver
        }
    });
    post(&mut w, Verb::Read, 10_000);
    let requests = remaining(&w, A);
    assert_eq!(requests, [10_000, 7_000]);
    // Responses from PSN 3 on, after the re-issue, count down from 7000.
    let resent: Vec<u64> = w
        .data_sent(B)
        .skip_while(|(_, _, p)| p.psn != 3)
        .skip(1)
        .skip_while(|(_, _, p)| p.psn != 3)
        .map(|(_, _, p)| p.remaining(MTU as u32))
        .collect();
    assert_eq!(resent, [7000, 6000, 5000, 4000, 3000, 2000, 1000]);
}
