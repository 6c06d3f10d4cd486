//! PSNs across the 2^24 wrap, end to end. Two NICs whose QPs start a few
//! packets below 2^24 (RC's `sq_psn` and `rq_psn`,
//! `Nic::create_qp_with_psns`) move real bytes through a channel that
//! drops, duplicates and reorders packets (`common::chaos`), with
//! go-back-N, IRN and MP-RDMA. The work requests (WRITE, WRITE with
//! immediate, SEND, READ, fetch-and-add and compare-and-swap; MP-RDMA
//! carries WRITE and SEND) take more PSNs than the start lies below 2^24,
//! so the PSNs on the wire wrap to 0 mid-run, and so do the NICs' own
//! 32-bit PSNs (`transport::psn`). The responder's memory must end
//! byte-identical to the operations applied in post order, READ and atomic
//! results must land in the requester's memory as in that order, every
//! work request must complete once and in post order on both sides, and
//! no packet may be dropped as malformed.
//!
//! Every WRITE and SEND lands in bytes of its own and READs read bytes
//! nothing writes: IRN and MP-RDMA place out of order, so a retransmitted
//! packet of an older message could otherwise land after a newer one (a
//! hazard the IRN paper leaves to application fences; see
//! `prop_placement.rs`).

use crate::common;

use common::chaos::{four_paths, Chaos, ChaosWorld, Mem, BASE};
use engine::time::{MS, US};
use engine::{Rng, StreamKind};
use proptest::prelude::*;
use transport::{
    CompletionSide, Engine, IrnConfig, MpRdmaConfig, Nic, NicConfig, Packet, PacketKind, QpConfig,
    SenderMode, SyncMode, Transmit, Verb, WorkRequest,
};

/// 2^24: the wire's PSNs wrap here.
const WRAP: u32 = 1 << 24;
const MTU: u32 = 256;
const MAX_LEN: u64 = 3000;
/// The requester's source bytes, from which WRITEs and SENDs take theirs.
const SRC: u64 = 8 * 1024;
/// The responder's read-only bytes, which READs read.
const RO: u64 = 8 * 1024;
/// Atomic slots (8 bytes each) at the responder.
const SLOTS: u64 = 4;
/// Spare bytes of each receive buffer beyond its SEND.
const SPARE: u64 = 16;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    GoBackN,
    Irn,
    MpRdma,
}

