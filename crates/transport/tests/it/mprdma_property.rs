//! MP-RDMA end to end over a hostile channel (random loss, duplication,
//! reordering, four paths of different delays), with real bytes moved
//! through `Nic::poll_transmit_with` / `Nic::on_packet_with`: the
//! responder's memory must end byte-identical to applying every message
//! in post order; every work request completes once and in post order; no
//! access falls outside a registered region; a synchronise message is
//! never placed before every message posted earlier is completely placed.

use crate::common;

use common::chaos::{four_paths, Chaos, ChaosWorld, Mem, BASE};
use engine::time::{MS, US};
use engine::{Rng, StreamKind};
use proptest::prelude::*;
use transport::{
    CompletionSide, Engine, MpHeader, MpRdmaConfig, NicConfig, SenderMode, SyncMode, Verb,
    WorkRequest,
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

/// Bytes between receive buffers (and after the last): a SEND overrunning
/// its buffer would change them.
const GAP: u64 = 64;

/// Where everything lives, as offsets from `BASE`.
struct Layout {
    /// Responder: each WRITE's target (a fresh slot, or for synchronise
    /// WRITEs an earlier WRITE's slot, which only ordered placement gets
    /// right); each SEND's receive buffer, after the WRITE slots.
    remote: Vec<u64>,
    resp_len: u64,
    /// Requester: each message's source bytes.
    local: Vec<u64>,
    req_len: u64,
}

fn layout(ops: &[Op]) -> Layout {
    let mut remote = vec![0; ops.len()];
    let mut top = 0u64;
    let mut writes: Vec<u64> = Vec::new();
    // Slots of the largest message's size, so a synchronise WRITE over an
    // earlier slot never spills into a later message's slot.
    let slot = ops.iter().map(|o| o.len).max().unwrap_or(0).max(1);
    for (i, op) in ops.iter().enumerate() {
        if op.verb != Verb::Write {
            continue;
        }
        remote[i] = if op.sync && !writes.is_empty() {
            writes[i % writes.len()]
        } else {
            top += slot;
            top - slot
        };
        writes.push(remote[i]);
    }
    for (i, op) in ops.iter().enumerate() {
        if op.verb == Verb::Send {
            remote[i] = top + GAP;
            top += GAP + op.len;
        }
    }
    let local: Vec<u64> = ops
        .iter()
        .scan(0, |at, o| {
            *at += o.len;
            Some(*at - o.len)
        })
        .collect();
    Layout {
        remote,
        resp_len: top + GAP,
        local,
        req_len: ops.iter().map(|o| o.len).sum::<u64>().max(1),
    }
}

/// What the run exercised: (dropped, duplicated, sender stats, receiver stats).
type Exercised = (u64, u64, transport::NicStats, transport::NicStats);

/// `alpha` scales the synchronise delay; 0 sends synchronise messages
/// right away, so they often overtake earlier ones and must be dropped.
/// `sender`: the paper's sends beyond the receiver's bitmap, which drops
/// and NACKs what it cannot hold.
fn run(
    ops: &[Op],
    chaos: Chaos,
    mode: SyncMode,
    alpha: f64,
    sender: SenderMode,
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
        sender,
    };
    let cfg = NicConfig {
        rto: 200 * US,
        engine: Engine::MpRdma(mp),
        ..NicConfig::default()
    };
    let mtu = cfg.mtu as u64;
    let at = layout(ops);
    let mut src = vec![0u8; at.req_len as usize];
    for (i, op) in ops.iter().enumerate() {
        for o in 0..op.len {
            src[(at.local[i] + o) as usize] = byte(i, o);
        }
    }
    // The responder's memory starts with noise, and the reference is that
    // noise with every message applied in post order.
    let mut rng = Rng::new(seed, StreamKind::Host, 1);
    let noise: Vec<u8> = (0..at.resp_len).map(|_| rng.next_u64() as u8).collect();
    let mut want = noise.clone();
    for (i, op) in ops.iter().enumerate() {
        for o in 0..op.len {
            want[(at.remote[i] + o) as usize] = byte(i, o);
        }
    }
    let mut w =
        ChaosWorld::new(cfg, chaos, seed).with_memory(Mem::new(src.clone()), Mem::new(noise));
    let sends: Vec<usize> = (0..ops.len())
        .filter(|&i| ops[i].verb == Verb::Send)
        .collect();
    for (k, &i) in sends.iter().enumerate() {
        w.post_recv(100 + k as u64, BASE + at.remote[i], ops[i].len);
    }
    for (i, op) in ops.iter().enumerate() {
        let wr = WorkRequest {
            wr_id: i as u64,
            verb: op.verb,
            len: op.len,
            remote_addr: BASE + at.remote[i],
            local_addr: BASE + at.local[i],
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
    let want_resp: Vec<(u64, u64)> = sends
        .iter()
        .enumerate()
        .map(|(k, &i)| (100 + k as u64, ops[i].len))
        .collect();
    prop_assert_eq!(resp, want_resp);

    // Memory: the responder's equals in-order application, the requester's
    // is only read, nothing outside a registered region.
    let [a, b] = w.mems.as_ref().expect("with memory");
    prop_assert!(
        b.bytes == want,
        "responder memory differs from in-order application"
    );
    prop_assert!(a.bytes == src, "requester memory changed");
    prop_assert_eq!((a.violations, b.violations), (0, 0));
    let errors = (
        w.nics[0].stats().access_errors,
        w.nics[1].stats().access_errors,
    );
    prop_assert_eq!(errors, (0, 0));

    // Placement order: every packet placed once, and a synchronise
    // message's packets only once every earlier PSN was placed.
    let first: Vec<u32> = ops
        .iter()
        .scan(0u32, |psn, o| {
            *psn += o.len.div_ceil(mtu).max(1) as u32;
            Some(*psn - o.len.div_ceil(mtu).max(1) as u32)
        })
        .collect();
    let total = ops.iter().map(|o| o.len.div_ceil(mtu).max(1)).sum::<u64>();
    let mut placed = vec![false; total as usize];
    // Every PSN below this was placed.
    let mut prefix = 0u32;
    for p in &w.placed {
        let m = first.partition_point(|&f| f <= p.psn) - 1;
        prop_assert_eq!(MpHeader::of(p).sync, ops[m].sync);
        prop_assert!(!placed[p.psn as usize], "PSN {} placed twice", p.psn);
        if ops[m].sync {
            prop_assert!(
                prefix >= first[m],
                "synchronise message {} placed while PSN {} was missing",
                m,
                prefix
            );
        }
        placed[p.psn as usize] = true;
        while placed.get(prefix as usize) == Some(&true) {
            prefix += 1;
        }
    }
    prop_assert_eq!(prefix as u64, total, "every packet placed");
    prop_assert!(w.nics[0].is_quiescent(), "requester not quiescent");
    Ok((
        w.dropped,
        w.duplicated,
        *w.nics[0].stats(),
        *w.nics[1].stats(),
    ))
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
    #![proptest_config(common::proptest_config())]

    #[test]
    fn memory_and_completions_survive_a_hostile_channel(
        ops in prop::collection::vec(op(), 1..24),
        drop in 0.0f64..0.08,
        dup in 0.0f64..0.05,
        reorder in 0.0f64..0.3,
        stop_and_wait in any::<bool>(),
        alpha in prop_oneof![Just(0.0), 0.0f64..2.0],
        paper in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let chaos = Chaos { drop, dup, reorder, jitter: 20 * US, paths: four_paths() };
        let mode = if stop_and_wait { SyncMode::StopAndWait } else { SyncMode::Delayed };
        let sender = if paper { SenderMode::Paper } else { SenderMode::Guarded };
        run(&ops, chaos, mode, alpha, sender, seed)?;
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
    let (dropped, dup, snd, rcv) = run(
        &ops,
        chaos.clone(),
        SyncMode::Delayed,
        0.0,
        SenderMode::Guarded,
        7,
    )
    .unwrap();
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
    assert_eq!(
        rcv.mp_bitmap_drops, 0,
        "the guarded sender stays within the bitmap"
    );
    // The paper's sender runs past the bitmap on the slow path's holes:
    // the receiver drops and NACKs, recovery repairs, bytes still exact.
    let (_, _, snd, rcv) = run(&ops, chaos, SyncMode::Delayed, 0.0, SenderMode::Paper, 7).unwrap();
    eprintln!("paper sender {snd:?}\nreceiver {rcv:?}");
    assert!(rcv.mp_bitmap_drops > 0, "{rcv:?}");
    assert!(snd.mp_recoveries > 0, "{snd:?}");
}
