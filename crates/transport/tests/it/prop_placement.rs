//! RDMA semantics under a hostile channel, with real bytes: a requester and
//! a responder exchange random mixes of WRITE, WRITE with immediate, READ,
//! SEND/RECV, fetch-and-add and compare-and-swap through a channel that
//! drops, duplicates and reorders packets at random (seeded). The
//! responder's memory must end byte-identical to the work requests applied
//! in post order, READ and atomic results must land in the requester's
//! memory as in that order, every completion (both sides) must be
//! delivered exactly once and in post order, and no access may fall
//! outside a registered region. The same harness runs IRN and go-back-N,
//! each also under the ideal ordering layer (`OrderingKind::Ideal`) and
//! under Eunomia's layer (`OrderingKind::Eunomia`) with a 16-bit cap far
//! below the channel's reordering (up to 20 us of jitter, some 800
//! packets), and with a memory controller that holds one connection's
//! metadata and one block (nearly full: the bitmap cannot grow); a
//! WRITE's last packet held by the sender (the default) or the receiver.
//!
//! Overlapping WRITE/SEND targets are kept at least one BDP cap of packets
//! apart (targets are allocated round a ring much larger than the cap):
//! IRN places out of order, so a retransmitted packet of an older message
//! may land after a newer one to the same bytes; the IRN paper (§5.3.4)
//! leaves that hazard to application fences, as iWARP and ConnectX-5 do.
//! READs read a region nothing writes, since a retransmitted READ response
//! reads memory again (as a re-executed READ does in RoCE).

use crate::common;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use engine::time::{serialization, US};
use engine::{Rng, StreamKind, Time};
use proptest::prelude::*;
use transport::driver::{self, Io, Wake, Wakeups};
use transport::{
    Completion, CompletionSide, Engine, EunomiaConfig, IrnConfig, LastPacket, Memory, Nic,
    NicConfig, OrderingKind, Packet, QpConfig, Transmit, UetConfig, UetMode, Verb, WorkRequest,
};

const MTU: u32 = 256;
const CAP: u32 = 16;
const RATE: u64 = 100_000_000_000;
/// Base of every host's single registered region (address 0 is outside).
const BASE: u64 = 0x1000;

/// Responder layout: [write ring | read-only | atomic slots].
const RING: u64 = 32 * 1024;
const RO: u64 = 8 * 1024;
const SLOTS: u64 = 4;
/// Requester layout: [source data | READ sinks ring | atomic results ring].
const SRC: u64 = 8 * 1024;
const SINK: u64 = 16 * 1024;
const RESULTS: u64 = 64 * 8;

struct Mem {
    bytes: Vec<u8>,
    violations: u64,
    /// (address, length) of every write, in order.
    writes: Vec<(u64, usize)>,
}

impl Mem {
    fn new(len: u64, rng: &mut Rng) -> Mem {
        Mem {
            bytes: (0..len).map(|_| rng.next_u64() as u8).collect(),
            violations: 0,
            writes: vec![],
        }
    }
    fn range(&self, addr: u64, len: usize) -> Option<std::ops::Range<usize>> {
        let a = addr.checked_sub(BASE)? as usize;
        (a + len <= self.bytes.len()).then_some(a..a + len)
    }
    fn at(&mut self, addr: u64, len: usize) -> &mut [u8] {
        let r = self.range(addr, len).expect("reference access in range");
        &mut self.bytes[r]
    }
}

