//! FKSP, flow-level k-shortest-path routing (as in the Jellyfish paper
//! and Eunomia's section 2.2): every flow is pinned to one of the k
//! shortest loop-free paths between its source and destination ToRs,
//! chosen pseudo-randomly from its exact identity. Holds the paths and
//! answers "which port does switch s send this packet to"; built by
//! `topo/fksp.rs`, asked by the routing tables (`routing.rs`). Touches
//! only its own table.
//!
//! Design: no header field says which path a packet is on. Every switch
//! recomputes the choice from what the packet carries: the source host
//! (the low 16 bits of `hdr.flow`, `sport << 16 | src`), hence the source
//! ToR, the destination host, hence the destination ToR, and the path
//! index, a seeded hash of (`flow`, `dst`) reduced to 0..k. The paths of
//! all ToR pairs are stored one after another, each as its (switch,
//! egress port) hops but the last switch's; path p of ToR pair (a, b) is
//! `(a * tors + b) * k + p`. A switch finds itself by scanning the path's
//! few hops (a path is loop-free: a switch is on it at most once), so the
//! table costs one entry per hop of every path, never per switch and
//! pair. A switch that is not on the path (the destination ToR, whose
//! last hop is the host's own port; a packet of a flow between hosts of
//! one ToR) answers from the shortest-path tables.
//!
//! With the choice left to the load balancer (`[routing] choice =
//! "load_balancer"`, [`Pinned::by_balancer`]), the source ToR offers its
//! load balancer the first hops of the pair's live paths (one entry per
//! path, so a port that starts two paths counts twice), and the packet
//! then follows one path through the port chosen: the second switch,
//! seeing no path on the packet yet, takes the live path whose first hop
//! is the port the packet came from (among several, the flow's by the
//! same seeded hash), and writes its index in a label kept per packet
//! (per arena slot, `label`), which the later switches read. The label
//! stands for what a real fabric carries in the packet (a source route,
//! or the source port a NIC would choose to steer a path); it lives here,
//! beside the tables, so that no header grows and only this mode pays.
//!
//! Failures: the paths are computed once, on the graph as it was when
//! FKSP was set. When links change (`reroute_on_failure`), each path is
//! marked dead if any of its ports is down, and the flows pinned to a
//! dead path use the recomputed shortest paths, hop by hop with the load
//! balancer, at every switch alike (so they cannot loop); they return to
//! their path when it comes back. Without `reroute_on_failure`, packets
//! pinned to a dead link are dropped there, as with shortest paths.

use crate::hash::mix64;
use std::cell::RefCell;

/// FKSP's paths and what picks one (see the module doc).
#[derive(Clone, Debug)]
pub struct Pinned {
    k: u32,
    tors: u32,
    /// The path choice's hash seed.
    seed: u64,
    /// ToR index of each host.
    host_tor: Vec<u32>,
    /// Index of path p's first hop in `hops`; one more entry at the end.
    start: Vec<u32>,
    /// (switch index, egress port) of every hop of every path.
    hops: Vec<[u32; 2]>,
    /// Per path: every port on it is up.
    alive: Vec<bool>,
    /// Whether the source ToR's load balancer chooses the path (else the
    /// flow's hash does).
    by_balancer: bool,
    /// With `by_balancer`: per ToR pair, the first hops of its live paths
    /// (`k` slots, the first `firsts_len` used), rebuilt by `refresh`.
    firsts: Vec<u32>,
    firsts_len: Vec<u8>,
    /// With `by_balancer`: per arena slot, 1 + the global index of the
    /// path its packet follows (0: none yet). Written by the switch that
    /// reads a packet's route (`&self`), hence the cell.
    label: RefCell<Vec<u32>>,
}

/// What the paths say a switch does with a packet.
#[derive(Debug, PartialEq, Eq)]
pub enum PathHop<'a> {
    /// Its candidate egress ports: the path's one port, or at the source
    /// ToR under `by_balancer` the first hops of the live paths.
    Ports(&'a [u32]),
    /// The shortest-path tables answer (the switch is not on a live
    /// path).
    Shortest,
}

