//! Hostile input: forged packets (every kind and verb, PSNs around and far
//! from the expected ones, payloads and message lengths that disagree with
//! the headers, random MP-RDMA fields) delivered to both NICs of a running
//! transfer of every engine, with and without real memory. Nothing may
//! panic or hang: a packet the NIC cannot use is counted and dropped.

use crate::common;

use common::chaos::{four_paths, Chaos, ChaosWorld, Mem, BASE};
use engine::time::{MS, US};
use engine::{Rng, StreamKind};
use transport::{
    CcConfig, DcqcnParams, Engine, IrnConfig, MpRdmaConfig, NicConfig, Packet, Verb, WorkRequest,
};

const MTU: u32 = 512;
// Every kind and every verb (the frame codec numbers them all).
use transport::frame::{KINDS, VERBS};

/// A number near something the NIC expects, or anything.
fn near(rng: &mut Rng, around: u64) -> u64 {
    match rng.below(4) {
        0 => around.wrapping_add(rng.below(8)).wrapping_sub(4),
        1 => rng.below(64),
        2 => rng.next_u64(),
        _ => u64::MAX - rng.below(4),
    }
}

/// A packet from NIC `from`'s QP 0 to the other's, every field forged.
fn forge(rng: &mut Rng, from: usize) -> Packet {
    let pick = |rng: &mut Rng, n: usize| rng.below(n as u64) as usize;
    let payload = match rng.below(4) {
        0 => 0,
        1 => MTU,
        2 => rng.below(2 * MTU as u64) as u32,
        _ => rng.next_u64() as u32,
    };
    let mut p = Packet {
        src: from as u32,
        dst: 1 - from as u32,
        src_qp: 0,
        dst_qp: 0,
        sport: rng.next_u64() as u16,
        kind: KINDS[pick(rng, KINDS.len())],
        verb: VERBS[pick(rng, VERBS.len())],
        psn: near(rng, 16) as u32,
        payload,
        wire: payload.saturating_add(48),
        priority: 3,
        ce: rng.bernoulli(0.3),
        ecn_echo: rng.bernoulli(0.3),
        first: rng.bernoulli(0.5),
        last: rng.bernoulli(0.5),
        msg_len: near(rng, 4 * MTU as u64),
        sent_at: rng.below(MS),
        addr: BASE.wrapping_add(near(rng, 0)),
        imm: rng.next_u64(),
        compare: rng.next_u64(),
        wqe_sn: near(rng, 1) as u32,
        sack_psn: near(rng, 16) as u32,
        ipsn: 0,
        vp: rng.next_u64() as u16,
        mp_flags: rng.next_u64() as u8,
    };
    // A forged data packet's index, and a SACK where none belongs.
    p.ipsn = p.sack_psn;
    // Now and then, wrong addressing (counted as malformed).
    match rng.below(16) {
        0 => p.dst_qp = rng.next_u64() as u32,
        1 => p.src = rng.next_u64() as u32,
        _ => {}
    }
    p
}

/// A transfer of every verb the engine carries, with forged packets
/// thrown at both ends every few microseconds.
fn attack(rel: Engine, cc: CcConfig, memory: bool, seed: u64) {
    let cfg = NicConfig {
        mtu: MTU,
        rto: 200 * US,
        engine: rel,
        cc,
        ..NicConfig::default()
    };
    let chaos = Chaos {
        drop: 0.02,
        dup: 0.02,
        reorder: 0.1,
        jitter: 5 * US,
        paths: four_paths(),
    };
    let mut w = ChaosWorld::new(cfg, chaos, seed);
    if memory {
        w = w.with_memory(Mem::new(vec![7; 1 << 16]), Mem::new(vec![0; 1 << 16]));
    }
    let verbs: &[Verb] = match rel {
        Engine::MpRdma(_) => &[Verb::Write, Verb::Send],
        _ => &VERBS,
    };
    for (i, &verb) in verbs.iter().enumerate() {
        let len = 3000 + 100 * i as u64;
        if verb.consumes_recv() {
            w.post_recv(i as u64, BASE + 32_768, 8192);
        }
        let wr = WorkRequest {
            wr_id: i as u64,
            verb,
            len,
            remote_addr: BASE + 4096 * i as u64,
            local_addr: BASE + 4096 * i as u64,
            ..WorkRequest::default()
        };
        w.post_send(wr, i % 2 == 1);
    }
    let mut rng = Rng::new(seed, StreamKind::Workload, 1);
    let mut bytes = vec![];
    for step in 1..=400u64 {
        w.run_until(step * 5 * US);
        for _ in 0..rng.below(4) {
            let from = rng.below(2) as usize;
            let p = forge(&mut rng, from);
            bytes.clear();
            let n = if rng.bernoulli(0.9) {
                p.payload.min(4 * MTU) as usize
            } else {
                rng.below(64) as usize
            };
            bytes.extend((0..n).map(|b| b as u8));
            w.inject(1 - from, &p, &bytes);
        }
    }
    w.run_until(100 * MS);
    let dropped: u64 = w.nics.iter().map(|n| n.stats().malformed_dropped).sum();
    assert!(dropped > 0, "some forged packets were refused");
}

fn engines() -> Vec<Engine> {
    vec![
        Engine::GoBackN,
        Engine::Irn(IrnConfig {
            bdp_packets: 16,
            ..IrnConfig::default()
        }),
        Engine::MpRdma(MpRdmaConfig::default()),
    ]
}

#[test]
fn forged_packets_never_panic() {
    for rel in engines() {
        for seed in 0..common::proptest_cases() as u64 {
            let cc = if seed % 4 == 0 {
                CcConfig::Dcqcn(DcqcnParams::default())
            } else {
                CcConfig::None
            };
            attack(rel, cc, seed % 2 == 0, seed);
        }
    }
}
