//! IRN (Mittal et al., "Revisiting Network Support for RDMA", SIGCOMM'18):
//! RDMA without PFC. Selective repeat with SACK-carrying NACKs and two
//! retransmission timeouts, BDP flow control, and out-of-order placement
//! that keeps RDMA semantics (paper §5, `papers/irn-implementation.txt`):
//!
//! - every request packet can be placed on its own: WRITE packets carry
//!   their remote address, SEND packets their receive WQE sequence number
//!   and offset, READ/atomic requests their read WQE sequence number;
//! - the responder keeps a 2-bitmap over the BDP window: "arrived", and
//!   "last packet of a message" whose action (MSN advance, receive WQE
//!   expiry with a CQE, READ/atomic execution) runs only once everything
//!   before it has arrived; CQEs are made early and delivered in order;
//! - READ and atomic responses have their own PSN space, are acknowledged
//!   by read (N)ACKs from the requester and are recovered by the read
//!   responder's own selective repeat and timeouts.
//!
//! PSNs of both spaces and the WQE sequence numbers are the QP's 32-bit
//! serial numbers, 24 bits on the wire, and wrap around (`crate::psn`).
//!
//! Files: `config`, `headers` (the bytes its packets add to RoCE's), `bitmap` (circular bitmap), `window` (selective-repeat
//! sender and receiver windows), `requester`, `responder`; this file joins
//! the halves into the engine the QP's dispatch calls (`IrnQp`). May use
//! `crate::api`, `crate::rc`, `crate::packet`, `crate::psn` and
//! `crate::memory`; nothing else of the crate.

pub(crate) mod bitmap;
pub(crate) mod config;
pub(crate) mod headers;
pub(crate) mod requester;
pub(crate) mod responder;
pub(crate) mod window;

pub use config::{IrnConfig, MAX_BDP_PACKETS};
pub use headers::MAX_EXTRA_HEADER_BYTES;

use crate::packet::Packet;
use crate::psn::Psn;
use crate::rc::halves::{Halves, ReadReply};
use crate::rc::{Ctx, Outcome, RxOutcome};

/// IRN's requester and responder halves of one QP.
#[derive(Debug)]
pub(crate) struct IrnQp {
    pub req: requester::Requester,
    pub resp: responder::Responder,
}

impl IrnQp {
    /// A QP that sends from PSN `sq` and expects its peer's from `rq`.
    pub fn new(cfg: IrnConfig, sq: Psn, rq: Psn) -> IrnQp {
        IrnQp {
            req: requester::Requester::new(cfg, sq),
            resp: responder::Responder::new(cfg, rq),
        }
    }
}

impl Halves for IrnQp {
    #[inline]
    fn on_request(&mut self, cx: &mut Ctx, pkt: &Packet) -> RxOutcome {
        self.resp.on_request(cx, pkt)
    }

    #[inline]
    fn on_read_response(&mut self, cx: &mut Ctx, pkt: &Packet) -> (Outcome, Option<ReadReply>) {
        self.req.on_read_response(cx, pkt)
    }

    #[inline]
    fn on_ack(&mut self, cx: &mut Ctx, pkt: &Packet) -> Outcome {
        self.req.on_ack(cx.now, cx.qp, pkt, cx.events)
    }

    #[inline]
    fn on_read_ack(&mut self, cx: &mut Ctx, pkt: &Packet) -> Outcome {
        self.resp.on_read_ack(cx.now, pkt)
    }

    #[inline]
    fn snd_nxt(&self) -> Psn {
        self.req.win.nxt
    }
}