impl Pinned {
    /// An empty table for `tors` ToRs (host `h` under ToR `host_tor[h]`)
    /// and `k` paths per pair; add the paths with [`Pinned::push`], pair
    /// by pair, in order.
    pub fn new(k: u32, tors: u32, seed: u64, host_tor: Vec<u32>) -> Pinned {
        let paths = tors as usize * tors as usize * k as usize;
        let mut start = Vec::with_capacity(paths + 1);
        start.push(0);
        Pinned {
            k,
            tors,
            seed,
            host_tor,
            start,
            hops: Vec::new(),
            alive: Vec::with_capacity(paths),
            by_balancer: false,
            firsts: Vec::new(),
            firsts_len: Vec::new(),
            label: RefCell::default(),
        }
    }

    /// Leaves the choice of a path to the source ToR's load balancer (see
    /// the module doc); call before the last `refresh`.
    pub fn by_balancer(&mut self) {
        self.by_balancer = true;
    }

    /// Whether the load balancer chooses the paths.
    pub fn chosen_by_balancer(&self) -> bool {
        self.by_balancer
    }

    /// Appends the next path: its hops as (switch index, egress port).
    pub fn push(&mut self, hops: impl IntoIterator<Item = [u32; 2]>) {
        self.hops.extend(hops);
        self.start.push(self.hops.len() as u32);
        self.alive.push(true);
    }

    /// Marks each path alive or not by `up(port)`.
    pub fn refresh(&mut self, up: impl Fn(u32) -> bool) {
        for p in 0..self.alive.len() {
            let (a, b) = (self.start[p] as usize, self.start[p + 1] as usize);
            self.alive[p] = self.hops[a..b].iter().all(|h| up(h[1]));
        }
        if self.by_balancer {
            let k = self.k as usize;
            let pairs = self.alive.len() / k.max(1);
            self.firsts = vec![0; pairs * k];
            self.firsts_len = vec![0; pairs];
            for pair in 0..pairs {
                for p in pair * k..pair * k + k {
                    if self.alive[p] && self.start[p + 1] > self.start[p] {
                        let n = self.firsts_len[pair] as usize;
                        self.firsts[pair * k + n] = self.hops[self.start[p] as usize][1];
                        self.firsts_len[pair] += 1;
                    }
                }
            }
        }
    }

    pub fn k(&self) -> u32 {
        self.k
    }

    /// The path index (0..k) a flow identity toward `dst` is pinned to.
    #[inline(always)]
    pub fn choice(&self, flow: u32, dst: u32) -> u32 {
        let h = mix64(((flow as u64) << 32 | dst as u64) ^ self.seed);
        (((h >> 32) * self.k as u64) >> 32) as u32
    }

    /// The stored path of ToR pair (a, b) with index `i`: its hops.
    pub fn path(&self, a: u32, b: u32, i: u32) -> &[[u32; 2]] {
        let p = (a as usize * self.tors as usize + b as usize) * self.k as usize + i as usize;
        &self.hops[self.start[p] as usize..self.start[p + 1] as usize]
    }

    /// The ToR index of host `h`.
    pub fn tor_of(&self, h: u32) -> u32 {
        self.host_tor[h as usize]
    }

