//! ECMP as the HPCC ns-3 simulator (alibaba-edu/High-Precision-Congestion-
//! Control) does it, so that a fabric imported from its files routes each
//! flow over the same path: `[switch] ecmp_hash = "ns3"`. What it copies
//! (behaviour, not code):
//!
//! - the key: three little-endian 32-bit words, source IP, destination IP,
//!   `sport | dport << 16` (an ACK carries the data's ports swapped), with
//!   host `id`'s IP `0x0b000001 + (id / 256) << 16 + (id % 256) << 8`;
//! - the hash: MurmurHash3 (x86, 32-bit) of the key, seeded with the
//!   switch's node id, modulo the number of next hops;
//! - the order of the next hops: the order in which ns-3's breadth-first
//!   search from the destination host reaches them (its per-node neighbour
//!   maps are ordered by object address; switches are large objects that
//!   each get their own `mmap`, placed top-down, so a later switch sorts
//!   first: [`Ns3Ecmp::neighbour_order`]);
//! - source ports 10000, 10001, ... per (source, destination) pair in the
//!   order flows are added ([`Ns3Ecmp::next_sport`]), destination port
//!   `dport` (the flow file's column).
//!
//! It assumes the topology's node indices are the ns-3 node ids (as
//! `topology.kind = "ns3"` builds it). Touches only its own tables.

use crate::net::arena::Hdr;
use crate::topo::topology::{NodeKind, Topology};
use std::collections::HashMap;

/// Which hash ECMP uses to pick among equal-cost next hops (the scenario's
/// `[switch] ecmp_hash`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EcmpHash {
    /// rdmalab's own: a 64-bit mix of the 5-tuple with a per-switch seed
    /// drawn from the run's seed (`ecmp.rs`).
    #[default]
    Rdmalab,
    /// The HPCC ns-3 simulator's (this file), on a topology whose node
    /// indices are ns-3 node ids.
    Ns3,
}

impl EcmpHash {
    /// Every hash with the name scenario files give it.
    pub const NAMES: &[(&str, EcmpHash)] =
        &[("rdmalab", EcmpHash::Rdmalab), ("ns3", EcmpHash::Ns3)];
}

/// The destination port HPCC's traffic generator writes in flow files.
pub const NS3_DEFAULT_DPORT: u16 = 100;

/// The IP address ns-3's `third.cc` gives node `id`.
pub fn ns3_ip(id: u32) -> u32 {
    0x0b00_0001 + (id / 256) * 0x0001_0000 + (id % 256) * 0x0000_0100
}

