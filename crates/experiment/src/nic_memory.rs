//! NIC memory for loss recovery and ordering, for summary.json:
//! `nic_state` ([`NicState`]: each engine's fixed per-QP bytes) and the
//! `ordering` block ([`OrderingSummary`], present only with a bitmap
//! ordering layer: `ordering = "eunomia"` or `"static_bitmap"`): what the
//! receiver and sender agents did, summed over the NICs, and the NIC
//! memory of bitmaps and their metadata per NIC (peak, from each NIC's
//! memory controller) and per connection (peak bitmap bytes of each QP
//! that had a bitmap), beside `nic_state`'s fixed per-QP costs; what
//! waiting for a WRITE's last packet cost (`last_packet`); when `[output]
//! ordering_memory` sampled it, its time averages; and the block's lines
//! in the readable summary (`render`). Also the `qp_cache` block
//! ([`QpCacheSummary`], present with `[nic] qp_cache_entries`).

use serde::Serialize;

/// NIC memory the QPs of one transport need for loss recovery and ordering.
#[derive(Serialize, Debug, Clone, PartialEq, Default)]
pub struct NicState {
    /// QPs (two per flow: requester and responder side).
    pub qps: u64,
    pub bitmap_bytes_per_qp: u64,
    pub other_bytes_per_qp: u64,
    pub total_bytes: u64,
}

/// The `nic_state` block: by engine name, its QPs and their fixed bytes.
pub fn nic_state(net: &fabric::Network) -> std::collections::BTreeMap<&'static str, NicState> {
    let mut m = std::collections::BTreeMap::new();
    for h in 0..net.host_count() {
        let nic = net.nic(h);
        for q in 0..nic.num_qps() as u32 {
            let Ok(r) = nic.qp_engine(q) else { continue };
            let b = r.state_bytes();
            let e: &mut NicState = m.entry(r.name()).or_default();
            e.qps += 1;
            e.bitmap_bytes_per_qp = b.bitmap_bytes;
            e.other_bytes_per_qp = b.other_bytes;
            e.total_bytes += b.bitmap_bytes + b.other_bytes;
        }
    }
    m
}

#[derive(Serialize, Debug, Clone, PartialEq, Default)]
pub struct OrderingSummary {
    pub layer: &'static str,
    pub sacks_sent: u64,
    pub nacks_sent: u64,
    pub beyond_cap_dropped: u64,
    /// Eunomia: packets of connections the memory controller had no room
    /// for (dropped and NACKed: the sender's recovery resends them).
    pub untracked_dropped: u64,
    pub bitmaps_made: u64,
    pub bitmaps_freed: u64,
    /// Out-of-order packets tracked (placed, and handed to the engine
    /// once in order).
    pub tracked_packets: u64,
    /// Bitmap and metadata bytes of a NIC at its peak: the largest and
    /// the mean over NICs.
    pub nic_peak_bytes_max: u64,
    pub nic_peak_bytes_mean: f64,
    /// Bitmap and metadata bytes still in use at the end (all NICs).
    pub end_bitmap_bytes: u64,
    pub end_metadata_bytes: u64,
    /// QPs that ever had a bitmap, and the largest and mean of their
    /// peak bitmap bytes.
    pub qps_with_bitmap: u64,
    pub qp_peak_bitmap_bytes_max: u64,
    pub qp_peak_bitmap_bytes_mean: f64,
    /// Where a WRITE's last packet waits (`last_packet`).
    pub last_packet: &'static str,
    /// Sender hold: last packets of WRITEs held until every earlier PSN
    /// was acknowledged, and their mean wait (about one RTT).
    pub sender_held_packets: u64,
    pub sender_hold_mean_us: f64,
    /// Last packets of WRITEs that arrived out of order and waited in
    /// host memory (the receiver hold), and their payload bytes: each
    /// crosses PCIe twice more (read back, then placed).
    pub receiver_held_packets: u64,
    pub receiver_held_bytes: u64,
    /// With `[output] ordering_memory`: each of its series averaged over
    /// the run's samples (absent without).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampled: Option<SampledMemory>,
}

/// The ordering-memory series (`fabric::ORDERING_SERIES`) averaged over
/// the samples: over time, the NICs' mean and max bitmap bytes and bitmap
/// plus metadata bytes (Eunomia Fig 18(c)'s "average total bytes taken by
/// all bitmaps on a NIC measured at small intervals").
#[derive(Serialize, Debug, Clone, PartialEq, Default)]
pub struct SampledMemory {
    pub samples: u64,
    pub bitmap_bytes_mean: f64,
    pub bitmap_bytes_max: f64,
    pub total_bytes_mean: f64,
    pub total_bytes_max: f64,
}

/// The averages of the ordering-memory series, if they were sampled.
fn sampled(net: &fabric::Network) -> Option<SampledMemory> {
    let series = net.series();
    let avg = |name: &str| {
        let s = series.iter().find(|s| s.name == name)?;
        let sum: f64 = s.points.iter().map(|&(_, v)| v).sum();
        Some((
            s.points.len() as u64,
            round3(sum / s.points.len().max(1) as f64),
        ))
    };
    let [b_mean, b_max, t_mean, t_max] = fabric::ORDERING_SERIES;
    let (samples, bitmap_bytes_mean) = avg(b_mean)?;
    Some(SampledMemory {
        samples,
        bitmap_bytes_mean,
        bitmap_bytes_max: avg(b_max)?.1,
        total_bytes_mean: avg(t_mean)?.1,
        total_bytes_max: avg(t_max)?.1,
    })
}

fn round3(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}

