//! Switches: the ingress pipeline (`ingress.rs`: route -> load balance ->
//! admit -> enqueue), the egress pipeline (`egress.rs`: release -> mark ->
//! send), the load balancers (`lb/`), ECN marking (`mark.rs`), the
//! shared-buffer MMU (`mmu.rs`) and the window budget of the calm test
//! (`budget.rs`). This file holds a switch's own state; it touches nothing
//! else. See docs/extending.md, "Adding a switch feature".

mod budget;
mod egress;
mod ingress;
pub mod lb;
mod mark;
pub mod mmu;

use mmu::Mmu;

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
