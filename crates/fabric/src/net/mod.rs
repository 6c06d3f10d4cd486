//! The simulated network: one [`Network`] composed of the parts that own
//! the fabric's state (the event core `Core`, `core.rs`; `Links`, `link/`;
//! `Switches`, `switch/`; `Hosts`, `host/`; `Observe`, `observe/`), its
//! construction and its read accessors. `Network` keeps nothing of its own:
//! a node's pipeline runs in a view that hands out only its node's parts
//! (`AtSwitch`, `AtHost`, `at.rs`); the window loop,
//! its dispatch, a frame's arrival and `kick` are `run.rs`'s; what users
//! call and the global events are `api.rs`'s. This folder also holds the
//! loop's cache hints (`prefetch.rs`), the events (`event.rs`), their
//! containers (`window.rs`, `calendar.rs`) and the packet arena
//! (`arena.rs`).
//!
//! The hot path's shape (docs/speed.md measures it): integer time,
//! components in `Vec`s indexed by `u32`, packets in an arena, one pending
//! event per link (the head of its wire FIFO) and one per busy port, no
//! allocation per packet. Events
//! run in windows of the shortest link delay, node by node (`window.rs`,
//! `Network::run_window`). At a switch whose buffer cannot pause, resume
//! or drop anything in the window (`Mmu::calm`), a port's transmission
//! ends are no events: each runs when the port is next touched
//! (`AtSwitch::catch_up`).

mod api;
pub(crate) mod arena;
pub(crate) mod at;
pub(crate) mod calendar;
pub(crate) mod core;
pub(crate) mod event;
mod parallel;
mod prefetch;
mod run;
pub(crate) mod shard;
pub(crate) mod window;

use crate::config::FabricConfig;
use crate::config::QpSharing;
use crate::host::app::Apps;
use crate::host::flows::{FlowResult, Flows};
use crate::host::qp_cache::QpCache;
use crate::host::Host;
use crate::host::Hosts;
use crate::link::port::{End, Port, PortEnds};
use crate::link::Links;
use crate::net::arena::{Arena, Hdr};
use crate::net::calendar::Calendar;
use crate::net::core::Core;
use crate::net::event::Ev;
use crate::net::window::{ByNode, Globals, NodeQueue};
use crate::observe::counters::Counters;
use crate::observe::Observe;
use crate::switch::Switches;

use crate::switch::lb::Balancer;
use crate::switch::mark::Marker;
use crate::switch::mmu::CLASSES;
use crate::switch::mmu::{headroom_for, Mmu};
use crate::switch::queues::voq::{SwitchModel, Voq};
use crate::switch::queues::{Discipline, Queues};
use crate::switch::rcm::Rcm;
use crate::switch::trim::Trimmer;
use crate::switch::{Deflection, Deflector, Scheduling, Switch};
use crate::topo::routing::Routes;
use crate::topo::topology::{NodeKind, Topology};
use engine::Time;
use transport::driver::Wakeups;
use transport::{Nic, NicConfig};

/// What a node is: a host or a switch, and its index among them.
pub(crate) enum NodeRole {
    Host(u32),
    Switch(u32),
}

/// Why `run_until` returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunState {
    /// Every flow and every application finished.
    Done,
    /// Simulated time reached the limit.
    TimeLimit,
    /// The event budget of this call ran out; call again.
    Budget,
    /// No events are left but flows or applications are unfinished (e.g.
    /// no route).
    Stuck,
}

/// The whole simulated fabric: the parts, each owning its state, composed.
/// The behaviour lives with the parts (`link/`, `switch/`, `host/`,
/// `observe/`) and the event loop that dispatches to them (`run.rs`); a
/// node's pipeline borrows only the parts it uses (`AtSwitch`, `AtHost`).
pub struct Network {
    pub(crate) cfg: FabricConfig,
    pub(crate) topo: Topology,
    /// Events, the window being run, the packets in flight, the counters.
    pub(crate) core: Core,
    /// Ports and wires, faults, impairments (`link/`).
    pub(crate) links: Links,
    /// Switches, their buffers, egress queues, markers, balancer, routes
    /// (`switch/`).
    pub(crate) sw: Switches,
    /// Hosts, their NICs and applications (`host/`).
    pub(crate) hosts: Hosts,
    /// Sampling and capture (`observe/`).
    pub(crate) observe: Observe,
    /// The other shards' copies, when this network runs on several
    /// threads (`shard.rs`); empty on one.
    pub(crate) peers: Vec<Network>,
}

