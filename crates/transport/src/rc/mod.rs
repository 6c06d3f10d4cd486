//! What every reliable-connection (RC) engine shares: segmentation
//! ([`segment`]), the data-packet builder ([`build`]), work-queue types
//! and outcomes ([`wqe`]), the context a
//! handler gets and the construction of control packets ([`ctx`]), and the
//! packet handling common to the engines built from a requester and a
//! responder half ([`halves`]: go-back-N and IRN).
//!
//! May use `crate::api`, `crate::packet`, `crate::psn`, `crate::memory`,
//! `crate::cc` and `crate::dcqcn`; never an engine, the QP or the NIC.

pub(crate) mod build;
pub(crate) mod ctx;
pub(crate) mod halves;
pub(crate) mod segment;
pub(crate) mod wqe;

pub(crate) use build::{data_packet, fetch_payload, Data};
pub(crate) use ctx::{Conn, Ctx};
pub(crate) use segment::{
    npkts, offset_of, payload_of, psn_room, reserve_psns, response_payload, wqe_npkts,
};
pub(crate) use wqe::{Outcome, RecvWqe, Reply, RxOutcome, ATOMIC_CACHE, MAX_RD_ATOMIC};
