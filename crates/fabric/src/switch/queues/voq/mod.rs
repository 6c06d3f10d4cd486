//! The input-and-output-queued switch model (`SwitchModel::Voq`, RCM's
//! switch, Shi et al. section 4.1): for the NICs' data class, every input
//! port holds one virtual output queue (VOQ) per output port, all of them
//! together at most `queue` bytes, and every output port one output queue
//! (OQ) of at most `queue` bytes. A packet that arrives joins the VOQ of
//! its input toward its output; whenever the output queue has room, the
//! crossbar (infinitely fast: no time passes) moves the head of the next
//! non-empty VOQ in round-robin order over the inputs into it, so inputs
//! share an output equally whatever their loads; the output queue is sent
//! in order. PFC is driven by the input queues: an input pauses its
//! upstream when its bytes reach `queue` less the port's headroom, and
//! resumes it `resume_offset` bytes below that. The other classes (ACKs,
//! CNPs) keep today's output queues and shared-buffer MMU.
//!
//! The packets stay outside the ports' rings (a discipline of
//! [`Queues`](super::Queues), as SRPT is): the class's byte count covers
//! its OQ and every VOQ toward it (what the queue series show and the load
//! balancers that read queues see), its backlog bit its OQ; ECN marks on
//! the OQ alone. The model runs in the event loop's hooked instance;
//! `pipeline.rs` holds its steps. This file holds the model's state and
//! touches nothing else.

pub(crate) mod pipeline;

use crate::net::arena::Hdr;
use std::collections::VecDeque;

/// Which switch architecture the data class sees.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SwitchModel {
    /// Output queues in one shared buffer with the HPCC ns-3 MMU (today's).
    #[default]
    SharedBuffer,
    /// Input-and-output queued with VOQs; every queue at most `queue`
    /// bytes.
    Voq { queue: u64 },
}

impl SwitchModel {
    /// The paper's queue size: 100 KB.
    pub const QUEUE_BYTES: u64 = 100_000;
    /// The names scenario files use (VOQ with the paper's queues).
    pub const NAMES: [(&'static str, SwitchModel); 2] = [
        ("shared_buffer", SwitchModel::SharedBuffer),
        (
            "voq",
            SwitchModel::Voq {
                queue: SwitchModel::QUEUE_BYTES,
            },
        ),
    ];
}

/// The VOQ model's state for the whole fabric.
pub(crate) struct Voq {
    /// The class the model queues.
    pub class: usize,
    /// Bytes of one input's VOQs together, and of one output queue.
    pub queue: u64,
    /// By output port (global id), by input (local index): the VOQs.
    pub voqs: Vec<Vec<VecDeque<Hdr>>>,
    /// By output port: its output queue and the bytes in it.
    pub oq: Vec<VecDeque<Hdr>>,
    pub oq_bytes: Vec<u64>,
    /// By input port (global id): bytes in its VOQs, whether it has its
    /// upstream paused, and its PAUSE threshold.
    pub in_bytes: Vec<u64>,
    pub in_paused: Vec<bool>,
    pub xoff: Vec<u64>,
    pub resume_offset: u64,
    pub pfc: bool,
    /// By output port: the input the round robin asks first.
    pub rr: Vec<u16>,
}

impl Voq {
    /// The packets the model holds at output port `p` (its OQ and every
    /// VOQ toward it).
    pub fn queued(&self, p: u32) -> impl Iterator<Item = &Hdr> + '_ {
        let oq = self.oq.get(p as usize).into_iter().flatten();
        let voqs = self
            .voqs
            .get(p as usize)
            .into_iter()
            .flatten()
            .flat_map(|q| q.iter());
        oq.chain(voqs)
    }
}