impl Kind {
    fn config(self) -> NicConfig {
        let engine = match self {
            Kind::GoBackN => Engine::GoBackN,
            Kind::Irn => Engine::Irn(IrnConfig {
                rto_low: 30 * US,
                rto_high: 100 * US,
                n_packets: 3,
                bdp_packets: 16,
            }),
            Kind::MpRdma => Engine::MpRdma(MpRdmaConfig {
                initial_window: 16,
                l_slots: 64,
                delta: 32,
                num_vps: 16,
                probe_p: 0.05,
                sync_mode: SyncMode::Delayed,
                alpha: 1.0,
                sender: SenderMode::Guarded,
            }),
        };
        NicConfig {
            mtu: MTU,
            rto: 100 * US,
            engine,
            ..NicConfig::default()
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Op {
    verb: Verb,
    len: u64,
    /// Picks the source bytes, the READ offset, the atomic slot and
    /// operands.
    val: u64,
    /// MP-RDMA's synchronise flag.
    sync: bool,
}

/// The PSNs an operation takes in the request space (go-back-N: a READ
/// takes one per response packet; IRN: its request is one packet, its
/// responses have their own space) and in IRN's response space.
fn psns(kind: Kind, op: &Op) -> (u64, u64) {
    let packets = if op.verb.is_atomic() {
        1
    } else {
        op.len.div_ceil(MTU as u64).max(1)
    };
    if kind == Kind::Irn && op.verb.reads() {
        (1, packets)
    } else {
        (packets, 0)
    }
}

/// Work requests with their addresses, the receive WQEs they need, and
/// the memories and responder completions that applying them in post
/// order gives.
struct Plan {
    wrs: Vec<(WorkRequest, bool)>,
    /// (wr_id, address, length) of the receive WQEs, in post order.
    recvs: Vec<(u64, u64, u64)>,
    a0: Vec<u8>,
    b0: Vec<u8>,
    a: Vec<u8>,
    b: Vec<u8>,
    /// Responder completions: (wr_id, verb, length, immediate).
    resp: Vec<(u64, Verb, u64, u64)>,
}

fn plan(kind: Kind, ops: &[Op], seed: u64) -> Plan {
    // Responder: [read-only | atomic slots | a region per WRITE and SEND];
    // requester: [sources | a region per READ and atomic result].
    let b_len = RO + 8 * SLOTS + ops.iter().map(|o| o.len + SPARE).sum::<u64>();
    let a_len = SRC + ops.iter().map(|o| o.len.max(8)).sum::<u64>();
    let mut rng = Rng::new(seed, StreamKind::Workload, 0);
    let a0: Vec<u8> = (0..a_len).map(|_| rng.next_u64() as u8).collect();
    let mut b0: Vec<u8> = (0..b_len).map(|_| rng.next_u64() as u8).collect();
    // Small slot values, so that compare-and-swap sometimes matches.
    for s in 0..SLOTS {
        let at = (RO + 8 * s) as usize;
        b0[at..at + 8].copy_from_slice(&(s % 3).to_le_bytes());
    }
    let (mut a, mut b) = (a0.clone(), b0.clone());
    let (mut b_top, mut a_top) = (RO + 8 * SLOTS, SRC);
    let mut wrs = vec![];
    let mut recvs = vec![];
    let mut resp = vec![];
    for (i, o) in ops.iter().enumerate() {
        let wr_id = i as u64 + 1;
        let rid = 1000 + wr_id;
        let src = (o.val * 977) % (SRC - MAX_LEN);
        let mut wr = WorkRequest {
            wr_id,
            verb: o.verb,
            len: o.len,
            local_addr: BASE + src,
            ..WorkRequest::default()
        };
        let len = o.len as usize;
        match o.verb {
            Verb::Write | Verb::WriteImm | Verb::Send => {
                let at = b_top;
                b_top += o.len + SPARE;
                b[at as usize..][..len].copy_from_slice(&a[src as usize..][..len]);
                match o.verb {
                    Verb::Write => {
                        wr.remote_addr = BASE + at;
                        // MP-RDMA completes only SENDs at the responder.
                        if kind != Kind::MpRdma {
                            resp.push((0, Verb::Write, o.len, 0));
                        }
                    }
                    Verb::WriteImm => {
                        wr.remote_addr = BASE + at;
                        wr.imm = o.val + 100;
                        recvs.push((rid, BASE, 0));
                        resp.push((rid, Verb::WriteImm, o.len, wr.imm));
                    }
                    _ => {
                        // SEND with immediate on odd values: the
                        // responder's completion carries it.
                        wr.imm = if o.val % 2 == 1 { o.val + 200 } else { 0 };
                        recvs.push((rid, BASE + at, o.len + SPARE));
                        resp.push((rid, Verb::Send, o.len, wr.imm));
                    }
                }
            }
            Verb::Read => {
                let from = (o.val * 61) % (RO - o.len + 1);
                wr.remote_addr = BASE + from;
                wr.local_addr = BASE + a_top;
                a[a_top as usize..][..len].copy_from_slice(&b[from as usize..][..len]);
                a_top += o.len.max(8);
            }
            Verb::FetchAdd | Verb::CmpSwap => {
                let slot = (RO + 8 * (o.val % SLOTS)) as usize;
                wr.remote_addr = BASE + slot as u64;
                wr.local_addr = BASE + a_top;
                wr.imm = o.val + 1;
                wr.compare = o.val % 3;
                let old = u64::from_le_bytes(b[slot..slot + 8].try_into().unwrap());
                let new = match o.verb {
                    Verb::FetchAdd => old.wrapping_add(wr.imm),
                    _ if old == wr.compare => wr.imm,
                    _ => old,
                };
                b[slot..slot + 8].copy_from_slice(&new.to_le_bytes());
                a[a_top as usize..][..8].copy_from_slice(&old.to_le_bytes());
                a_top += o.len.max(8);
            }
        }
        wrs.push((wr, o.sync));
    }
    Plan {
        wrs,
        recvs,
        a0,
        b0,
        a,
        b,
        resp,
    }
}

#[derive(Clone, Copy, Debug)]
struct Channel {
    seed: u64,
    drop: f64,
    dup: f64,
    reorder: f64,
}

/// Runs `ops` on QPs whose PSNs start `below` PSNs under 2^24 and checks
/// the outcome; returns the world for further checks.
fn check(kind: Kind, ops: &[Op], below: u32, ch: Channel) -> Result<ChaosWorld, TestCaseError> {
    let request_psns: u64 = ops.iter().map(|o| psns(kind, o).0).sum();
    prop_assert!(request_psns > below as u64, "the run crosses the wrap");
    let p = plan(kind, ops, ch.seed);
    let chaos = Chaos {
        drop: ch.drop,
        dup: ch.dup,
        reorder: ch.reorder,
        jitter: 20 * US,
        paths: four_paths(),
    };
    let mut w = ChaosWorld::new_at_psn(kind.config(), chaos, ch.seed, WRAP - below)
        .with_memory(Mem::new(p.a0.clone()), Mem::new(p.b0.clone()));
    for &(id, addr, len) in &p.recvs {
        w.post_recv(id, addr, len);
    }
    for &(wr, sync) in &p.wrs {
        w.post_send(wr, sync);
    }
    w.run_until(300 * MS);

    let req: Vec<u64> = w
        .completions
        .iter()
        .filter(|(n, c)| *n == 0 && c.side == CompletionSide::Requester)
        .map(|(_, c)| c.wr_id)
        .collect();
    let ids: Vec<u64> = p.wrs.iter().map(|(wr, _)| wr.wr_id).collect();
    prop_assert_eq!(req, ids, "requester completions once each, in order");
    let resp: Vec<(u64, Verb, u64, u64)> = w
        .completions
        .iter()
        .filter(|(n, c)| *n == 1 && c.side == CompletionSide::Responder)
        .map(|(_, c)| (c.wr_id, c.verb, c.len, c.imm))
        .collect();
    prop_assert_eq!(resp, p.resp, "responder completions once each, in order");
    let [a, b] = w.mems.as_ref().expect("with memory");
    prop_assert!(b.bytes == p.b, "responder memory differs from in-order");
    prop_assert!(a.bytes == p.a, "READ/atomic results differ from in-order");
    prop_assert_eq!((a.violations, b.violations), (0, 0));
    for (i, nic) in w.nics.iter().enumerate() {
        let st = nic.stats();
        prop_assert_eq!(st.malformed_dropped, 0, "NIC {} dropped malformed", i);
        prop_assert_eq!(st.access_errors, 0, "NIC {} access errors", i);
        prop_assert!(nic.is_quiescent(), "NIC {} not quiescent", i);
    }
    Ok(w)
}

fn channel() -> impl Strategy<Value = Channel> {
    (any::<u64>(), 0.0..0.08f64, 0.0..0.05f64, 0.0..0.3f64).prop_map(
        |(seed, drop, dup, reorder)| Channel {
            seed,
            drop,
            dup,
            reorder,
        },
    )
}

/// Every verb (go-back-N and IRN).
fn op() -> impl Strategy<Value = Op> {
    let verb = prop_oneof![
        3 => Just(Verb::Write),
        1 => Just(Verb::WriteImm),
        2 => Just(Verb::Send),
        2 => Just(Verb::Read),
        1 => Just(Verb::FetchAdd),
        1 => Just(Verb::CmpSwap),
    ];
    (verb, 0..MAX_LEN, 0u64..64).prop_map(|(verb, len, val)| Op {
        verb,
        len,
        val,
        sync: false,
    })
}

/// WRITE and SEND, some of them synchronise (MP-RDMA).
fn mp_op() -> impl Strategy<Value = Op> {
    let verb = prop_oneof![3 => Just(Verb::Write), 1 => Just(Verb::Send)];
    (verb, 0..MAX_LEN, 0u64..64, prop::bool::weighted(0.3)).prop_map(|(verb, len, val, sync)| Op {
        verb,
        len,
        val,
        sync,
    })
}

proptest! {
    #![proptest_config(common::proptest_config())]

    // At least 17 operations of at least one PSN each: more than the start
    // lies below 2^24.
    #[test]
    fn go_back_n_across_the_psn_wrap(
        ops in prop::collection::vec(op(), 17..40),
        below in 1u32..=16,
        ch in channel(),
    ) {
        check(Kind::GoBackN, &ops, below, ch)?;
    }

    #[test]
    fn irn_across_the_psn_wrap(
        ops in prop::collection::vec(op(), 17..40),
        below in 1u32..=16,
        ch in channel(),
    ) {
        check(Kind::Irn, &ops, below, ch)?;
    }

    #[test]
    fn mprdma_across_the_psn_wrap(
        ops in prop::collection::vec(mp_op(), 17..40),
        below in 1u32..=16,
        ch in channel(),
    ) {
        check(Kind::MpRdma, &ops, below, ch)?;
    }
}

/// Large messages from 3 below 2^24 on a lossy channel: every PSN space
/// crosses the wrap (the placed packets' PSNs run from just below 2^24 on
/// past 0; IRN's READ responses take more PSNs than the start lies below),
/// and repairs cross it too.
#[test]
fn every_psn_space_crosses_the_wrap_with_losses() {
    let ch = Channel {
        seed: 11,
        drop: 0.03,
        dup: 0.02,
        reorder: 0.2,
    };
    for kind in [Kind::GoBackN, Kind::Irn, Kind::MpRdma] {
        let verbs: &[Verb] = if kind == Kind::MpRdma {
            &[Verb::Write, Verb::Send]
        } else {
            &[Verb::Write, Verb::Read, Verb::Send, Verb::FetchAdd]
        };
        let ops: Vec<Op> = (0..24)
            .map(|i| Op {
                verb: verbs[i % verbs.len()],
                len: MAX_LEN - 1 - (i as u64 * 37) % 500,
                val: i as u64,
                sync: i % 5 == 4,
            })
            .collect();
        let responses: u64 = ops.iter().map(|o| psns(kind, o).1).sum();
        assert!(kind != Kind::Irn || responses > 3, "{responses}");
        let w = check(kind, &ops, 3, ch).unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        let placed: Vec<u32> = w.placed.iter().map(|p| p.psn).collect();
        assert!(placed.contains(&(WRAP - 3)), "{kind:?}: {placed:?}");
        assert!(placed.contains(&0) && placed.contains(&1), "{kind:?}");
        assert!(placed.iter().all(|&p| p < WRAP), "24 bits on the wire");
        let st = w.nics[0].stats();
        assert!(
            st.retransmitted_packets > 0,
            "{kind:?}: losses repaired: {st:?}"
        );
    }
}

/// A sequence number that does not fit the 24 bits of the wire is dropped
/// as malformed, whichever field carries it.
#[test]
fn a_sequence_number_beyond_24_bits_is_malformed() {
    for kind in [Kind::GoBackN, Kind::Irn, Kind::MpRdma] {
        let mut nic = Nic::new(NicConfig {
            host: 1,
            ..kind.config()
        })
        .expect("valid configuration");
        nic.create_qp(QpConfig {
            peer_host: 0,
            peer_qp: 0,
            sport: 1,
        })
        .expect("a QP");
        let base = Packet {
            src: 0,
            dst: 1,
            kind: PacketKind::Request,
            verb: Verb::Write,
            payload: 0,
            wire: 48,
            first: true,
            last: true,
            ..Packet::default()
        };
        let wide = [
            Packet { psn: WRAP, ..base },
            Packet {
                kind: PacketKind::Ack,
                sack_psn: WRAP + 1,
                ..base
            },
            Packet {
                verb: Verb::Send,
                wqe_sn: WRAP,
                ..base
            },
        ];
        for (i, p) in wide.iter().enumerate() {
            nic.on_packet(0, p);
            assert_eq!(
                nic.stats().malformed_dropped,
                i as u64 + 1,
                "{kind:?} {p:?}"
            );
        }
        // The same packet at PSN 0 is taken (a one-packet empty WRITE)
        // and acknowledged.
        nic.on_packet(0, &base);
        assert_eq!(nic.stats().malformed_dropped, 3, "{kind:?}");
        match nic.poll_transmit(0, 0) {
            Transmit::Packet(ack) => assert_eq!((ack.kind, ack.psn), (PacketKind::Ack, 1)),
            other => panic!("{kind:?}: {other:?}"),
        }
    }
}
