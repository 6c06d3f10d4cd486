//! What a switch shows its load balancer beyond the packet's header: its
//! ports' rates and egress queues, read only, and the time. Touches
//! nothing (a view).

use crate::link::port::Port;
use crate::switch::queues::Queues;
use engine::Time;

/// A read-only view of the switch for `Balancer::pick`. Queue-reading
/// schemes see exact queues: the ingress pipeline runs the candidate
/// ports' deferred transmission ends first (see `Balancer::reads_queues`).
#[derive(Clone, Copy)]
pub(crate) struct Sight<'a> {
    pub ports: &'a [Port],
    queues: &'a Queues,
    pub now: Time,
}

impl<'a> Sight<'a> {
    #[inline(always)]
    pub fn new(ports: &'a [Port], queues: &'a Queues, now: Time) -> Sight<'a> {
        Sight { ports, queues, now }
    }

    /// Bytes waiting in port `p`'s egress queue of `class` (the frame
    /// being serialised is not counted).
    #[inline(always)]
    pub fn queued(&self, p: u32, class: usize) -> u64 {
        self.queues.bytes(p, class)
    }
}

/// Ports and their queues for a load balancer's unit tests: port `p`
/// holds `bytes[p]` queued in `class` (the one place the tests build
/// them, so they follow wherever the queues go).
#[cfg(test)]
pub(crate) fn ports_holding(bytes: &[u64], class: usize) -> (Vec<Port>, Queues) {
    use crate::link::port::{End, PortEnds};
    use crate::switch::queues::Discipline;
    let mut queues = Queues::new(bytes.len(), Discipline::Fifo);
    let ports = (0..bytes.len() as u32)
        .map(|p| {
            let ends = PortEnds {
                node: 0,
                owner: End::Switch(0, p as u16),
                peer: End::Host(p),
            };
            queues.add_bytes(p, class, bytes[p as usize]);
            Port::new(ends, 100_000_000_000, 1_000, 1, p)
        })
        .collect();
    (ports, queues)
}
