//! MP-RDMA end to end over a hostile channel (random loss, duplication,
//! reordering, four paths of different delays), with real bytes: the
//! responder's memory, rebuilt from the placements it reports, must equal
//! applying every message in post order; every work request completes once
//! and in post order; a synchronise message is never placed before every
//! message posted earlier is completely placed.

mod common;

use std::collections::{HashMap, HashSet};

use common::chaos::{four_paths, Chaos, ChaosWorld};
use engine::time::{MS, US};
use proptest::prelude::*;
use transport::{
    CompletionSide, MpRdmaConfig, NicConfig, Reliability, SyncMode, Verb, WorkRequest,
};

#[derive(Clone, Debug)]
struct Op {
    verb: Verb,
    len: u64,
    sync: bool,
}

const MAX_LEN: u64 = 40_000;

/// The byte of message `m` at offset `o`.
fn byte(m: usize, o: u64) -> u8 {
    (m as u64)
        .wrapping_mul(0x9e37_79b9)
        .wrapping_add(o.wrapping_mul(31)) as u8
        ^ (o >> 8) as u8
}

/// Where each WRITE goes: a fresh region, or (synchronise WRITEs) over an
/// earlier message's region, which only ordered placement gets right.
fn layout(ops: &[Op]) -> (Vec<u64>, usize) {
    let mut addr = Vec::new();
    let mut top = 0u64;
    let mut writes: Vec<u64> = Vec::new();
    let slot = ops.iter().map(|o| o.len).max().unwrap_or(0).max(1);
    for (i, op) in ops.iter().enumerate() {
        if op.verb != Verb::Write {
            addr.push(0);
            continue;
        }
        // Slots of the largest message's size, so a synchronise WRITE over an
        // earlier slot never spills into a later message's slot.
        let a = if op.sync && !writes.is_empty() {
            writes[i % writes.len()]
        } else {
            let a = top;
            top += slot;
            a
        };
        writes.push(a);
        addr.push(a);
    }
    (addr, (top + slot) as usize)
}

/// What the run exercised: (dropped, duplicated, sender stats, receiver stats).
type Exercised = (u64, u64, transport::NicStats, transport::NicStats);

fn stats(w: &ChaosWorld) -> Exercised {
    (
        w.dropped,
        w.duplicated,
        *w.nics[0].stats(),
        *w.nics[1].stats(),
    )
}

