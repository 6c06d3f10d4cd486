//! Flows as the fabric runs them: what to send (source, destination,
//! bytes, verb, start, how many messages and which are synchronise), what
//! happened (finish time, ideal time), and the records of all of them
//! that the flows application keeps (`Flows`; `app/flows.rs` runs it).

use std::collections::HashMap;

use engine::Time;
use transport::{Engine, Verb};

/// A flow moves `bytes` from `src` to `dst` with one RC queue pair. For
/// READ the destination is the requester (it reads the source's memory).
/// The bytes go as `messages` work requests posted at once on that QP; the
/// flow is done when the last one completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flow {
    pub src: u32,
    pub dst: u32,
    pub bytes: u64,
    pub start: Time,
    pub verb: Verb,
    /// The traffic class (scenario-level group) the flow belongs to.
    pub class: u16,
    /// The flow's engine: 0 for its NICs' own, else what
    /// [`crate::Network::add_engine`] returned.
    pub engine: u8,
    /// Work requests the bytes are split into (at least 1, at most
    /// `bytes`): equal sizes, the first `bytes % messages` one byte longer.
    /// (u16 fields fit the struct's padding: `Flow` stays 32 bytes.)
    pub messages: u16,
    /// The fraction of messages posted as MP-RDMA synchronise operations,
    /// in 1/10000 (0: none, 10000: all); see [`Flow::is_sync`].
    pub sync_per_10k: u16,
}

impl Flow {
    /// The length of message `i` (0-based).
    pub fn message_len(&self, i: u16) -> u64 {
        let n = self.messages as u64;
        self.bytes / n + u64::from((i as u64) < self.bytes % n)
    }

    /// Whether message `i` (0-based) is a synchronise operation: message i
    /// is one when floor((i + 1) x ratio) > floor(i x ratio), which spreads
    /// them evenly (ratio 0.2: every 5th; 0.8: 4 of every 5) and gives
    /// exactly round-down(messages x ratio) of them.
    pub fn is_sync(&self, i: u16) -> bool {
        let r = self.sync_per_10k as u64;
        (i as u64 + 1) * r / 10_000 > i as u64 * r / 10_000
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowResult {
    pub flow: Flow,
    /// When the requester saw the last work request complete.
    pub finish: Option<Time>,
    /// FCT of the flow alone on an idle fabric, by the HPCC ns-3 formula:
    /// base RTT (2 x path delay + one MTU serialised per hop) plus all wire
    /// bytes over the bottleneck rate.
    /// A flow below one packet has a slowdown below 1 by that formula,
    /// which counts a full MTU per hop; kept for comparability with HPCC
    /// ns-3's outputs.
    pub ideal: Time,
    /// What the flow takes alone on the idle path, as a write: its first
    /// packet (payload and headers) stored and forwarded at every hop, the
    /// rest of its wire bytes at the bottleneck behind it, and the ACK's
    /// serialisation on the way back. Close to `ideal` for flows of many
    /// packets; for a flow below one packet it is the lone packet's time,
    /// not a full MTU's.
    pub ideal_exact: Time,
    /// Host-local QP numbers at the requester and responder.
    pub requester_qp: u32,
    pub responder_qp: u32,
    /// Bytes of the flow's messages the requester saw complete: all of
    /// `flow.bytes` once finished; of an unfinished flow, its messages
    /// acknowledged (WRITE, SEND) or read (READ) whole. Counted per
    /// message completion, not per packet.
    pub delivered: u64,
}

impl FlowResult {
    pub fn fct(&self) -> Option<Time> {
        self.finish.map(|f| f - self.flow.start)
    }

    pub fn slowdown(&self) -> Option<f64> {
        self.fct().map(|f| f as f64 / self.ideal.max(1) as f64)
    }

    /// FCT over [`FlowResult::ideal_exact`].
    pub fn slowdown_exact(&self) -> Option<f64> {
        self.fct()
            .map(|f| f as f64 / self.ideal_exact.max(1) as f64)
    }

    /// Which host posts the work request.
    pub fn requester(&self) -> u32 {
        if self.flow.verb.reads() {
            self.flow.dst
        } else {
            self.flow.src
        }
    }

    pub fn responder(&self) -> u32 {
        if self.flow.verb.reads() {
            self.flow.src
        } else {
            self.flow.dst
        }
    }
}

/// A requester's QP and its responder's.
pub(crate) type QpPair = (u32, u32);

/// The flows and what became of them.
#[derive(Default)]
pub(crate) struct Flows {
    pub records: Vec<FlowResult>,
    pub done: usize,
    /// When the last flow finished.
    pub last_finish: Time,
    /// Engines flows may use instead of their NICs' own
    /// (`Flow::engine` - 1 indexes this).
    pub engines: Vec<Engine>,
    /// Each flow's UDP source port (ns-3's numbering under its hash, else
    /// drawn from the seed by flow id).
    pub sports: Vec<u16>,
    /// Payload bytes of each flow that reached the data's destination
    /// (duplicates included), counted from the start of sampling; empty
    /// (and not counted) unless flows are sampled, which spares each
    /// delivery two loads.
    pub rx_bytes: Vec<u64>,
    /// `QpSharing::PerPeer`: the QP pair the flows from a requester to a
    /// responder (under an engine) share, by (requester, responder,
    /// engine); None when each flow has its own.
    pub shared: Option<HashMap<(u32, u32, u8), QpPair>>,
}

impl Flows {
    /// No flows yet; `per_peer`: under `QpSharing::PerPeer`.
    pub fn new(per_peer: bool) -> Flows {
        Flows {
            shared: per_peer.then(HashMap::new),
            ..Flows::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(bytes: u64, messages: u16, sync_per_10k: u16) -> Flow {
        Flow {
            src: 0,
            dst: 1,
            bytes,
            start: 0,
            verb: Verb::Write,
            class: 0,
            engine: 0,
            messages,
            sync_per_10k,
        }
    }

    #[test]
    fn messages_split_the_bytes_evenly() {
        let f = flow(100_003, 7, 0);
        let lens: Vec<u64> = (0..7).map(|i| f.message_len(i)).collect();
        assert_eq!(lens.iter().sum::<u64>(), 100_003);
        assert_eq!(
            lens,
            [14_287, 14_286, 14_286, 14_286, 14_286, 14_286, 14_286]
        );
        assert_eq!(flow(5, 1, 0).message_len(0), 5);
        // The padding the two u16 fields took: a flow stays 32 bytes.
        assert_eq!(std::mem::size_of::<Flow>(), 32);
    }

    #[test]
    fn synchronise_messages_are_spread_at_the_ratio() {
        let which =
            |r: u16| -> Vec<u16> { (0..10).filter(|&i| flow(10, 10, r).is_sync(i)).collect() };
        assert_eq!(which(0), Vec::<u16>::new());
        assert_eq!(which(2_000), [4, 9]);
        assert_eq!(which(5_000), [1, 3, 5, 7, 9]);
        assert_eq!(which(8_000), [1, 2, 3, 4, 6, 7, 8, 9]);
        assert_eq!(which(10_000), (0..10).collect::<Vec<_>>());
        let n = (0..1280)
            .filter(|&i| flow(1280, 1280, 6_000).is_sync(i))
            .count();
        assert_eq!(n, 768);
    }
}