impl Memory for Mem {
    fn read(&mut self, addr: u64, buf: &mut [u8]) -> bool {
        match self.range(addr, buf.len()) {
            Some(r) => {
                buf.copy_from_slice(&self.bytes[r]);
                true
            }
            None => {
                self.violations += 1;
                false
            }
        }
    }
    fn write(&mut self, addr: u64, data: &[u8]) -> bool {
        self.writes.push((addr, data.len()));
        match self.range(addr, data.len()) {
            Some(r) => {
                self.bytes[r].copy_from_slice(data);
                true
            }
            None => {
                self.violations += 1;
                false
            }
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Op {
    kind: u8,
    len: u64,
    gap: u64,
    val: u64,
}

fn op() -> impl Strategy<Value = Op> {
    (0u8..6, 0u64..3000, 0u64..64, 0u64..4).prop_map(|(kind, len, gap, val)| Op {
        kind,
        len,
        gap,
        val,
    })
}

#[derive(Clone, Copy, Debug)]
struct Channel {
    seed: u64,
    drop: f64,
    dup: f64,
    /// Extra delay, uniform in 0..jitter: reorders.
    jitter: Time,
}

fn channel() -> impl Strategy<Value = Channel> {
    (any::<u64>(), 0.0..0.08f64, 0.0..0.05f64, 0u64..20).prop_map(|(seed, drop, dup, j)| Channel {
        seed,
        drop,
        dup,
        jitter: j * US,
    })
}

/// What the test expects: work requests, receive WQEs, final memories and
/// completions.
struct Plan {
    wrs: Vec<WorkRequest>,
    /// (wr_id, addr, len) of receive WQEs, in post order.
    recvs: Vec<(u64, u64, u64)>,
    a: Mem,
    b: Mem,
    /// Responder completions: (wr_id, verb, len, imm).
    resp: Vec<(u64, Verb, u64, u64)>,
    /// Bytes the responder writes in its write ring when each request is
    /// applied once.
    b_written: u64,
}

/// Turns random ops into work requests with addresses, and applies them in
/// post order to copies of the memories.
fn plan(ops: &[Op], a0: &Mem, b0: &Mem) -> Plan {
    let mut a = Mem {
        bytes: a0.bytes.clone(),
        violations: 0,
        writes: vec![],
    };
    let mut b = Mem {
        bytes: b0.bytes.clone(),
        violations: 0,
        writes: vec![],
    };
    let (mut ring, mut sink, mut result) = (0u64, 0u64, 0u64);
    let alloc = |ring: &mut u64, len: u64, gap: u64| {
        if *ring + gap + len > RING {
            *ring = 0;
        }
        let at = BASE + *ring + gap;
        *ring += gap + len;
        at
    };
    let mut wrs = vec![];
    let mut recvs = vec![];
    let mut resp = vec![];
    for (i, o) in ops.iter().enumerate() {
        let wr_id = i as u64 + 1;
        let src = BASE + (o.val * 977) % (SRC - 3000);
        let mut wr = WorkRequest {
            wr_id,
            len: o.len,
            local_addr: src,
            ..WorkRequest::default()
        };
        match o.kind {
            0 | 1 => {
                wr.verb = if o.kind == 0 {
                    Verb::Write
                } else {
                    Verb::WriteImm
                };
                wr.remote_addr = alloc(&mut ring, o.len, o.gap);
                wr.imm = o.val + 100;
                let data = a.at(src, o.len as usize).to_vec();
                b.at(wr.remote_addr, o.len as usize).copy_from_slice(&data);
                if o.kind == 0 {
                    resp.push((0, Verb::Write, o.len, 0));
                } else {
                    let rid = 1000 + wr_id;
                    recvs.push((rid, BASE, 0));
                    resp.push((rid, Verb::WriteImm, o.len, wr.imm));
                }
            }
            2 => {
                wr.verb = Verb::Send;
                let rid = 1000 + wr_id;
                // The receive buffer is a little larger than the message.
                let at = alloc(&mut ring, o.len + o.gap, 0);
                recvs.push((rid, at, o.len + o.gap));
                let data = a.at(src, o.len as usize).to_vec();
                b.at(at, o.len as usize).copy_from_slice(&data);
                resp.push((rid, Verb::Send, o.len, 0));
            }
            3 => {
                wr.verb = Verb::Read;
                let len = o.len.min(RO);
                wr.len = len;
                wr.remote_addr = BASE + RING + (o.gap * 61) % (RO - len + 1);
                if sink + len > SINK {
                    sink = 0;
                }
                wr.local_addr = BASE + SRC + sink;
                sink += len;
                let data = b.at(wr.remote_addr, len as usize).to_vec();
                a.at(wr.local_addr, len as usize).copy_from_slice(&data);
            }
            _ => {
                wr.verb = if o.kind == 4 {
                    Verb::FetchAdd
                } else {
                    Verb::CmpSwap
                };
                wr.len = 8;
                wr.remote_addr = BASE + RING + RO + (o.gap % SLOTS) * 8;
                wr.local_addr = BASE + SRC + SINK + result;
                result = (result + 8) % RESULTS;
                wr.imm = o.val + 1;
                wr.compare = o.gap % 3;
                let slot = b.at(wr.remote_addr, 8);
                let old = u64::from_le_bytes(slot.try_into().unwrap());
                let new = match wr.verb {
                    Verb::FetchAdd => old.wrapping_add(wr.imm),
                    _ if old == wr.compare => wr.imm,
                    _ => old,
                };
                slot.copy_from_slice(&new.to_le_bytes());
                a.at(wr.local_addr, 8).copy_from_slice(&old.to_le_bytes());
            }
        }
        wrs.push(wr);
    }
    let b_written = wrs
        .iter()
        .map(|w| match w.verb {
            Verb::Write | Verb::WriteImm | Verb::Send => w.len,
            _ => 0,
        })
        .sum();
    Plan {
        wrs,
        recvs,
        a,
        b,
        resp,
        b_written,
    }
}

enum Ev {
    PortFree(usize),
    Wake(usize),
    Timer(usize),
    Deliver(usize, Packet, Vec<u8>),
}

/// Runs the plan through the channel; returns (A's memory, B's memory,
/// requester completions, responder completions, end time).
struct Outcome {
    a: Mem,
    b: Mem,
    req: Vec<u64>,
    resp: Vec<(u64, Verb, u64, u64)>,
    end: Time,
    data_sent: u64,
    /// The responder's ordering layer: packets its bitmap tracked, and
    /// packets it could not track (dropped and NACKed).
    tracked: u64,
    untracked: u64,
    /// Last packets of WRITEs the requester's sender agent held.
    held: u64,
}

/// The two NICs, their memories and the channel: the environment of the
/// NICs' drive loop (`transport::driver`).
struct Bench {
    nics: [Nic; 2],
    wakeups: [Wakeups; 2],
    mems: [Mem; 2],
    busy: [bool; 2],
    /// (time, sequence, index into `evs`): ties in scheduling order.
    q: BinaryHeap<Reverse<(Time, u64, usize)>>,
    evs: Vec<Option<Ev>>,
    rng: Rng,
    ch: Channel,
    /// The payload of the packet being sent.
    buf: Vec<u8>,
    req: Vec<u64>,
    resp: Vec<(u64, Verb, u64, u64)>,
    end: Time,
    data_sent: u64,
}

impl Bench {
    fn push(&mut self, t: Time, e: Ev) {
        let i = self.evs.len();
        self.q.push(Reverse((t, i as u64, i)));
        self.evs.push(Some(e));
    }
}

impl Io for Bench {
    type Id = usize;

    fn nic(&mut self, n: usize) -> (&mut Nic, &mut Wakeups) {
        (&mut self.nics[n], &mut self.wakeups[n])
    }

    fn poll_transmit(&mut self, now: Time, n: usize, paused: u8) -> Transmit {
        self.nics[n].poll_transmit_with(now, paused, &mut self.mems[n], &mut self.buf)
    }

    fn send(&mut self, now: Time, n: usize, pkt: Packet) {
        assert_eq!(self.buf.len(), pkt.payload as usize);
        self.data_sent += pkt.is_data() as u64;
        let done = now + serialization(pkt.wire as u64, RATE);
        self.busy[n] = true;
        self.push(done, Ev::PortFree(n));
        let copies = if self.rng.uniform() < self.ch.drop {
            0
        } else if self.rng.uniform() < self.ch.dup {
            2
        } else {
            1
        };
        for _ in 0..copies {
            let extra = if self.ch.jitter > 0 {
                self.rng.next_u64() % self.ch.jitter
            } else {
                0
            };
            let bytes = self.buf.clone();
            self.push(done + US + extra, Ev::Deliver(1 - n, pkt, bytes));
        }
    }

    fn ready(&mut self, now: Time, n: usize) {
        if !self.busy[n] {
            driver::transmit(self, now, n, 0);
        }
    }

    fn call_at(&mut self, at: Time, n: usize, why: Wake) {
        let ev = match why {
            Wake::Transmit => Ev::Wake(n),
            Wake::Timer => Ev::Timer(n),
        };
        self.push(at, ev);
    }

    fn completion(&mut self, now: Time, _n: usize, c: Completion) {
        self.end = now;
        match c.side {
            CompletionSide::Requester => self.req.push(c.wr_id),
            CompletionSide::Responder => self.resp.push((c.wr_id, c.verb, c.len, c.imm)),
        }
    }
}

fn run(rel: Engine, ordering: OrderingKind, ch: Channel, p: &Plan, a0: Mem, b0: Mem) -> Outcome {
    let cfg = NicConfig {
        mtu: MTU,
        rto: 100 * US,
        engine: rel,
        ordering,
        ..NicConfig::default()
    };
    let mut nics = [
        Nic::new(NicConfig {
            host: 0,
            ..cfg.clone()
        })
        .unwrap(),
        Nic::new(NicConfig { host: 1, ..cfg }).unwrap(),
    ];
    for (n, nic) in nics.iter_mut().enumerate() {
        nic.create_qp(QpConfig {
            peer_host: 1 - n as u32,
            peer_qp: 0,
            sport: 1 + n as u16,
        })
        .unwrap();
    }
    for &(id, addr, len) in &p.recvs {
        nics[1].post_recv_at(0, id, addr, len).unwrap();
    }
    for wr in &p.wrs {
        nics[0].post_send(0, 0, *wr).unwrap();
    }
    let mut b = Bench {
        nics,
        wakeups: Default::default(),
        mems: [a0, b0],
        busy: [false; 2],
        q: BinaryHeap::new(),
        evs: vec![],
        rng: Rng::new(ch.seed, StreamKind::LinkLoss, 0),
        ch,
        buf: vec![],
        req: vec![],
        resp: vec![],
        end: 0,
        data_sent: 0,
    };
    driver::after_input(&mut b, 0, 0);
    // A livelock (retransmitting at line rate forever) advances time
    // slowly: bound the events too, so it fails instead of hanging.
    let (limit, max_events) = (2_000_000 * US, 5_000_000);
    let mut events = 0;
    while let Some(Reverse((now, _, i))) = b.q.pop() {
        events += 1;
        assert!(
            now < limit && events < max_events,
            "no progress: {} of {} done at {now} ps after {events} events",
            b.req.len(),
            p.wrs.len()
        );
        match b.evs[i].take().expect("each event once") {
            Ev::PortFree(n) => {
                b.busy[n] = false;
                b.ready(now, n);
            }
            Ev::Wake(n) => driver::wake(&mut b, now, n),
            Ev::Timer(n) => driver::timer(&mut b, now, n),
            Ev::Deliver(n, pkt, bytes) => {
                b.nics[n].on_packet_with(now, &pkt, &bytes, &mut b.mems[n]);
                driver::after_input(&mut b, now, n);
            }
        }
        if b.req.len() == p.wrs.len() && b.nics.iter().all(|n| n.is_quiescent()) {
            break;
        }
    }
    let [a, b_mem] = b.mems;
    let rx = b.nics[1].stats();
    Outcome {
        tracked: rx.eunomia_sacks_sent,
        untracked: rx.eunomia_beyond_cap_dropped + rx.eunomia_untracked_dropped,
        held: b.nics[0].stats().eunomia_sender_held,
        a,
        b: b_mem,
        req: b.req,
        resp: b.resp,
        end: b.end,
        data_sent: b.data_sent,
    }
}

fn check(
    rel: Engine,
    ordering: OrderingKind,
    ops: &[Op],
    ch: Channel,
) -> Result<Outcome, TestCaseError> {
    let mut rng = Rng::new(ch.seed, StreamKind::Workload, 0);
    let a0 = Mem::new(SRC + SINK + RESULTS, &mut rng);
    let mut b0 = Mem::new(RING + RO + SLOTS * 8, &mut rng);
    // Small atomic slot values, so compare-and-swap sometimes matches.
    for s in 0..SLOTS {
        b0.at(BASE + RING + RO + s * 8, 8)
            .copy_from_slice(&(s % 3).to_le_bytes());
    }
    let p = plan(ops, &a0, &b0);
    let o = run(rel, ordering, ch, &p, a0, b0);
    let ids: Vec<u64> = p.wrs.iter().map(|w| w.wr_id).collect();
    prop_assert_eq!(
        &o.req,
        &ids,
        "requester completions once each, in post order"
    );
    prop_assert_eq!(
        &o.resp,
        &p.resp,
        "responder completions once each, in order"
    );
    prop_assert_eq!(
        o.a.violations + o.b.violations,
        0,
        "access outside a region"
    );
    prop_assert!(
        o.b.bytes == p.b.bytes,
        "responder memory differs from in-order reference"
    );
    prop_assert!(
        o.a.bytes == p.a.bytes,
        "READ/atomic results differ from reference"
    );
    if let Engine::Uet(_) = rel {
        // Every byte of the write ring written once: a duplicate or a
        // retransmission that arrives after its first copy is not placed
        // again. (Atomics write their slots beyond it, or not at all.)
        let ring = o.b.writes.iter().filter(|w| w.0 < BASE + RING);
        let written: usize = ring.map(|w| w.1).sum();
        prop_assert_eq!(written as u64, p.b_written, "responder bytes written");
    }
    Ok(o)
}

fn irn() -> Engine {
    Engine::Irn(IrnConfig {
        rto_low: 30 * US,
        rto_high: 100 * US,
        n_packets: 3,
        bdp_packets: CAP,
    })
}

/// UET in `mode` with the window of [`irn`], an ACK every 4 packets,
/// sprayed over 64 entropy values (ROD: one).
fn uet(mode: UetMode) -> Engine {
    Engine::Uet(UetConfig {
        mode,
        ack_every: 4,
        rto: 30 * US,
        max_in_flight: CAP,
        evs: if mode == UetMode::Rod { 1 } else { 64 },
        ..UetConfig::default()
    })
}

/// Eunomia with 8-bit blocks and a 16-bit cap; `memory_bytes`: 22 holds
/// one connection's metadata (16 + 2 x 2 bytes) and one block. The sender
/// holds a WRITE's last packet (the default).
fn eunomia(memory_bytes: u32) -> OrderingKind {
    OrderingKind::Eunomia(EunomiaConfig {
        block_bits: 8,
        cap_bits: 16,
        memory_bytes,
        ..EunomiaConfig::default()
    })
}

/// [`eunomia`] with a WRITE's last packet held at the receiver instead.
fn eunomia_receiver_hold() -> OrderingKind {
    OrderingKind::Eunomia(EunomiaConfig {
        block_bits: 8,
        cap_bits: 16,
        last_packet: LastPacket::ReceiverHold,
        ..EunomiaConfig::default()
    })
}

proptest! {
    #![proptest_config(common::proptest_config())]

    #[test]
    fn irn_under_eunomia_with_a_small_cap_keeps_rdma_semantics(ops in prop::collection::vec(op(), 1..40), ch in channel()) {
        check(irn(), eunomia(2048), &ops, ch)?;
    }

    #[test]
    fn go_back_n_under_eunomia_with_a_small_cap_keeps_rdma_semantics(ops in prop::collection::vec(op(), 1..40), ch in channel()) {
        check(Engine::GoBackN, eunomia(2048), &ops, ch)?;
    }

    #[test]
    fn irn_under_eunomia_with_a_full_controller_keeps_rdma_semantics(ops in prop::collection::vec(op(), 1..40), ch in channel()) {
        check(irn(), eunomia(22), &ops, ch)?;
    }

    #[test]
    fn go_back_n_under_eunomia_with_a_full_controller_keeps_rdma_semantics(ops in prop::collection::vec(op(), 1..40), ch in channel()) {
        check(Engine::GoBackN, eunomia(22), &ops, ch)?;
    }

    #[test]
    fn irn_under_eunomia_with_the_receiver_hold_keeps_rdma_semantics(ops in prop::collection::vec(op(), 1..40), ch in channel()) {
        check(irn(), eunomia_receiver_hold(), &ops, ch)?;
    }

    #[test]
    fn go_back_n_under_eunomia_with_the_receiver_hold_keeps_rdma_semantics(ops in prop::collection::vec(op(), 1..40), ch in channel()) {
        check(Engine::GoBackN, eunomia_receiver_hold(), &ops, ch)?;
    }

    #[test]
    fn irn_keeps_rdma_semantics(ops in prop::collection::vec(op(), 1..40), ch in channel()) {
        check(irn(), OrderingKind::None, &ops, ch)?;
    }

    #[test]
    fn go_back_n_keeps_rdma_semantics(ops in prop::collection::vec(op(), 1..40), ch in channel()) {
        check(Engine::GoBackN, OrderingKind::None, &ops, ch)?;
    }

    #[test]
    fn irn_under_ideal_ordering_keeps_rdma_semantics(ops in prop::collection::vec(op(), 1..40), ch in channel()) {
        check(irn(), OrderingKind::Ideal, &ops, ch)?;
    }

    #[test]
    fn uet_rud_keeps_rdma_semantics(ops in prop::collection::vec(op(), 1..40), ch in channel()) {
        check(uet(UetMode::Rud), OrderingKind::None, &ops, ch)?;
    }

    #[test]
    fn uet_rod_keeps_rdma_semantics(ops in prop::collection::vec(op(), 1..40), ch in channel()) {
        check(uet(UetMode::Rod), OrderingKind::None, &ops, ch)?;
    }

    #[test]
    fn go_back_n_under_ideal_ordering_keeps_rdma_semantics(ops in prop::collection::vec(op(), 1..40), ch in channel()) {
        check(Engine::GoBackN, OrderingKind::Ideal, &ops, ch)?;
    }
}

/// The harness is not trivially satisfied: a clean channel and a lossy one
/// give the same memory, and loss costs go-back-N more packets than IRN.
#[test]
fn lossy_channel_costs_go_back_n_more_than_irn() {
    let ops: Vec<Op> = (0..40)
        .map(|i| Op {
            kind: (i % 6) as u8,
            len: 2999 - (i * 37) % 1500,
            gap: i % 64,
            val: i % 4,
        })
        .collect();
    let clean = Channel {
        seed: 7,
        drop: 0.0,
        dup: 0.0,
        jitter: 0,
    };
    let lossy = Channel {
        drop: 0.03,
        dup: 0.02,
        jitter: 10 * US,
        ..clean
    };
    let i0 = check(irn(), OrderingKind::None, &ops, clean).unwrap();
    let i1 = check(irn(), OrderingKind::None, &ops, lossy).unwrap();
    let g1 = check(Engine::GoBackN, OrderingKind::None, &ops, lossy).unwrap();
    assert!(i0.b.bytes == i1.b.bytes && i1.b.bytes == g1.b.bytes);
    assert!(
        g1.data_sent > i1.data_sent,
        "go-back-N {} vs IRN {} data packets",
        g1.data_sent,
        i1.data_sent
    );
    assert!(i1.end > i0.end);
}

/// UET's ROD places a reordering, lossy, duplicating channel's WRITEs in
/// PSN order: the responder's writes are those of a clean channel, one
/// by one; RUD's, on the same channel, are not (the check can fail).
#[test]
fn uet_rod_places_in_order_and_rud_does_not() {
    let ops: Vec<Op> = (0..30)
        .map(|i| Op {
            kind: 0,
            len: 2999 - (i * 37) % 1500,
            gap: i % 64,
            val: i % 4,
        })
        .collect();
    let clean = Channel {
        seed: 5,
        drop: 0.0,
        dup: 0.0,
        jitter: 0,
    };
    let rough = Channel {
        drop: 0.05,
        dup: 0.03,
        jitter: 15 * US,
        ..clean
    };
    let reference = check(uet(UetMode::Rod), OrderingKind::None, &ops, clean).unwrap();
    let rod = check(uet(UetMode::Rod), OrderingKind::None, &ops, rough).unwrap();
    let rud = check(uet(UetMode::Rud), OrderingKind::None, &ops, rough).unwrap();
    assert!(
        rod.b.writes == reference.b.writes,
        "ROD placed out of order"
    );
    assert!(rud.b.writes != reference.b.writes, "RUD placed in order");
}

/// The Eunomia cases are not vacuous: on a reordering channel the bitmap
/// tracks packets, and drops (and NACKs) some beyond its 16-bit cap, or,
/// with the controller nearly full, for want of a block; the memory is
/// still right. The work ends with a WRITE, whose last packet the sender
/// holds (and the receiver hold does not).
#[test]
fn eunomia_cases_track_and_drop() {
    let mut ops: Vec<Op> = (0..40)
        .map(|i| Op {
            kind: (i % 6) as u8,
            len: 2999 - (i * 37) % 1500,
            gap: i % 64,
            val: i % 4,
        })
        .collect();
    ops.push(Op {
        kind: 0,
        len: 2999,
        gap: 0,
        val: 0,
    });
    let ch = Channel {
        seed: 3,
        drop: 0.01,
        dup: 0.01,
        jitter: 15 * US,
    };
    for rel in [irn(), Engine::GoBackN] {
        for memory in [2048, 22] {
            let o = check(rel, eunomia(memory), &ops, ch).unwrap();
            assert!(
                o.tracked > 0 && o.untracked > 0,
                "{rel:?} {memory}: {} {}",
                o.tracked,
                o.untracked
            );
            assert_eq!(o.held, 1, "{rel:?} {memory}");
        }
        let o = check(rel, eunomia_receiver_hold(), &ops, ch).unwrap();
        assert!(o.tracked > 0 && o.held == 0, "{rel:?}");
    }
}

/// A case a random seed found (the property tests now draw a fixed seed;
/// see `common::proptest_config`): IRN under Eunomia with the sender hold,
/// a READ then a WRITE, 3.8% loss, 1.4% duplication and jitter. The SACK
/// of the WRITE's second-last packet arrived after the cumulative ack had
/// reached that packet and the ack covering it was lost: the packet stayed
/// unacknowledged with nothing to resend, so no RTO was armed and the last
/// packet was held forever.
#[test]
fn irn_under_eunomia_read_then_write_with_loss_completes() {
    let ops = [
        Op {
            kind: 3,
            len: 2305,
            gap: 0,
            val: 0,
        },
        Op {
            kind: 0,
            len: 2049,
            gap: 0,
            val: 0,
        },
    ];
    let ch = Channel {
        seed: 18142325957067693960,
        drop: 0.03769722348622165,
        dup: 0.013613688010386666,
        jitter: 9000000,
    };
    check(irn(), eunomia(2048), &ops, ch).unwrap();
}
