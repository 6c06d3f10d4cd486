//! ConWeave's destination ToR, one flow: whether a data packet goes on to
//! its host or waits in the flow's reordering queue, when that queue must
//! be flushed, and its release (the artifact's RxToR pipeline and
//! `ConWeaveVOQ`). Pure state: the caller (`net.rs`) admits, enqueues and
//! keeps the deadlines' timers. Touches only the flow's entry.

use super::{ConweaveParams, Flag, Tag};
use crate::net::arena::Hdr;
use engine::Time;

/// One flow at its destination ToR.
#[derive(Clone, Debug, Default)]
pub(super) struct RxState {
    /// The latest epoch seen (the source's first is 1).
    epoch: u32,
    /// The epoch's TAIL has passed (or its queue was flushed): REROUTED
    /// packets go straight on.
    rerouted: bool,
    /// The latest old-path packet of the epoch: when the source sent it
    /// and when it arrived here, and whether one was seen this epoch.
    phase0_tx: Time,
    phase0_rx: Time,
    phase0_seen: bool,
    /// When the source sent the epoch's TAIL (from TAIL and REROUTED
    /// packets).
    tail_time: Time,
    /// REROUTED packets waiting for the TAIL, in arrival order; while
    /// holding, `deadline` is when they are flushed anyway.
    held: Vec<Hdr>,
    holding: bool,
    pub deadline: Time,
}

/// What to do with a data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// On to the host.
    Pass,
    /// On to the host, then the held packets right after it (a TAIL).
    PassThenRelease,
    /// Into the flow's queue ([`RxState::hold`]).
    Hold,
}

/// A verdict, and the held queue's new flush deadline, if it moved.
pub(super) struct Decision {
    pub verdict: Verdict,
    pub deadline: Option<Time>,
}

impl RxState {
    /// A data packet tagged `tag` arrives at `now`.
    pub fn on_data(&mut self, now: Time, p: &ConweaveParams, tag: &Tag) -> Decision {
        let pass = Decision {
            verdict: Verdict::Pass,
            deadline: None,
        };
        let new_epoch = match tag.epoch.cmp(&self.epoch) {
            // A straggler of an earlier epoch: nothing to wait for.
            std::cmp::Ordering::Less => return pass,
            std::cmp::Ordering::Greater => {
                self.epoch = tag.epoch;
                true
            }
            std::cmp::Ordering::Equal => false,
        };
        let tail = tag.flag == Flag::Tail;
        if !tag.rerouted {
            self.phase0_tx = tag.tx_time;
            self.phase0_rx = now;
        }
        let mut early = false;
        if new_epoch {
            self.rerouted = tail;
            early = tag.rerouted && !self.rerouted;
            self.phase0_seen = !tag.rerouted;
        } else {
            if tail {
                // While holding, the release sets it.
                self.rerouted |= !self.holding;
            } else {
                early = tag.rerouted && !self.rerouted;
            }
            self.phase0_seen |= !tag.rerouted;
        }
        if tail || tag.rerouted {
            self.tail_time = tag.tail_time;
        }
        // How long after the old path's latest packet the TAIL left the
        // source: the TAIL should arrive that long after it did.
        let gap = if self.phase0_seen {
            self.tail_time.saturating_sub(self.phase0_tx)
        } else {
            p.default_voq_wait
        };
        if !tag.rerouted {
            if !self.holding {
                return pass;
            }
            if tail {
                return Decision {
                    verdict: Verdict::PassThenRelease,
                    deadline: None,
                };
            }
            // An old-path packet while holding: the TAIL is still coming.
            return Decision {
                verdict: Verdict::Pass,
                deadline: Some(now + gap + p.extra_voq_flush),
            };
        }
        if !early {
            return pass;
        }
        let deadline = if self.holding {
            None
        } else {
            self.holding = true;
            let from = if self.phase0_seen {
                self.phase0_rx
            } else {
                now
            };
            Some((from + gap + p.extra_voq_flush).max(now))
        };
        Decision {
            verdict: Verdict::Hold,
            deadline,
        }
    }

    /// Keeps a packet [`Verdict::Hold`] named.
    pub fn hold(&mut self, hdr: Hdr) {
        self.held.push(hdr);
    }

