//! The simulated network and its event loop: hosts (each wrapping a
//! transport `Nic`), switches (routing table, shared-buffer MMU, ECMP),
//! ports and links, flows and faults.
//!
//! Hot path shape (DESIGN.md): integer time, components in `Vec`s indexed
//! by `u32`, packets in an arena, one pending event per link (the head of
//! its wire FIFO) and one per busy port, no allocation per packet. Events
//! run in windows of the shortest link delay, node by node (`window.rs`,
//! `Network::run_window`). At a switch whose buffer cannot pause, resume
//! or drop anything in the window (`Mmu::calm`), a port's transmission
//! ends are no events: each runs when the port is next touched
//! (`Network::catch_up`).

use crate::arena::{Arena, Hdr};
use crate::calendar::Calendar;
use crate::config::{EcnSetting, FabricConfig};
use crate::counters::{Counters, DropReason};
use crate::flows::{Flow, FlowResult};
use crate::mmu::{headroom_for, Mmu, Refusal};
use crate::port::{End, Frame, Port, TxEnd};
use crate::routing::{Adjacency, Routes};
use crate::topology::{NodeKind, Topology};
use crate::window::{precedes, ByNode, Globals, NodeQueue, Tie};
use engine::rng::stream_seed;
use engine::stats::TimeSeries;
use engine::time::serialization;
use engine::{Rng, StreamKind, Time};
use transport::{
    CompletionSide, Event, Nic, NicConfig, QpConfig, Reliability, SendOptions, Transmit,
    WorkRequest,
};

/// An event at one node (see `window.rs` for the order of events).
#[derive(Clone, Copy, Debug)]
enum Ev {
    /// The head of the port's wire FIFO reaches the partner.
    Arrive(u32),
    /// The port finished serialising its current frame.
    TxDone(u32),
    /// A host's NIC asked to be polled again (rate limiter).
    NicWake(u32),
    Timer(u32, u32),
}

impl Tie for Ev {
    /// Distinct for distinct events at one node (a timer's host, like a
    /// wake-up's, is the node itself), as `mix64` is a bijection; scrambled
    /// by the time, so no port or QP wins every tie.
    #[inline]
    fn tie(&self, at: Time) -> u64 {
        let code = match *self {
            Ev::Arrive(p) => p as u64,
            Ev::TxDone(p) => 1 << 32 | p as u64,
            Ev::NicWake(_) => 2 << 32,
            Ev::Timer(_, qp) => 3 << 32 | qp as u64,
        };
        mix64(code ^ at.wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }
}

/// The node an event acts on.
#[inline(always)]
fn node_of(port_node: &[u32], host_node: &[u32], ev: Ev) -> u32 {
    match ev {
        Ev::TxDone(p) => port_node[p as usize],
        Ev::Arrive(p) => port_node[p as usize ^ 1],
        Ev::NicWake(h) | Ev::Timer(h, _) => host_node[h as usize],
    }
}

/// Events that touch more than one node (a flow's start creates QPs at
/// both ends; a fault acts on both ends of a link; a sample reads the
/// whole fabric): each runs alone, between two windows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Global {
    FlowStart(u32),
    Fault(u32),
    Sample,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FaultAction {
    Down,
    Up,
    /// Run the link at this rate from now on (both directions).
    Rate(u64),
    /// Random loss probability of the chosen direction(s).
    Loss(f64),
    /// ECN marking of the chosen direction(s)' egress port from now on.
    Ecn(EcnSetting),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fault {
    pub at: Time,
    /// Index of the link in the topology.
    pub link: u32,
    /// None: both directions; Some(true): a -> b; Some(false): b -> a.
    pub a_to_b: Option<bool>,
    pub action: FaultAction,
}

struct Host {
    node: u32,
    port: u32,
    nic: Nic,
    /// Pending NicWake time (u64::MAX when none).
    wake_at: Time,
    /// Flow id of each QP, by QP number.
    qp_flow: Vec<u32>,
}

struct Switch {
    /// Global ids of this switch's ports, by local index.
    ports: Vec<u32>,
    mmu: Mmu,
    /// The most bytes one of its links, and all of them, can bring in one
    /// window (for [`Mmu::calm`]).
    window_port_bytes: u64,
    window_bytes: u64,
}

enum NodeRole {
    Host(u32),
    Switch(u32),
}

/// Simulator memory per packet in flight and per flow, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Memory {
    pub packet_bytes: usize,
    /// Peak number of packets alive at once.
    pub peak_packets: usize,
    pub flow_bytes: usize,
}

/// Why `run_until` returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunState {
    /// Every flow finished.
    Done,
    /// Simulated time reached the limit.
    TimeLimit,
    /// The event budget of this call ran out; call again.
    Budget,
    /// No events are left but flows are unfinished (e.g. no route).
    Stuck,
}

pub struct Network {
    cfg: FabricConfig,
    topo: Topology,
    q: Calendar<Ev>,
    ports: Vec<Port>,
    roles: Vec<NodeRole>,
    hosts: Vec<Host>,
    switches: Vec<Switch>,
    /// Each switch's ECMP hash seed, by switch index: side by side, a few
    /// lines for the whole fabric that stay in cache, where a field of the
    /// switch cost a cache line per hop.
    ecmp_seeds: Vec<u64>,
    routes: Routes,
    arena: Arena,
    flows: Vec<FlowResult>,
    flows_done: usize,
    faults: Vec<Fault>,
    /// Payload bytes of each flow that reached the data's destination
    /// (duplicates included), counted from the start of sampling; empty
    /// (and not counted) unless flows are sampled, which spares each
    /// delivery two loads.
    flow_rx_bytes: Vec<u64>,
    sampling: Option<Sampling>,
    /// Reliability schemes flows may use instead of their NICs' own
    /// (`Flow::reliability` - 1 indexes this).
    reliabilities: Vec<Reliability>,
    pub counters: Counters,
    /// The latest time handled (see [`Network::now`]).
    now: Time,
    /// Events that act on more than one node.
    globals: Globals<Global>,
    /// The shortest link delay (at least 1 ps): what one node does at time
    /// t reaches another no earlier than t plus this.
    lookahead: Time,
    /// The window being run: its events by node, its end (exclusive; 0
    /// between windows), the node running and that node's events
    /// scheduled during the window.
    window: ByNode<Ev>,
    window_end: Time,
    window_node: u32,
    local: NodeQueue<Ev>,
    /// Whether a calm switch may defer its ports' transmission ends (see
    /// [`Network::set_deferred_ends`]).
    defer_ends: bool,
    /// The running node is a switch whose MMU is calm this window: its
    /// ports' transmission ends are deferred (`TxEnd::Deferred`), not
    /// events.
    calm: bool,
    /// Deferred ends run so far, and the latest one's time.
    deferred_ends: u64,
    deferred_latest: Time,
    /// The node of each port and of each host, for grouping events.
    port_node: Vec<u32>,
    host_node: Vec<u32>,
    /// When the last flow finished.
    last_finish: Time,
}

