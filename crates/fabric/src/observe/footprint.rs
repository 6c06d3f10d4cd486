//! The simulator's own memory footprint: bytes per packet in flight and
//! per flow (not to be confused with `transport::Memory`, the hosts'
//! simulated DMA memory). Reads only.

use crate::host::flows::FlowResult;
use crate::host::Hosts;
use crate::link::frame::Frame;
use crate::net::arena::{Arena, Hdr};
use crate::net::core::Core;
use engine::Time;
use transport::Nic;

/// Simulator memory per packet in flight and per flow, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Footprint {
    pub packet_bytes: usize,
    /// Peak number of packets alive at once.
    pub peak_packets: usize,
    pub flow_bytes: usize,
}

/// What the simulator holds per packet in flight and per flow.
pub(crate) fn footprint(core: &Core, hosts: &Hosts) -> Footprint {
    use std::mem::size_of;
    Footprint {
        // The packet in the arena, its header in a queue or on a wire,
        // and its free-list entry.
        packet_bytes: Arena::SLOT_BYTES
            + size_of::<(Time, Frame)>().max(size_of::<Hdr>())
            + size_of::<u32>(),
        peak_packets: core.arena.peak(),
        // Its record, received-bytes counter, the QP-to-flow entries at
        // both ends, and the requester and responder QPs (as large as
        // this run's QPs are on average, boxes included).
        flow_bytes: size_of::<FlowResult>()
            + size_of::<u64>()
            + 2 * size_of::<u32>()
            + 2 * hosts.mean_qp_bytes(),
    }
}

impl Hosts {
    /// The mean fixed state of this run's QPs (a plain go-back-N QP's
    /// before any exists).
    pub(crate) fn mean_qp_bytes(&self) -> usize {
        let qps: usize = self.nodes.iter().map(|h| h.nic.num_qps()).sum();
        let bytes: usize = self.nodes.iter().map(|h| h.nic.qp_bytes()).sum();
        if qps == 0 {
            Nic::QP_BYTES
        } else {
            bytes.div_ceil(qps)
        }
    }
}
