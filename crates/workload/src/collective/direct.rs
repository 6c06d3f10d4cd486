//! Direct algorithms: every rank sends straight to every other, at once.
//! All-to-all: rank `r` sends piece `k` of its buffer to rank `k`, with no
//! dependencies. All-reduce: a direct reduce-scatter (piece `k` to rank
//! `k`) then a direct all-gather: chunk `j` of rank `r`'s reduced piece
//! goes to every other rank once chunk `j` of piece `r` has come from
//! all of them. Each rank sends `2(n-1)/n` of the buffer (all-to-all:
//! `(n-1)/n`) in two steps (all-to-all: one).

use super::{Builder, Cut};

/// Rank `r`'s pieces to every other rank, chunk by chunk, starting with
/// `r + 1` (so that ranks do not all send to rank 0 first); returns
/// (destination, chunk, transfer) of each.
fn scatter(cut: &Cut, b: &mut Builder, lane: u32, r: u32) -> Vec<(u32, u32, u32)> {
    let n = cut.n();
    let ch = &cut.channels[lane as usize];
    let mut sent = Vec::new();
    for off in 1..n {
        let k = (r + off) % n;
        for (j, bytes) in ch.chunks_of(k).enumerate() {
            sent.push((k, j as u32, b.send(r, k, lane, 0, bytes, &[])));
        }
    }
    sent
}

pub(super) fn all_to_all(cut: &Cut, b: &mut Builder) {
    for lane in 0..cut.channels.len() as u32 {
        for r in 0..cut.n() {
            scatter(cut, b, lane, r);
        }
    }
}

pub(super) fn all_reduce(cut: &Cut, b: &mut Builder) {
    let n = cut.n();
    for (lane, ch) in cut.channels.iter().enumerate() {
        let lane = lane as u32;
        let m = ch.chunks as usize;
        // into[k * m + j]: the transfers of chunk j of piece k, to rank k.
        let mut into: Vec<Vec<u32>> = vec![Vec::with_capacity(n as usize - 1); n as usize * m];
        for r in 0..n {
            for (k, j, t) in scatter(cut, b, lane, r) {
                into[k as usize * m + j as usize].push(t);
            }
        }
        for r in 0..n {
            for (j, bytes) in ch.chunks_of(r).enumerate() {
                let deps = b.deps(&into[r as usize * m + j]);
                for off in 1..n {
                    b.send_after(r, (r + off) % n, lane, 1, bytes, deps);
                }
            }
        }
    }
}