/// What to sample, and how often.
#[derive(Clone, Debug, Default)]
pub struct SampleSpec {
    pub interval: Time,
    /// Egress ports whose queue length and utilisation to record.
    pub ports: Vec<u32>,
    /// Flows whose throughput and sending rate to record.
    pub flows: Vec<u32>,
    /// Egress ports whose ECN marking ratio to record.
    pub ecn_ports: Vec<u32>,
}

struct Sampling {
    spec: SampleSpec,
    last_tx: Vec<u64>,
    last_rx: Vec<u64>,
    /// (marked, eligible) of each ECN port at the previous sample.
    last_ecn: Vec<(u64, u64)>,
    series: Vec<TimeSeries>,
}

impl Network {
    pub fn new(topo: Topology, cfg: FabricConfig) -> Result<Network, String> {
        topo.validate()?;
        let nic = &cfg.nic;
        let frame = nic.mtu as u64 + nic.header_bytes as u64;
        if frame.max(nic.ctrl_bytes as u64) > Hdr::MAX_WIRE as u64 {
            return Err(format!(
                "frames of {frame} bytes (MTU {} + {} header bytes): the fabric carries at most {}",
                nic.mtu,
                nic.header_bytes,
                Hdr::MAX_WIRE
            ));
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
                ports.push(Port::new(
                    node,
                    end_of(end),
                    end_of(far),
                    l.rate_bps,
                    l.delay,
                    ecn,
                    Rng::new(cfg.seed, StreamKind::LinkLoss, id as u64),
                    Rng::new(cfg.seed, StreamKind::Ecn, id as u64),
                ));
            }
        }
        for (node, ports) in node_ports.iter().enumerate() {
            if matches!(roles[node], NodeRole::Switch(_)) && ports.len() > Hdr::MAX_PORTS {
                return Err(format!(
                    "switch {} has {} ports: at most {} are supported",
                    topo.nodes[node].name,
                    ports.len(),
                    Hdr::MAX_PORTS
                ));
            }
        }
        let max_frame = (cfg.nic.mtu + cfg.nic.header_bytes) as u64;
        let mut hosts = Vec::new();
        let mut switches = Vec::new();
        let mut ecmp_seeds = Vec::new();
        for (node, role) in roles.iter().enumerate() {
            match role {
                NodeRole::Host(h) => {
                    let nic = Nic::new(NicConfig {
                        host: *h,
                        line_rate_bps: ports[node_ports[node][0] as usize].rate_bps(),
                        ..cfg.nic.clone()
                    });
                    hosts.push(Host {
                        node: node as u32,
                        port: node_ports[node][0],
                        nic,
                        wake_at: Time::MAX,
                        qp_flow: Vec::new(),
                    });
                }
                NodeRole::Switch(s) => {
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
                    ecmp_seeds.push(stream_seed(cfg.seed, StreamKind::Ecmp, *s as u64));
                }
            }
        }
        let mut net = Network {
            cfg,
            topo,
            q: Calendar::new(0),
            ports,
            roles,
            hosts,
            switches,
            ecmp_seeds,
            routes: Routes::default(),
            arena: Arena::default(),
            flows: Vec::new(),
            flows_done: 0,
            faults: Vec::new(),
            flow_rx_bytes: Vec::new(),
            sampling: None,
            reliabilities: Vec::new(),
            counters: Counters::default(),
            now: 0,
            globals: Globals::default(),
            lookahead: 0,
            window: ByNode::new(0),
            window_end: 0,
            window_node: 0,
            local: NodeQueue::default(),
            defer_ends: true,
            calm: false,
            deferred_ends: 0,
            deferred_latest: 0,
            port_node: Vec::new(),
            host_node: Vec::new(),
            last_finish: 0,
        };
        net.port_node = net.ports.iter().map(|p| p.node).collect();
        net.host_node = net.hosts.iter().map(|h| h.node).collect();
        net.lookahead = net.ports.iter().map(|p| p.delay).min().unwrap_or(0).max(1);
        net.q.reshape(Calendar::<Ev>::shift_for(net.lookahead));
        net.window = ByNode::new(net.roles.len());
        net.rebuild_routes();
        net.window_bytes_changed();
        Ok(net)
    }

    /// What a link can bring into a switch in one window: its rate over the
    /// window, plus the frame whose start came before it. Recomputed when
    /// the window or a rate changes, never lowered: frames sent at a
    /// higher rate may still be on the wire.
    fn window_bytes_changed(&mut self) {
        let max_frame = (self.cfg.nic.mtu + self.cfg.nic.header_bytes) as u64;
        for sw in &mut self.switches {
            let bytes = sw.ports.iter().map(|&p| {
                let rate = self.ports[p as usize ^ 1].rate_bps() as u128;
                (rate * self.lookahead as u128).div_ceil(8 * engine::time::SEC as u128) as u64
                    + max_frame
            });
            sw.window_port_bytes = sw.window_port_bytes.max(bytes.clone().max().unwrap_or(0));
            sw.window_bytes = sw.window_bytes.max(bytes.sum());
        }
    }

    fn rebuild_routes(&mut self) {
        let mut adj: Vec<Vec<(u32, u32, bool)>> = vec![Vec::new(); self.roles.len()];
        for (id, p) in self.ports.iter().enumerate() {
            let peer = self.ports[id ^ 1].node;
            adj[p.node as usize].push((id as u32, peer, p.up));
        }
        let switch_index: Vec<Option<u32>> = self
            .roles
            .iter()
            .map(|r| match r {
                NodeRole::Switch(s) => Some(*s),
                NodeRole::Host(_) => None,
            })
            .collect();
        let host_nodes: Vec<u32> = self.hosts.iter().map(|h| h.node).collect();
        self.routes = Routes::build(&Adjacency {
            ports: &adj,
            switch_index: &switch_index,
            host_nodes: &host_nodes,
        });
    }

    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    pub fn host_count(&self) -> u32 {
        self.hosts.len() as u32
    }

    /// Rate of the host's link.
    pub fn host_rate_bps(&self, host: u32) -> u64 {
        self.ports[self.hosts[host as usize].port as usize].rate_bps()
    }

    /// Runs windows of at most `ps` picoseconds (at least 1) instead of the
    /// shortest link delay. The results do not change, only the speed:
    /// this is how that claim is checked (at 1 ps, each window holds the
    /// events of one time value, which is the global time order).
    pub fn set_window(&mut self, ps: Time) {
        self.lookahead = self.lookahead.min(ps.max(1));
        self.q.reshape(Calendar::<Ev>::shift_for(self.lookahead));
        self.window_bytes_changed();
    }

    /// Lets calm switches defer their ports' transmission ends (the
    /// default), or makes every end an event, as a reference: the results
    /// are the same either way.
    pub fn set_deferred_ends(&mut self, on: bool) {
        self.defer_ends = on;
    }

    /// Transmission ends run deferred so far (see `Mmu::calm`), each
    /// counted in `counters.events` as the event it replaces.
    pub fn deferred_ends(&self) -> u64 {
        self.deferred_ends
    }

    /// How far the run has got: the latest event time handled, or, once
    /// every flow is done, when the last one finished.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Adds a flow; it starts at `flow.start`. Returns its id.
    /// Registers a reliability scheme flows can choose instead of their
    /// NICs' own; returns the value for `Flow::reliability`.
    /// The reliability schemes flows chose instead of their NICs' own.
    pub fn flow_reliabilities(&self) -> &[Reliability] {
        &self.reliabilities
    }

    pub fn add_reliability(&mut self, r: Reliability) -> Result<u8, String> {
        r.validate()?;
        if let Some(i) = self.reliabilities.iter().position(|x| *x == r) {
            return Ok(i as u8 + 1);
        }
        if self.reliabilities.len() >= u8::MAX as usize {
            return Err("too many reliability schemes".into());
        }
        self.reliabilities.push(r);
        Ok(self.reliabilities.len() as u8)
    }

    pub fn add_flow(&mut self, flow: Flow) -> Result<u32, String> {
        let h = self.hosts.len() as u32;
        if flow.src >= h || flow.dst >= h {
            return Err(format!(
                "flow from host {} to host {}: there are only {h} hosts",
                flow.src, flow.dst
            ));
        }
        if flow.src == flow.dst {
            return Err(format!("flow from host {} to itself", flow.src));
        }
        if flow.messages == 0 || flow.messages as u64 > flow.bytes {
            return Err(format!(
                "flow from host {} to host {}: {} messages for {} bytes (need 1..=bytes)",
                flow.src, flow.dst, flow.messages, flow.bytes
            ));
        }
        if flow.reliability as usize > self.reliabilities.len() {
            return Err(format!(
                "flow from host {} to host {}: no reliability scheme {}",
                flow.src, flow.dst, flow.reliability
            ));
        }
        let id = self.flows.len() as u32;
        if !self.flow_rx_bytes.is_empty() {
            self.flow_rx_bytes.push(0);
        }
        self.flows.push(FlowResult {
            flow,
            finish: None,
            ideal: self.ideal_fct(flow.src, flow.dst, flow.bytes),
            requester_qp: u32::MAX,
            responder_qp: u32::MAX,
        });
        self.globals
            .push(flow.start.max(self.now), Global::FlowStart(id));
        Ok(id)
    }

    pub fn add_fault(&mut self, fault: Fault) -> Result<(), String> {
        if fault.link as usize >= self.topo.links.len() {
            return Err(format!(
                "fault on link {}: there are only {} links",
                fault.link,
                self.topo.links.len()
            ));
        }
        self.faults.push(fault);
        let i = self.faults.len() as u32 - 1;
        self.globals.push(fault.at.max(self.now), Global::Fault(i));
        Ok(())
    }

    /// The link index joining two named nodes.
    pub fn find_link(&self, a: &str, b: &str) -> Option<(u32, bool)> {
        let na = self.topo.node_by_name(a)?;
        let nb = self.topo.node_by_name(b)?;
        self.topo.links.iter().enumerate().find_map(|(i, l)| {
            if l.a == na && l.b == nb {
                Some((i as u32, true))
            } else if l.a == nb && l.b == na {
                Some((i as u32, false))
            } else {
                None
            }
        })
    }

    pub fn flows(&self) -> &[FlowResult] {
        &self.flows
    }

    pub fn flows_done(&self) -> usize {
        self.flows_done
    }

    pub fn ports(&self) -> &[Port] {
        &self.ports
    }

    /// True if the port belongs to a switch (false: a host NIC port).
    pub fn is_switch_port(&self, port: u32) -> bool {
        matches!(self.ports[port as usize].owner, End::Switch(..))
    }

    pub fn nic(&self, host: u32) -> &Nic {
        &self.hosts[host as usize].nic
    }

    /// What the simulator holds per packet in flight and per flow.
    pub fn memory(&self) -> Memory {
        use std::mem::size_of;
        Memory {
            // The packet in the arena, its header in a queue or on a wire,
            // and its free-list entry.
            packet_bytes: Arena::SLOT_BYTES
                + size_of::<(Time, Frame)>().max(size_of::<Hdr>())
                + size_of::<u32>(),
            peak_packets: self.arena.capacity(),
            // Its record, received-bytes counter, the QP-to-flow entries at
            // both ends, and the requester and responder QPs (as large as
            // this run's QPs are on average, boxes included).
            flow_bytes: size_of::<FlowResult>()
                + size_of::<u64>()
                + 2 * size_of::<u32>()
                + 2 * self.mean_qp_bytes(),
        }
    }

    /// The mean fixed state of this run's QPs (a plain go-back-N QP's
    /// before any exists).
    fn mean_qp_bytes(&self) -> usize {
        let qps: usize = self.hosts.iter().map(|h| h.nic.num_qps()).sum();
        let bytes: usize = self.hosts.iter().map(|h| h.nic.qp_bytes()).sum();
        if qps == 0 {
            Nic::QP_BYTES
        } else {
            bytes.div_ceil(qps)
        }
    }

    /// The path properties of `src` -> `dst` along the first equal-cost
    /// path: (one-way propagation delay, one MTU serialised at every hop,
    /// bottleneck rate).
    fn path(&self, src: u32, dst: u32) -> (Time, Time, u64) {
        let mtu = self.cfg.nic.mtu as u64;
        let (mut delay, mut per_hop, mut bottleneck) = (0, 0, u64::MAX);
        let mut port = self.hosts[src as usize].port;
        for _ in 0..self.roles.len() {
            let p = &self.ports[port as usize];
            delay += p.delay;
            per_hop += serialization(mtu, p.rate_bps());
            bottleneck = bottleneck.min(p.rate_bps());
            let next = self.ports[port as usize ^ 1].node;
            match self.roles[next as usize] {
                NodeRole::Host(_) => break,
                NodeRole::Switch(s) => match self.routes.next_hops(s, dst).first() {
                    Some(&p) => port = p,
                    None => break,
                },
            }
        }
        (delay, per_hop, bottleneck)
    }

    /// Base RTT between two hosts as HPCC ns-3 defines it: twice the path
    /// delay plus one MTU serialised per hop.
    pub fn base_rtt(&self, src: u32, dst: u32) -> Time {
        let (delay, per_hop, _) = self.path(src, dst);
        2 * delay + per_hop
    }

    /// The ideal FCT of `bytes` from `src` to `dst` (see `FlowResult::ideal`).
    pub fn ideal_fct(&self, src: u32, dst: u32, bytes: u64) -> Time {
        let nic = &self.cfg.nic;
        let (delay, per_hop, bottleneck) = self.path(src, dst);
        let packets = bytes.div_ceil(nic.mtu as u64).max(1);
        let wire = bytes + packets * nic.header_bytes as u64;
        2 * delay + per_hop + serialization(wire, bottleneck)
    }

    /// Runs until every flow is done, simulated time passes `until`, or
    /// `budget` events have been processed.
    pub fn run_until(&mut self, until: Time, budget: u64) -> RunState {
        let mut n = 0;
        loop {
            if self.flows_done == self.flows.len() && !self.flows.is_empty() {
                self.now = self.last_finish;
                return RunState::Done;
            }
            if n >= budget {
                return RunState::Budget;
            }
            let next = self.q.peek_time();
            let global = self.globals.peek_time();
            if let Some(tg) = global.filter(|&tg| next.is_none_or(|t| tg <= t)) {
                if tg > until {
                    return RunState::TimeLimit;
                }
                let (_, g) = self.globals.pop().expect("peeked");
                self.now = self.now.max(tg);
                n += 1;
                self.counters.events += 1;
                match g {
                    Global::FlowStart(f) => self.start_flow(tg, f),
                    Global::Fault(i) => self.apply_fault(tg, i),
                    Global::Sample => self.sample(tg),
                }
                continue;
            }
            let Some(t0) = next else {
                return if self.flows_done == self.flows.len() {
                    RunState::Done
                } else {
                    RunState::Stuck
                };
            };
            if t0 > until {
                return RunState::TimeLimit;
            }
            let end = t0
                .saturating_add(self.lookahead)
                .min(global.unwrap_or(Time::MAX))
                .min(until.saturating_add(1));
            n += self.run_window(end);
        }
    }

    /// Runs every event due before `end` (see `window.rs`), node by node;
    /// returns how many.
    fn run_window(&mut self, end: Time) -> u64 {
        let mut w = std::mem::replace(&mut self.window, ByNode::new(0));
        let deferred_before = self.deferred_ends;
        w.clear();
        let (port_node, host_node) = (&self.port_node, &self.host_node);
        self.q.drain_before(end, |t, ev| {
            w.push(node_of(port_node, host_node, ev), t, ev)
        });
        w.sort();
        self.window_end = end;
        let mut n = w.len() as u64;
        let mut latest = self.now;
        let (events, groups) = (w.events(), w.groups());
        let mut i = 0;
        for (g, &(node, group_end)) in groups.iter().enumerate() {
            let group_end = group_end as usize;
            // A node's first events read its ports, its wire and queue
            // heads and, at a host, the arriving packets, all last touched
            // a window ago and out of L2 since. A pipeline over the groups
            // asks for each in turn, a group apart, each stage reading what
            // the one before brought in.
            let span = |k: usize| {
                let &(_, end) = groups.get(k)?;
                let start = if k == 0 { 0 } else { groups[k - 1].1 as usize };
                Some(&events[start..end as usize])
            };
            if let Some(evs) = span(g + 3) {
                self.prefetch_ports(evs);
            }
            if let Some(evs) = span(g + 2) {
                self.prefetch_slots(evs);
            }
            if let Some(evs) = span(g + 1) {
                self.prefetch_packets(evs, end);
            }
            self.window_node = node;
            self.calm = match self.roles[node as usize] {
                NodeRole::Switch(s) if self.defer_ends => {
                    let sw = &mut self.switches[s as usize];
                    sw.mmu.calm(sw.window_port_bytes, sw.window_bytes)
                }
                _ => false,
            };
            while i < group_end || self.local.peek().is_some() {
                let (now, ev) = match self.local.peek() {
                    Some(l) if i == group_end || precedes(l, &events[i]) => {
                        n += 1;
                        self.local.pop()
                    }
                    _ => {
                        i += 1;
                        events[i - 1]
                    }
                };
                latest = latest.max(now);
                self.counters.events += 1;
                self.handle(now, ev);
            }
            if self.calm {
                self.finish_deferred(node);
            }
        }
        self.window_end = 0;
        self.now = latest.max(self.deferred_latest);
        self.window = w;
        n + (self.deferred_ends - deferred_before)
    }

    /// Runs the calm switch's deferred transmission ends left at the end
    /// of its share of the window (all due in it).
    #[inline(never)]
    fn finish_deferred(&mut self, node: u32) {
        let NodeRole::Switch(s) = self.roles[node as usize] else {
            unreachable!("only a switch is calm")
        };
        // Anything at the window's end comes after every end due in it.
        let end = (self.window_end, Ev::NicWake(0));
        for k in 0..self.switches[s as usize].ports.len() {
            let p = self.switches[s as usize].ports[k];
            self.catch_up(p, end);
        }
        self.calm = false;
    }

    /// Runs port `p`'s deferred transmission ends due before event `ev`
    /// (the one running): a calm switch's ports depend on one another only
    /// through the MMU's sums (`Mmu::calm`), so each may run late, as long
    /// as it runs before anything reads or changes its port.
    #[inline(always)]
    fn catch_up(&mut self, p: u32, ev: (Time, Ev)) {
        while self.ports[p as usize].tx_end == TxEnd::Deferred {
            let at = self.ports[p as usize].busy_until;
            if !precedes(&(at, Ev::TxDone(p)), &ev) {
                break;
            }
            self.ports[p as usize].tx_end = TxEnd::None;
            self.counters.events += 1;
            self.deferred_ends += 1;
            self.deferred_latest = self.deferred_latest.max(at);
            self.kick(at, p);
        }
    }

    /// Asks for port `p`'s transmission end at `at` (its `busy_until`).
    #[inline(always)]
    fn schedule_end(&mut self, p: u32, at: Time) {
        if self.calm && at < self.window_end {
            self.ports[p as usize].tx_end = TxEnd::Deferred;
        } else {
            self.ports[p as usize].tx_end = TxEnd::Scheduled;
            self.schedule(at, Ev::TxDone(p));
        }
    }

    /// How many of a node's first events the prefetch stages look at.
    const PREFETCH_EVENTS: usize = 16;
    /// How many of the frames on a host's wire `prefetch_packets` asks
    /// for: an A2A128 host gets 21-22 in most windows (data and ACKs), up
    /// to 39; with 16, the arrivals past the 16th found their packets out
    /// of cache (13% of `run_until`'s samples, 3% with 32).
    const PREFETCH_FRAMES: usize = 32;

    fn prefetch_ports(&self, events: &[(Time, Ev)]) {
        use engine::prefetch::prefetch;
        for &(_, ev) in events.iter().take(Self::PREFETCH_EVENTS) {
            match ev {
                Ev::Arrive(p) => {
                    prefetch(&self.ports[p as usize]);
                    prefetch(&self.ports[p as usize ^ 1]);
                }
                Ev::TxDone(p) => prefetch(&self.ports[p as usize]),
                _ => {}
            }
        }
    }

    fn prefetch_slots(&self, events: &[(Time, Ev)]) {
        use engine::prefetch::prefetch_ptr;
        for &(_, ev) in events.iter().take(Self::PREFETCH_EVENTS) {
            match ev {
                Ev::Arrive(p) => {
                    if let Some(w) = self.ports[p as usize].wire.front() {
                        prefetch_ptr(w);
                    }
                }
                Ev::TxDone(p) => {
                    if let Some(h) = self.ports[p as usize].peek_eligible() {
                        prefetch_ptr(h);
                    }
                }
                _ => {}
            }
        }
    }

    /// The packets arriving at a host in the window (its wire's frames due
    /// before `end`) and the first one after it.
    fn prefetch_packets(&self, events: &[(Time, Ev)], end: Time) {
        for &(_, ev) in events.iter().take(Self::PREFETCH_EVENTS) {
            if let Ev::Arrive(p) = ev {
                let port = &self.ports[p as usize];
                if let End::Host(_) = port.peer {
                    // Through the first frame due after the window: the
                    // window's last arrival reads that one's QP index, and
                    // at a host that gets a few frames a window (WS128),
                    // that read was half of the stall on them.
                    let mut more = true;
                    let frames = port.wire.iter().take_while(|(t, _)| {
                        let go = more;
                        more = *t < end;
                        go
                    });
                    for (_, frame) in frames.take(Self::PREFETCH_FRAMES) {
                        if let Frame::Packet(hdr) = frame {
                            self.arena.prefetch(hdr.idx);
                        }
                    }
                }
            }
        }
    }

    fn handle(&mut self, now: Time, ev: Ev) {
        match ev {
            Ev::TxDone(p) => {
                let port = &mut self.ports[p as usize];
                // Stale: the port started another frame at the instant
                // this one was due (and that frame has its own end, if it
                // needs one).
                if now >= port.busy_until {
                    port.tx_end = TxEnd::None;
                    self.kick(now, p);
                }
            }
            Ev::Arrive(p) => self.arrive(now, p),
            Ev::NicWake(h) => {
                let host = &mut self.hosts[h as usize];
                if host.wake_at == now {
                    host.wake_at = Time::MAX;
                    let port = host.port;
                    self.kick(now, port);
                }
            }
            Ev::Timer(h, qp) => {
                self.hosts[h as usize].nic.on_timer(now, qp);
                self.after_nic_input(now, h);
            }
        }
    }

    /// Schedules an event of the running node (any node between windows):
    /// into the node's own queue if it is due in the window, else into the
    /// calendar.
    #[inline(always)]
    fn schedule(&mut self, at: Time, ev: Ev) {
        if at < self.window_end {
            debug_assert_eq!(
                node_of(&self.port_node, &self.host_node, ev),
                self.window_node,
                "{ev:?} at {at}"
            );
            self.local.push(at, ev);
        } else {
            self.q.schedule(at, ev);
        }
    }

    /// Records time series from now on (see [`SampleSpec`]); series names
    /// are `queue_bytes:<port>`, `util:<port>`, `throughput_gbps:flow<i>`,
    /// `rate_gbps:flow<i>` and `ecn_mark_ratio:<port>`, ports named
    /// `<node>-><peer>`. The ECN series come last, so a spec without ECN
    /// ports records exactly what it did before they existed.
    pub fn set_sampling(&mut self, spec: SampleSpec) -> Result<(), String> {
        if spec.interval == 0 {
            return Err("the sampling interval must be positive".into());
        }
        if let Some(p) = spec
            .ports
            .iter()
            .chain(&spec.ecn_ports)
            .find(|&&p| p as usize >= self.ports.len())
        {
            return Err(format!("no port {p}"));
        }
        if let Some(f) = spec.flows.iter().find(|&&f| f as usize >= self.flows.len()) {
            return Err(format!("no flow {f} (there are {})", self.flows.len()));
        }
        let mut series = Vec::new();
        for &p in &spec.ports {
            let name = self.port_name(p);
            series.push(TimeSeries::new(format!("queue_bytes:{name}")));
            series.push(TimeSeries::new(format!("util:{name}")));
        }
        for &f in &spec.flows {
            series.push(TimeSeries::new(format!("throughput_gbps:flow{f}")));
            series.push(TimeSeries::new(format!("rate_gbps:flow{f}")));
        }
        for &p in &spec.ecn_ports {
            let name = self.port_name(p);
            series.push(TimeSeries::new(format!("ecn_mark_ratio:{name}")));
        }
        if !spec.flows.is_empty() {
            self.flow_rx_bytes = vec![0; self.flows.len()];
        }
        self.sampling = Some(Sampling {
            last_tx: vec![0; spec.ports.len()],
            last_rx: vec![0; spec.flows.len()],
            last_ecn: vec![(0, 0); spec.ecn_ports.len()],
            series,
            spec,
        });
        self.globals.push(self.now, Global::Sample);
        Ok(())
    }

    /// `<node>-><peer>` for a port.
    pub fn port_name(&self, p: u32) -> String {
        let node = self.ports[p as usize].node as usize;
        let peer = self.ports[p as usize ^ 1].node as usize;
        format!(
            "{}->{}",
            self.topo.nodes[node].name, self.topo.nodes[peer].name
        )
    }

    /// The ports whose ECN marking is sampled (see [`SampleSpec::ecn_ports`]).
    pub fn sampled_ecn_ports(&self) -> &[u32] {
        self.sampling.as_ref().map_or(&[], |s| &s.spec.ecn_ports)
    }

    pub fn series(&self) -> &[TimeSeries] {
        self.sampling.as_ref().map_or(&[], |s| &s.series)
    }

    // Once per interval: kept out of the event loop, whose code layout it
    // would otherwise change (0.8% more instructions per hop when the ECN
    // series were added).
    #[inline(never)]
    fn sample(&mut self, now: Time) {
        let Some(s) = self.sampling.as_mut() else {
            return;
        };
        let secs = s.spec.interval as f64 / engine::time::SEC as f64;
        let mut k = 0;
        for (i, &p) in s.spec.ports.iter().enumerate() {
            let port = &self.ports[p as usize];
            let tx = port.tx_bytes;
            let util = (tx - s.last_tx[i]) as f64 * 8.0 / secs / port.rate_bps() as f64;
            s.last_tx[i] = tx;
            s.series[k].push(now, port.queued_bytes() as f64);
            s.series[k + 1].push(now, util);
            k += 2;
        }
        for (i, &f) in s.spec.flows.iter().enumerate() {
            let rx = self.flow_rx_bytes[f as usize];
            let thr = (rx - s.last_rx[i]) as f64 * 8.0 / secs / 1e9;
            s.last_rx[i] = rx;
            let r = &self.flows[f as usize];
            let rate = if r.requester_qp == u32::MAX || r.finish.is_some() {
                0.0
            } else {
                let h = &self.hosts[r.requester() as usize];
                h.nic.qp_rate_bps_at(r.requester_qp, now) as f64 / 1e9
            };
            s.series[k].push(now, thr);
            s.series[k + 1].push(now, rate);
            k += 2;
        }
        for (i, &p) in s.spec.ecn_ports.iter().enumerate() {
            let port = &self.ports[p as usize];
            let (marked, eligible) = (port.ecn_marked, port.ecn_eligible);
            let (m0, e0) = s.last_ecn[i];
            s.last_ecn[i] = (marked, eligible);
            // An interval in which no data packet left has no ratio.
            if eligible > e0 {
                s.series[k].push(now, (marked - m0) as f64 / (eligible - e0) as f64);
            }
            k += 1;
        }
        let next = now + s.spec.interval;
        self.globals.push(next, Global::Sample);
    }

    fn start_flow(&mut self, now: Time, id: u32) {
        let r = self.flows[id as usize];
        let (req, resp) = (r.requester(), r.responder());
        let sport =
            49152 + (stream_seed(self.cfg.seed, StreamKind::Host, id as u64) % 16384) as u16;
        let rel = match r.flow.reliability {
            0 => None,
            i => Some(self.reliabilities[i as usize - 1]),
        };
        let resp_qp = self.hosts[resp as usize].qp_flow.len() as u32;
        // A QP on `host` toward `peer_qp` at `peer`, for this flow.
        let mut create = |host: u32, peer: u32, peer_qp: u32| {
            let h = &mut self.hosts[host as usize];
            h.qp_flow.push(id);
            let cfg = QpConfig {
                peer_host: peer,
                peer_qp,
                sport,
            };
            match rel {
                None => h.nic.create_qp(cfg),
                Some(rel) => {
                    let cc = h.nic.config().cc;
                    h.nic.create_qp_with(cfg, cc, rel)
                }
            }
        };
        let req_qp = create(req, resp, resp_qp);
        let got = create(resp, req, req_qp);
        debug_assert_eq!(got, resp_qp);
        self.flows[id as usize].requester_qp = req_qp;
        self.flows[id as usize].responder_qp = resp_qp;
        // Message i's work request is `id | i << 32`: completions name the
        // flow and tell the last message apart.
        for i in 0..r.flow.messages {
            let len = r.flow.message_len(i);
            if r.flow.verb == transport::Verb::Send {
                self.hosts[resp as usize]
                    .nic
                    .post_recv(resp_qp, id as u64, len);
            }
            let wr = WorkRequest {
                wr_id: id as u64 | (i as u64) << 32,
                verb: r.flow.verb,
                len,
                ..WorkRequest::default()
            };
            let opts = SendOptions {
                sync: r.flow.is_sync(i),
            };
            self.hosts[req as usize]
                .nic
                .post_send_with(now, req_qp, wr, opts);
        }
        self.after_nic_input(now, req);
    }

    /// Drains what the NIC asked for (timers, completions) and lets it send.
    fn after_nic_input(&mut self, now: Time, h: u32) {
        self.drain_nic_events(now, h);
        let port = self.hosts[h as usize].port;
        self.kick(now, port);
    }

    fn drain_nic_events(&mut self, now: Time, h: u32) {
        while let Some(ev) = self.hosts[h as usize].nic.poll_event() {
            match ev {
                Event::ArmTimer { qp, at } => self.schedule(at.max(now), Ev::Timer(h, qp)),
                Event::Completion(c) => {
                    if c.side == CompletionSide::Requester {
                        let f = &mut self.flows[c.wr_id as u32 as usize];
                        let last = (c.wr_id >> 32) as u16 + 1 == f.flow.messages;
                        if last && f.finish.is_none() {
                            f.finish = Some(now);
                            self.flows_done += 1;
                            self.last_finish = self.last_finish.max(now);
                        }
                    }
                }
            }
        }
    }

    /// Starts the next transmission on an idle port, if there is one.
    fn kick(&mut self, now: Time, p: u32) {
        let port = &mut self.ports[p as usize];
        if now < port.busy_until {
            if port.tx_end == TxEnd::None {
                let at = port.busy_until;
                self.schedule_end(p, at);
            }
            return;
        }
        if let Some((class, pause)) = port.pfc_out.pop_front() {
            self.transmit(now, p, Frame::Pfc { class, pause });
            return;
        }
        match port.owner {
            End::Switch(s, _) => {
                let Some(hdr) = port.pop_eligible() else {
                    return;
                };
                let qlen = port.queues[hdr.class()].bytes;
                self.depart(now, p, s, hdr, qlen);
            }
            End::Host(h) => {
                let paused = port.paused;
                let host = &mut self.hosts[h as usize];
                match host.nic.poll_transmit(now, paused) {
                    Transmit::Packet(pkt) => {
                        let hdr = self.arena.alloc(pkt);
                        self.counters.injected_packets += 1;
                        self.counters.injected_bytes += pkt.wire as u64;
                        self.transmit(now, p, Frame::Packet(hdr));
                        // Sending may arm the retransmission timer.
                        self.drain_nic_events(now, h);
                    }
                    Transmit::At(t) => {
                        if t < host.wake_at {
                            host.wake_at = t;
                            self.schedule(t.max(now), Ev::NicWake(h));
                        }
                    }
                    Transmit::Idle => {}
                }
            }
        }
    }

    /// A packet leaves switch `s` by its port `p`, whose queue of the
    /// packet's class holds `qlen` bytes after it: the buffer is released
    /// (and the ingress port may RESUME its upstream), the ECN marker
    /// decides, and the packet is serialised.
    #[inline(always)]
    fn depart(&mut self, now: Time, p: u32, s: u32, mut hdr: Hdr, qlen: u64) {
        let (class, wire) = (hdr.class(), hdr.wire());
        let in_local = hdr.in_port as usize;
        let sw = &mut self.switches[s as usize];
        if sw.mmu.release(in_local, class, wire as u64) {
            let in_port = sw.ports[in_local];
            self.send_pfc(now, in_port, class as u8, false);
        }
        if let Some(e) = self.ports[p as usize].ecn {
            if hdr.is_data() && !hdr.ce() && class != 0 {
                let port = &mut self.ports[p as usize];
                port.ecn_eligible += 1;
                let mark = if qlen > e.kmax {
                    true
                } else if qlen > e.kmin {
                    let prob = e.pmax * (qlen - e.kmin) as f64 / (e.kmax - e.kmin) as f64;
                    port.ecn_rng.bernoulli(prob)
                } else {
                    false
                };
                if mark {
                    hdr.set_ce();
                    port.ecn_marked += 1;
                    self.counters.ecn_marked += 1;
                }
            }
        }
        self.transmit(now, p, Frame::Packet(hdr));
    }

    /// Serialises a frame on port `p` and puts it on the wire (or loses it).
    #[inline(always)]
    fn transmit(&mut self, now: Time, p: u32, frame: Frame) {
        let port = &mut self.ports[p as usize];
        let bytes = match frame {
            Frame::Packet(hdr) => hdr.wire(),
            Frame::Pfc { .. } => self.cfg.pfc_frame_bytes,
        };
        let done = now + port.tx_time(bytes);
        port.busy_until = done;
        // A host port polls its NIC when the frame is done, if the NIC has
        // anything that could go then; if not, its next input kicks the
        // port (`after_nic_input`).
        let poll = match port.owner {
            End::Host(h) => self.hosts[h as usize].nic.may_transmit(),
            End::Switch(..) => false,
        };
        // A transmission end still pending is stale now (the port was
        // idle, so it was due at or before this instant): it will do
        // nothing, so only the one asked for here, if any, is pending. A
        // deferred one has no event to run as a no-op: count it here.
        if port.tx_end == TxEnd::Deferred {
            self.counters.events += 1;
            self.deferred_ends += 1;
        }
        port.tx_end = TxEnd::None;
        if poll || port.has_work() {
            self.schedule_end(p, done);
        }
        let port = &mut self.ports[p as usize];
        if let Frame::Packet(hdr) = frame {
            self.counters.packet_hops += 1;
            port.tx_packets += 1;
            port.tx_bytes += bytes as u64;
            let lost = if !port.up {
                Some(DropReason::LinkDown)
            } else if port.loss > 0.0 && port.loss_rng.bernoulli(port.loss) {
                Some(DropReason::LinkLoss)
            } else {
                None
            };
            if let Some(reason) = lost {
                self.counters.drop(reason, bytes);
                self.arena.free(hdr.idx);
                return;
            }
        }
        let arrival = done + port.delay;
        port.wire.push_back((arrival, frame));
        if port.wire.len() == 1 {
            // The arrival is the peer's event, due after the window (it is
            // at least a link delay away), so it goes to the calendar. Over
            // a link of no delay a frame that takes no time to send arrives
            // at this very picosecond (the window's last, windows being 1 ps
            // long then): the calendar runs it in a window of its own,
            // after this one.
            self.q.schedule(arrival, Ev::Arrive(p));
        }
    }

    fn send_pfc(&mut self, now: Time, p: u32, class: u8, pause: bool) {
        debug_assert!(!self.calm, "a calm switch sends no PAUSE or RESUME");
        let port = &mut self.ports[p as usize];
        port.pfc_out.push_back((class, pause));
        if pause {
            port.pause_sent += 1;
            self.counters.pause_frames += 1;
        } else {
            port.resume_sent += 1;
            self.counters.resume_frames += 1;
        }
        self.kick(now, p);
    }

    fn arrive(&mut self, now: Time, p: u32) {
        let port = &mut self.ports[p as usize];
        let (_, frame) = port.wire.pop_front().expect("arrival without a frame");
        let (up, peer) = (port.up, port.peer);
        if let Some(&(t, next)) = port.wire.front() {
            self.schedule(t, Ev::Arrive(p));
            // A host reads the packet and then its QP, last touched long
            // ago. The packets arriving in the window were asked for a
            // group ago (`prefetch_packets`); through the next one, ask for
            // its QP.
            if let (Frame::Packet(h1), End::Host(host)) = (next, peer) {
                if let Some(qp) = self.arena.dst_qp(h1.idx) {
                    self.hosts[host as usize].nic.prefetch_qp(qp);
                }
            }
        }
        let rx = p ^ 1;
        match frame {
            Frame::Pfc { class, pause } => {
                if self.calm {
                    self.catch_up(rx, (now, Ev::Arrive(p)));
                }
                if self.ports[rx as usize].apply_pfc(now, class, pause) {
                    self.kick(now, rx);
                }
            }
            Frame::Packet(hdr) => {
                if !up {
                    self.counters.drop(DropReason::LinkDown, hdr.wire());
                    self.arena.free(hdr.idx);
                    return;
                }
                match peer {
                    End::Host(h) => {
                        let mut pkt = self.arena.get(&hdr);
                        pkt.ce = hdr.ce();
                        self.arena.free(hdr.idx);
                        self.counters.delivered_packets += 1;
                        self.counters.delivered_bytes += pkt.wire as u64;
                        if pkt.is_data() && !self.flow_rx_bytes.is_empty() {
                            if let Some(&f) =
                                self.hosts[h as usize].qp_flow.get(pkt.dst_qp as usize)
                            {
                                self.flow_rx_bytes[f as usize] += pkt.payload as u64;
                            }
                        }
                        self.hosts[h as usize].nic.on_packet(now, &pkt);
                        self.after_nic_input(now, h);
                    }
                    End::Switch(s, in_local) => self.forward(now, s, rx, in_local, hdr),
                }
            }
        }
    }

    /// A packet entered switch `s` on port `in_port` (its `in_local`-th
    /// port): route, admit, queue.
    fn forward(&mut self, now: Time, s: u32, in_port: u32, in_local: u16, mut hdr: Hdr) {
        hdr.in_port = in_local as u8;
        let hops = self.routes.next_hops(s, hdr.dst);
        let out = match hops.len() {
            0 => {
                self.counters.drop(DropReason::NoRoute, hdr.wire());
                self.arena.free(hdr.idx);
                return;
            }
            1 => hops[0],
            n => {
                // The RoCEv2 5-tuple: addresses, UDP source port, 4791, UDP.
                let key = (hdr.flow as u64) << 32 | (hdr.dst ^ (4791 << 16 | 17)) as u64;
                let h = mix64(key ^ self.ecmp_seeds[s as usize]);
                // A fat tree's fan-out is a power of two: a mask gives the
                // same choice as the (slow, 64-bit) division.
                let i = if n.is_power_of_two() {
                    h & (n as u64 - 1)
                } else {
                    h % n as u64
                };
                hops[i as usize]
            }
        };
        let class = hdr.class();
        let ports = &self.ports;
        let queued = || ports[out as usize].queues[class].bytes;
        match self.switches[s as usize].mmu.admit(
            in_local as usize,
            class,
            hdr.wire() as u64,
            queued,
        ) {
            Err(r) => {
                let reason = match r {
                    Refusal::HeadroomOverflow => DropReason::HeadroomOverflow,
                    Refusal::BufferFull => DropReason::BufferFull,
                    Refusal::EgressThreshold => DropReason::EgressThreshold,
                };
                self.counters.drop(reason, hdr.wire());
                self.arena.free(hdr.idx);
            }
            Ok(a) => {
                if a.send_pause {
                    self.send_pfc(now, in_port, class as u8, true);
                }
                if self.calm {
                    // The packet came off the wire of `in_port`'s partner.
                    self.catch_up(out, (now, Ev::Arrive(in_port ^ 1)));
                }
                // A packet the idle port would take at once skips its queue:
                // what `kick` does after the pop, without the queue's lines
                // (in a large run, the queue's tail slot is the costliest
                // load of a hop).
                if self.ports[out as usize].takes_at_once(now, class) {
                    // Its class's queue is empty.
                    self.depart(now, out, s, hdr, 0);
                } else {
                    self.ports[out as usize].push(hdr);
                    self.kick(now, out);
                }
            }
        }
    }

    fn apply_fault(&mut self, now: Time, i: u32) {
        let f = self.faults[i as usize];
        let dirs: &[u32] = match f.a_to_b {
            None => &[0, 1],
            Some(true) => &[0],
            Some(false) => &[1],
        };
        let mut reroute = false;
        for &d in dirs {
            let p = (2 * f.link + d) as usize;
            match f.action {
                FaultAction::Down | FaultAction::Up => {
                    let up = f.action == FaultAction::Up;
                    reroute |= self.ports[p].up != up;
                    self.ports[p].up = up;
                }
                FaultAction::Rate(bps) => self.ports[p].set_rate(bps),
                FaultAction::Ecn(e) => self.ports[p].ecn = Some(e),
                FaultAction::Loss(l) => self.ports[p].loss = l,
            }
        }
        if reroute && self.cfg.reroute_on_failure {
            self.rebuild_routes();
        }
        if let FaultAction::Rate(_) = f.action {
            self.window_bytes_changed();
        }
        if matches!(f.action, FaultAction::Up) {
            for &d in dirs {
                self.kick(now, 2 * f.link + d);
            }
        }
    }

    /// Packets held in queues and on wires (for conservation checks).
    pub fn in_flight(&self) -> (u64, u64) {
        let mut packets = 0;
        let mut bytes = 0;
        for port in &self.ports {
            for hdr in port.queues.iter().flat_map(|q| q.hdrs.iter()) {
                packets += 1;
                bytes += hdr.wire() as u64;
            }
            for &(_, f) in port.wire.iter() {
                if let Frame::Packet(hdr) = f {
                    packets += 1;
                    bytes += hdr.wire() as u64;
                }
            }
        }
        (packets, bytes)
    }

    /// Checks that no switch port sits idle with something it may send: a
    /// port whose frame ended before the latest event handled has started
    /// its next one if it had one (between calls of `run_until`, every
    /// event before that instant has run).
    pub fn check_work_conserving(&self) -> Result<(), String> {
        for (p, port) in self.ports.iter().enumerate() {
            let switch = matches!(port.owner, End::Switch(..));
            if switch && port.busy_until < self.now && port.has_work() {
                return Err(format!(
                    "port {} idle since {} ps with a frame to send at {} ps",
                    self.port_name(p as u32),
                    port.busy_until,
                    self.now
                ));
            }
        }
        Ok(())
    }

    /// Checks that every packet injected was delivered, dropped with a
    /// counted reason, or is still in the network.
    pub fn check_conservation(&self) -> Result<(), String> {
        let c = &self.counters;
        let (fp, fb) = self.in_flight();
        let accounted_p = c.delivered_packets + c.total_dropped_packets() + fp;
        let accounted_b = c.delivered_bytes + c.total_dropped_bytes() + fb;
        if accounted_p != c.injected_packets || accounted_b != c.injected_bytes {
            return Err(format!(
                "conservation violated: injected {} packets / {} B, delivered {} / {}, dropped {} / {}, in flight {} / {}",
                c.injected_packets, c.injected_bytes, c.delivered_packets, c.delivered_bytes,
                c.total_dropped_packets(), c.total_dropped_bytes(), fp, fb
            ));
        }
        if fp as usize != self.arena.live() {
            return Err(format!(
                "arena holds {} packets but {} are in queues or on wires",
                self.arena.live(),
                fp
            ));
        }
        Ok(())
    }
}

#[inline]
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
