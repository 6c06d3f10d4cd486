//! One simulation over several threads: the fabric's nodes split into
//! shards, each run by its own copy of the whole [`Network`] (built the
//! same way, so every copy agrees on everything a global event reads),
//! which runs only its own nodes' events (`parallel.rs` runs the copies in
//! step, window by window). Here: the partition, what cannot be split yet,
//! the frames and packets that cross shards at each barrier, and the
//! merge of the shards' parts into one network when the run ends.
//!
//! Why copies: a node's pipeline writes its own ports, switch or host and
//! reads nothing of another node's during a window (`window.rs`), so a
//! copy that runs only its nodes computes exactly what the one network
//! computes for them. What crosses nodes does so on a wire, at least a
//! lookahead later: a frame sent onto a wire whose far end is another
//! shard's (a cut port) moves, with its packet, into that shard's copy at
//! the window's end. A packet keeps its arena slot in every shard (shard k
//! of n hands out slots k, k + n, ...: `Arena::shard`), so per-packet
//! tables keyed by slot stay valid. Global events run in every copy, each
//! acting only for its own nodes: the ports and NICs of other shards' nodes
//! (ghosts here) are not kicked, and the events a global asks for at them
//! are dropped (`Network::global_in_shard`).
//!
//! The same scenario gives the same events in the same order at each node
//! for any number of shards, so every output is byte-identical to one
//! thread's (tested in the experiment crate for 1 to 4 threads).

use crate::link::frame::{Ctrl, CtrlKind, Frame};
use crate::net::arena::{Arena, Parcel};
use crate::net::calendar::Calendar;
use crate::net::event::{node_of, Ev, Global};
use crate::net::{Network, NodeRole, SetupError};
use crate::observe::counters::Counters;
use crate::observe::pcap::Capture;
use crate::observe::Sampling;
use crate::switch::queues::Discipline;
use crate::switch::{Deflection, Scheduling};
use engine::Time;

/// This copy's place in a sharded run.
pub(crate) struct Shard {
    pub id: u32,
    pub count: u32,
    /// The shard of each node.
    pub owner: Vec<u32>,
    /// This shard's ports whose wire ends at another shard's node: what
    /// they send moves at each barrier. Each holds a sentinel frame at the
    /// head of its wire here, so that sending never asks this copy for
    /// the arrival (another shard runs it).
    pub cut: Vec<u32>,
    /// Where a global event's events go before the ghosts' are dropped
    /// (kept to reuse its buckets).
    spare: Option<Calendar<Ev>>,
    /// Shard 0's: every shard's counters added up, as of the last return
    /// of `run_until`.
    pub totals: Counters,
    /// Steps run in step with the other shards (`parallel.rs`): the first
    /// part of a capture's place in the run's order (`pcap::Key`).
    pub step: u64,
    /// This step's segments: each node's (or a global event's, as node 0)
    /// change in packets alive and highest rise (`Arena::end_segment`).
    pub segments: Vec<(u32, i64, i64)>,
}

/// A frame crossing from one shard to another at a barrier: its port, its
/// arrival and, for a packet, the packet.
pub(crate) struct Moved {
    port: u32,
    at: Time,
    frame: Frame,
    parcel: Option<Parcel>,
}

/// What one shard sends another at a barrier: frames, and the receiver's
/// arena slots the sender freed.
#[derive(Default)]
pub(crate) struct Mail {
    frames: Vec<Moved>,
    freed: Vec<u32>,
}

/// The sentinel at the head of a cut port's wire in its sender's copy.
fn sentinel() -> (Time, Frame) {
    (
        Time::MAX,
        Frame::Control(Ctrl::new(CtrlKind::Pause { class: 0 })),
    )
}

