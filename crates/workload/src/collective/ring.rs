//! Ring algorithms, as NCCL's: ranks in a ring (rank `r` sends to
//! `r + 1`), each channel a ring on its own lane, and each step's piece
//! pipelined chunk by chunk: chunk `j` a rank sends at step `s` waits for
//! chunk `j` it received at step `s - 1`. All-reduce is a reduce-scatter
//! then an all-gather, `2(n-1)` steps of one piece (`1/n` of the channel's
//! share) each, so every rank sends `2(n-1)/n` of the buffer; all-gather
//! and reduce-scatter are `n-1` such steps. Broadcast is the pipeline
//! NCCL's ring makes from the root: rank 0 sends the whole buffer to 1,
//! which forwards each chunk as it arrives, to the last rank.

use super::{Builder, Cut};

/// `steps` ring steps: at step `s` rank `r` sends piece `piece(r, s)` to
/// `r + 1`, chunk by chunk, chunk `j` after chunk `j` of step `s - 1`
/// arrived from `r - 1`.
fn steps(cut: &Cut, b: &mut Builder, steps: u32, piece: impl Fn(u32, u32) -> u32) {
    let n = cut.n();
    for (lane, ch) in cut.channels.iter().enumerate() {
        let m = ch.chunks as usize;
        // The transfers each rank sent at the step before, by chunk.
        let mut before: Vec<u32> = Vec::new();
        let mut now = Vec::with_capacity(n as usize * m);
        for s in 0..steps {
            now.clear();
            for r in 0..n {
                let left = ((r + n - 1) % n) as usize;
                for (j, bytes) in ch.chunks_of(piece(r, s)).enumerate() {
                    let deps = if s == 0 {
                        &[][..]
                    } else {
                        &before[left * m + j..][..1]
                    };
                    now.push(b.send(r, (r + 1) % n, lane as u32, s, bytes, deps));
                }
            }
            std::mem::swap(&mut before, &mut now);
        }
    }
}

/// `(r - s) mod n`.
fn back(n: u32, r: u32, s: u32) -> u32 {
    ((r as i64 - s as i64).rem_euclid(n as i64)) as u32
}

pub(super) fn all_reduce(cut: &Cut, b: &mut Builder) {
    let n = cut.n();
    // Step s sends piece r - s: reduce-scatter to s = n - 2 (rank r then
    // holds piece r + 1 reduced), all-gather after.
    steps(cut, b, 2 * (n - 1), |r, s| back(n, r, s));
}

pub(super) fn all_gather(cut: &Cut, b: &mut Builder) {
    let n = cut.n();
    // Rank r starts with piece r and forwards what it received.
    steps(cut, b, n - 1, |r, s| back(n, r, s));
}

pub(super) fn reduce_scatter(cut: &Cut, b: &mut Builder) {
    let n = cut.n();
    // Piece r - s - 1, so that rank r ends with piece r reduced.
    steps(cut, b, n - 1, |r, s| back(n, r, s + 1));
}

pub(super) fn broadcast(cut: &Cut, b: &mut Builder) {
    let n = cut.n();
    for (lane, ch) in cut.channels.iter().enumerate() {
        let mut before = 0;
        for bytes in ch.chunks_of(0) {
            for r in 0..n - 1 {
                // Chunk j to r + 1 once chunk j came from r - 1.
                let deps = if r == 0 { &[][..] } else { &[before][..] };
                before = b.send(r, r + 1, lane as u32, r, bytes, deps);
            }
        }
    }
}