/// MurmurHash3 x86 32-bit of three little-endian words (12 bytes, so no
/// tail), as ns-3's `SwitchNode::EcmpHash` computes it.
pub fn murmur3_words(words: [u32; 3], seed: u32) -> u32 {
    let mut h = seed;
    for w in words {
        let k = w
            .wrapping_mul(0xcc9e_2d51)
            .rotate_left(15)
            .wrapping_mul(0x1b87_3593);
        h ^= k;
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    h ^= 12;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

pub(crate) struct Ns3Ecmp {
    /// Each switch's seed: its node id.
    seeds: Vec<u32>,
    /// Each host's IP.
    ips: Vec<u32>,
    /// The node at the far end of each port.
    peer: Vec<u32>,
    /// `rank[dst * nodes + n]`: where node `n` stands in the order of
    /// ns-3's breadth-first search from host `dst` (u32::MAX: not reached).
    rank: Vec<u32>,
    nodes: usize,
    /// The flows' destination port.
    dport: u16,
    /// The next source port of each (source, destination) host pair.
    ports: HashMap<(u32, u32), u16>,
    /// Each flow's source port, by flow id.
    sports: Vec<u16>,
}

impl Ns3Ecmp {
    pub fn new(topo: &Topology) -> Ns3Ecmp {
        let nodes = topo.nodes.len();
        let mut seeds = Vec::new();
        let mut ips = Vec::new();
        let mut host_node = Vec::new();
        for (id, n) in topo.nodes.iter().enumerate() {
            match n.kind {
                NodeKind::Switch => seeds.push(id as u32),
                NodeKind::Host => {
                    ips.push(ns3_ip(id as u32));
                    host_node.push(id as u32);
                }
            }
        }
        let mut peer = Vec::with_capacity(topo.links.len() * 2);
        let mut adj: Vec<Vec<u32>> = vec![Vec::new(); nodes];
        for l in &topo.links {
            peer.push(l.b);
            peer.push(l.a);
            // ns-3 keeps one entry per neighbour (a map), whatever the
            // number of links to it.
            for (x, y) in [(l.a, l.b), (l.b, l.a)] {
                if !adj[x as usize].contains(&y) {
                    adj[x as usize].push(y);
                }
            }
        }
        let key = |n: u32| Ns3Ecmp::neighbour_order(topo, n);
        for a in &mut adj {
            a.sort_by_key(|&n| key(n));
        }
        let mut rank = vec![u32::MAX; host_node.len() * nodes];
        let mut queue = Vec::with_capacity(nodes);
        for (h, &src) in host_node.iter().enumerate() {
            let r = &mut rank[h * nodes..(h + 1) * nodes];
            queue.clear();
            queue.push(src);
            r[src as usize] = 0;
            let mut i = 0;
            while i < queue.len() {
                let now = queue[i];
                i += 1;
                for &next in &adj[now as usize] {
                    // Only switches are searched through.
                    if r[next as usize] == u32::MAX
                        && topo.nodes[next as usize].kind == NodeKind::Switch
                    {
                        r[next as usize] = queue.len() as u32;
                        queue.push(next);
                    }
                }
            }
        }
        Ns3Ecmp {
            seeds,
            ips,
            peer,
            rank,
            nodes,
            dport: NS3_DEFAULT_DPORT,
            ports: HashMap::new(),
            sports: Vec::new(),
        }
    }

    /// The order in which ns-3 visits node `n` among a node's neighbours:
    /// by object address. Hosts (small objects, from the heap) come first,
    /// in id order; switches (each over 2 MB, from its own top-down
    /// `mmap`) after them, the last created first.
    pub fn neighbour_order(topo: &Topology, n: u32) -> (bool, i64) {
        match topo.nodes[n as usize].kind {
            NodeKind::Host => (false, n as i64),
            NodeKind::Switch => (true, -(n as i64)),
        }
    }

    pub fn set_dport(&mut self, dport: u16) {
        self.dport = dport;
    }

    /// The source port ns-3 gives the next flow from host `src` to host
    /// `dst`: 10000, then one more per earlier flow of the pair.
    pub fn next_sport(&mut self, src: u32, dst: u32) -> u16 {
        let p = self.ports.entry((src, dst)).or_insert(10000);
        let sport = *p;
        *p = p.wrapping_add(1);
        sport
    }

    /// Numbers the next flow (ids in the order flows are added), from host
    /// `src` to host `dst`, with its ns-3 source port.
    pub fn add_flow(&mut self, src: u32, dst: u32) {
        let sport = self.next_sport(src, dst);
        self.sports.push(sport);
    }

    /// The source port of flow `id` (added by [`Ns3Ecmp::add_flow`]).
    pub fn sport(&self, id: u32) -> u16 {
        self.sports[id as usize]
    }

    /// The 32-bit hash ns-3's switch `s` computes for `hdr`.
    pub fn hash(&self, s: u32, hdr: &Hdr) -> u32 {
        let (src, sport) = (hdr.flow & 0xffff, hdr.flow >> 16);
        let dport = self.dport as u32;
        // An ACK, NACK or CNP answers the data: ports swapped.
        let ports = if hdr.is_data() {
            sport | dport << 16
        } else {
            dport | sport << 16
        };
        let key = [self.ips[src as usize], self.ips[hdr.dst as usize], ports];
        murmur3_words(key, self.seeds[s as usize])
    }

    pub fn pick(&self, s: u32, hdr: &Hdr, hops: &[u32]) -> u32 {
        let i = self.hash(s, hdr) as usize % hops.len();
        let rank = &self.rank[hdr.dst as usize * self.nodes..][..self.nodes];
        let r = |p: u32| rank[self.peer[p as usize] as usize];
        // The hop with exactly `i` hops before it in ns-3's order.
        for &p in hops {
            if hops.iter().filter(|&&q| r(q) < r(p)).count() == i {
                return p;
            }
        }
        hops[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::Time;

    /// Values computed by hand from the algorithm (and checked against
    /// MurmurHash3's published vectors: "" with seed 1 is 0x514e28b7).
    #[test]
    fn hash_matches_ns3() {
        assert_eq!(ns3_ip(26), 0x0b00_1a01);
        assert_eq!(ns3_ip(700), 0x0b02_bc01);
        // Flow 0 of flows-ws128.txt (26 -> 23, sport 10000, dport 100) at
        // switch 128.
        let data = [0x0b00_1a01, 0x0b00_1701, 10000 | 100 << 16];
        assert_eq!(murmur3_words(data, 128), 0x7de9_32d8);
        assert_eq!(
            murmur3_words([0x0b00_0001, 0x0b00_0101, 0x0064_2710], 0),
            0x13ad_ce27
        );
        // Its ACK (ports swapped) at switch 150.
        let ack = [0x0b00_1701, 0x0b00_1a01, 100 | 10000 << 16];
        assert_eq!(murmur3_words(ack, 150), 0x0522_3273);
        assert_eq!(
            murmur3_words([0x0b02_bc01, 0x0b00_0501, 0x0064_2713], 1100),
            0x36a1_ffe8
        );
    }

    /// Two hosts under two switches joined by two middle switches: the
    /// next hops toward a host are ordered as ns-3's search finds them.
    #[test]
    fn picks_in_ns3_order() {
        let mut t = Topology::default();
        for (name, kind) in [
            ("h0", NodeKind::Host),
            ("h1", NodeKind::Host),
            ("sw2", NodeKind::Switch),
            ("sw3", NodeKind::Switch),
            ("sw4", NodeKind::Switch),
            ("sw5", NodeKind::Switch),
        ] {
            t.add_node(name.into(), kind);
        }
        let us: Time = 1_000_000;
        for (a, b) in [(0, 2), (1, 3), (2, 4), (2, 5), (3, 4), (3, 5)] {
            t.add_link(a, b, 100_000_000_000, us);
        }
        let mut e = Ns3Ecmp::new(&t);
        assert_eq!(
            (e.next_sport(0, 1), e.next_sport(0, 1), e.next_sport(1, 0)),
            (10000, 10001, 10000)
        );
        // Switch 2 (index 0) toward host 1: ports 4 (to sw4) and 6 (to
        // sw5); ns-3 reaches sw5 first (later switch, lower address).
        let mut hdr = Hdr::of(3, 1048, true);
        hdr.dst = 1;
        hdr.flow = 10000 << 16;
        let h = murmur3_words([ns3_ip(0), ns3_ip(1), 10000 | 100 << 16], 2);
        let want = if h.is_multiple_of(2) { 6 } else { 4 };
        assert_eq!(e.pick(0, &hdr, &[4, 6]), want);
        assert_eq!(e.pick(0, &hdr, &[6, 4]), want);
        e.set_dport(7);
        let h7 = murmur3_words([ns3_ip(0), ns3_ip(1), 10000 | 7 << 16], 2);
        assert_eq!(e.hash(0, &hdr), h7);
    }
}
