//! The NIC's QP-context cache. An RNIC keeps the state of a few hundred
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
//! its context ([`QpCache::rx_at`]). A packet sent for a QP that missed
//! keeps the pipeline busy for the fetch after it ([`QpCache::tx`]); the
//! NIC sends no data while the pipeline is busy. Control packets (ACKs,
//! NACKs, CNPs) were paid for by the packet that made them. `entries = 0`
//! (the default) models no cache: nothing here runs.
//!
//! Plain data: uses only `crate::packet`.

use std::collections::VecDeque;

use crate::packet::Packet;
use engine::Time;

/// The cache's size and the cost of a miss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QpCacheConfig {
    /// QP contexts the NIC holds; 0: no cache modelled (no cost).
    pub entries: u32,
    /// How long the pipeline waits for a context fetched over PCIe.
    pub miss: Time,
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
pub(crate) struct QpCache {
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
    pub held: VecDeque<(Time, Packet)>,
}

impl QpCache {
    pub fn new(cfg: QpCacheConfig) -> QpCache {
        QpCache {
            entries: cfg.entries,
            miss: cfg.miss,
            head: NIL,
            tail: NIL,
            ..QpCache::default()
        }
    }

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
    pub fn touch(&mut self, q: u32) -> bool {
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
    pub fn rx_at(&mut self, now: Time, q: u32) -> (Time, bool) {
        let start = now.max(self.pipe_free);
        let hit = self.touch(q);
        let at = if hit { start } else { start + self.miss };
        self.pipe_free = at;
        (at, !hit)
    }

    /// A data packet of QP `q` leaves at `now` (the pipeline was free):
    /// whether its context missed (the pipeline is then busy for the
    /// fetch).
    pub fn tx(&mut self, now: Time, q: u32) -> bool {
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
