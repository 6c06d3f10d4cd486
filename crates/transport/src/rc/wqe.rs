//! Work-queue types shared by every reliable-connection engine: the
//! receive WQE, the initiator depth for READs and atomics and the
//! responder's atomic replay cache, and the outcomes a requester or
//! responder half reports for one input. Plain data; uses only
//! `crate::psn`.

use crate::psn::Psn;

/// READ and atomic requests outstanding at most (IB's initiator depth,
/// `max_rd_atomic`). The responder replays a duplicate atomic from a cache
/// of this many results ([`ATOMIC_CACHE`]): an atomic the
/// requester goes back to must still be in it, or its response is never
/// sent again and the QP retransmits forever.
pub(crate) const MAX_RD_ATOMIC: usize = 16;

/// What processing an input changed, for the caller's bookkeeping.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Outcome {
    /// The packet was not valid for this QP.
    pub malformed: bool,
}

/// Results of the most recent atomics kept for replaying duplicates (IB's
/// responder resources, `max_dest_rd_atomic`): as many as the requester
/// keeps outstanding.
pub(crate) const ATOMIC_CACHE: usize = MAX_RD_ATOMIC;

/// A posted receive WQE: where SEND data goes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RecvWqe {
    pub wr_id: u64,
    pub addr: u64,
    pub len: u64,
}

/// What the responder wants sent back for one request packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reply {
    None,
    /// ACK/NACK with this PSN; the bool is the ECN echo (CE of the acked
    /// packets, to be used only in ACK-echo notification mode).
    Ack(Psn, bool),
    Nack(Psn, bool),
    /// IRN: NACK(cumulative PSN) selectively acknowledging the second PSN.
    Sack(Psn, Psn, bool),
}

/// Result of one request packet.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RxOutcome {
    pub reply: Reply,
    /// READ responses were queued (wake the QP's scheduler slot).
    pub read_queued: bool,
    pub malformed: bool,
}