/// Why [`Network::new`] refused a configuration: the scenario key at
/// fault (as the scenario file names it; "topology" for the fabric's
/// shape) and what is wrong, so that a scenario's error names the key the
/// user must change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetupError {
    pub key: &'static str,
    pub message: String,
}

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

impl std::error::Error for SetupError {}

/// A [`SetupError`] of `key`.
fn at(key: &'static str) -> impl Fn(String) -> SetupError {
    move |message| SetupError { key, message }
}

impl Network {
    pub fn new(topo: Topology, cfg: FabricConfig) -> Result<Network, SetupError> {
        topo.validate().map_err(at("topology"))?;
        cfg.load_balancer
            .check_topology(&topo)
            .map_err(at("switch.load_balancer"))?;
        let nic = &cfg.nic;
        nic.validate()
            .map_err(|e| at("transport")(format!("NIC configuration: {e}")))?;
        let frame = cfg.max_frame();
        if frame.max(nic.ctrl_bytes as u64) > Hdr::MAX_WIRE as u64 {
            return Err(at("transport.mtu")(format!(
                "frames of {frame} bytes (MTU {} + {} header bytes + {} of the engine's): the fabric carries at most {}",
                nic.mtu,
                nic.header_bytes,
                frame - nic.mtu as u64 - nic.header_bytes as u64,
                Hdr::MAX_WIRE
            )));
        }
        // Switches stamp HPCC's telemetry only when the NICs read it.
        let int_multi = match nic.cc {
            transport::CcConfig::Hpcc(p) => p.int_multi,
            _ => 0,
        };
        let hosts = topo.host_count();
        if hosts > Hdr::MAX_HOSTS {
            return Err(at("topology")(format!(
                "{hosts} hosts: the fabric supports at most {} (a packet's flow identity holds a 16-bit host id)",
                Hdr::MAX_HOSTS
            )));
        }
        let mut roles = Vec::with_capacity(topo.nodes.len());
        let (mut nh, mut ns) = (0u32, 0u32);
        for n in &topo.nodes {
            match n.kind {
                NodeKind::Host => {
                    roles.push(NodeRole::Host(nh));
                    nh += 1;
                }
                NodeKind::Switch => {
                    roles.push(NodeRole::Switch(ns));
                    ns += 1;
                }
            }
        }
        let mut node_ports: Vec<Vec<u32>> = vec![Vec::new(); topo.nodes.len()];
        let mut ports = Vec::with_capacity(topo.links.len() * 2);
        let mut markers = Vec::with_capacity(topo.links.len() * 2);
        for (i, l) in topo.links.iter().enumerate() {
            // Each end's index among its node's ports (a link never joins a
            // node to itself).
            let ends = [l.a, l.b];
            let locals = ends.map(|n| node_ports[n as usize].len() as u16);
            for end in 0..2 {
                let (node, far) = (ends[end], 1 - end);
                let id = 2 * i as u32 + end as u32;
                node_ports[node as usize].push(id);
                let end_of = |k: usize| match roles[ends[k] as usize] {
                    NodeRole::Host(h) => End::Host(h),
                    NodeRole::Switch(s) => End::Switch(s, locals[k]),
                };
                let ecn = match roles[node as usize] {
                    NodeRole::Switch(_) => cfg.ecn_for(l.rate_bps),
                    NodeRole::Host(_) => None,
                };
                let ends = PortEnds {
                    node,
                    owner: end_of(end),
                    peer: end_of(far),
                };
                ports.push(Port::new(ends, l.rate_bps, l.delay, cfg.seed, id));
                markers.push(Marker::new(ecn, cfg.seed, id));
            }
        }
        for (node, ports) in node_ports.iter().enumerate() {
            if matches!(roles[node], NodeRole::Switch(_)) && ports.len() > Hdr::MAX_PORTS {
                return Err(at("topology")(format!(
                    "switch {} has {} ports: at most {} are supported",
                    topo.nodes[node].name,
                    ports.len(),
                    Hdr::MAX_PORTS
                )));
            }
        }
        let max_frame = cfg.max_frame();
        cfg.qp_cache.validate().map_err(at("nic"))?;
        let qp_caching = cfg.qp_cache.entries != 0;
        let mut hosts = Vec::new();
        let mut switches = Vec::new();
        for (node, role) in roles.iter().enumerate() {
            match role {
                NodeRole::Host(h) => {
                    let nic = Nic::new(NicConfig {
                        host: *h,
                        line_rate_bps: ports[node_ports[node][0] as usize].rate_bps(),
                        ..cfg.nic.clone()
                    })
                    .map_err(|e| at("transport")(format!("NIC of host {h}: {e}")))?;
                    hosts.push(Host {
                        node: node as u32,
                        port: node_ports[node][0],
                        nic,
                        wakeups: Wakeups::default(),
                        qp_owner: Vec::new(),
                        app_timers: Default::default(),
                        qp_cache: qp_caching.then(|| Box::new(QpCache::new(cfg.qp_cache))),
                    });
                }
                NodeRole::Switch(_) => {
                    let headroom = node_ports[node]
                        .iter()
                        .map(|&p| {
                            let p = &ports[p as usize];
                            cfg.headroom
                                .unwrap_or_else(|| headroom_for(p.rate_bps(), p.delay, max_frame))
                        })
                        .collect();
                    switches.push(Switch {
                        ports: node_ports[node].clone(),
                        mmu: Mmu::new(cfg.mmu.clone(), headroom),
                        window_port_bytes: 0,
                        window_bytes: 0,
                    });
                }
            }
        }
        let lb = Balancer::new(cfg.load_balancer, cfg.ecmp_hash, cfg.seed, &topo).map_err(|e| {
            at("switch.load_balancer")(format!("{}: {e}", cfg.load_balancer.name()))
        })?;
        let (voq, rcm) = Network::voq_and_rcm(&cfg, &topo, &ports, &switches)?;
        let hooks = lb.at_tors()
            || lb.every_hop()
            || voq.is_some()
            || cfg.scheduling != Scheduling::Fifo
            || cfg.deflection != Deflection::None
            || cfg.trimming.is_some();
        let deflector = Deflector::new(cfg.deflection, cfg.seed, switches.len() as u32);
        let trimmer = Trimmer::new(
            cfg.trimming,
            ports.len(),
            cfg.nic.header_bytes,
            cfg.nic.ctrl_priority,
        );
        let discipline = Discipline::new(
            cfg.scheduling,
            voq,
            cfg.nic.data_priority,
            cfg.nic.mtu,
            ports.len(),
        );
        let per_peer = cfg.qp_sharing == QpSharing::PerPeer;
        let defer_ends = !matches!(discipline, Discipline::Voq(_));
        let queues = Queues::new(ports.len(), discipline);
        let (pfc_frame_bytes, seed) = (cfg.pfc_frame_bytes, cfg.seed);
        let mut net = Network {
            cfg,
            topo,
            core: Core {
                q: Calendar::new(0),
                globals: Globals::default(),
                now: 0,
                lookahead: 0,
                window: ByNode::new(0),
                window_end: 0,
                window_node: 0,
                local: NodeQueue::default(),
                defer_ends,
                calm: false,
                deferred_ends: 0,
                deferred_latest: 0,
                roles,
                port_node: Vec::new(),
                host_node: Vec::new(),
                host_port: Vec::new(),
                arena: Arena::with_int(int_multi),
                counters: Counters::default(),
                shard: None,
            },
            links: Links {
                ports,
                faults: Vec::new(),
                failures: Vec::new(),
                reorder: Default::default(),
                link_down_qps: Default::default(),
                pfc_frame_bytes,
            },
            sw: Switches {
                nodes: switches,
                lb,
                queues,
                markers,
                deflector,
                rcm,
                trimmer,
                routes: Routes::default(),
                hooks,
            },
            hosts: Hosts {
                nodes: hosts,
                flows: Flows::new(per_peer),
                apps: Apps::default(),
                host_hooks: int_multi != 0 || qp_caching,
                seed,
            },
            observe: Observe {
                sampling: None,
                capture: None,
                capturing: false,
                pfc_log: None,
            },
            peers: Vec::new(),
        };
        net.core.port_node = net.links.ports.iter().map(|p| p.node).collect();
        net.core.host_node = net.hosts.nodes.iter().map(|h| h.node).collect();
        net.core.host_port = net.hosts.nodes.iter().map(|h| h.port).collect();
        net.core.lookahead = net
            .links
            .ports
            .iter()
            .map(|p| p.delay)
            .min()
            .unwrap_or(0)
            .max(1);
        net.core
            .q
            .reshape(Calendar::<Ev>::shift_for(net.core.lookahead));
        net.core.window = ByNode::new(net.core.roles.len());
        net.rebuild_routes();
        if int_multi != 0 {
            // Every switch port stamps data packets (`switch/int.rs`).
            for p in 0..net.links.ports.len() as u32 {
                if let End::Switch(..) = net.links.ports[p as usize].owner {
                    net.sw.markers[p as usize].stamps_int = true;
                }
            }
        }
        net.window_bytes_changed();
        if net.sw.lb.at_tors() {
            net.at_switch().init_tors();
        }
        Ok(net)
    }

