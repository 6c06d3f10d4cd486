//! Switches: the ingress pipeline (`ingress.rs`: route -> load balance ->
//! admit -> enqueue), the egress pipeline (`egress.rs`: release -> mark ->
//! send), the egress queues with their disciplines, SRPT and the VOQ
//! switch model (`queues/`), the load balancers (`lb/`), ECN marking and
//! HPCC's stamping flag (`mark.rs`), the shared-buffer MMU (`mmu.rs`),
//! DIBS deflection (`deflect.rs`), packet trimming (`trim.rs`), RCM
//! (`rcm/`) and the window budget of
//! the calm test (`budget.rs`). This file holds a switch's own state and
//! the deflection setting and deflection's state, and the trimming
//! setting (the scheduling setting is the queues'); it touches nothing
//! else. See docs/extending.md, "Adding a switch feature".

mod budget;
mod deflect;
mod egress;
mod ingress;
pub(crate) mod int;
pub mod lb;
pub(crate) mod mark;
pub mod mmu;
pub mod queues;
pub mod rcm;
pub(crate) mod trim;

use crate::net::arena::Hdr;
use engine::{Rng, StreamKind, Time};
use mmu::{Mmu, Refusal};
pub use queues::{Scheduling, SrptDequeue};

/// The switches and what their pipelines keep by port or fabric-wide.
pub(crate) struct Switches {
    pub nodes: Vec<Switch>,
    /// The switches' load balancer (its state for every switch, side by
    /// side: a few lines for the whole fabric that stay in cache, where a
    /// field of each switch cost a cache line per hop).
    pub lb: lb::Balancer,
    /// The egress queues, by port (`queues/`: the class rings and the
    /// discipline, SRPT's or the VOQ model's).
    pub queues: queues::Queues,
    /// The egress markers, by port (`mark.rs`: ECN and HPCC's stamping).
    pub markers: Vec<mark::Marker>,
    /// DIBS deflection's state (`deflect.rs`; off without it).
    pub deflector: Deflector,
    /// RCM's state (`rcm/`; off without it).
    pub rcm: rcm::Rcm,
    /// Packet trimming's state (`trim.rs`; off without it).
    pub trimmer: trim::Trimmer,
    pub routes: crate::topo::routing::Routes,
    /// The window loop runs its instance compiled with the hooks
    /// (`ingress.rs`): the balancer acts in the hop beyond picking
    /// (`lb.at_tors() || lb.every_hop()`: ConWeave, CONGA), SRPT orders
    /// the data class, DIBS deflects or switches trim.
    pub hooks: bool,
}

/// What a lossy switch does with a packet its egress queue or buffer
/// refuses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Deflection {
    /// Drop it (counted).
    #[default]
    None,
    /// DIBS (Zarifis et al., EuroSys'14): send it out a random other port
    /// with room, at most `max_deflections` times in its life
    /// (`deflect.rs`).
    Dibs { max_deflections: u8 },
}

impl Deflection {
    /// DIBS's default bound on a packet's deflections.
    pub const MAX_DEFLECTIONS: u8 = 10;
    /// The names scenario files use (DIBS with its default bound).
    pub const NAMES: [(&'static str, Deflection); 2] = [
        ("none", Deflection::None),
        (
            "dibs",
            Deflection::Dibs {
                max_deflections: Deflection::MAX_DEFLECTIONS,
            },
        ),
    ];
}

/// Packet trimming as a scenario sets it (`trim.rs`): the threshold of a
/// port's data queue, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trimming {
    pub threshold_bytes: u64,
}

impl Trimming {
    /// htsim's UET runs: a data queue of one BDP (43 of its 4150-byte
    /// packets) on the 128-host, 100 Gb/s, 1 us fat tree, whose overflow
    /// trims.
    pub const DEFAULT_THRESHOLD_BYTES: u64 = 178_450;
}

/// One switch: its ports and its buffer.
pub(crate) struct Switch {
    /// Global ids of this switch's ports, by local index.
    pub ports: Vec<u32>,
    pub mmu: Mmu,
    /// The most bytes one of its links, and all of them, can bring in one
    /// window (for [`Mmu::calm`]).
    pub window_port_bytes: u64,
    pub window_bytes: u64,
}

/// A packet the MMU refused during the event being run.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Refused {
    pub s: u32,
    /// Its ingress port, local to the switch.
    pub in_local: u16,
    /// The egress port that refused it.
    pub out: u32,
    pub hdr: Hdr,
    pub refusal: Refusal,
}

/// What tells a packet from another that reused its arena slot: its
/// sender, QP, PSN and send time.
type Identity = (u32, u32, u32, Time);

/// Deflection's state for the whole fabric.
#[derive(Default)]
pub(crate) struct Deflector {
    /// DIBS is on: refused packets are recorded, not dropped.
    pub on: bool,
    max: u8,
    /// Refused packets of the event being run.
    pub refused: Vec<Refused>,
    /// A random stream per switch.
    rngs: Vec<Rng>,
    /// By arena slot: the packet last deflected there and its deflections.
    counts: Vec<(Identity, u8)>,
    /// The most deflections one packet has had.
    most: u8,
}

impl Deflector {
    pub fn new(d: Deflection, seed: u64, switches: u32) -> Deflector {
        match d {
            Deflection::None => Deflector::default(),
            Deflection::Dibs { max_deflections } => Deflector {
                on: true,
                max: max_deflections,
                rngs: (0..switches)
                    .map(|s| Rng::new(seed, StreamKind::Deflection, s as u64))
                    .collect(),
                ..Deflector::default()
            },
        }
    }
}
