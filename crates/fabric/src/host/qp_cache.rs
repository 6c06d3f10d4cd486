//! The NIC's QP-context cache, a hardware timing model the simulator's
//! host puts around its sans-IO NIC. An RNIC keeps the state of a few hundred
//! QPs on chip (about 400 on a ConnectX-3, as RDMAvisor's §1.2 reports);
//! a packet for a QP whose context is not cached waits while the NIC
//! fetches it from host memory over PCIe, and the NIC's processing
//! pipeline waits with it. That is the scaling cliff of one QP per
//! connection (RDMAvisor Fig 5).
//!
//! The model: an LRU of `entries` QP numbers and one processing pipeline,
//! free from `pipe_free` on. A received packet is processed when the
//! pipeline reaches it: at once if its QP is cached and the pipeline is
//! free, else held (in arrival order) until the pipeline has fetched
//! its context ([`QpCache::rx_at`]): a held packet waits here, in a state
//! of its own, and is handed to the NIC when due as an input of its own
//! (the host's `Ev::Timer`, in the order the NIC's timers and it fall due:
//! [`QpCache::held_first`]). A packet sent for a QP that missed keeps the
//! pipeline busy for the fetch after it ([`QpCache::tx`]); the host asks
//! the NIC for no data while the pipeline is busy ([`QpCache::poll_transmit`]).
//! Control packets (ACKs, NACKs, CNPs) were paid for by the packet that
//! made them. `entries = 0` (the default) models no cache: the host has
//! none and nothing here runs.
//!
//! The host runs the drive loop through it (`cached.rs`).
//!
//! Touches the NIC through the transport's public API only.

use std::collections::VecDeque;

use engine::Time;
use transport::{Nic, Packet, Transmit};

/// The cache's size and the cost of a miss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QpCacheConfig {
    /// QP contexts the NIC holds; 0: no cache modelled (no cost).
    pub entries: u32,
    /// How long the pipeline waits for a context fetched over PCIe.
    pub miss: Time,
}

impl QpCacheConfig {
    /// Refuses a miss longer than the NIC's longest timer (an hour).
    pub fn validate(&self) -> Result<(), String> {
        if self.entries != 0 && self.miss > transport::api::MAX_RTO {
            return Err("qp_cache.miss must be at most one hour".into());
        }
        Ok(())
    }
}

impl Default for QpCacheConfig {
    fn default() -> Self {
        QpCacheConfig {
            entries: 0,
            miss: engine::time::US,
        }
    }
}

const NIL: u32 = u32::MAX;

/// The cache and the pipeline (see the module's doc).
#[derive(Debug, Default)]
pub struct QpCache {
    entries: u32,
    miss: Time,
    /// The LRU list over QP numbers: `prev`/`next` links, most recent at
    /// `head`; `cached[q]` says whether `q` is in it.
    prev: Vec<u32>,
    next: Vec<u32>,
    cached: Vec<bool>,
    head: u32,
    tail: u32,
    len: u32,
    /// When the pipeline is free again.
    pub pipe_free: Time,
    /// Received packets waiting for the pipeline, with when each may be
    /// processed (non-decreasing).
    held: VecDeque<(Time, Packet)>,
    /// QP contexts fetched (received and sent packets' misses).
    pub misses: u64,
    /// Received packets that waited for the pipeline.
    pub held_packets: u64,
}

impl QpCache {
    /// The cache's size and miss cost.
    pub fn config(&self) -> QpCacheConfig {
        QpCacheConfig {
            entries: self.entries,
            miss: self.miss,
        }
    }

    pub fn new(cfg: QpCacheConfig) -> QpCache {
        QpCache {
            entries: cfg.entries,
            miss: cfg.miss,
            head: NIL,
            tail: NIL,
            ..QpCache::default()
        }
    }

    /// A packet arrives at `now` at a NIC with `qps` QPs: true if it
    /// waits for the pipeline (then [`QpCache::pop_held`] hands it back
    /// when due). A packet for a QP the NIC never had goes on, to be
    /// dropped as malformed.
    #[inline]
    pub fn hold(&mut self, now: Time, qps: usize, pkt: &Packet) -> bool {
        if pkt.dst_qp as usize >= qps {
            return false;
        }
        let (at, missed) = self.rx_at(now, pkt.dst_qp);
        self.misses += missed as u64;
        if at <= now && self.held.is_empty() {
            return false;
        }
        self.held.push_back((at, *pkt));
        self.held_packets += 1;
        true
    }

