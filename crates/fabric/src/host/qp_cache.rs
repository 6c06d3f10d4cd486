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
//! How the host runs it: a cache sets the network's `host_hooks` (as a
//! pcap or HPCC's echo do); while it is set, every entry of the drive loop
//! at a host with a cache (`driver.rs`: transmit, deliver, timer, an
//! application's posts) runs the loop over [`Cached`], the environment
//! that puts the host's NIC behind its cache, out of line. Without the
//! flag nothing here is called, and the per-packet path reads no field of
//! the cache.
//!
//! Touches the NIC through the transport's public API only, and the
//! network through its drive-loop environment (`driver.rs`).

use std::collections::VecDeque;

use crate::net::Network;
use engine::Time;
use transport::driver::{self, Io, Wake, Wakeups};
use transport::{Completion, Nic, Packet, Transmit};

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
    pub fn held_first(&self, now: Time, nic_next: Option<Time>) -> bool {
        self.held
            .front()
            .is_some_and(|&(t, _)| t <= now && nic_next.is_none_or(|n| n > t))
    }

    /// The first held packet (its turn has come: [`QpCache::held_first`]).
    pub fn pop_held(&mut self) -> Option<Packet> {
        self.held.pop_front().map(|(_, p)| p)
    }

    /// [`Nic::poll_transmit`] behind the pipeline: while it fetches a
    /// context the NIC's data class is asked as paused (control packets
    /// still go), and a NIC with data waits for the pipeline; a data
    /// packet sent on a free pipeline uses its QP's context.
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

/// The drive loop's environment at hosts with a QP-context cache: the
/// network, with the host's NIC behind its cache. Every entry of the loop
/// at such a host takes it, so that the cache's held packets share the
/// NIC's timer wake-ups exactly as when they were NIC timers.
struct Cached<'a>(&'a mut Network);

impl Cached<'_> {
    /// Host `h`'s cache, NIC and the loop's wake-ups of the NIC.
    fn host(&mut self, h: u32) -> (&mut QpCache, &mut Nic, &mut Wakeups) {
        let host = &mut self.0.hosts[h as usize];
        let c = host.qp_cache.as_deref_mut().expect("a cached host");
        (c, &mut host.nic, &mut host.wakeups)
    }
}

impl Io for Cached<'_> {
    type Id = u32;

    fn nic(&mut self, h: u32) -> (&mut Nic, &mut Wakeups) {
        self.0.nic(h)
    }

    fn poll_transmit(&mut self, now: Time, h: u32, paused: u8) -> Transmit {
        let (c, nic, _) = self.host(h);
        c.poll_transmit(nic, now, paused)
    }

    fn poll_timeout(&mut self, h: u32) -> (Option<Time>, &mut Wakeups) {
        let (c, nic, wakeups) = self.host(h);
        (c.next_timer(nic.poll_timeout()), wakeups)
    }

    /// A held packet whose turn has come is an input of its own, as a
    /// NIC timer is.
    fn handle_timeout(&mut self, now: Time, h: u32) -> &mut Wakeups {
        let (c, nic, wakeups) = self.host(h);
        if c.held_first(now, nic.poll_timeout()) {
            if let Some(pkt) = c.pop_held() {
                nic.on_packet(now, &pkt);
            }
        } else {
            nic.handle_timeout(now);
        }
        wakeups
    }

    fn send(&mut self, now: Time, h: u32, pkt: Packet) {
        self.0.send(now, h, pkt);
    }

    fn ready(&mut self, now: Time, h: u32) {
        self.0.ready(now, h);
    }

    fn call_at(&mut self, at: Time, h: u32, why: Wake) {
        self.0.call_at(at, h, why);
    }

    fn completion(&mut self, now: Time, h: u32, c: Completion) {
        self.0.completion(now, h, c);
    }
}

/// The drive loop's entries over [`Cached`] (`driver.rs` calls them when
/// `host_hooks` is set and the host has a cache).
impl Network {
    /// Whether host `h` models a QP-context cache (asked only when
    /// `host_hooks` is set: a run without hooks reads no host field more).
    #[inline(always)]
    pub(super) fn qp_cached(&self, h: u32) -> bool {
        self.hosts[h as usize].qp_cache.is_some()
    }

