//! What a transfer prints: goodput, packets, retransmissions, drops by
//! reason at both ends, and a latency histogram of its messages (post to
//! completion), readable first and then as one parseable line.
//!
//! Plain data: uses nothing of the crate but the counters' types.

use std::fmt::Write;

use crate::endpoint::{Drops, IoCounts};
use crate::impair::ImpairCounts;
use crate::session::Job;

/// One finished transfer, as the client saw it.
#[derive(Clone, Debug)]
pub struct Report {
    pub job: Job,
    pub seconds: f64,
    /// Message latencies, nanoseconds, in completion order.
    pub latencies_ns: Vec<u64>,
    pub io: IoCounts,
    pub retransmitted: u64,
    pub timeouts: u64,
    /// Congestion notifications received and the rate cuts they made.
    pub cnps_received: u64,
    pub rate_decreases: u64,
    pub data_packets: u64,
    /// Dropped at the client: before the NIC, then by the NIC.
    pub drops: Drops,
    pub nic_drops: Vec<(String, u64)>,
    pub impaired: ImpairCounts,
    /// What the server reported it dropped, and the data packets it
    /// sent again (READ responses).
    pub server_drops: Vec<(String, u64)>,
    pub server_retransmitted: u64,
    pub checksum: u32,
}

impl Report {
    pub fn goodput_gbps(&self) -> f64 {
        self.job.bytes as f64 * 8.0 / self.seconds.max(1e-9) / 1e9
    }

    pub fn render(&self) -> String {
        let j = &self.job;
        let mut sorted = self.latencies_ns.clone();
        sorted.sort_unstable();
        let us = |q: f64| quantile(&sorted, q) as f64 / 1e3;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "net {} {}: {} bytes in {} messages over {} QP(s), MTU {}, verified (crc32 {:08x})",
            j.transport.name(),
            j.verb.name(),
            j.bytes,
            self.latencies_ns.len(),
            j.qps,
            j.mtu,
            self.checksum
        );
        let _ = writeln!(
            s,
            "  goodput {:.3} Gb/s in {:.3} s; {} datagrams sent ({:.0}/s, {} send calls), {} received ({} recv calls)",
            self.goodput_gbps(),
            self.seconds,
            self.io.datagrams_sent,
            self.io.datagrams_sent as f64 / self.seconds.max(1e-9),
            self.io.send_calls,
            self.io.datagrams_received,
            self.io.recv_calls
        );
        let _ = writeln!(
            s,
            "  retransmitted {} of {} data packets, {} timeouts, {} CE-marked at the receive queue; impairment dropped {}, duplicated {}, reordered {}",
            self.retransmitted,
            self.data_packets,
            self.timeouts,
            self.io.ce_marked,
            self.impaired.dropped,
            self.impaired.duplicated,
            self.impaired.reordered
        );
        let _ = writeln!(s, "  dropped here: {}", drops_line(&self.all_drops()));
        let _ = writeln!(
            s,
            "  dropped at the server: {}; it retransmitted {} data packets",
            drops_line(&self.server_drops),
            self.server_retransmitted
        );
        let _ = writeln!(
            s,
            "  latency (us): p50 {:.1}  p99 {:.1}  max {:.1}",
            us(0.5),
            us(0.99),
            us(1.0)
        );
        s.push_str(&histogram(&self.latencies_ns));
        let _ = writeln!(
            s,
            "net transport={} cc={} verb={} qps={} mtu={} bytes={} seconds={:.6} goodput_gbps={:.3} pps={:.0} retransmitted={} timeouts={} p50_us={:.1} p99_us={:.1}",
            j.transport.name(),
            j.cc.name(),
            j.verb.name(),
            j.qps,
            j.mtu,
            j.bytes,
            self.seconds,
            self.goodput_gbps(),
            self.io.datagrams_sent as f64 / self.seconds.max(1e-9),
            self.retransmitted,
            self.timeouts,
            us(0.5),
            us(0.99),
        );
        s
    }

    /// The client's drops by reason: before the NIC, then the NIC's.
    pub fn all_drops(&self) -> Vec<(String, u64)> {
        let mut v = drops_list(&self.drops);
        v.extend(self.nic_drops.iter().cloned());
        v
    }
}

/// Quantile `q` of sorted values (0 when there are none).
fn quantile(sorted: &[u64], q: f64) -> u64 {
    match sorted.len() {
        0 => 0,
        n => sorted[((n - 1) as f64 * q).round() as usize],
    }
}

/// The endpoint's drops by reason, named as printed.
pub fn drops_list(d: &Drops) -> Vec<(String, u64)> {
    vec![
        ("unknown_peer".into(), d.unknown_peer),
        ("truncated".into(), d.truncated),
        ("malformed".into(), d.malformed),
        ("bad_checksum".into(), d.checksum),
        ("outside_window".into(), d.outside_window),
        ("length_mismatch".into(), d.length_mismatch),
    ]
}

/// The NIC's own drops by reason.
pub fn nic_drops(s: &transport::NicStats) -> Vec<(String, u64)> {
    vec![
        ("nic_invalid_qp_or_psn".into(), s.malformed_dropped),
        ("nic_outside_region".into(), s.access_errors),
        ("nic_duplicate".into(), s.duplicates_received),
        ("nic_out_of_order".into(), s.out_of_order_dropped),
        ("nic_beyond_window".into(), s.beyond_window_dropped),
        ("nic_no_receive_posted".into(), s.rnr_drops),
    ]
}

fn drops_line(v: &[(String, u64)]) -> String {
    let nonzero: Vec<String> = v
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    if nonzero.is_empty() {
        "none".into()
    } else {
        nonzero.join(", ")
    }
}

/// Power-of-two microsecond buckets, one line each with a bar.
fn histogram(ns: &[u64]) -> String {
    let mut buckets = [0u64; 40];
    for &l in ns {
        let us = l / 1000;
        let b = (64 - us.leading_zeros()) as usize;
        buckets[b.min(39)] += 1;
    }
    let most = buckets.iter().copied().max().unwrap_or(0).max(1);
    let mut s = String::new();
    for (b, &n) in buckets.iter().enumerate().filter(|(_, &n)| n > 0) {
        let lo = if b == 0 { 0 } else { 1u64 << (b - 1) };
        let bar = "#".repeat(((n * 40).div_ceil(most)) as usize);
        let _ = writeln!(s, "    [{lo:>8}, {:>8}) us {n:>8} {bar}", 1u64 << b);
    }
    s
}
