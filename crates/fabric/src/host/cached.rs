//! The drive loop at a host with a QP-context cache (`qp_cache.rs`). A
//! cache sets the network's `host_hooks` (as a pcap or HPCC's echo do);
//! while it is set, every entry of the drive loop at a host with a cache
//! (`driver.rs`: transmit, deliver, timer, an application's posts) runs
//! the loop over [`Cached`], the environment that puts the host's NIC
//! behind its cache, out of line. Without the flag nothing here is called,
//! and the per-packet path reads no field of the cache.
//!
//! Touches the host (its NIC, cache and wake-ups) and, for everything
//! else, the host's drive-loop environment (`driver.rs`).

use crate::host::qp_cache::QpCache;
use crate::net::at::AtHost;
use engine::Time;
use transport::driver::{self, Io, Wake, Wakeups};
use transport::{Completion, Nic, Packet, Transmit};

/// The drive loop's environment at hosts with a QP-context cache: the
/// network, with the host's NIC behind its cache. Every entry of the loop
/// at such a host takes it, so that the cache's held packets share the
/// NIC's timer wake-ups exactly as when they were NIC timers.
struct Cached<'a>(&'a mut AtHost);

impl Cached<'_> {
    /// Host `h`'s cache, NIC and the loop's wake-ups of the NIC.
    fn host(&mut self, h: u32) -> (&mut QpCache, &mut Nic, &mut Wakeups) {
        let host = &mut self.0.hosts().nodes[h as usize];
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
impl AtHost {
    /// Whether host `h` models a QP-context cache (asked only when
    /// `host_hooks` is set: a run without hooks reads no host field more).
    #[inline(always)]
    pub(super) fn qp_cached(&self, h: u32) -> bool {
        self.read_hosts().nodes[h as usize].qp_cache.is_some()
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

/// The cache in a running network: over `Cached`, with every entry of the
/// drive loop going through it.
#[cfg(test)]
mod in_a_network {
    use crate::host::flows::Flow;
    use crate::host::qp_cache::QpCacheConfig;
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
