//! Switches: the ingress pipeline (`ingress.rs`: route -> load balance ->
//! admit -> enqueue), the egress pipeline (`egress.rs`: release -> mark ->
//! send), the load balancers (`lb/`), ECN marking (`mark.rs`), the
//! shared-buffer MMU (`mmu.rs`), SRPT scheduling of the egress queues
//! (`srpt.rs`) and the window budget of the calm test (`budget.rs`). This
//! file holds a switch's own state and the scheduling setting; it touches
//! nothing else. See docs/extending.md, "Adding a switch feature".

mod budget;
mod egress;
mod ingress;
pub mod lb;
mod mark;
pub mod mmu;
pub(crate) mod srpt;

use mmu::Mmu;

/// How a switch port orders the queued packets of the data class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scheduling {
    /// In arrival order.
    #[default]
    Fifo,
    /// Smallest remaining message first, ties in arrival order (`srpt.rs`).
    Srpt,
}

impl Scheduling {
    /// The names scenario files use.
    pub const NAMES: [(&'static str, Scheduling); 2] =
        [("fifo", Scheduling::Fifo), ("srpt", Scheduling::Srpt)];
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
