//! Go-back-N (RoCEv2 RC): in-order reception at the responder, cumulative
//! ACKs, one NACK per gap, go-back-N retransmission and one RTO at the
//! requester. Files: [`requester`], [`responder`]; this file joins them
//! into the engine the QP's dispatch calls ([`GoBackN`]).
//!
//! May use `crate::api`, `crate::rc`, `crate::packet`, `crate::psn` and
//! `crate::memory`; nothing else of the crate.

pub(crate) mod requester;
pub(crate) mod responder;

use crate::packet::{Packet, PacketKind};
use crate::psn::Psn;
use crate::rc::halves::{Halves, ReadReply};
use crate::rc::{Ctx, Outcome, RxOutcome};

/// Go-back-N's requester and responder halves of one QP, in this order
/// (`repr(C)`): see the QP's line layout.
#[derive(Debug)]
#[repr(C)]
pub(crate) struct GoBackN {
    pub req: requester::Requester,
    pub resp: responder::Responder,
}

impl GoBackN {
    /// A QP that sends from PSN `sq` and expects its peer's from `rq`.
    pub fn new(sq: Psn, rq: Psn) -> GoBackN {
        GoBackN {
            req: requester::Requester::new(sq),
            resp: responder::Responder::new(rq),
        }
    }
}

impl Halves for GoBackN {
    #[inline(always)]
    fn on_request(&mut self, cx: &mut Ctx, pkt: &Packet) -> RxOutcome {
        self.resp.on_request(cx, pkt)
    }

    #[inline(always)]
    fn on_read_response(&mut self, cx: &mut Ctx, pkt: &Packet) -> (Outcome, Option<ReadReply>) {
        (self.req.on_read_response(cx, pkt), None)
    }

    #[inline(always)]
    fn on_ack(&mut self, cx: &mut Ctx, pkt: &Packet) -> Outcome {
        if pkt.kind == PacketKind::Ack {
            self.req.on_ack(cx.now, cx.qp, pkt.psn, cx.cfg, cx.events)
        } else {
            self.req.on_nack(cx.now, cx.qp, pkt.psn, cx.cfg, cx.events)
        }
    }

    #[inline(always)]
    fn snd_nxt(&self) -> Psn {
        self.req.span().1
    }

    /// Go-back-N does not acknowledge READ responses.
    #[inline(always)]
    fn on_read_ack(&mut self, _cx: &mut Ctx, _pkt: &Packet) -> Outcome {
        Outcome { malformed: true }
    }
}
