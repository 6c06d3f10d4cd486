//! The readable summary `rdmalab run` prints on stdout, made from a run's
//! [`SummaryJson`] (README, "Reading the summary", explains each line). A
//! statistic of no values prints `n/a`, never 0. Touches nothing but the
//! summary it is given.

use crate::jobs::output::JobSummary;
use crate::report::SummaryJson;

/// What a statistic of finished flows reads when none finished.
const NO_FLOW: &str = "n/a (no flow finished)";

/// The readable summary printed on stdout.
pub fn render(s: &SummaryJson) -> String {
    let mut out = String::new();
    fn line(out: &mut String, k: &str, v: String) {
        out.push_str(&format!("  {k:<22} {v}\n"));
    }
    line(
        &mut out,
        "scenario",
        format!("{} (seed {})", s.scenario, s.seed),
    );
    let u = &s.setup;
    line(&mut out, "topology", u.topology.clone());
    line(
        &mut out,
        "transport",
        format!(
            "{}, congestion control {}, ordering {}",
            u.transport, u.congestion_control, u.ordering
        ),
    );
    line(
        &mut out,
        "switches",
        format!(
            "load balancer {}, PFC {}",
            u.load_balancer,
            if u.pfc {
                "on (lossless)"
            } else {
                "off (lossy)"
            }
        ),
    );
    if !s.overrides.is_empty() {
        let o: Vec<String> = s
            .overrides
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        line(&mut out, "overrides", o.join(" "));
    }
    line(
        &mut out,
        "fabric",
        format!(
            "{} hosts, {} switches, {} links",
            s.hosts, s.switches, s.links
        ),
    );
    line(
        &mut out,
        "simulated time",
        format!("{:.3} ms ({})", s.sim_time_ns as f64 / 1e6, s.end_state),
    );
    line(
        &mut out,
        "flows finished",
        format!("{} / {}", s.flows_finished, s.flows),
    );
    if let Some(m) = &s.measured {
        line(
            &mut out,
            "counted (warm-up)",
            format!(
                "{} flows starting after {} us ({} finished, {} unfinished); statistics below are theirs; offered {}, delivered {:.2} Gb/s",
                m.flows,
                m.warmup_us,
                m.flows_finished,
                m.flows_unfinished,
                m.offered_gbps.map_or("n/a".into(), |g| format!("{g:.2} Gb/s")),
                m.delivered_gbps
            ),
        );
    }
    if let Some(w) = &s.fct_over_time {
        line(
            &mut out,
            "FCT over time (us)",
            crate::measured::line(s.measured.as_ref().map(|m| m.warmup_us), w),
        );
    }
    line(
        &mut out,
        "FCT (us)",
        match (s.fct_ns.mean, s.fct_ns.p50, s.fct_ns.p99, s.fct_ns.max) {
            (Some(mean), Some(p50), Some(p99), Some(max)) => format!(
                "mean {:.2}  p50 {:.2}  p99 {:.2}  max {:.2}",
                mean / 1e3,
                p50 / 1e3,
                p99 / 1e3,
                max / 1e3
            ),
            _ => NO_FLOW.into(),
        },
    );
    let sd = &s.slowdown;
    line(
        &mut out,
        "slowdown",
        match (sd.mean, sd.p50, sd.p95, sd.p99) {
            (Some(mean), Some(p50), Some(p95), Some(p99)) => {
                format!("mean {mean:.3}  p50 {p50:.3}  p95 {p95:.3}  p99 {p99:.3}")
            }
            _ => NO_FLOW.into(),
        },
    );
    line(
        &mut out,
        "total goodput",
        format!(
            "{}; {:.2} Gb/s of payload delivered over the run",
            s.total_goodput_gbps
                .map_or(NO_FLOW.into(), |g| format!("{g:.2} Gb/s")),
            s.delivered_gbps
        ),
    );
    if s.flows_finished > 1 {
        out.push_str(&format!(
            "  slowdown by flow size  {:>13} {:>7} {:>8} {:>8} {:>8} {:>8}\n",
            "size [lo, hi)", "flows", "mean", "p50", "p95", "p99"
        ));
        for b in s.slowdown_by_size.iter().filter(|b| b.slowdown.count > 0) {
            let st = &b.slowdown;
            let v = |x: Option<f64>| x.unwrap_or(f64::NAN);
            out.push_str(&format!(
                "  {:<22} {:>13} {:>7} {:>8.3} {:>8.3} {:>8.3} {:>8.3}\n",
                "",
                // The bucket holds lo <= size < hi: a 1 MB flow is in
                // "1MB-10MB", not under a "<10MB" that reads as below.
                crate::report::size_bucket_label(b.lo_bytes, b.hi_bytes),
                st.count,
                v(st.mean),
                v(st.p50),
                v(st.p95),
                v(st.p99)
            ));
        }
    }
    for j in s.jobs.iter().flatten() {
        line(&mut out, &format!("job {}", j.name), j.render());
    }
    if let Some(all) = s.jobs.as_deref().and_then(JobSummary::render_all) {
        line(&mut out, "jobs", all);
    }
    let drops: Vec<String> = s
        .drops
        .iter()
        .filter(|(_, &n)| n > 0)
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    line(
        &mut out,
        "drops",
        if drops.is_empty() {
            "none".into()
        } else {
            drops.join(", ")
        },
    );
    line(
        &mut out,
        "PFC",
        format!(
            "{} pause, {} resume frames; paused time: switch ports mean {:.4}% max {:.4}%, host ports mean {:.4}% max {:.4}%",
            s.pause_frames,
            s.resume_frames,
            s.pfc_pause.switch_paused_fraction_mean * 100.0,
            s.pfc_pause.switch_paused_fraction_max * 100.0,
            s.pfc_pause.host_paused_fraction_mean * 100.0,
            s.pfc_pause.host_paused_fraction_max * 100.0
        ),
    );
    line(
        &mut out,
        "ECN",
        format!(
            "{} marked, {} notifications (CNP/echo) sent",
            s.ecn_marked, s.cnps_sent
        ),
    );
    for e in &s.ecn_ports {
        line(
            &mut out,
            &format!("ECN {}", e.port),
            format!(
                "{} of {} data packets marked (ratio {}), {:.2} Gb/s",
                e.ecn_marked,
                e.data_packets,
                e.mark_ratio.map_or("n/a".into(), |r| format!("{r:.4}")),
                e.tx_gbps
            ),
        );
    }
    line(
        &mut out,
        "retransmissions",
        format!(
            "{} packets, {} timeouts",
            s.retransmitted_packets, s.timeouts
        ),
    );
    line(
        &mut out,
        "reordering",
        crate::reorder::render(&s.reordering),
    );
    for (k, v) in s.ordering.iter().flat_map(crate::nic_memory::render) {
        line(&mut out, &k, v);
    }
    if let Some(lb) = &s.load_balancer {
        line(&mut out, "load balancer", crate::lb_summary::render(lb));
    }
    if let Some(r) = &s.rcm {
        line(&mut out, "rcm", crate::rcm_summary::render(r));
    }
    if let (Some(n), Some(st)) = (s.flows_hit_by_failures, &s.slowdown_hit_by_failures) {
        line(
            &mut out,
            "hit by failures",
            match (st.mean, st.p99) {
                (Some(mean), Some(p99)) => format!(
                    "{n} flows lost a packet to a failed link; {} of them finished, slowdown mean {mean:.3} p99 {p99:.3}",
                    st.count
                ),
                _ => format!("{n} flows lost a packet to a failed link; none of them finished"),
            },
        );
    }
    for (name, st) in &s.nic_state {
        line(
            &mut out,
            &format!("NIC state ({name})"),
            format!(
                "{} QPs, {} B bitmap + {} B other per QP",
                st.qps, st.bitmap_bytes_per_qp, st.other_bytes_per_qp
            ),
        );
    }
    if let Some(m) = &s.mprdma {
        line(
            &mut out,
            "MP-RDMA",
            format!(
                "{} B extra state per QP (paper: {} B); {} recoveries, {} early retx, {} OOO prunes, {} bitmap drops, {} sync drops, OOO degree p99.9 <= {} max {}",
                m.state_bytes_per_qp,
                m.paper_state_bytes,
                m.recoveries,
                m.early_retransmits,
                m.ooo_prunes,
                m.bitmap_drops,
                m.sync_drops,
                m.ood_p999,
                m.max_ooo_degree
            ),
        );
        if let Some(y) = &m.synchronise {
            line(
                &mut out,
                "synchronise",
                format!(
                    "{} messages, {} arrived early ({:.2}%)",
                    y.messages,
                    y.arrived_early,
                    100.0 * y.early_fraction
                ),
            );
        }
    }
    line(&mut out, "packet-hops", s.packet_hops.to_string());
    line(
        &mut out,
        "simulator memory",
        format!(
            "{} B per packet in flight (peak {} packets), {} B per flow",
            s.memory.bytes_per_packet, s.memory.peak_packets, s.memory.bytes_per_flow
        ),
    );
    line(
        &mut out,
        "conservation",
        if s.conservation_ok {
            "ok".into()
        } else {
            "VIOLATED".into()
        },
    );
    out
}
