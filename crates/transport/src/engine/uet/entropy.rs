//! UET's multipath by entropy value (EV): each data packet's EV, an index
//! below `evs` sent as the UDP source port `base + ev` that ECMP hashes,
//! chosen by one of three policies ([`EvPolicy`]), as the UEC simulator
//! (htsim's `uec_mp`) chooses them. Read there to learn, written here:
//!
//! - **oblivious** sprays over every EV: each round visits all `evs` once,
//!   from an offset drawn afresh each round.
//! - **REPS** (recycled entropy packet spraying) reuses EVs whose ACKs came
//!   back unmarked: such an EV joins a small FIFO (`REPS_BUFFER`, htsim's
//!   default 8, the oldest overwritten when full); a packet takes the
//!   oldest EV there, or a random one when it is empty. A marked ACK, a
//!   NACK or a timeout recycles nothing. (htsim's freezing mode after a
//!   timeout is not modelled.)
//! - **bitmap** skips EVs with a penalty: an ECN echo adds 1, a NACK 4, up
//!   to 15; a packet takes the round's next EV, and an EV passed over
//!   for its penalty loses one point of it.
//!
//! State of one connection's sender; uses only `engine::Rng` and its own
//! configuration.

use std::collections::VecDeque;

use super::config::EvPolicy;
use engine::Rng;

/// Recycled EVs REPS keeps (htsim `CircularBufferREPS::repsBufferSize`).
pub const REPS_BUFFER: usize = 8;
/// The bitmap policy's largest penalty and those of an ECN echo and a NACK
/// (htsim `UecMpBitmap`).
const MAX_PENALTY: u8 = 15;
const ECN_PENALTY: u8 = 1;
const NACK_PENALTY: u8 = 4;

/// What came back for a packet sent with some EV.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feedback {
    /// An ACK without a CE echo.
    Good,
    /// An ACK with a CE echo.
    Marked,
    /// A NACK (a trimmed or refused packet).
    Nack,
}

#[derive(Debug)]
pub(crate) struct Entropy {
    policy: EvPolicy,
    evs: u16,
    rng: Rng,
    /// Oblivious and bitmap: the round's position and offset.
    step: u16,
    offset: u16,
    /// REPS: EVs whose ACKs came back unmarked, oldest first.
    recycled: VecDeque<u16>,
    /// Bitmap: each EV's penalty (empty under the other policies).
    penalty: Vec<u8>,
}

impl Entropy {
    /// `evs` (at least 1) values under `policy`, drawing from `rng`.
    pub fn new(policy: EvPolicy, evs: u16, mut rng: Rng) -> Entropy {
        let evs = evs.max(1);
        let offset = (rng.next_u64() % evs as u64) as u16;
        Entropy {
            policy,
            evs,
            rng,
            step: 0,
            offset,
            recycled: VecDeque::new(),
            penalty: match policy {
                EvPolicy::Bitmap => vec![0; evs as usize],
                _ => Vec::new(),
            },
        }
    }

    /// The EV of the next data packet.
    pub fn next(&mut self) -> u16 {
        match self.policy {
            EvPolicy::Oblivious => self.round(),
            EvPolicy::Reps => match self.recycled.pop_front() {
                Some(ev) => ev,
                None => self.random(),
            },
            EvPolicy::Bitmap => {
                // At most one round of skipping: when every EV has a
                // penalty, the round's next one goes anyway.
                for _ in 0..self.evs {
                    let ev = self.round();
                    let p = &mut self.penalty[ev as usize];
                    if *p == 0 {
                        return ev;
                    }
                    *p -= 1;
                }
                self.round()
            }
        }
    }

    /// What came back for a packet sent with `ev` (ignored if `ev` is not
    /// one of this connection's: a hostile or stale echo).
    pub fn feedback(&mut self, ev: u16, fb: Feedback) {
        if ev >= self.evs {
            return;
        }
        match self.policy {
            EvPolicy::Oblivious => {}
            EvPolicy::Reps => {
                if fb == Feedback::Good {
                    if self.recycled.len() == REPS_BUFFER {
                        self.recycled.pop_front();
                    }
                    self.recycled.push_back(ev);
                }
            }
            EvPolicy::Bitmap => {
                let add = match fb {
                    Feedback::Good => 0,
                    Feedback::Marked => ECN_PENALTY,
                    Feedback::Nack => NACK_PENALTY,
                };
                let p = &mut self.penalty[ev as usize];
                *p = p.saturating_add(add).min(MAX_PENALTY);
            }
        }
    }

    /// The round's next EV; a new round draws a new offset.
    fn round(&mut self) -> u16 {
        let ev = ((self.step as u32 + self.offset as u32) % self.evs as u32) as u16;
        self.step += 1;
        if self.step == self.evs {
            self.step = 0;
            self.offset = self.random();
        }
        ev
    }

    fn random(&mut self) -> u16 {
        (self.rng.next_u64() % self.evs as u64) as u16
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::StreamKind;

    fn entropy(policy: EvPolicy, evs: u16) -> Entropy {
        Entropy::new(policy, evs, Rng::new(1, StreamKind::Host, 0))
    }

    /// REPS hands out again exactly the EVs whose ACKs came back unmarked,
    /// oldest first; marked ACKs and NACKs recycle nothing.
    #[test]
    fn reps_reuses_only_unmarked_evs() {
        let mut e = entropy(EvPolicy::Reps, 64);
        let fb = [
            (3, Feedback::Good),
            (9, Feedback::Marked),
            (17, Feedback::Good),
            (21, Feedback::Nack),
            (40, Feedback::Marked),
            (33, Feedback::Good),
        ];
        for (ev, f) in fb {
            e.feedback(ev, f);
        }
        let reused: Vec<u16> = (0..3).map(|_| e.next()).collect();
        assert_eq!(reused, [3, 17, 33]);
        assert!(e.recycled.is_empty(), "then random EVs");
        // The buffer keeps the most recent unmarked EVs.
        for ev in 0..10 {
            e.feedback(ev, Feedback::Good);
        }
        let reused: Vec<u16> = (0..REPS_BUFFER).map(|_| e.next()).collect();
        assert_eq!(reused, (2..10).collect::<Vec<u16>>());
    }

    /// Oblivious spraying visits every EV once per round.
    #[test]
    fn oblivious_sprays_over_every_ev_each_round() {
        let mut e = entropy(EvPolicy::Oblivious, 16);
        for _ in 0..3 {
            let mut round: Vec<u16> = (0..16).map(|_| e.next()).collect();
            round.sort_unstable();
            assert_eq!(round, (0..16).collect::<Vec<u16>>());
        }
    }

    /// The bitmap policy skips a penalised EV until its penalty is spent,
    /// and ignores EVs that are not the connection's.
    #[test]
    fn bitmap_skips_penalised_evs() {
        let mut e = entropy(EvPolicy::Bitmap, 4);
        e.feedback(2, Feedback::Nack);
        e.feedback(9, Feedback::Nack);
        // Each round of 4 visits EV 2 once: its four skips take four
        // rounds, twelve picks of the other EVs; then it comes back.
        let first: Vec<u16> = (0..12).map(|_| e.next()).collect();
        assert!(!first.contains(&2), "{first:?}");
        let then: Vec<u16> = (0..8).map(|_| e.next()).collect();
        assert!(then.contains(&2), "{then:?}");
    }
}