    /// The VOQ model's queues and RCM's state, as `cfg` asks (off under
    /// the shared buffer). Each input's PAUSE threshold is its queue less
    /// the port's headroom, which must leave room for two frames.
    fn voq_and_rcm(
        cfg: &FabricConfig,
        topo: &Topology,
        ports: &[Port],
        switches: &[Switch],
    ) -> Result<(Option<Voq>, Rcm), SetupError> {
        let SwitchModel::Voq { queue } = cfg.model else {
            if cfg.rcm.is_some() {
                return Err(at("switch.rcm.enabled")(
                    "RCM needs the VOQ switch model (switch.model = \"voq\")".into(),
                ));
            }
            return Ok((None, Rcm::default()));
        };
        let max_frame = cfg.max_frame();
        let n = ports.len();
        let mut voq = Voq {
            class: cfg.nic.data_priority as usize % CLASSES,
            queue,
            voqs: Vec::with_capacity(n),
            oq: vec![Default::default(); n],
            oq_bytes: vec![0; n],
            in_bytes: vec![0; n],
            in_paused: vec![false; n],
            xoff: vec![queue; n],
            resume_offset: cfg.mmu.resume_offset,
            pfc: cfg.mmu.pfc,
            rr: vec![0; n],
        };
        for (i, p) in ports.iter().enumerate() {
            let End::Switch(s, _) = p.owner else {
                voq.voqs.push(Vec::new());
                continue;
            };
            voq.voqs
                .push(vec![Default::default(); switches[s as usize].ports.len()]);
            if cfg.mmu.pfc {
                let h = cfg
                    .headroom
                    .unwrap_or_else(|| headroom_for(p.rate_bps(), p.delay, max_frame));
                if queue < h + 2 * max_frame {
                    // A headroom given outright is the key at fault; one
                    // derived from the link is the queue's.
                    let key = match cfg.headroom {
                        Some(_) => "switch.headroom_bytes",
                        None => "switch.voq.queue_kb",
                    };
                    return Err(at(key)(format!(
                        "a VOQ queue of {queue} bytes (switch.voq.queue_kb) leaves no room for \
                         two frames below the PFC headroom of {h} bytes at switch {}",
                        topo.nodes[p.node as usize].name
                    )));
                }
                voq.xoff[i] = queue - h;
            }
        }
        let rcm = match cfg.rcm {
            Some(params) => Rcm::new(params, n),
            None => Rcm::default(),
        };
        Ok((Some(voq), rcm))
    }

    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    pub fn host_count(&self) -> u32 {
        self.hosts.nodes.len() as u32
    }

