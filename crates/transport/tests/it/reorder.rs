//! Reordering measured at the receiving NIC (`transport::QpReorder`,
//! `NicStats::ood`): a lossless channel that reorders makes go-back-N
//! count out-of-order arrivals and duplicates (retransmissions of packets
//! that were only late); an in-order channel counts none.

use crate::common;

use common::chaos::{Chaos, ChaosWorld};
use engine::time::{MS, US};
use transport::{Engine, NicConfig, Verb, WorkRequest};

fn run(reorder: f64) -> ChaosWorld {
    let cfg = NicConfig {
        engine: Engine::GoBackN,
        rto: MS,
        ..NicConfig::default()
    };
    let chaos = Chaos {
        drop: 0.0,
        dup: 0.0,
        reorder,
        jitter: 20 * US,
        paths: vec![10 * US],
    };
    let mut w = ChaosWorld::new(cfg, chaos, 7);
    w.post_send(
        WorkRequest {
            wr_id: 1,
            verb: Verb::Write,
            len: 200_000,
            ..WorkRequest::default()
        },
        false,
    );
    w.run_until(200 * MS);
    assert_eq!(w.completions.len(), 2, "the WRITE completes at both ends");
    w
}

#[test]
fn in_order_channel_counts_no_reordering() {
    let w = run(0.0);
    let r = w.nics[1].qp_reorder(0).unwrap();
    assert_eq!(r, transport::QpReorder::default());
    let st = w.nics[1].stats();
    assert_eq!(st.ood.count(), st.ood.buckets[0]);
    assert_eq!(st.ood.count(), 200);
}

#[test]
fn reordering_channel_counts_ooo_and_reorder_retransmissions() {
    let w = run(0.05);
    let r = w.nics[1].qp_reorder(0).unwrap();
    assert!(r.ooo_packets > 0, "{r:?}");
    assert!(r.ood_max >= 1);
    assert_eq!(w.dropped, 0, "lossless");
    // Go-back-N rewinds for packets that were only late: their
    // retransmissions arrive as duplicates.
    assert!(w.nics[0].stats().retransmitted_packets > 0);
    assert!(r.duplicates > 0, "{r:?}");
    assert_eq!(r.duplicates, w.nics[1].stats().duplicates_received);
    let st = w.nics[1].stats();
    assert_eq!(st.ood.count() - st.ood.buckets[0], r.ooo_packets);
    assert!(w.nics[1].qp_reorder(5).is_err());
}