/// Splits the nodes into `n` shards: each switch with hosts (a leaf) and
/// its hosts form a unit, and units go to shards in node order, each
/// shard taking about an equal share of the hosts (neighbouring leaves,
/// a pod in a fat tree, stay together); every other switch goes to the
/// shard that owns most of its neighbours, or on a tie, the one with the
/// fewest switches. A host with no leaf (joined to another host) counts
/// as its own unit.
pub(crate) fn partition(net: &Network, n: u32) -> Vec<u32> {
    let nodes = net.core.roles.len();
    let mut neighbours: Vec<Vec<u32>> = vec![Vec::new(); nodes];
    for l in &net.topo.links {
        neighbours[l.a as usize].push(l.b);
        neighbours[l.b as usize].push(l.a);
    }
    let is_host = |v: u32| matches!(net.core.roles[v as usize], NodeRole::Host(_));
    // Each host's leaf: its first switch neighbour.
    let leaf_of = |h: u32| {
        neighbours[h as usize]
            .iter()
            .copied()
            .find(|&v| !is_host(v))
    };
    // Units in node order of their leaf (or lone host), with their hosts.
    let mut unit_of = vec![u32::MAX; nodes];
    let mut units: Vec<(u32, u32)> = Vec::new();
    for v in 0..nodes as u32 {
        if !is_host(v) {
            continue;
        }
        let key = leaf_of(v).unwrap_or(v);
        if unit_of[key as usize] == u32::MAX {
            unit_of[key as usize] = units.len() as u32;
            units.push((key, 0));
        }
        let u = unit_of[key as usize];
        unit_of[v as usize] = u;
        units[u as usize].1 += 1;
    }
    units.sort_by_key(|&(key, _)| key);
    let hosts: u32 = units.iter().map(|u| u.1).sum();
    let mut owner = vec![u32::MAX; nodes];
    let mut seen = 0;
    for &(key, count) in &units {
        // The shard whose share of hosts this unit's middle falls in.
        let s = ((2 * seen + count) as u64 * n as u64 / (2 * hosts.max(1)) as u64) as u32;
        owner[key as usize] = s.min(n - 1);
        seen += count;
    }
    for v in 0..nodes {
        if is_host(v as u32) {
            owner[v] = owner[leaf_of(v as u32).unwrap_or(v as u32) as usize];
        }
    }
    // The rest (spines, cores; and any node reachable only through them)
    // by majority of their placed neighbours, in rounds.
    let mut switches = vec![0u32; n as usize];
    for v in 0..nodes {
        if owner[v] != u32::MAX && !is_host(v as u32) {
            switches[owner[v] as usize] += 1;
        }
    }
    loop {
        let mut placed = false;
        for v in 0..nodes {
            if owner[v] != u32::MAX {
                continue;
            }
            let mut votes = vec![0u32; n as usize];
            for &w in &neighbours[v] {
                if owner[w as usize] != u32::MAX {
                    votes[owner[w as usize] as usize] += 1;
                }
            }
            let best = (0..n as usize)
                .filter(|&s| votes[s] > 0)
                .max_by_key(|&s| (votes[s], std::cmp::Reverse(switches[s])));
            if let Some(s) = best {
                owner[v] = s as u32;
                switches[s] += 1;
                placed = true;
            }
        }
        if !placed {
            break;
        }
    }
    // Nodes joined to nothing placed (a disconnected part): the least
    // loaded shard.
    for v in owner.iter_mut().filter(|v| **v == u32::MAX) {
        let s = (0..n as usize).min_by_key(|&s| switches[s]).unwrap_or(0);
        *v = s as u32;
        switches[s] += 1;
    }
    owner
}

