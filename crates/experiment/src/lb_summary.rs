//! What a load balancer that acts at ToRs did, for the outputs: the
//! `load_balancer` block of summary.json and its readable line, present
//! only when ConWeave runs (from `Network::conweave_stats`). Reads the
//! fabric; used by `report` only.

use serde::Serialize;

/// ConWeave's counters over the run (all ToRs).
#[derive(Serialize, Debug, Clone, PartialEq, Default)]
pub struct LoadBalancerSummary {
    pub scheme: &'static str,
    /// Flows moved to a new uplink after a reply deadline passed.
    pub reroutes: u64,
    /// REROUTED packets held at destination ToRs until their TAIL.
    pub held_packets: u64,
    /// Held queues released by their TAIL, and those flushed by their
    /// deadline (with the packets these released, possibly out of order).
    pub tail_releases: u64,
    pub timer_flushes: u64,
    pub timer_flushed_packets: u64,
    /// Control packets between ToRs: replies to INIT and TAIL, NOTIFYs of
    /// ECN-marked data, and their wire bytes.
    pub replies: u64,
    pub notifies: u64,
    pub control_bytes: u64,
}

pub fn summary(net: &fabric::Network) -> Option<LoadBalancerSummary> {
    let s = net.conweave_stats()?;
    Some(LoadBalancerSummary {
        scheme: "conweave",
        reroutes: s.reroutes,
        held_packets: s.held_packets,
        tail_releases: s.tail_releases,
        timer_flushes: s.timer_flushes,
        timer_flushed_packets: s.timer_flushed_packets,
        replies: s.replies,
        notifies: s.notifies,
        control_bytes: s.control_bytes,
    })
}

/// The readable summary's line.
pub fn render(s: &LoadBalancerSummary) -> String {
    format!(
        "{}: {} reroutes, {} packets held, {} queues released by TAIL, {} flushed by deadline ({} packets); {} replies, {} NOTIFYs ({} B)",
        s.scheme,
        s.reroutes,
        s.held_packets,
        s.tail_releases,
        s.timer_flushes,
        s.timer_flushed_packets,
        s.replies,
        s.notifies,
        s.control_bytes
    )
}