    /// Rate of the host's link.
    pub fn host_rate_bps(&self, host: u32) -> u64 {
        self.links.ports[self.hosts.nodes[host as usize].port as usize].rate_bps()
    }

    /// What each switch's links can bring into it in one window, after
    /// the window, a rate or a reordering changed (`switch/budget.rs`).
    pub(crate) fn window_bytes_changed(&mut self) {
        let max_frame = self.cfg.max_frame();
        let reorder = &self.links.reorder;
        for sw in &mut self.sw.nodes {
            let reordered = |p: u32| reorder.contains_key(&p);
            sw.window_budget(&self.links.ports, reordered, self.core.lookahead, max_frame);
        }
    }

    /// Runs windows of at most `ps` picoseconds (at least 1) instead of the
    /// shortest link delay. The results do not change, only the speed:
    /// this is how that claim is checked (at 1 ps, each window holds the
    /// events of one time value, which is the global time order).
    pub fn set_window(&mut self, ps: Time) {
        self.core.lookahead = self.core.lookahead.min(ps.max(1));
        self.core
            .q
            .reshape(Calendar::<Ev>::shift_for(self.core.lookahead));
        self.window_bytes_changed();
    }

    /// Lets calm switches defer their ports' transmission ends (the
    /// default), or makes every end an event, as a reference: the results
    /// are the same either way. A balancer that acts at ToRs keeps every
    /// end an event (see `Network::init_tors`), and so does the VOQ model
    /// (its inputs pause and resume outside the MMU's calm test).
    pub fn set_deferred_ends(&mut self, on: bool) {
        let voq = matches!(self.sw.queues.discipline, Discipline::Voq(_));
        self.core.defer_ends = on && !self.sw.lb.at_tors() && !voq;
    }