impl Network {
    /// What a sharded run cannot do yet: the scenario key at fault and why
    /// (None: this network can be split).
    pub(crate) fn cannot_shard(&self) -> Option<(&'static str, String)> {
        let why = |key: &'static str, what: &str| {
            Some((
                key,
                format!("{what} cannot run on more than one thread yet (use threads = 1)"),
            ))
        };
        if self.sw.lb.at_tors() || self.sw.lb.every_hop() || self.sw.routes.pinned_by_path() {
            return why(
                "switch.load_balancer",
                "a balancer that keeps per-packet state across switches (CONGA, ConWeave) or fixed paths (FKSP, k shortest paths)",
            );
        }
        if matches!(self.sw.queues.discipline, Discipline::Voq(_)) {
            return why("switch.model", "the VOQ switch model (and RCM)");
        }
        if self.cfg.scheduling != Scheduling::Fifo {
            return why("switch.scheduling", "SRPT scheduling");
        }
        if self.cfg.deflection != Deflection::None {
            return why("switch.deflection", "DIBS deflection");
        }
        if self.cfg.trimming.is_some() {
            return why("switch.trimming", "packet trimming");
        }
        if self.hosts.apps.len() > 0 {
            return why(
                "jobs",
                "applications other than flows (collective jobs, traces)",
            );
        }
        if self
            .links
            .faults
            .iter()
            .any(|f| matches!(f.action, crate::link::FaultAction::Reorder { .. }))
        {
            return why("faults", "reordering faults");
        }
        if let Some(s) = &self.observe.sampling {
            if s.spec.ordering_memory {
                return why("output.ordering_memory", "the ordering memory series");
            }
        }
        None
    }

    /// Makes one network of `copies` (built alike, none run yet) that runs
    /// on `copies.len()` threads, each copy a shard of the nodes.
    pub fn into_shards(mut copies: Vec<Network>) -> Result<Network, SetupError> {
        let n = copies.len() as u32;
        let err = |key: &'static str, message: String| Err(SetupError { key, message });
        let Some(first) = copies.first() else {
            return err("run.threads", "0 threads: at least 1 is needed".into());
        };
        let nodes = first.core.roles.len() as u32;
        if n > nodes {
            return err(
                "run.threads",
                format!("{n} threads for {nodes} nodes: at most one thread a node"),
            );
        }
        if n == 1 {
            return Ok(copies.pop().expect("one"));
        }
        if let Some((key, message)) = first.cannot_shard() {
            return err(key, message);
        }
        for (k, c) in copies.iter().enumerate() {
            let alike = c.core.roles.len() == first.core.roles.len()
                && c.links.ports.len() == first.links.ports.len()
                && c.hosts.flows.records.len() == first.hosts.flows.records.len()
                && c.links.faults.len() == first.links.faults.len()
                && c.core.arena.live() == 0;
            if !alike {
                return err(
                    "run.threads",
                    format!("copy {k} of the network differs from copy 0 (or has run): shards must be built alike"),
                );
            }
        }
        let owner = partition(first, n);
        for (k, c) in copies.iter_mut().enumerate() {
            let cut: Vec<u32> = (0..c.links.ports.len() as u32)
                .filter(|&p| {
                    let port = &c.links.ports[p as usize];
                    owner[port.node as usize] == k as u32
                        && owner[c.core.port_node[p as usize ^ 1] as usize] != k as u32
                })
                .collect();
            for &p in &cut {
                c.links.ports[p as usize].wire.push_back(sentinel());
            }
            c.core.arena.shard(k as u32, n);
            // Events asked for while building, at other shards' nodes.
            let mut own = Vec::new();
            let (port_node, host_node) = (&c.core.port_node, &c.core.host_node);
            c.core.q.take_all(|t, ev| {
                if owner[node_of(port_node, host_node, ev) as usize] == k as u32 {
                    own.push((t, ev));
                }
            });
            for (t, ev) in own {
                c.core.q.schedule(t, ev);
            }
            c.core.shard = Some(Box::new(Shard {
                id: k as u32,
                count: n,
                owner: owner.clone(),
                cut,
                spare: None,
                totals: Counters::default(),
                step: 0,
                segments: Vec::new(),
            }));
        }
        let mut main = copies.remove(0);
        main.peers = copies;
        Ok(main)
    }

    /// The shards, as the run prints them: per shard its hosts, switches
    /// and the links it shares with other shards. Empty on one thread.
    pub fn shard_summary(&self) -> Vec<(u32, u32, u32)> {
        let Some(s) = &self.core.shard else {
            return Vec::new();
        };
        let mut out = vec![(0, 0, 0); s.count as usize];
        for (v, role) in self.core.roles.iter().enumerate() {
            let o = &mut out[s.owner[v] as usize];
            match role {
                NodeRole::Host(_) => o.0 += 1,
                NodeRole::Switch(_) => o.1 += 1,
            }
        }
        for l in &self.topo.links {
            let (a, b) = (s.owner[l.a as usize], s.owner[l.b as usize]);
            if a != b {
                out[a as usize].2 += 1;
                out[b as usize].2 += 1;
            }
        }
        out
    }

    /// Runs a global event in a shard: as on one thread, but the events it
    /// asks for at other shards' nodes are dropped (their own copies ask
    /// for them) and only one shard (`count`) counts it; returns the
    /// events counted.
    #[cold]
    #[inline(never)]
    pub(crate) fn global_in_shard(&mut self, tg: Time, g: Global, count: bool) -> u64 {
        let shard = self.core.shard.as_mut().expect("sharded");
        let spare = shard
            .spare
            .take()
            .unwrap_or_else(|| Calendar::new(self.core.q.shift()));
        let mut real = std::mem::replace(&mut self.core.q, spare);
        self.core.q.align_with(&real);
        self.core.arena.begin_segment();
        self.run_global(tg, g, count);
        self.core.note_segment(0);
        let (port_node, host_node) = (&self.core.port_node, &self.core.host_node);
        let s = self.core.shard.as_ref().expect("sharded");
        self.core.q.take_all(|t, ev| {
            if s.owner[node_of(port_node, host_node, ev) as usize] == s.id {
                real.schedule(t, ev);
            }
        });
        let spare = std::mem::replace(&mut self.core.q, real);
        self.core.shard.as_mut().expect("sharded").spare = Some(spare);
        count as u64
    }

    /// At a barrier: takes what this shard's cut ports sent since the last
    /// one off their wires (their packets out of the arena) and the other
    /// shards' slots freed here, into `mail` by receiving shard; returns
    /// the earliest arrival sent.
    pub(crate) fn post_mail(&mut self, mail: &mut [Mail]) -> Option<Time> {
        let shard = self.core.shard.as_ref().expect("sharded");
        let mut first: Option<Time> = None;
        for &p in &shard.cut {
            let port = &mut self.links.ports[p as usize];
            if port.wire.len() == 1 {
                continue;
            }
            let to = shard.owner[self.core.port_node[p as usize ^ 1] as usize] as usize;
            let sentinel = port.wire.pop_front().expect("the sentinel");
            while let Some((at, frame)) = port.wire.pop_front() {
                let parcel = match frame {
                    Frame::Packet(h) => Some(self.core.arena.export(h.idx)),
                    Frame::Control(_) => None,
                };
                first = Some(first.map_or(at, |f: Time| f.min(at)));
                mail[to].frames.push(Moved {
                    port: p,
                    at,
                    frame,
                    parcel,
                });
            }
            port.wire.push_back(sentinel);
        }
        let n = shard.count;
        for i in self.core.arena.take_freed() {
            mail[(i % n) as usize].freed.push(i);
        }
        first
    }

    /// At a barrier: takes in what another shard sent this one.
    pub(crate) fn take_mail(&mut self, mail: &mut Mail) {
        for m in mail.frames.drain(..) {
            if let (Frame::Packet(h), Some(parcel)) = (m.frame, m.parcel) {
                self.core.arena.import(h.idx, parcel);
            }
            let wire = &mut self.links.ports[m.port as usize].wire;
            wire.push_back((m.at, m.frame));
            if wire.len() == 1 {
                self.core.q.schedule(m.at, Ev::Arrive(m.port));
            }
        }
        for i in mail.freed.drain(..) {
            self.core.arena.reclaim(i);
        }
    }

    /// Ends sharding (the run is over, or continues on this thread): each
    /// node's state, its pending events and its packets move from the copy
    /// that ran it into this one, shard 0; the counters add up.
    pub(crate) fn gather(&mut self) {
        let mut peers = std::mem::take(&mut self.peers);
        let Some(shard) = self.core.shard.take() else {
            return;
        };
        for p in peers.iter_mut() {
            p.core.shard = None;
        }
        let owner = shard.owner;
        let of = |v: u32| owner[v as usize] as usize;
        // Wires: each lives with its far end's shard (a cut port's here,
        // with its sentinel, is empty).
        let wires: Vec<_> = (0..self.links.ports.len())
            .map(|p| {
                let k = of(self.core.port_node[p ^ 1]);
                let src = if k == 0 {
                    &mut *self
                } else {
                    &mut peers[k - 1]
                };
                std::mem::replace(&mut src.links.ports[p].wire, engine::ring::Ring::new())
            })
            .collect();
        for (p, wire) in wires.into_iter().enumerate() {
            let k = of(self.core.port_node[p]);
            if k > 0 {
                let other = &mut peers[k - 1];
                std::mem::swap(&mut self.links.ports[p], &mut other.links.ports[p]);
                self.sw.queues.swap_port(&mut other.sw.queues, p);
                std::mem::swap(&mut self.sw.markers[p], &mut other.sw.markers[p]);
            }
            self.links.ports[p].wire = wire;
        }
        for (v, role) in self.core.roles.iter().enumerate() {
            let k = of(v as u32);
            if k == 0 {
                continue;
            }
            let other = &mut peers[k - 1];
            match *role {
                NodeRole::Switch(s) => {
                    let s = s as usize;
                    std::mem::swap(&mut self.sw.nodes[s], &mut other.sw.nodes[s]);
                    self.sw.lb.swap_switch(&mut other.sw.lb, s);
                }
                NodeRole::Host(h) => {
                    let h = h as usize;
                    std::mem::swap(&mut self.hosts.nodes[h], &mut other.hosts.nodes[h]);
                }
            }
        }
        // Flows: each finishes at its requester.
        for i in 0..self.hosts.flows.records.len() {
            let req = self.hosts.flows.records[i].requester();
            let k = of(self.core.host_node[req as usize]);
            if k > 0 {
                self.hosts.flows.records[i] = peers[k - 1].hosts.flows.records[i];
            }
        }
        // Pending events: each node's from its shard's calendar.
        let mut pending = Vec::new();
        let (port_node, host_node) = (&self.core.port_node, &self.core.host_node);
        for (k, cal) in std::iter::once(&mut self.core.q)
            .chain(peers.iter_mut().map(|p| &mut p.core.q))
            .enumerate()
        {
            cal.take_all(|t, ev| {
                if of(node_of(port_node, host_node, ev)) == k {
                    pending.push((t, ev));
                }
            });
        }
        for (t, ev) in pending {
            self.core.q.schedule(t, ev);
        }
        // Packets: each from the shard that holds it.
        let held: Vec<(Option<&Arena>, Vec<u32>)> = std::iter::once((None, self.core.arena.held()))
            .chain(
                peers
                    .iter()
                    .map(|p| (Some(&p.core.arena), p.core.arena.held())),
            )
            .collect();
        let mut arena = std::mem::take(&mut self.core.arena);
        arena.unshard(&held);
        self.core.arena = arena;
        // Series: each from the shard that runs what it reads.
        if let Some(mut s) = self.observe.sampling.take() {
            let nodes = (&self.core.port_node[..], &self.core.host_node[..]);
            let sources = s.sources(nodes, &self.hosts, of);
            let mut others: Vec<&mut Sampling> = peers
                .iter_mut()
                .filter_map(|p| p.observe.sampling.as_mut())
                .collect();
            s.merge(&sources, &mut others);
            self.observe.sampling = Some(s);
        }
        // The trace: each host's captures from its shard, in the order one
        // thread captures them.
        if let Some(mut c) = self.observe.capture.take() {
            let others: Vec<&Capture> = peers
                .iter()
                .filter_map(|p| p.observe.capture.as_deref())
                .collect();
            self.observe.capturing = c.merge(&others);
            self.observe.capture = Some(c);
        }
        // The PFC record: each port's frames from its shard, in time and
        // port order (`pfc.csv`'s), ties in the order they came.
        if let Some(log) = &mut self.observe.pfc_log {
            for p in &mut peers {
                log.append(p.observe.pfc_log.as_mut().expect("built alike"));
            }
            log.sort_by_key(|e| (e.at, e.port));
        }
        for p in &peers {
            self.links.link_down_qps.extend(&p.links.link_down_qps);
            for (a, b) in self
                .hosts
                .flows
                .rx_bytes
                .iter_mut()
                .zip(&p.hosts.flows.rx_bytes)
            {
                *a += b;
            }
            self.core.counters.add(&p.core.counters);
            self.core.deferred_ends += p.core.deferred_ends;
            self.core.deferred_latest = self.core.deferred_latest.max(p.core.deferred_latest);
            let f = &p.hosts.flows;
            self.hosts.flows.done += f.done;
            self.hosts.flows.last_finish = self.hosts.flows.last_finish.max(f.last_finish);
        }
    }
}