    /// The host's next timer: the NIC's (`nic_next`) or the first held
    /// packet's, whichever is earlier.
    #[inline]
    pub fn next_timer(&self, nic_next: Option<Time>) -> Option<Time> {
        match (self.held.front(), nic_next) {
            (Some(&(t, _)), Some(n)) => Some(t.min(n)),
            (Some(&(t, _)), None) => Some(t),
            (None, n) => n,
        }
    }

    /// Whether the first held packet's turn comes before the NIC's next
    /// timer at `now`: it is due, and the NIC's is later (at the same
    /// picosecond the NIC's timers go first, as when held packets sat in
    /// its timer table under the last QP number).
    #[inline]
    pub fn held_first(&self, now: Time, nic_next: Option<Time>) -> bool {
        self.held
            .front()
            .is_some_and(|&(t, _)| t <= now && nic_next.is_none_or(|n| n > t))
    }

    /// The first held packet (its turn has come: [`QpCache::held_first`]).
    #[inline]
    pub fn pop_held(&mut self) -> Option<Packet> {
        self.held.pop_front().map(|(_, p)| p)
    }

    /// [`Nic::poll_transmit`] behind the pipeline: while it fetches a
    /// context the NIC's data class is asked as paused (control packets
    /// still go), and a NIC with data waits for the pipeline; a data
    /// packet sent on a free pipeline uses its QP's context.
    #[inline]
    pub fn poll_transmit(&mut self, nic: &mut Nic, now: Time, paused: u8) -> Transmit {
        let data = 1u8 << nic.config().data_priority;
        if self.pipe_free > now {
            let t = nic.poll_transmit(now, paused | data);
            return match t {
                Transmit::Idle if paused & data == 0 && nic.data_scheduled() => {
                    Transmit::At(self.pipe_free)
                }
                t => t,
            };
        }
        let t = nic.poll_transmit(now, paused);
        if let Transmit::Packet(p) = &t {
            if p.is_data() {
                self.misses += self.tx(now, p.src_qp) as u64;
            }
        }
        t
    }