    /// Under `by_balancer`: what switch `s` does with the packet in arena
    /// slot `idx` of `flow` toward `dst` that arrived by port `in_port`
    /// (see the module doc).
    pub fn hop_by_balancer(
        &self,
        s: u32,
        flow: u32,
        dst: u32,
        idx: u32,
        in_port: u32,
    ) -> PathHop<'_> {
        let src_tor = self.host_tor[(flow & 0xffff) as usize] as usize;
        let dst_tor = self.host_tor[dst as usize] as usize;
        if src_tor == dst_tor {
            return PathHop::Shortest;
        }
        let pair = src_tor * self.tors as usize + dst_tor;
        let k = self.k as usize;
        let mut label = self.label.borrow_mut();
        if label.len() <= idx as usize {
            label.resize(idx as usize + 1, 0);
        }
        let first = pair * k;
        let path = if self.hops[self.start[first] as usize..self.start[first + k] as usize]
            .first()
            .is_some_and(|h| h[0] == s)
        {
            // The source ToR: the packet starts afresh (the slot's label
            // may be a former packet's).
            label[idx as usize] = 0;
            let n = self.firsts_len[pair] as usize;
            return match n {
                0 => PathHop::Shortest,
                _ => PathHop::Ports(&self.firsts[first..first + n]),
            };
        } else if label[idx as usize] != 0 {
            label[idx as usize] as usize - 1
        } else {
            // The second switch: the live paths whose first hop the packet
            // took; the flow's hash picks among them.
            let from = in_port ^ 1;
            let starts_here = |p: &usize| {
                self.alive[*p]
                    && self
                        .hops
                        .get(self.start[*p] as usize)
                        .is_some_and(|h| h[1] == from)
            };
            let n = (first..first + k).filter(starts_here).count() as u64;
            if n == 0 {
                return PathHop::Shortest;
            }
            let h = mix64(((flow as u64) << 32 | dst as u64) ^ self.seed);
            let pick = ((h >> 32) * n) >> 32;
            let p = (first..first + k)
                .filter(starts_here)
                .nth(pick as usize)
                .unwrap_or(first);
            label[idx as usize] = p as u32 + 1;
            p
        };
        if !self.alive[path] {
            return PathHop::Shortest;
        }
        let hops = &self.hops[self.start[path] as usize..self.start[path + 1] as usize];
        match hops.iter().find(|h| h[0] == s) {
            Some(h) => PathHop::Ports(std::slice::from_ref(&h[1])),
            None => PathHop::Shortest,
        }
    }

    /// The egress port switch `s` sends a packet of `flow` toward `dst`
    /// to, or None where the shortest-path tables answer (see the module
    /// doc).
    #[inline(always)]
    pub fn port(&self, s: u32, flow: u32, dst: u32) -> Option<&u32> {
        let src_tor = self.host_tor[(flow & 0xffff) as usize] as usize;
        let dst_tor = self.host_tor[dst as usize] as usize;
        let p = (src_tor * self.tors as usize + dst_tor) * self.k as usize
            + self.choice(flow, dst) as usize;
        if !self.alive[p] {
            return None;
        }
        let hops = &self.hops[self.start[p] as usize..self.start[p + 1] as usize];
        hops.iter().find(|h| h[0] == s).map(|h| &h[1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two paths from ToR s0 to ToR s3 that cross at s2 and leave it by
    /// different ports: A = s0 -2-> s1 -4-> s2 -6-> s3, B = s0 -8-> s4
    /// -10-> s2 -12-> s5 -14-> s3 (ports are the senders'; a packet
    /// arrives by the partner, port ^ 1). Host 0 under s0, host 1 under s3.
    fn crossing() -> Pinned {
        let mut p = Pinned::new(2, 2, 9, vec![0, 1]);
        let a = [[0, 2], [1, 4], [2, 6]];
        let b = [[0, 8], [4, 10], [2, 12], [5, 14]];
        for path in [&[][..], &[], &a, &b, &[], &[], &[], &[]] {
            p.push(path.iter().copied());
        }
        p.by_balancer();
        p.refresh(|_| true);
        p
    }

    /// Walks slot `idx` from the first hop `first` on, as the switches
    /// ask: the ports it leaves by.
    fn walk(p: &Pinned, first: u32, idx: u32) -> Vec<u32> {
        let next = [(2, 1), (4, 2), (8, 4), (10, 2), (12, 5)];
        let (mut port, mut out) = (first, vec![first]);
        while let Some(&(_, s)) = next.iter().find(|(q, _)| *q == port) {
            match p.hop_by_balancer(s, 0, 1, idx, port ^ 1) {
                PathHop::Ports(&[q]) => port = q,
                other => panic!("at s{s}: {other:?}"),
            }
            out.push(port);
        }
        out
    }

    #[test]
    fn a_packet_keeps_the_path_its_first_hop_started() {
        let p = crossing();
        // The source ToR offers both first hops.
        assert_eq!(p.hop_by_balancer(0, 0, 1, 3, 99), PathHop::Ports(&[2, 8]));
        // At s2, where the paths cross, each packet keeps its own.
        assert_eq!(walk(&p, 2, 3), [2, 4, 6]);
        assert_eq!(walk(&p, 8, 4), [8, 10, 12, 14]);
        // A slot reused by a packet on the other path starts afresh at
        // the source ToR.
        assert_eq!(p.hop_by_balancer(0, 0, 1, 3, 99), PathHop::Ports(&[2, 8]));
        assert_eq!(walk(&p, 8, 3), [8, 10, 12, 14]);
        // A dead path's first hop is not offered.
        let mut dead = crossing();
        dead.refresh(|port| port != 12);
        assert_eq!(dead.hop_by_balancer(0, 0, 1, 3, 99), PathHop::Ports(&[2]));
    }
}
