//! A hostile two-NIC channel for property tests: every packet may be
//! dropped, duplicated or delayed (reordered) by a seeded RNG, and its base
//! delay depends on its UDP source port, as if ECMP mapped virtual paths
//! onto physical paths of different lengths. Each NIC port serialises at
//! its line rate. Responder placements are recorded (MP-RDMA QPs).

#![allow(dead_code)]

use engine::time::{serialization, US};
use engine::{EventQueue, Rng, StreamKind, Time};
use transport::{
    Completion, Event, Nic, NicConfig, Packet, Placement, QpConfig, SendOptions, Transmit,
    WorkRequest,
};

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
    Arrive(usize, Packet),
    Timer(usize, u32),
}

pub struct ChaosWorld {
    pub nics: Vec<Nic>,
    q: EventQueue<Ev>,
    busy: [bool; 2],
    wake_at: [Option<Time>; 2],
    chaos: Chaos,
    rng: Rng,
    pub completions: Vec<(usize, Completion)>,
    /// (time, placement) at the responder (NIC 1), in order.
    pub placements: Vec<Placement>,
    pub dropped: u64,
    pub duplicated: u64,
}

impl ChaosWorld {
    /// NIC 0 and NIC 1 with one QP each (QP 0 <-> QP 0).
    pub fn new(cfg: NicConfig, chaos: Chaos, seed: u64) -> ChaosWorld {
        let mut nics = vec![
            Nic::new(NicConfig {
                host: 0,
                ..cfg.clone()
            }),
            Nic::new(NicConfig { host: 1, ..cfg }),
        ];
        for (i, nic) in nics.iter_mut().enumerate() {
            nic.create_qp(QpConfig {
                peer_host: 1 - i as u32,
                peer_qp: 0,
                sport: 1000 + 1000 * i as u16,
            });
        }
        nics[1].enable_placement_log();
        ChaosWorld {
            nics,
            q: EventQueue::new(),
            busy: [false; 2],
            wake_at: [None; 2],
            chaos,
            rng: Rng::new(seed, StreamKind::LinkLoss, 0),
            completions: vec![],
            placements: vec![],
            dropped: 0,
            duplicated: 0,
        }
    }

    pub fn post_send(&mut self, wr: WorkRequest, sync: bool) {
        let now = self.q.now();
        self.nics[0].post_send_with(now, 0, wr, SendOptions { sync });
        self.after_input(0);
    }

    pub fn post_recv(&mut self, wr_id: u64, len: u64) {
        self.nics[1].post_recv(0, wr_id, len);
    }

    /// Runs until nothing is left to do or `until`.
    pub fn run_until(&mut self, until: Time) {
        while let Some((now, ev)) = self.q.pop() {
            if now > until {
                break;
            }
            match ev {
                Ev::PortFree(i) => {
                    self.busy[i] = false;
                    self.poll(i);
                }
                Ev::Wake(i) => {
                    if self.wake_at[i] == Some(now) {
                        self.wake_at[i] = None;
                    }
                    self.poll(i);
                }
                Ev::Arrive(i, p) => {
                    self.nics[i].on_packet(now, &p);
                    self.after_input(i);
                }
                Ev::Timer(i, qp) => {
                    self.nics[i].on_timer(now, qp);
                    self.after_input(i);
                }
            }
        }
    }

    fn drain(&mut self, i: usize) {
        while let Some(e) = self.nics[i].poll_event() {
            match e {
                Event::ArmTimer { qp, at } => {
                    self.q.schedule(at.max(self.q.now()), Ev::Timer(i, qp))
                }
                Event::Completion(c) => self.completions.push((i, c)),
            }
        }
        while let Some(p) = self.nics[i].poll_placement() {
            self.placements.push(p);
        }
    }

    fn after_input(&mut self, i: usize) {
        self.drain(i);
        self.poll(i);
    }

    fn poll(&mut self, i: usize) {
        if self.busy[i] {
            return;
        }
        let now = self.q.now();
        let tx = self.nics[i].poll_transmit(now, 0);
        self.drain(i);
        match tx {
            Transmit::Packet(p) => {
                let rate = self.nics[i].config().line_rate_bps;
                let done = now + serialization(p.wire as u64, rate);
                self.busy[i] = true;
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
                    self.q.schedule(done + path + extra, Ev::Arrive(1 - i, p));
                }
            }
            Transmit::At(t) => {
                if self.wake_at[i].is_none_or(|w| t < w) {
                    self.wake_at[i] = Some(t);
                    self.q.schedule(t, Ev::Wake(i));
                }
            }
            Transmit::Idle => {}
        }
    }
}

/// Four paths of 1, 2, 3 and 6 µs.
pub fn four_paths() -> Vec<Time> {
    vec![US, 2 * US, 3 * US, 6 * US]
}
