//! The synchronise mechanism over four paths of different delays (a
//! transport-level, scaled-down stand-in for the paper's §5.2.4 Fig. 18-19,
//! which ran it on the testbed permutation): how often a synchronise
//! message still arrives before earlier messages complete (and is dropped
//! and NACKed) as alpha grows, and what each mode costs in goodput.
//! `cargo test --release -p transport --test it mprdma_sync:: -- --nocapture`
//! prints the table.

use crate::common;

use common::chaos::{Chaos, ChaosWorld};
use engine::time::{MS, US};
use transport::{Engine, MpRdmaConfig, NicConfig, SyncMode, Verb, WorkRequest};

struct Outcome {
    goodput_gbps: f64,
    sync_msgs: u64,
    /// Synchronise messages that arrived too early (each counted once).
    early_msgs: u64,
    /// Synchronise NACKs (one per early message and step of the
    /// receiver's progress).
    early_syncs: u64,
}

fn run(msg: u64, n: u64, sync_every: u64, alpha: f64, mode: SyncMode) -> Outcome {
    let mp = MpRdmaConfig {
        initial_window: 16,
        alpha,
        sync_mode: mode,
        ..MpRdmaConfig::default()
    };
    let cfg = NicConfig {
        line_rate_bps: 40_000_000_000,
        mtu: 4000,
        engine: Engine::MpRdma(mp),
        ..NicConfig::default()
    };
    let chaos = Chaos {
        drop: 0.0,
        dup: 0.0,
        reorder: 0.0,
        jitter: 0,
        paths: vec![2 * US, 3 * US, 4 * US, 8 * US],
    };
    let mut w = ChaosWorld::new(cfg, chaos, 1);
    let mut sync_msgs = 0;
    for i in 0..n {
        let sync = sync_every > 0 && i % sync_every == sync_every - 1;
        sync_msgs += sync as u64;
        let wr = WorkRequest {
            wr_id: i,
            verb: Verb::Write,
            len: msg,
            ..WorkRequest::default()
        };
        w.post_send(wr, sync);
    }
    w.run_until(10_000 * MS);
    let done: Vec<_> = w
        .completions
        .iter()
        .filter(|(h, c)| *h == 0 && c.side == transport::CompletionSide::Requester)
        .collect();
    assert_eq!(done.len() as u64, n, "every message completes");
    let end = done.last().unwrap().1.at;
    let st = w.nics[0].stats();
    assert_eq!(st.mp_sync_messages, sync_msgs);
    assert!(st.mp_sync_early <= st.nacks_received);
    Outcome {
        goodput_gbps: (n * msg * 8) as f64 / (end as f64 / 1e12) / 1e9,
        sync_msgs,
        early_msgs: st.mp_sync_early,
        early_syncs: st.nacks_received,
    }
}

#[test]
fn synchronise_delay_trades_early_arrivals_for_goodput() {
    println!(
        "| msg | sync ratio | alpha / mode | goodput Gb/s | sync msgs | arrived early | sync NACKs |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (msg, n) in [(32_000u64, 400u64), (512_000, 40)] {
        for sync_every in [0u64, 5, 2, 1] {
            let ratio = if sync_every == 0 {
                0.0
            } else {
                1.0 / sync_every as f64
            };
            let mut rows = vec![];
            for alpha in [0.0, 0.25, 0.5, 1.0] {
                rows.push((
                    format!("{alpha}"),
                    run(msg, n, sync_every, alpha, SyncMode::Delayed),
                ));
            }
            rows.push((
                "stop-and-wait".into(),
                run(msg, n, sync_every, 1.0, SyncMode::StopAndWait),
            ));
            for (label, o) in &rows {
                println!(
                    "| {}KB | {:.0}% | {} | {:.2} | {} | {} | {} |",
                    msg / 1000,
                    ratio * 100.0,
                    label,
                    o.goodput_gbps,
                    o.sync_msgs,
                    o.early_msgs,
                    o.early_syncs
                );
            }
            let sw = &rows[4].1;
            assert_eq!(sw.early_syncs, 0, "stop-and-wait never sends early");
            if sync_every > 0 {
                assert!(
                    rows[0].1.early_msgs > 0,
                    "without delay, synchronise messages overtake"
                );
            }
            if sync_every == 2 {
                let best = rows[..4]
                    .iter()
                    .map(|(_, o)| o.goodput_gbps)
                    .fold(0.0, f64::max);
                assert!(
                    best > sw.goodput_gbps,
                    "at 50%, some delay beats stop-and-wait"
                );
            }
        }
    }
}
