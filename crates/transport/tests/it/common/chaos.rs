//! A hostile two-NIC channel for property tests: every packet may be
//! dropped, duplicated or delayed (reordered) by a seeded RNG, and its base
//! delay depends on its UDP source port, as if ECMP mapped virtual paths
//! onto physical paths of different lengths. Each NIC port serialises at
//! its line rate. With [`ChaosWorld::with_memory`] the NICs move real
//! bytes between two [`Mem`]s, and the responder's placements are recorded
//! as they reach its memory.

#![allow(dead_code)]

use std::collections::HashMap;

use engine::time::{serialization, US};
use engine::{EventQueue, Rng, StreamKind, Time};
use transport::driver::{self, Io, Wake, Wakeups};
use transport::{
    Completion, InitialPsns, Memory, Nic, NicConfig, Packet, QpConfig, SendOptions, Transmit,
    WorkRequest,
};

/// Address of the first byte of every [`Mem`] (address 0 is outside).
pub const BASE: u64 = 0x1000;

/// A host's memory: one registered region of `bytes.len()` bytes at
/// [`BASE`]. Accesses outside it are refused and counted.
pub struct Mem {
    pub bytes: Vec<u8>,
    pub violations: u64,
    /// Successful writes (a zero-length placement counts too).
    pub writes: u64,
}

impl Mem {
    pub fn new(bytes: Vec<u8>) -> Mem {
        Mem {
            bytes,
            violations: 0,
            writes: 0,
        }
    }

    /// The bytes at `addr..addr + len`; None, counted as a violation, if
    /// they are not all inside the region.
    fn range(&mut self, addr: u64, len: usize) -> Option<std::ops::Range<usize>> {
        let r = addr
            .checked_sub(BASE)
            .and_then(|a| usize::try_from(a).ok())
            .filter(|&a| a.checked_add(len).is_some_and(|e| e <= self.bytes.len()))
            .map(|a| a..a + len);
        self.violations += r.is_none() as u64;
        r
    }
}

impl Memory for Mem {
    fn read(&mut self, addr: u64, buf: &mut [u8]) -> bool {
        let Some(r) = self.range(addr, buf.len()) else {
            return false;
        };
        buf.copy_from_slice(&self.bytes[r]);
        true
    }

    fn write(&mut self, addr: u64, data: &[u8]) -> bool {
        let Some(r) = self.range(addr, data.len()) else {
            return false;
        };
        self.bytes[r].copy_from_slice(data);
        self.writes += 1;
        true
    }
}

#[derive(Clone)]
pub struct Chaos {
    pub drop: f64,
    pub dup: f64,
    /// Probability of an extra random delay of up to `jitter`.
    pub reorder: f64,
    pub jitter: Time,
    /// One-way delay of each physical path; a packet's path is its source
    /// port modulo the number of paths.
    pub paths: Vec<Time>,
}

#[derive(Clone, Copy)]
enum Ev {
    PortFree(usize),
    Wake(usize),
    /// A packet and the key of its payload bytes in `payloads`.
    Arrive(usize, Packet, u64),
    Timer(usize),
}

pub struct ChaosWorld {
    pub nics: Vec<Nic>,
    q: EventQueue<Ev>,
    busy: [bool; 2],
    wakeups: [Wakeups; 2],
    chaos: Chaos,
    rng: Rng,
    pub completions: Vec<(usize, Completion)>,
    /// With memory: NIC 0's and NIC 1's.
    pub mems: Option<[Mem; 2]>,
    /// With memory: payloads of the packets in flight (the event queue
    /// holds plain values), and the next key.
    payloads: HashMap<u64, Vec<u8>>,
    next_payload: u64,
    /// With memory: the payload of the packet being sent.
    tx_bytes: Vec<u8>,
    /// With memory: the data packets whose payload the responder (NIC 1)
    /// wrote into its memory, in the order it did.
    pub placed: Vec<Packet>,
    /// Every packet a NIC put on the wire, and every copy that reached
    /// one: (time, NIC, packet).
    pub sent: Vec<(Time, usize, Packet)>,
    pub arrived: Vec<(Time, usize, Packet)>,
    pub dropped: u64,
    pub duplicated: u64,
}

impl ChaosWorld {
    /// NIC 0 and NIC 1 with one QP each (QP 0 <-> QP 0).
    pub fn new(cfg: NicConfig, chaos: Chaos, seed: u64) -> ChaosWorld {
        ChaosWorld::new_at_psn(cfg, chaos, seed, 0)
    }

    /// As [`ChaosWorld::new`], the PSNs of both directions starting at
    /// `psn` (24 bits).
    pub fn new_at_psn(cfg: NicConfig, chaos: Chaos, seed: u64, psn: u32) -> ChaosWorld {
        let mut nics = vec![
            Nic::new(NicConfig {
                host: 0,
                ..cfg.clone()
            })
            .unwrap(),
            Nic::new(NicConfig { host: 1, ..cfg }).unwrap(),
        ];
        let psns = InitialPsns {
            sq_psn: psn,
            rq_psn: psn,
        };
        for (i, nic) in nics.iter_mut().enumerate() {
            let cfg = QpConfig {
                peer_host: 1 - i as u32,
                peer_qp: 0,
                sport: 1000 + 1000 * i as u16,
            };
            nic.create_qp_with_psns(cfg, psns).unwrap();
        }
        ChaosWorld {
            nics,
            q: EventQueue::new(),
            busy: [false; 2],
            wakeups: Default::default(),
            chaos,
            rng: Rng::new(seed, StreamKind::LinkLoss, 0),
            completions: vec![],
            mems: None,
            payloads: HashMap::new(),
            next_payload: 0,
            tx_bytes: vec![],
            placed: vec![],
            sent: vec![],
            arrived: vec![],
            dropped: 0,
            duplicated: 0,
        }
    }