    #[inline(never)]
    #[cold]
    pub(super) fn cached_transmit(&mut self, now: Time, h: u32, paused: u8) {
        driver::transmit(&mut Cached(self), now, h, paused);
    }

    /// `pkt` has left the arena: it waits in host `h`'s cache for the
    /// pipeline, or goes into the NIC now.
    pub(super) fn cached_deliver(&mut self, now: Time, h: u32, pkt: &Packet) {
        let mut io = Cached(self);
        let (c, nic, _) = io.host(h);
        if c.hold(now, nic.num_qps(), pkt) {
            return driver::after_input(&mut io, now, h);
        }
        driver::deliver(&mut io, now, h, pkt);
    }

    #[inline(never)]
    #[cold]
    pub(super) fn cached_timer(&mut self, now: Time, h: u32) {
        driver::timer(&mut Cached(self), now, h);
    }

    #[inline(never)]
    #[cold]
    pub(super) fn cached_after_input(&mut self, now: Time, h: u32) {
        driver::after_input(&mut Cached(self), now, h);
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

/// The cache in a running network: over `Cached`, with every entry of the
/// drive loop going through it.
#[cfg(test)]
mod in_a_network {
    use super::QpCacheConfig;
    use crate::host::flows::Flow;
    use crate::net::{Network, RunState};
    use crate::topo::topology::{NodeKind, Topology};
    use crate::FabricConfig;
    use engine::Time;
    use transport::Verb;

    /// Hosts 1..=6 each READ from and WRITE to host 0 over a star of
    /// 100 Gb/s links (QPs of their own: 12 at host 0), with `cache`;
    /// the flows' finish times and the network.
    fn run(cache: QpCacheConfig) -> (Vec<Option<Time>>, Network) {
        let mut topo = Topology::default();
        let s = topo.add_node("s0".into(), NodeKind::Switch);
        for h in 0..7 {
            let n = topo.add_node(format!("h{h}"), NodeKind::Host);
            topo.add_link(n, s, 100_000_000_000, engine::time::US);
        }
        let cfg = FabricConfig {
            qp_cache: cache,
            ..FabricConfig::default()
        };
        let mut net = Network::new(topo, cfg).expect("valid");
        for src in 1..7 {
            for verb in [Verb::Read, Verb::Write] {
                let flow = Flow {
                    src,
                    dst: 0,
                    bytes: 200_000,
                    start: src as Time * 1000,
                    verb,
                    class: 0,
                    engine: 0,
                    messages: 4,
                    sync_per_10k: 0,
                };
                net.add_flow(flow).expect("valid flow");
            }
        }
        assert_eq!(net.run_until(Time::MAX, u64::MAX), RunState::Done);
        net.check_conservation().unwrap();
        (net.flows().iter().map(|f| f.finish).collect(), net)
    }

    /// A cache whose misses cost nothing holds no packet and gates no
    /// data: the run over `Cached` is the run without a cache, to the
    /// picosecond, though its contexts miss.
    #[test]
    fn a_cache_of_free_misses_changes_nothing() {
        let (plain, net) = run(QpCacheConfig::default());
        assert!(net.qp_cache(0).is_none());
        let (free, net) = run(QpCacheConfig {
            entries: 1,
            miss: 0,
        });
        assert_eq!(free, plain);
        let c = net.qp_cache(0).expect("a cache");
        assert!(c.misses > 100, "{} misses", c.misses);
        assert_eq!(c.held_packets, 0);
    }

    /// Twelve QPs through one context, 1 us a miss: packets wait for the
    /// pipeline, every flow still finishes, later.
    #[test]
    fn misses_hold_packets_and_slow_the_flows() {
        let (plain, _) = run(QpCacheConfig::default());
        let (slow, net) = run(QpCacheConfig {
            entries: 1,
            miss: engine::time::US,
        });
        let c = net.qp_cache(0).expect("a cache");
        assert!(c.held_packets > 100, "{} held", c.held_packets);
        let last = |f: &[Option<Time>]| f.iter().map(|t| t.expect("finished")).max();
        assert!(last(&slow) > last(&plain));
    }
}
