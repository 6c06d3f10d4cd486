//! Pairwise all-to-all (MPI's pairwise exchange, as NCCL-style libraries
//! run it closed-loop): `n - 1` steps; at step `s` rank `r` sends piece
//! `r + s` of its buffer to rank `r + s`, once the whole piece of step
//! `s - 1` has come from rank `r - s + 1`. Each rank sends `(n-1)/n` of
//! the buffer.

use super::{Builder, Cut};

pub(super) fn all_to_all(cut: &Cut, b: &mut Builder) {
    let n = cut.n();
    for (lane, ch) in cut.channels.iter().enumerate() {
        // The last chunk each rank sent at the step before: a lane is a
        // FIFO, so its arrival means the whole piece arrived.
        let mut last = vec![0u32; n as usize];
        let mut now = vec![0u32; n as usize];
        for s in 1..n {
            for r in 0..n {
                let to = (r + s) % n;
                let from = ((r + n - (s - 1)) % n) as usize;
                let deps = if s == 1 {
                    &[][..]
                } else {
                    &last[from..from + 1]
                };
                let deps = b.deps(deps);
                for bytes in ch.chunks_of(to) {
                    now[r as usize] = b.send_after(r, to, lane as u32, s - 1, bytes, deps);
                }
            }
            std::mem::swap(&mut last, &mut now);
        }
    }
}
