//! `Nic::destroy_qp` mid-transfer, at either end, for every engine: the
//! packets and timers still on their way for the destroyed QP are
//! harmless (counted as malformed, or finding nothing due), and the other
//! QP pair finishes its transfer.

use crate::common;

use common::{World, A, B};
use engine::time::{MS, US};
use transport::{
    CompletionSide, Engine, IrnConfig, MpRdmaConfig, NicConfig, QpError, Verb, WorkRequest,
};

const LEN: u64 = 2_000_000;

fn engines() -> [Engine; 3] {
    [
        Engine::GoBackN,
        Engine::Irn(IrnConfig::default()),
        Engine::MpRdma(MpRdmaConfig::default()),
    ]
}

/// Two QP pairs each writing `LEN` bytes; QP 0 is destroyed at `end`
/// after 100 us (a third of the way).
fn destroy_at(rel: Engine, end: usize) -> World {
    let cfg = NicConfig {
        rto: 200 * US,
        engine: rel,
        ..NicConfig::default()
    };
    let mut w = World::with_config(cfg, US);
    w.connect(2);
    for qp in 0..2 {
        let wr = WorkRequest {
            wr_id: qp as u64,
            verb: Verb::Write,
            len: LEN,
            ..WorkRequest::default()
        };
        w.post_send(A, qp, wr);
    }
    w.run_until(100 * US);
    assert!(w.req_done(A, 0).is_empty(), "mid-transfer");
    w.nics[end].destroy_qp(0).unwrap();
    w.run_until(50 * MS);
    w
}

#[test]
fn destroyed_requester_leaves_the_other_qp_running() {
    for rel in engines() {
        let w = destroy_at(rel, A);
        assert_eq!(w.req_done(A, 1), vec![(1, LEN)], "{}", rel.name());
        assert!(w.req_done(A, 0).is_empty());
        // ACKs of QP 0's packets still in flight were dropped as malformed.
        assert!(w.nics[A].stats().malformed_dropped > 0, "{}", rel.name());
        assert_eq!(w.nics[A].poll_timeout(), None);
        assert!(w.nics[A].is_quiescent() && w.nics[B].is_quiescent());
        assert_eq!(
            w.nics[A].qp_engine(0),
            Err(QpError::Destroyed(0)),
            "{}",
            rel.name()
        );
    }
}

#[test]
fn destroyed_responder_leaves_the_other_qp_running() {
    for rel in engines() {
        let w = destroy_at(rel, B);
        assert_eq!(w.req_done(A, 1), vec![(1, LEN)], "{}", rel.name());
        // The requester of QP 0 keeps trying and times out; the responder
        // drops every packet for the destroyed QP.
        assert!(w.req_done(A, 0).is_empty());
        assert!(w.nics[A].stats().timeouts > 0, "{}", rel.name());
        assert!(w.nics[B].stats().malformed_dropped > 0, "{}", rel.name());
        let destroyed_done = w
            .completions
            .iter()
            .any(|(n, c)| *n == B && c.qp == 0 && c.side == CompletionSide::Responder);
        assert!(!destroyed_done, "{}", rel.name());
    }
}