    /// Moves real bytes: NIC 0 reads payloads from `a`, NIC 1 places them
    /// into `b` (and the other way for anything NIC 1 sends).
    pub fn with_memory(mut self, a: Mem, b: Mem) -> ChaosWorld {
        self.mems = Some([a, b]);
        self
    }

    pub fn post_send(&mut self, wr: WorkRequest, sync: bool) {
        let now = self.q.now();
        self.nics[0]
            .post_send_with(now, 0, wr, SendOptions { sync })
            .unwrap();
        driver::after_input(self, now, 0);
    }

    /// Posts a receive WQE at NIC 1 whose buffer is `len` bytes at `addr`.
    pub fn post_recv(&mut self, wr_id: u64, addr: u64, len: u64) {
        self.nics[1].post_recv_at(0, wr_id, addr, len).unwrap();
    }

    /// Delivers a forged packet to NIC `i` now, with `payload` as its
    /// bytes when the NICs move memory.
    pub fn inject(&mut self, i: usize, p: &Packet, payload: &[u8]) {
        let now = self.q.now();
        match &mut self.mems {
            None => self.nics[i].on_packet(now, p),
            Some(mems) => self.nics[i].on_packet_with(now, p, payload, &mut mems[i]),
        }
        driver::after_input(self, now, i);
    }

    /// Runs until nothing is left to do or `until` (events after it stay
    /// queued).
    pub fn run_until(&mut self, until: Time) {
        while self.q.peek_time().is_some_and(|t| t <= until) {
            let Some((now, ev)) = self.q.pop() else {
                break;
            };
            match ev {
                Ev::PortFree(i) => {
                    self.busy[i] = false;
                    self.ready(now, i);
                }
                Ev::Wake(i) => driver::wake(self, now, i),
                Ev::Arrive(i, p, key) => {
                    self.arrived.push((now, i, p));
                    match &mut self.mems {
                        None => self.nics[i].on_packet(now, &p),
                        Some(mems) => {
                            let bytes = self.payloads.remove(&key).expect("payload in flight");
                            let before = mems[i].writes;
                            self.nics[i].on_packet_with(now, &p, &bytes, &mut mems[i]);
                            if i == 1 && mems[i].writes > before {
                                self.placed.push(p);
                            }
                        }
                    }
                    driver::after_input(self, now, i);
                }
                Ev::Timer(i) => driver::timer(self, now, i),
            }
        }
    }
}

/// The channel as the environment of the NICs' drive loop; with memory,
/// payloads are read through `Nic::poll_transmit_with` and travel beside
/// their packets.
impl Io for ChaosWorld {
    type Id = usize;

    fn nic(&mut self, i: usize) -> (&mut Nic, &mut Wakeups) {
        (&mut self.nics[i], &mut self.wakeups[i])
    }

    fn poll_transmit(&mut self, now: Time, i: usize, paused: u8) -> Transmit {
        match &mut self.mems {
            None => self.nics[i].poll_transmit(now, paused),
            Some(mems) => {
                self.nics[i].poll_transmit_with(now, paused, &mut mems[i], &mut self.tx_bytes)
            }
        }
    }

    fn send(&mut self, now: Time, i: usize, p: Packet) {
        let rate = self.nics[i].config().line_rate_bps;
        let done = now + serialization(p.wire as u64, rate);
        self.busy[i] = true;
        self.sent.push((now, i, p));
        self.q.schedule(done, Ev::PortFree(i));
        if self.rng.bernoulli(self.chaos.drop) {
            self.dropped += 1;
            return;
        }
        let copies = if self.rng.bernoulli(self.chaos.dup) {
            self.duplicated += 1;
            2
        } else {
            1
        };
        let path = self.chaos.paths[p.sport as usize % self.chaos.paths.len()];
        for _ in 0..copies {
            let extra = if self.rng.bernoulli(self.chaos.reorder) {
                self.rng.below(self.chaos.jitter.max(1))
            } else {
                0
            };
            let key = self.next_payload;
            self.next_payload += 1;
            if self.mems.is_some() {
                self.payloads.insert(key, self.tx_bytes.clone());
            }
            self.q
                .schedule(done + path + extra, Ev::Arrive(1 - i, p, key));
        }
    }

    fn ready(&mut self, now: Time, i: usize) {
        if !self.busy[i] {
            driver::transmit(self, now, i, 0);
        }
    }

    fn call_at(&mut self, at: Time, i: usize, why: Wake) {
        let ev = match why {
            Wake::Transmit => Ev::Wake(i),
            Wake::Timer => Ev::Timer(i),
        };
        self.q.schedule(at, ev);
    }

    fn completion(&mut self, _now: Time, i: usize, c: Completion) {
        self.completions.push((i, c));
    }
}

/// Four paths of 1, 2, 3 and 6 µs.
pub fn four_paths() -> Vec<Time> {
    vec![US, 2 * US, 3 * US, 6 * US]
}
