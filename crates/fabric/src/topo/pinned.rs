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
//! Failures: the paths are computed once, on the graph as it was when
//! FKSP was set. When links change (`reroute_on_failure`), each path is
//! marked dead if any of its ports is down, and the flows pinned to a
//! dead path use the recomputed shortest paths, hop by hop with the load
//! balancer, at every switch alike (so they cannot loop); they return to
//! their path when it comes back. Without `reroute_on_failure`, packets
//! pinned to a dead link are dropped there, as with shortest paths.

use crate::hash::mix64;

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
        }
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
