//! Switches: the ingress pipeline (`ingress.rs`: route -> load balance ->
//! admit -> enqueue), the egress pipeline (`egress.rs`: release -> mark ->
//! send), the load balancers (`lb/`), ECN marking (`mark.rs`), the
//! shared-buffer MMU (`mmu.rs`), DIBS deflection (`deflect.rs`) and the
//! window budget of the calm test (`budget.rs`). This file holds a
//! switch's own state and the deflection setting; it touches nothing
//! else. See docs/extending.md, "Adding a switch feature".

mod budget;
mod deflect;
mod egress;
mod ingress;
pub mod lb;
mod mark;
pub mod mmu;

use engine::{Rng, StreamKind, Time};
use mmu::Mmu;

/// The most times one packet is deflected (a TTL against deflection loops).
pub const MAX_DEFLECTIONS: u8 = 8;

/// What a lossy switch does with a packet its egress queue or buffer
/// refuses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Deflection {
    /// Drop it (counted).
    #[default]
    None,
    /// DIBS (SIGCOMM'14): send it out a random other port with room (see
    /// `deflect.rs`).
    Dibs,
}

impl Deflection {
    /// The names scenario files use.
    pub const NAMES: [(&'static str, Deflection); 2] =
        [("none", Deflection::None), ("dibs", Deflection::Dibs)];
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

/// Deflection's state: a random stream per switch, and per arena slot the
/// identity of the packet last deflected there (its sender, QP, PSN and
/// send time) with its deflection count.
#[derive(Default)]
pub(crate) struct Deflector {
    pub rngs: Vec<Rng>,
    pub counts: Vec<(Identity, u8)>,
}

/// What tells a packet from another that reused its arena slot.
type Identity = (u32, u32, u32, Time);

impl Deflector {
    pub fn new(seed: u64, switches: u32) -> Deflector {
        Deflector {
            rngs: (0..switches)
                .map(|s| Rng::new(seed, StreamKind::Deflection, s as u64))
                .collect(),
            counts: Vec::new(),
        }
    }
}