    /// Ends the holding (TAIL or deadline): REROUTED packets go straight on
    /// from now; the held ones, in arrival order, are the caller's.
    pub fn release(&mut self) -> Vec<Hdr> {
        self.holding = false;
        self.rerouted = true;
        std::mem::take(&mut self.held)
    }

    pub fn held(&self) -> &[Hdr] {
        &self.held
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::time::US;

    fn tag(epoch: u32, rerouted: bool, flag: Flag, tx: Time, tail: Time) -> Tag {
        Tag {
            epoch,
            rerouted,
            flag,
            tx_time: tx,
            tail_time: tail,
            ..Tag::default()
        }
    }

    fn hdr(idx: u32) -> Hdr {
        let mut h = Hdr::of(3, 1048, true);
        h.idx = idx;
        h
    }

    /// REROUTED packets that overtake the TAIL wait; the TAIL passes and
    /// releases them in their order; later REROUTED packets pass.
    #[test]
    fn the_tail_releases_held_packets_in_order() {
        let p = ConweaveParams::DEFAULT;
        let mut rx = RxState::default();
        let d = rx.on_data(10 * US, &p, &tag(1, false, Flag::Init, 2 * US, 0));
        assert_eq!(d.verdict, Verdict::Pass);
        // Sent 2 us after the old path's packet: the TAIL is expected 2 us
        // after it arrived, plus the extra flush time.
        let d = rx.on_data(11 * US, &p, &tag(1, true, Flag::Data, 5 * US, 4 * US));
        assert_eq!(d.verdict, Verdict::Hold);
        assert_eq!(d.deadline, Some(10 * US + 2 * US + p.extra_voq_flush));
        rx.hold(hdr(1));
        let d = rx.on_data(12 * US, &p, &tag(1, true, Flag::Data, 6 * US, 4 * US));
        assert_eq!((d.verdict, d.deadline), (Verdict::Hold, None));
        rx.hold(hdr(2));
        // An old-path packet pushes the deadline.
        let d = rx.on_data(13 * US, &p, &tag(1, false, Flag::Data, 3 * US, 0));
        assert_eq!(d.verdict, Verdict::Pass);
        assert_eq!(d.deadline, Some(13 * US + US + p.extra_voq_flush));
        let d = rx.on_data(14 * US, &p, &tag(1, false, Flag::Tail, 4 * US, 4 * US));
        assert_eq!(d.verdict, Verdict::PassThenRelease);
        let out: Vec<u32> = rx.release().iter().map(|h| h.idx).collect();
        assert_eq!(out, [1, 2]);
        let d = rx.on_data(15 * US, &p, &tag(1, true, Flag::Data, 7 * US, 4 * US));
        assert_eq!(d.verdict, Verdict::Pass);
        assert!(rx.held().is_empty());
    }

    /// With no old-path packet seen, the queue waits the default time; the
    /// deadline's release lets later REROUTED packets pass, and the late
    /// TAIL (and stragglers of the epoch before) pass too.
    #[test]
    fn the_deadline_releases_when_the_tail_is_lost() {
        let p = ConweaveParams::DEFAULT;
        let mut rx = RxState::default();
        let d = rx.on_data(50 * US, &p, &tag(3, true, Flag::Data, 40 * US, 39 * US));
        assert_eq!(d.verdict, Verdict::Hold);
        assert_eq!(
            d.deadline,
            Some(50 * US + p.default_voq_wait + p.extra_voq_flush)
        );
        rx.hold(hdr(8));
        rx.hold(hdr(9));
        let out: Vec<u32> = rx.release().iter().map(|h| h.idx).collect();
        assert_eq!(out, [8, 9]);
        let d = rx.on_data(300 * US, &p, &tag(3, true, Flag::Data, 41 * US, 39 * US));
        assert_eq!(d.verdict, Verdict::Pass);
        let d = rx.on_data(301 * US, &p, &tag(3, false, Flag::Tail, 39 * US, 39 * US));
        assert_eq!(d.verdict, Verdict::Pass);
        let d = rx.on_data(302 * US, &p, &tag(2, true, Flag::Data, 30 * US, 29 * US));
        assert_eq!(d.verdict, Verdict::Pass);
    }
}
