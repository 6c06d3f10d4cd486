//! Flows as the fabric runs them: what to send (source, destination,
//! bytes, verb, start) and what happened (finish time, ideal time).

use engine::Time;
use transport::Verb;

/// A flow moves `bytes` from `src` to `dst` with one RC queue pair. For
/// READ the destination is the requester (it reads the source's memory).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flow {
    pub src: u32,
    pub dst: u32,
    pub bytes: u64,
    pub start: Time,
    pub verb: Verb,
    /// The traffic class (scenario-level group) the flow belongs to.
    pub class: u16,
    /// The flow's reliability scheme: 0 for its NICs' own, else what
    /// [`crate::Network::add_reliability`] returned.
    pub reliability: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowResult {
    pub flow: Flow,
    /// When the requester saw the work request complete.
    pub finish: Option<Time>,
    /// FCT of the flow alone on an idle fabric, by the HPCC ns-3 formula:
    /// base RTT (2 x path delay + one MTU serialised per hop) plus all wire
    /// bytes over the bottleneck rate.
    pub ideal: Time,
    /// Host-local QP numbers at the requester and responder.
    pub requester_qp: u32,
    pub responder_qp: u32,
}

impl FlowResult {
    pub fn fct(&self) -> Option<Time> {
        self.finish.map(|f| f - self.flow.start)
    }

    pub fn slowdown(&self) -> Option<f64> {
        self.fct().map(|f| f as f64 / self.ideal.max(1) as f64)
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
