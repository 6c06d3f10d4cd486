//! Connections' names on the wire (vQPNs): a connection's index in the
//! daemon's table and the generation of that index, so a name that
//! outlived its connection never reaches the connection that took the
//! index next. Names outlive connections whenever the two ends let go
//! at once: the other daemon's close crossing this one's, an answer to
//! a connect whose session has ended, a message or notice on its way.
//! Before (the index alone), a close that crossed the other end's and
//! was followed by a connect closed the new connection, or, arriving
//! before the connect's answer, left that connect unanswered for good.
//!
//! An `impl Daemon` block: uses the connection table (`super`) and
//! `notice`'s bound on vQPNs.

use super::Daemon;
use crate::notice::MAX_VQPN;

/// Bits of a name that are the index: a daemon has at most 2^20
/// connections open. The bits above, up to `MAX_VQPN`, count the
/// index's reuses (modulo 1024): a stale name could match only after
/// 1024 connections took its index while it travelled.
const INDEX_BITS: u32 = 20;
/// The most connections a daemon has open at once.
pub(super) const MAX_CONNS: usize = 1 << INDEX_BITS;
const GENERATIONS: u16 = (MAX_VQPN >> INDEX_BITS) as u16;
// Every name stays below the bound.
const _: () = assert!((GENERATIONS as usize) << INDEX_BITS <= MAX_VQPN);

impl Daemon {
    /// Connection `v`'s name on the wire.
    pub(super) fn name_of(&self, v: usize) -> u32 {
        let g = self.generations.get(v).copied().unwrap_or(0);
        (u32::from(g) << INDEX_BITS) | v as u32
    }

    /// The open connection `name` names, if any.
    pub(super) fn named(&self, name: u64) -> Option<usize> {
        let name = u32::try_from(name).ok()?;
        let v = name as usize & (MAX_CONNS - 1);
        (self.conns.get(v).is_some() && self.name_of(v) == name).then_some(v)
    }

    /// The open connection over link `l` that `name` names, if any (a
    /// link names only its own connections).
    pub(super) fn on_link(&self, l: usize, name: u32) -> Option<usize> {
        self.named(name.into())
            .filter(|&v| self.conns.get(v).is_some_and(|c| c.link == l))
    }

    /// Index `v` is taken by a new connection: a new name.
    pub(super) fn rename(&mut self, v: usize) {
        if self.generations.len() <= v {
            self.generations.resize(v + 1, 0);
        }
        self.generations[v] = (self.generations[v] + 1) % GENERATIONS;
    }
}
