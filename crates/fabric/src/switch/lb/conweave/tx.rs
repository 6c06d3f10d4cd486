//! ConWeave's source ToR, one flow: which epoch, uplink and request a
//! data packet carries (the artifact's TxToR pipeline), and what a reply
//! does to the flow. Pure state: the caller (`net.rs`) draws the uplinks
//! and tags and sends the packet. Touches only the flow's entry.

use super::{ConweaveParams, Flag, Tag};
use engine::Time;

/// No deadline: no reply is awaited.
const NEVER: Time = Time::MAX;
/// No uplink yet (a new flow).
pub(super) const NO_UPLINK: u32 = u32::MAX;

/// One flow at its source ToR.
#[derive(Clone, Copy, Debug)]
pub(super) struct TxState {
    /// When its latest packet passed.
    active: Time,
    /// Its epoch's reordering is settled (INIT answered in time, or the
    /// TAIL's reply came): the next packet starts a new epoch.
    stabilized: bool,
    /// When the INIT's reply is due ([`NEVER`]: none awaited).
    reply_deadline: Time,
    epoch: u32,
    /// The epoch's TAIL has been sent: packets go REROUTED.
    rerouted: bool,
    /// The uplink its packets take (after a TAIL, the new one).
    pub uplink: u32,
    /// When the epoch's TAIL left (0: none).
    tail_time: Time,
}

impl Default for TxState {
    fn default() -> Self {
        TxState {
            active: 0,
            stabilized: false,
            reply_deadline: NEVER,
            epoch: 0,
            rerouted: false,
            uplink: NO_UPLINK,
            tail_time: 0,
        }
    }
}

/// A data packet's ConWeave fields, and whether the flow was rerouted.
pub(super) struct Sent {
    pub tag: Tag,
    pub rerouted_flow: bool,
}

impl TxState {
    /// A data packet of the flow at `now`. `base_rtt` is the ToR-to-ToR
    /// round trip; `draw` draws a candidate uplink and says whether it is
    /// good (not paused), asked only when the flow may move.
    pub fn on_data(
        &mut self,
        now: Time,
        p: &ConweaveParams,
        base_rtt: Time,
        draw: impl FnOnce() -> (u32, bool),
    ) -> Sent {
        let new = self.uplink == NO_UPLINK;
        let expired = new || self.active.saturating_add(p.tx_expiry) < now;
        // A new epoch begins after an idle expiry or once settled.
        let fresh = expired || self.stabilized;
        self.stabilized = false;
        self.active = now;
        let mut timeout = false;
        if fresh {
            self.reply_deadline = now + base_rtt + p.extra_reply_deadline;
        } else if self.reply_deadline < now {
            self.reply_deadline = NEVER;
            timeout = true;
        }
        if fresh {
            self.epoch += 1;
            self.rerouted = false;
        }
        // The TAIL itself still belongs to the old path.
        let pkt_rerouted = self.rerouted && !timeout;
        let mut rerouted_flow = false;
        let pkt_uplink = if expired {
            let (cand, good) = draw();
            if new || good {
                self.uplink = cand;
            }
            self.uplink
        } else if timeout {
            self.rerouted = true;
            let old = self.uplink;
            let (cand, good) = draw();
            if good {
                self.uplink = cand;
                rerouted_flow = true;
            }
            old
        } else {
            self.uplink
        };
        if timeout {
            self.tail_time = now;
        } else if fresh {
            self.tail_time = 0;
        }
        let flag = if fresh {
            Flag::Init
        } else if timeout {
            Flag::Tail
        } else {
            Flag::Data
        };
        Sent {
            tag: Tag {
                epoch: self.epoch,
                rerouted: pkt_rerouted,
                flag,
                uplink: pkt_uplink,
                tx_time: now,
                tail_time: self.tail_time,
                ..Tag::default()
            },
            rerouted_flow,
        }
    }

    /// A reply for `epoch` reached the source ToR at `now`: to the TAIL
    /// (`tail`) or to the INIT. It counts only for the flow's current epoch
    /// and phase; an INIT reply only before its deadline.
    pub fn on_reply(&mut self, now: Time, epoch: u32, tail: bool) {
        if epoch != self.epoch || tail != self.rerouted {
            return;
        }
        if tail || now < self.reply_deadline {
            self.stabilized = true;
            self.reply_deadline = NEVER;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::time::US;

    /// A flow whose INIT is answered in time keeps its uplink and starts a
    /// new epoch; one whose reply is late sends a TAIL on the old uplink,
    /// then REROUTED packets on the new one, until the TAIL's reply.
    #[test]
    fn late_reply_makes_a_tail_then_rerouted_packets() {
        let p = ConweaveParams::DEFAULT;
        let rtt = 4 * US;
        let mut st = TxState::default();
        let first = st.on_data(0, &p, rtt, || (7, true)).tag;
        assert_eq!((first.epoch, first.flag, first.uplink), (1, Flag::Init, 7));
        st.on_reply(5 * US, 1, false);
        let next = st.on_data(6 * US, &p, rtt, || panic!("no draw")).tag;
        assert_eq!((next.epoch, next.flag, next.uplink), (2, Flag::Init, 7));
        // No reply by 6 + 4 + 4 us.
        let mid = st.on_data(13 * US, &p, rtt, || panic!("no draw")).tag;
        assert_eq!((mid.flag, mid.rerouted), (Flag::Data, false));
        let tail = st.on_data(15 * US, &p, rtt, || (9, true));
        assert!(tail.rerouted_flow);
        assert_eq!((tail.tag.flag, tail.tag.uplink), (Flag::Tail, 7));
        assert!(!tail.tag.rerouted);
        let after = st.on_data(16 * US, &p, rtt, || panic!("no draw")).tag;
        assert_eq!((after.epoch, after.uplink), (2, 9));
        assert!(after.rerouted && after.tail_time == 15 * US);
        // An INIT reply of the old phase is ignored; the TAIL's counts.
        st.on_reply(17 * US, 2, false);
        assert!(
            st.on_data(18 * US, &p, rtt, || panic!("no draw"))
                .tag
                .rerouted
        );
        st.on_reply(19 * US, 2, true);
        let settled = st.on_data(20 * US, &p, rtt, || panic!("no draw")).tag;
        assert_eq!(
            (settled.epoch, settled.flag, settled.rerouted),
            (3, Flag::Init, false)
        );
        // Idle past the expiry: a fresh draw.
        let back = st
            .on_data(20 * US + p.tx_expiry + 1, &p, rtt, || (3, true))
            .tag;
        assert_eq!((back.epoch, back.uplink), (4, 3));
    }
}
