//! Reordering as the receiving NICs saw it, for the outputs: per flow (the
//! `ooo_packets`, `ood_max` and `reorder_retx` columns of flows.csv, from
//! the counters of the flow's two QPs, `transport::QpReorder`) and for the
//! run (the `reordering` block of summary.json and its readable line, from
//! the NICs' out-of-order-degree histograms, `NicStats::ood`).
//!
//! Measured before any ordering layer. A retransmission counts as
//! reordering-triggered when it reaches the receiver as a duplicate of data
//! already received (the original was late, not lost; a premature timeout
//! or a lost ACK also counts). The run's totals count the collective
//! jobs' QPs too. Reads the fabric's NICs, flows and jobs; used by
//! `report` only.

use crate::jobs::JobApp;
use fabric::{AppId, FlowResult, Network};
use serde::Serialize;

/// One flow's reordering: its requester's QP (READ responses) and its
/// responder's QP (requests) together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowReorder {
    pub ooo_packets: u64,
    pub ood_max: u64,
    pub reorder_retx: u64,
}

impl FlowReorder {
    pub fn of(net: &Network, f: &FlowResult) -> FlowReorder {
        let qp = |host: u32, qp: u32| net.nic(host).qp_reorder(qp).unwrap_or_default();
        let (a, b) = (
            qp(f.requester(), f.requester_qp),
            qp(f.responder(), f.responder_qp),
        );
        FlowReorder {
            ooo_packets: a.ooo_packets + b.ooo_packets,
            ood_max: a.ood_max.max(b.ood_max),
            reorder_retx: a.duplicates + b.duplicates,
        }
    }
}

/// The `reordering` block of summary.json.
#[derive(Serialize, Debug, Clone, PartialEq, Default)]
pub struct ReorderingSummary {
    /// New data packets that arrived at a NIC (before any ordering layer).
    pub data_packets: u64,
    /// Those whose PSN was above the next expected one.
    pub ooo_packets: u64,
    /// `ooo_packets / data_packets` (null without data packets).
    pub ooo_fraction: Option<f64>,
    /// Out-of-order degree (PSN minus the expected PSN, 0 in order) over
    /// all new data packets: the upper bound of the p99 bucket, and the
    /// largest seen.
    pub ood_p99: u64,
    pub ood_max: u64,
    /// Flows with at least one out-of-order packet.
    pub flows_reordered: usize,
    /// Retransmissions that arrived as duplicates of data already received.
    pub reorder_retx: u64,
}

/// The run's reordering: every flow's and every job's receiving QPs.
pub fn summary(net: &Network, jobs: &[AppId]) -> ReorderingSummary {
    let mut ood = transport::OodHistogram::default();
    for h in 0..net.host_count() {
        ood.merge(&net.nic(h).stats().ood);
    }
    let mut s = ReorderingSummary {
        data_packets: ood.count(),
        ood_p99: ood.quantile(0.99),
        ..ReorderingSummary::default()
    };
    for f in net.flows() {
        let r = FlowReorder::of(net, f);
        s.ooo_packets += r.ooo_packets;
        s.ood_max = s.ood_max.max(r.ood_max);
        s.reorder_retx += r.reorder_retx;
        s.flows_reordered += usize::from(r.ooo_packets > 0);
    }
    for app in jobs.iter().filter_map(|&id| net.app::<JobApp>(id)) {
        for (host, qp) in app.receiving_qps() {
            let r = net.nic(host).qp_reorder(qp).unwrap_or_default();
            s.ooo_packets += r.ooo_packets;
            s.ood_max = s.ood_max.max(r.ood_max);
            s.reorder_retx += r.duplicates;
        }
    }
    if s.data_packets > 0 {
        s.ooo_fraction = Some((s.ooo_packets as f64 / s.data_packets as f64 * 1e6).round() / 1e6);
    }
    s
}

/// The readable summary's line.
pub fn render(s: &ReorderingSummary) -> String {
    format!(
        "{} of {} data packets out of order ({}) in {} flows, degree p99 <= {} max {}, {} reordering-triggered retransmissions",
        s.ooo_packets,
        s.data_packets,
        s.ooo_fraction
            .map_or("n/a".into(), |f| format!("{:.4}%", f * 100.0)),
        s.flows_reordered,
        s.ood_p99,
        s.ood_max,
        s.reorder_retx
    )
}
