//! What RCM did, for the outputs: the `rcm` block of summary.json and its
//! readable line, present only when `[switch.rcm] enabled` (from
//! `Network::rcm_stats`). Reads the fabric; used by `report` only.

use serde::Serialize;

/// RCM's counters over the run (all switches).
#[derive(Serialize, Debug, Clone, PartialEq, Default)]
pub struct RcmSummary {
    /// Congestion notifications sent upstream (clearing ones included),
    /// those that told of congestion, and their wire bytes.
    pub notifications: u64,
    pub congested_notifications: u64,
    pub notification_bytes: u64,
    /// Congestion-window cuts (local samples and notifications).
    pub window_cuts: u64,
    /// Packets of harmful flows RCC held back at least once, and bytes.
    pub throttled_packets: u64,
    pub throttled_bytes: u64,
    /// Flows SAR moved off their port (once per switch), and the packets
    /// that took a detour.
    pub detoured_flows: u64,
    pub detoured_packets: u64,
    /// Detours SAR let go once the flow's own port was no longer pressed.
    pub released_detours: u64,
}

pub fn summary(net: &fabric::Network) -> Option<RcmSummary> {
    let s = net.rcm_stats()?;
    Some(RcmSummary {
        notifications: s.notifications,
        congested_notifications: s.congested_notifications,
        notification_bytes: s.notification_bytes,
        window_cuts: s.window_cuts,
        throttled_packets: s.throttled_packets,
        throttled_bytes: s.throttled_bytes,
        detoured_flows: s.detoured_flows,
        detoured_packets: s.detoured_packets,
        released_detours: s.released_detours,
    })
}

/// The readable summary's line.
pub fn render(s: &RcmSummary) -> String {
    format!(
        "{} notifications ({} of congestion, {} B), {} window cuts, {} packets throttled ({} B), {} flows detoured ({} packets, {} detours let go)",
        s.notifications,
        s.congested_notifications,
        s.notification_bytes,
        s.window_cuts,
        s.throttled_packets,
        s.throttled_bytes,
        s.detoured_flows,
        s.detoured_packets,
        s.released_detours
    )
}