    /// Transmission ends run deferred so far (see `Mmu::calm`), each
    /// counted in `counters.events` as the event it replaces.
    pub fn deferred_ends(&self) -> u64 {
        self.core.deferred_ends
    }

    /// How far the run has got: the latest event time handled, or, once
    /// every flow and application is done, when the last one finished.
    /// The fabric's counters (drops, marks, frames, events, hops).
    pub fn counters(&self) -> &Counters {
        match &self.core.shard {
            Some(s) => &s.totals,
            None => &self.core.counters,
        }
    }

    pub fn now(&self) -> Time {
        self.core.now
    }

    /// The flows' records (in a sharded run between chunks, those whose
    /// requester shard 0 runs are up to date: the rest when the run ends).
    pub fn flows(&self) -> &[FlowResult] {
        &self.hosts.flows.records
    }

    /// Flows finished (in a sharded run, over every shard).
    pub fn flows_done(&self) -> usize {
        self.hosts.flows.done + self.peers.iter().map(|p| p.hosts.flows.done).sum::<usize>()
    }

    pub fn ports(&self) -> &[Port] {
        &self.links.ports
    }

    /// Port `p`'s ECN marker's counts: the data packets it marked, and
    /// those its RED decided on (not control class, not already CE), the
    /// denominator of its marking ratio.
    pub fn ecn_counts(&self, p: u32) -> (u64, u64) {
        let m = &self.sw.markers[p as usize];
        (m.ecn_marked, m.ecn_eligible)
    }

    /// True if the port belongs to a switch (false: a host NIC port).
    pub fn is_switch_port(&self, port: u32) -> bool {
        matches!(self.links.ports[port as usize].owner, End::Switch(..))
    }

    pub fn nic(&self, host: u32) -> &Nic {
        &self.hosts.nodes[host as usize].nic
    }

    /// Host `host`'s QP-context cache (None without `FabricConfig::qp_cache`).
    pub fn qp_cache(&self, host: u32) -> Option<&QpCache> {
        self.hosts.nodes[host as usize].qp_cache.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use transport::Engine;

    /// Hosts star-wired to switches of 256 ports.
    fn stars(hosts: usize) -> Topology {
        let mut topo = Topology::default();
        let switches: Vec<u32> = (0..hosts.div_ceil(256))
            .map(|s| topo.add_node(format!("s{s}"), NodeKind::Switch))
            .collect();
        for h in 0..hosts {
            let n = topo.add_node(format!("h{h}"), NodeKind::Host);
            topo.add_link(n, switches[h / 256], 100_000_000_000, 1_000_000);
        }
        topo
    }

    /// A host id fills the low 16 bits of a packet's flow identity: one
    /// more host than that is refused, not aliased.
    #[test]
    fn more_hosts_than_a_flow_identity_holds_are_refused() {
        let err = Network::new(stars(Hdr::MAX_HOSTS + 1), FabricConfig::default())
            .err()
            .expect("refused");
        assert!(err.message.contains("at most 65536"), "{err}");
        assert_eq!(err.key, "topology");
        assert!(Network::new(stars(600), FabricConfig::default()).is_ok());
    }

    /// A NIC configuration mistake is the network's error, naming the
    /// field; a flow the NICs would refuse to post is refused when added.
    #[test]
    fn nic_mistakes_and_unpostable_flows_are_errors() {
        let mut cfg = FabricConfig::default();
        cfg.nic.rto = 0;
        let err = Network::new(stars(2), cfg).err().expect("refused");
        assert_eq!(err.message, "NIC configuration: rto must be positive");
        assert_eq!(err.key, "transport");
        let mut cfg = FabricConfig::default();
        cfg.nic.engine = Engine::MpRdma(transport::MpRdmaConfig::default());
        let mut net = Network::new(stars(2), cfg).expect("valid");
        let flow = crate::host::flows::Flow {
            src: 0,
            dst: 1,
            bytes: 10_000,
            start: 0,
            verb: transport::Verb::Read,
            class: 0,
            engine: 0,
            messages: 1,
            sync_per_10k: 0,
        };
        let err = net.add_flow(flow).expect_err("refused");
        assert_eq!(
            err,
            "flow from host 0 to host 1 (mprdma): the engine does not carry Read"
        );
        let write = crate::host::flows::Flow {
            verb: transport::Verb::Write,
            bytes: u64::MAX,
            ..flow
        };
        let err = net.add_flow(write).expect_err("refused");
        assert!(
            err.contains("packets, the most a QP may have in use"),
            "{err}"
        );
    }
}
