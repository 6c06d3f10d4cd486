//! Recursive halving-doubling all-reduce (Rabenseifner's, as MPICH's
//! `MPIR_Allreduce_intra_reduce_scatter_allgather`): a reduce-scatter by
//! recursive halving (at step `k` rank `r` exchanges half of the pieces it
//! holds with rank `r ^ 2^k`, keeping the other half) and an all-gather by
//! recursive doubling (the same partners in reverse order, each sending
//! all it holds). It needs a power of two: with `n` ranks, `p` the
//! largest power of two not above `n` and `rem = n - p`, the first
//! `2 rem` ranks fold first as MPICH does (each even one sends its whole
//! buffer to the odd one above it and sits out; that one takes part for
//! both) and the odd ones send the result back to their even partner at
//! the end. The buffer is cut into `p` pieces; each exchange is cut into
//! chunks of at most `chunk_bytes` and waits for the whole exchange
//! before it (the last chunk of it: a lane is a FIFO). Each of the `p`
//! ranks taking part sends `2(p-1)/p` of the buffer (plus the buffer once
//! more for an odd folding rank; a folded even rank sends it once).

use super::{split, Builder, Cut};

/// The largest power of two not above `n >= 1`.
pub fn power_below(n: u32) -> u32 {
    1 << (31 - n.leading_zeros())
}

/// `bytes` cut into chunks of at most `chunk` (0: one), from `src` to
/// `dst`, each waiting for `after`; returns the last one.
fn chunked(
    b: &mut Builder,
    (src, dst, lane, step): (u32, u32, u32, u32),
    bytes: u64,
    chunk: u64,
    after: Option<u32>,
) -> u32 {
    let parts = if chunk == 0 {
        1
    } else {
        bytes.div_ceil(chunk).max(1)
    };
    let deps = b.deps(after.as_slice());
    let mut last = 0;
    for part in split(bytes, parts) {
        last = b.send_after(src, dst, lane, step, part, deps);
    }
    last
}

pub(super) fn all_reduce(cut: &Cut, b: &mut Builder) {
    let n = cut.n();
    let p = power_below(n);
    let rem = n - p;
    let logp = p.trailing_zeros();
    let chunk = cut.spec.chunk_bytes;
    // The ranks taking part, by their number among them (MPICH's
    // `newrank`): an odd folding rank, or one above the folding ones.
    let real = |v: u32| if v < rem { 2 * v + 1 } else { v + rem };
    for (lane, ch) in cut.channels.iter().enumerate() {
        let lane = lane as u32;
        let total = ch.bytes(0..p);
        // The last transfer each rank received (by its rank).
        let mut got: Vec<Option<u32>> = vec![None; n as usize];
        for e in (0..2 * rem).step_by(2) {
            got[e as usize + 1] = Some(chunked(b, (e, e + 1, lane, 0), total, chunk, None));
        }
        let fold = u32::from(rem > 0);
        // held[v][k]: the pieces v holds before halving step k.
        let mut held: Vec<Vec<(u32, u32)>> = vec![vec![(0, p)]; p as usize];
        for k in 0..logp {
            let mut next = got.clone();
            for v in 0..p {
                let w = v ^ (1 << k);
                let (lo, hi) = *held[v as usize].last().unwrap();
                let mid = (lo + hi) / 2;
                let (send, keep) = if v < w {
                    ((mid, hi), (lo, mid))
                } else {
                    ((lo, mid), (mid, hi))
                };
                held[v as usize].push(keep);
                let (r, to) = (real(v), real(w));
                let bytes = ch.bytes(send.0..send.1);
                next[to as usize] = Some(chunked(
                    b,
                    (r, to, lane, fold + k),
                    bytes,
                    chunk,
                    got[r as usize],
                ));
            }
            got = next;
        }
        for (i, k) in (0..logp).rev().enumerate() {
            let mut next = got.clone();
            for v in 0..p {
                let w = v ^ (1 << k);
                let (lo, hi) = held[v as usize][k as usize + 1];
                let (r, to) = (real(v), real(w));
                let step = fold + logp + i as u32;
                next[to as usize] = Some(chunked(
                    b,
                    (r, to, lane, step),
                    ch.bytes(lo..hi),
                    chunk,
                    got[r as usize],
                ));
            }
            got = next;
        }
        for e in (0..2 * rem).step_by(2) {
            chunked(
                b,
                (e + 1, e, lane, 2 * logp + 1),
                total,
                chunk,
                got[e as usize + 1],
            );
        }
    }
}