/// The `ordering` block, or None without a bitmap layer.
pub fn ordering(net: &fabric::Network) -> Option<OrderingSummary> {
    let n = net.host_count();
    let kind = (n > 0).then(|| net.nic(0).config().ordering)?;
    let mut s = OrderingSummary {
        layer: kind.name(),
        last_packet: kind.last_packet()?.name(),
        ..OrderingSummary::default()
    };
    let (mut peaks, mut qp_peaks, mut hold_ps) = (0u64, 0u64, 0u64);
    for h in 0..n {
        let nic = net.nic(h);
        let m = nic.order_memory()?;
        let st = nic.stats();
        s.sacks_sent += st.eunomia_sacks_sent;
        s.nacks_sent += st.eunomia_nacks_sent;
        s.beyond_cap_dropped += st.eunomia_beyond_cap_dropped;
        s.untracked_dropped += st.eunomia_untracked_dropped;
        s.bitmaps_made += st.eunomia_bitmaps_made;
        s.bitmaps_freed += st.eunomia_bitmaps_freed;
        s.tracked_packets += st.ordering_held;
        s.sender_held_packets += st.eunomia_sender_held;
        hold_ps += st.eunomia_sender_hold_ps;
        s.receiver_held_packets += st.eunomia_receiver_held;
        s.receiver_held_bytes += st.eunomia_receiver_held_bytes;
        s.nic_peak_bytes_max = s.nic_peak_bytes_max.max(m.peak_bytes);
        peaks += m.peak_bytes;
        s.end_bitmap_bytes += m.bitmap_bytes;
        s.end_metadata_bytes += m.metadata_bytes;
        for q in 0..nic.num_qps() as u32 {
            let Ok((_, peak)) = nic.qp_bitmap_bits(q) else {
                continue;
            };
            if peak > 0 {
                let bytes = u64::from(peak.div_ceil(8));
                s.qps_with_bitmap += 1;
                s.qp_peak_bitmap_bytes_max = s.qp_peak_bitmap_bytes_max.max(bytes);
                qp_peaks += bytes;
            }
        }
    }
    let mean = |sum: u64, k: u64| {
        if k == 0 {
            0.0
        } else {
            round3(sum as f64 / k as f64)
        }
    };
    s.nic_peak_bytes_mean = mean(peaks, n as u64);
    s.qp_peak_bitmap_bytes_mean = mean(qp_peaks, s.qps_with_bitmap);
    // To the nanosecond.
    s.sender_hold_mean_us = (mean(hold_ps, s.sender_held_packets) / 1e3).round() / 1e3;
    s.sampled = sampled(net);
    Some(s)
}

/// The `ordering` block as the readable summary's lines: what the agents
/// did, then the NIC memory (peaks, and the sampled averages if any).
pub fn render(o: &OrderingSummary) -> [(String, String); 2] {
    let hold = if o.last_packet == "sender_hold" {
        format!(
            "{} last packets held at the sender, {:.3} us mean",
            o.sender_held_packets, o.sender_hold_mean_us
        )
    } else {
        format!(
            "{} last packets held at the receiver ({} B)",
            o.receiver_held_packets, o.receiver_held_bytes
        )
    };
    let agents = format!(
        "{} SACKs, {} NACKs; dropped {} beyond the cap, {} untracked; {} bitmaps made, {} freed; {} packets tracked; {hold}",
        o.sacks_sent,
        o.nacks_sent,
        o.beyond_cap_dropped,
        o.untracked_dropped,
        o.bitmaps_made,
        o.bitmaps_freed,
        o.tracked_packets
    );
    let mut memory = format!(
        "NIC peak {} B max, {:.1} B mean; per connection peak bitmap {} B max, {:.1} B mean ({} QPs)",
        o.nic_peak_bytes_max,
        o.nic_peak_bytes_mean,
        o.qp_peak_bitmap_bytes_max,
        o.qp_peak_bitmap_bytes_mean,
        o.qps_with_bitmap
    );
    if let Some(m) = &o.sampled {
        memory.push_str(&format!(
            "; over {} samples, bitmap {:.1} B max NIC ({:.1} mean), total {:.1} B max NIC ({:.1} mean)",
            m.samples, m.bitmap_bytes_max, m.bitmap_bytes_mean, m.total_bytes_max, m.total_bytes_mean
        ));
    }
    [
        (format!("ordering ({})", o.layer), agents),
        ("ordering memory".into(), memory),
    ]
}

/// The `qp_cache` block (`[nic] qp_cache_entries`; absent without a
/// cache): QP contexts fetched, received packets that waited for the
/// NIC's pipeline, and the most QPs one NIC had.
#[derive(Serialize, Debug, Clone, PartialEq, Default)]
pub struct QpCacheSummary {
    pub entries: u32,
    pub miss_ns: f64,
    pub misses: u64,
    pub held_packets: u64,
    pub max_qps_per_nic: u64,
}

pub fn qp_cache(net: &fabric::Network) -> Option<QpCacheSummary> {
    let n = net.host_count();
    let cfg = (n > 0).then(|| net.qp_cache(0))??.config();
    let mut s = QpCacheSummary {
        entries: cfg.entries,
        miss_ns: engine::time::to_ns_f64(cfg.miss),
        ..QpCacheSummary::default()
    };
    for h in 0..n {
        if let Some(c) = net.qp_cache(h) {
            s.misses += c.misses;
            s.held_packets += c.held_packets;
        }
        s.max_qps_per_nic = s.max_qps_per_nic.max(net.nic(h).num_qps() as u64);
    }
    Some(s)
}