/// `alpha` scales the synchronise delay; 0 sends synchronise messages
/// right away, so they often overtake earlier ones and must be dropped.
fn run(
    ops: &[Op],
    chaos: Chaos,
    mode: SyncMode,
    alpha: f64,
    seed: u64,
) -> Result<Exercised, TestCaseError> {
    let mp = MpRdmaConfig {
        initial_window: 16,
        l_slots: 64,
        delta: 32,
        num_vps: 16,
        probe_p: 0.05,
        sync_mode: mode,
        alpha,
    };
    let cfg = NicConfig {
        rto: 200 * US,
        reliability: Reliability::MpRdma(mp),
        ..NicConfig::default()
    };
    let mut w = ChaosWorld::new(cfg, chaos, seed);
    let sends: Vec<usize> = (0..ops.len())
        .filter(|&i| ops[i].verb == Verb::Send)
        .collect();
    for (k, _) in sends.iter().enumerate() {
        w.post_recv(100 + k as u64, 1 << 20);
    }
    for (i, op) in ops.iter().enumerate() {
        let wr = WorkRequest {
            wr_id: i as u64,
            verb: op.verb,
            len: op.len,
            ..WorkRequest::default()
        };
        w.post_send(wr, op.sync);
    }
    w.run_until(2_000 * MS);

    // Completions: once each, in post order.
    let req: Vec<u64> = w
        .completions
        .iter()
        .filter(|(n, c)| *n == 0 && c.side == CompletionSide::Requester)
        .map(|(_, c)| c.wr_id)
        .collect();
    prop_assert_eq!(req, (0..ops.len() as u64).collect::<Vec<_>>());
    let resp: Vec<(u64, u64)> = w
        .completions
        .iter()
        .filter(|(n, c)| *n == 1 && c.side == CompletionSide::Responder)
        .map(|(_, c)| (c.wr_id, c.len))
        .collect();
    let want: Vec<(u64, u64)> = sends
        .iter()
        .enumerate()
        .map(|(k, &i)| (100 + k as u64, ops[i].len))
        .collect();
    prop_assert_eq!(resp, want);

    // Memory rebuilt from placements vs in-order application.
    let (addr, size) = layout(ops);
    let mut mem = vec![0u8; size];
    let mut want_mem = vec![0u8; size];
    let mut bufs: Vec<Vec<u8>> = sends
        .iter()
        .map(|&i| vec![0; ops[i].len as usize])
        .collect();
    let want_bufs: Vec<Vec<u8>> = sends
        .iter()
        .map(|&i| (0..ops[i].len).map(|o| byte(i, o)).collect())
        .collect();
    for (i, op) in ops.iter().enumerate() {
        if op.verb == Verb::Write {
            for o in 0..op.len {
                want_mem[(addr[i] + o) as usize] = byte(i, o);
            }
        }
    }
    let writes: Vec<usize> = (0..ops.len())
        .filter(|&i| ops[i].verb == Verb::Write)
        .collect();
    let mtu = 1000u64;
    // Packets of each message placed so far (duplicates counted once).
    let mut placed: Vec<HashSet<u64>> = vec![HashSet::new(); ops.len()];
    let npkts: Vec<u64> = ops.iter().map(|o| o.len.div_ceil(mtu).max(1)).collect();
    let mut complete_upto = 0usize;
    let index: HashMap<(bool, u32), usize> = writes
        .iter()
        .enumerate()
        .map(|(k, &i)| ((true, k as u32), i))
        .chain(
            sends
                .iter()
                .enumerate()
                .map(|(k, &i)| ((false, k as u32), i)),
        )
        .collect();
    for p in &w.placements {
        let Some(&m) = index.get(&(p.verb == Verb::Write, p.msn)) else {
            return Err(TestCaseError::fail(format!(
                "placement of unknown message {p:?}"
            )));
        };
        prop_assert_eq!(p.sync, ops[m].sync);
        if ops[m].sync {
            prop_assert!(
                complete_upto >= m,
                "synchronise message {} placed while message {} was incomplete",
                m,
                complete_upto
            );
        }
        for o in p.offset..p.offset + p.len as u64 {
            let b = byte(m, o);
            match p.verb {
                Verb::Write => mem[(addr[m] + o) as usize] = b,
                _ => {
                    let k = sends.iter().position(|&s| s == m).unwrap();
                    bufs[k][o as usize] = b;
                }
            }
        }
        placed[m].insert(p.offset / mtu);
        while complete_upto < ops.len()
            && placed[complete_upto].len() as u64 == npkts[complete_upto]
        {
            complete_upto += 1;
        }
    }
    prop_assert!(
        mem == want_mem,
        "WRITE memory differs from in-order application"
    );
    prop_assert!(bufs == want_bufs, "SEND buffers differ");
    prop_assert!(w.nics[0].is_quiescent(), "requester not quiescent");
    Ok(stats(&w))
}

fn op() -> impl Strategy<Value = Op> {
    (
        prop_oneof![3 => Just(Verb::Write), 1 => Just(Verb::Send)],
        prop_oneof![1 => Just(0u64), 6 => 1u64..6000, 1 => 6000u64..MAX_LEN],
        prop::bool::weighted(0.3),
    )
        .prop_map(|(verb, len, sync)| Op { verb, len, sync })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: common::proptest_cases(), ..ProptestConfig::default() })]

    #[test]
    fn memory_and_completions_survive_a_hostile_channel(
        ops in prop::collection::vec(op(), 1..24),
        drop in 0.0f64..0.08,
        dup in 0.0f64..0.05,
        reorder in 0.0f64..0.3,
        stop_and_wait in any::<bool>(),
        alpha in prop_oneof![Just(0.0), 0.0f64..2.0],
        seed in any::<u64>(),
    ) {
        let chaos = Chaos { drop, dup, reorder, jitter: 20 * US, paths: four_paths() };
        let mode = if stop_and_wait { SyncMode::StopAndWait } else { SyncMode::Delayed };
        run(&ops, chaos, mode, alpha, seed)?;
    }
}

/// A long transfer with heavy reordering and loss: repaired by early
/// retransmission, and still byte-exact.
#[test]
fn heavy_reordering_and_loss_are_repaired() {
    let ops: Vec<Op> = (0..6)
        .map(|i| Op {
            verb: Verb::Write,
            len: 200_000,
            sync: i % 2 == 1,
        })
        .collect();
    let chaos = Chaos {
        drop: 0.01,
        dup: 0.01,
        reorder: 0.2,
        jitter: 50 * US,
        paths: vec![US, 30 * US],
    };
    let (dropped, dup, snd, rcv) = run(&ops, chaos, SyncMode::Delayed, 0.0, 7).unwrap();
    eprintln!("dropped {dropped} duplicated {dup}\nsender {snd:?}\nreceiver {rcv:?}");
    assert!(dropped > 0 && dup > 0);
    assert!(
        snd.mp_early_retransmits > 0,
        "losses repaired early: {snd:?}"
    );
    assert!(snd.mp_ooo_prunes > 0, "the slow path is pruned");
    assert!(
        rcv.mp_sync_drops > 0,
        "early synchronise packets dropped, memory still exact"
    );
}