    #[inline]
    fn unlink(&mut self, q: u32) {
        let (p, n) = (self.prev[q as usize], self.next[q as usize]);
        if p == NIL {
            self.head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NIL {
            self.tail = p;
        } else {
            self.prev[n as usize] = p;
        }
    }

    #[inline]
    fn push_front(&mut self, q: u32) {
        self.prev[q as usize] = NIL;
        self.next[q as usize] = self.head;
        if self.head != NIL {
            self.prev[self.head as usize] = q;
        }
        self.head = q;
        if self.tail == NIL {
            self.tail = q;
        }
    }

    /// Uses `q`'s context: true if it was cached; on a miss it is fetched,
    /// evicting the least recently used when full. Either way
    /// `q` is then the most recent.
    #[inline]
    fn touch(&mut self, q: u32) -> bool {
        let i = q as usize;
        if i >= self.cached.len() {
            self.prev.resize(i + 1, NIL);
            self.next.resize(i + 1, NIL);
            self.cached.resize(i + 1, false);
        }
        if self.cached[i] {
            if self.head != q {
                self.unlink(q);
                self.push_front(q);
            }
            return true;
        }
        if self.len == self.entries {
            let lru = self.tail;
            self.unlink(lru);
            self.cached[lru as usize] = false;
            self.len -= 1;
        }
        self.push_front(q);
        self.cached[i] = true;
        self.len += 1;
        false
    }

    /// A packet for QP `q` arrived at `now`: when the pipeline processes
    /// it, and whether its context missed.
    #[inline]
    fn rx_at(&mut self, now: Time, q: u32) -> (Time, bool) {
        let start = now.max(self.pipe_free);
        let hit = self.touch(q);
        let at = if hit { start } else { start + self.miss };
        self.pipe_free = at;
        (at, !hit)
    }

    /// A data packet of QP `q` leaves at `now` (the pipeline was free):
    /// whether its context missed (the pipeline is then busy for the
    /// fetch).
    #[inline]
    fn tx(&mut self, now: Time, q: u32) -> bool {
        let hit = self.touch(q);
        if !hit {
            self.pipe_free = now.max(self.pipe_free) + self.miss;
        }
        !hit
    }

    /// QP `q` was destroyed: its context leaves the cache.
    pub fn forget(&mut self, q: u32) {
        if self.cached.get(q as usize) == Some(&true) {
            self.unlink(q);
            self.cached[q as usize] = false;
            self.len -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(entries: u32) -> QpCache {
        QpCache::new(QpCacheConfig { entries, miss: 10 })
    }

    #[test]
    fn the_least_recently_used_is_evicted() {
        let mut c = cache(2);
        assert!(!c.touch(0));
        assert!(!c.touch(1));
        assert!(c.touch(0), "0 is now the most recent");
        assert!(!c.touch(2), "evicts 1");
        assert!(c.touch(0));
        assert!(!c.touch(1), "1 was evicted");
        assert!(!c.touch(2), "2 was evicted by 1 (0 was used after it)");
        c.forget(2);
        assert!(c.touch(1));
        assert!(!c.touch(2));
    }

    #[test]
    fn a_round_robin_over_more_qps_than_entries_always_misses() {
        let mut c = cache(400);
        for _ in 0..3 {
            let misses = (0..401).filter(|&q| !c.touch(q)).count();
            assert_eq!(misses, 401);
        }
        let mut c = cache(400);
        let misses: Vec<usize> = (0..3)
            .map(|_| (0..400).filter(|&q| !c.touch(q)).count())
            .collect();
        assert_eq!(misses, [400, 0, 0], "only the first round misses");
    }

    #[test]
    fn misses_serialise_the_pipeline() {
        let mut c = cache(1);
        assert_eq!(c.rx_at(100, 0), (110, true), "a miss waits for the fetch");
        assert_eq!(
            c.rx_at(100, 0),
            (110, false),
            "a hit behind it waits its turn"
        );
        assert_eq!(c.rx_at(100, 1), (120, true));
        assert_eq!(
            c.rx_at(200, 1),
            (200, false),
            "a hit on a free pipeline: at once"
        );
        assert!(c.tx(300, 0));
        assert_eq!(c.pipe_free, 310);
        assert!(!c.tx(400, 0), "cached now");
        assert_eq!(c.pipe_free, 310);
    }
}

#[cfg(test)]
mod host_side {
    use super::*;
    use transport::{NicConfig, QpConfig, Verb, WorkRequest};

    fn nic_with(qps: u32) -> Nic {
        let mut nic = Nic::new(NicConfig::default()).unwrap();
        for i in 0..qps {
            let cfg = QpConfig {
                peer_host: 1,
                peer_qp: i,
                sport: 0,
            };
            nic.create_qp(cfg).unwrap();
        }
        nic
    }

    fn for_qp(q: u32) -> Packet {
        Packet {
            dst_qp: q,
            ..Packet::default()
        }
    }

    #[test]
    fn held_packets_wait_in_order_and_yield_to_nic_timers_at_a_tie() {
        let mut c = QpCache::new(QpCacheConfig {
            entries: 1,
            miss: 10,
        });
        assert!(!c.hold(100, 1, &for_qp(5)), "no such QP: not held");
        assert!(c.hold(100, 2, &for_qp(0)), "a miss waits for the fetch");
        assert!(c.hold(100, 2, &for_qp(0)), "a hit waits behind it");
        assert_eq!((c.misses, c.held_packets), (1, 2));
        assert_eq!(c.next_timer(Some(500)), Some(110));
        assert_eq!(c.next_timer(None), Some(110));
        assert!(!c.held_first(109, None), "not due yet");
        assert!(!c.held_first(110, Some(110)), "the NIC's timer first");
        assert!(!c.held_first(110, Some(50)));
        assert!(c.held_first(110, Some(111)));
        assert!(c.pop_held().is_some() && c.held_first(110, None));
        assert!(c.pop_held().is_some() && !c.held_first(110, None));
        assert_eq!(c.next_timer(Some(500)), Some(500));
    }

    #[test]
    fn no_data_leaves_while_the_pipeline_fetches() {
        let mut nic = nic_with(2);
        let mut c = QpCache::new(QpCacheConfig {
            entries: 1,
            miss: 1000,
        });
        let wr = WorkRequest {
            verb: Verb::Write,
            len: 100,
            ..WorkRequest::default()
        };
        nic.post_send(0, 0, wr).unwrap();
        nic.post_send(0, 1, wr).unwrap();
        let sent = |t: &Transmit| matches!(t, Transmit::Packet(p) if p.is_data());
        assert!(sent(&c.poll_transmit(&mut nic, 0, 0)), "QP 0 misses");
        assert_eq!(c.misses, 1);
        assert_eq!(c.poll_transmit(&mut nic, 10, 0), Transmit::At(1000));
        let data = 1u8 << nic.config().data_priority;
        assert_eq!(
            c.poll_transmit(&mut nic, 10, data),
            Transmit::Idle,
            "paused by the link: waits for the resume"
        );
        assert!(sent(&c.poll_transmit(&mut nic, 1000, 0)), "QP 1 misses");
        assert_eq!(c.misses, 2);
    }
}
