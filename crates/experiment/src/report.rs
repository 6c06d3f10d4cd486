//! Outputs of a run: `flows.csv` (one row per flow, the information of
//! ns-3's fct.txt with names people read), `summary.json` (the scenario,
//! seed, version and every headline number), `slowdown_by_size.csv` and,
//! with collective jobs, `collectives.csv` (`crate::jobs::output`);
//! `crate::summary_text` prints the summary. A statistic of no values is
//! `null` (an empty cell in CSV), never 0. Files hold only simulated
//! quantities, so the same scenario and seed always give byte-identical
//! files.

use crate::files::write_atomic;
use crate::jobs::output::JobSummary;
use crate::reorder::{FlowReorder, ReorderingSummary};
use crate::run::Outcome;
use engine::stats::Summary;
use engine::time::{to_ns_f64, NS};
use fabric::DropReason;
use serde::Serialize;
use std::path::Path;
use transport::Verb;

#[derive(Serialize)]
pub struct FlowRow {
    pub flow_id: usize,
    pub src: u32,
    pub dst: u32,
    pub size_bytes: u64,
    pub start_ns: u64,
    pub fct_ns: Option<u64>,
    /// HPCC ns-3's ideal FCT (a full MTU per hop; see
    /// `fabric::FlowResult::ideal`), kept for comparability.
    pub ideal_fct_ns: u64,
    pub slowdown: Option<String>,
    /// Payload over FCT, Gb/s.
    pub goodput_gbps: Option<String>,
    pub verb: &'static str,
    pub class: String,
    /// Data packets of the flow that arrived above the next expected PSN
    /// (before any ordering layer), the largest out-of-order degree, and
    /// retransmissions that arrived as duplicates (see `crate::reorder`).
    pub ooo_packets: u64,
    pub ood_max: u64,
    pub reorder_retx: u64,
    /// The ideal with the flow's own first packet per hop
    /// (`fabric::FlowResult::ideal_exact`) and FCT over it: differs from
    /// the columns above for flows below one packet. Last, so that scripts
    /// reading the columns by position still read the others.
    pub ideal_fct_exact_ns: u64,
    pub slowdown_exact: Option<String>,
    /// Bytes of the flow's messages completed by the run's end
    /// (`fabric::FlowResult::delivered`): `size_bytes` for a finished flow.
    pub delivered_bytes: u64,
}

/// A statistic's values are `None` (null in JSON) when it has none
/// (`count` 0).
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Stat {
    pub count: usize,
    pub mean: Option<f64>,
    pub p50: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
    pub p999: Option<f64>,
    pub max: Option<f64>,
}

impl From<Summary> for Stat {
    fn from(s: Summary) -> Stat {
        let r = |x: f64| (s.count > 0).then(|| round4(x));
        Stat {
            count: s.count,
            mean: r(s.mean),
            p50: r(s.p50),
            p95: r(s.p95),
            p99: r(s.p99),
            p999: r(s.p999),
            max: r(s.max),
        }
    }
}

/// What the simulator held: bytes per packet in flight and per flow, the
/// peak number of packets, and what those come to.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct MemoryJson {
    pub bytes_per_packet: usize,
    pub peak_packets: usize,
    pub peak_packet_mb: f64,
    pub bytes_per_flow: usize,
    pub flows_mb: f64,
}

impl MemoryJson {
    fn of(net: &fabric::Network) -> MemoryJson {
        let m = net.footprint();
        let mb = |b: usize| (b as f64 / 1e6 * 1000.0).round() / 1000.0;
        MemoryJson {
            bytes_per_packet: m.packet_bytes,
            peak_packets: m.peak_packets,
            peak_packet_mb: mb(m.packet_bytes * m.peak_packets),
            bytes_per_flow: m.flow_bytes,
            flows_mb: mb(m.flow_bytes * net.flows().len()),
        }
    }
}

#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct SummaryJson {
    pub scenario: String,
    pub seed: u64,
    pub version: &'static str,
    /// The run's identity (`crate::out_dir::run_id`): every file of its
    /// folder is checked against it and `files`.
    pub run_id: String,
    /// SHA-256 of the scenario's text after `overrides` (`crate::ran`).
    pub scenario_sha256: String,
    /// `--set` and the sweep point's `--vary` values, in order.
    pub overrides: Vec<(String, String)>,
    /// Topology, transport, congestion control, load balancer, ordering
    /// and PFC.
    pub setup: crate::ran::Setup,
    /// Known traps of the setup, as warned on stderr (absent without).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    pub hosts: u32,
    pub switches: usize,
    pub links: usize,
    pub end_state: String,
    pub sim_time_ns: u64,
    pub flows: usize,
    pub flows_finished: usize,
    /// With `[output] warmup_us`: the flows counted (those starting after
    /// it), which every FCT and slowdown statistic below is over, and
    /// what they offered and got delivered (absent without).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured: Option<crate::measured::Measured>,
    /// With `[output] fct_window_us`: the mean FCT per window of start
    /// time (`fct_over_time.csv`; absent without).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fct_over_time: Option<Vec<crate::measured::FctWindow>>,
    pub fct_ns: Stat,
    pub slowdown: Stat,
    /// Sum of finished flows' payload over the span from the first start to
    /// the last finish (null when no flow finished).
    pub total_goodput_gbps: Option<f64>,
    /// Data payload delivered to the hosts over the simulated time, every
    /// flow's, finished or not (retransmitted copies included): the rate of
    /// long-lived flows that a stop time cut.
    pub delivered_gbps: f64,
    pub injected_packets: u64,
    pub delivered_packets: u64,
    pub dropped_packets: u64,
    pub drops: std::collections::BTreeMap<&'static str, u64>,
    pub in_flight_packets: u64,
    pub conservation_ok: bool,
    pub pause_frames: u64,
    pub resume_frames: u64,
    pub ecn_marked: u64,
    pub packet_hops: u64,
    pub events: u64,
    pub retransmitted_packets: u64,
    pub timeouts: u64,
    /// Congestion notifications (CNP packets and ECN-echo ACKs) sent by
    /// receivers and received by senders.
    pub cnps_sent: u64,
    pub cnps_received: u64,
    pub memory: MemoryJson,
    /// One bandwidth-delay product (host rate x the largest base RTT among
    /// the flows): the small/large flow boundary.
    pub bdp_bytes: u64,
    pub slowdown_small: Stat,
    pub slowdown_large: Stat,
    pub slowdown_by_size: Vec<SizeBucket>,
    pub pfc_pause: PauseSplit,
    /// NIC state of the QPs' engines, by transport ("roce",
    /// "irn"); see `transport::StateBytes`.
    pub nic_state: std::collections::BTreeMap<&'static str, crate::nic_memory::NicState>,
    /// Present when the QPs run MP-RDMA.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mprdma: Option<MpRdmaSummary>,
    /// Reordering at the receiving NICs (see `crate::reorder`).
    pub reordering: ReorderingSummary,
    /// A bitmap ordering layer's agents and NIC memory (absent without).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ordering: Option<crate::nic_memory::OrderingSummary>,
    /// The NICs' QP-context caches (absent without `[nic]
    /// qp_cache_entries`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qp_cache: Option<crate::nic_memory::QpCacheSummary>,
    /// What a load balancer acting at ToRs (ConWeave) did (absent for the
    /// others; see `crate::lb_summary`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_balancer: Option<crate::lb_summary::LoadBalancerSummary>,
    /// What RCM did (absent without it; `crate::rcm_summary`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rcm: Option<crate::rcm_summary::RcmSummary>,
    /// Totals of the `[output] ecn_ports`, in their order (absent without).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ecn_ports: Vec<EcnPort>,
    /// With `random_failures` faults: flows that lost a packet to a down
    /// link (absent without).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flows_hit_by_failures: Option<usize>,
    /// With `random_failures` faults: the slowdown of those of them that
    /// finished (Eunomia's Fig 2 looks at these flows only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowdown_hit_by_failures: Option<Stat>,
    /// DIBS (`deflection = "dibs"`, else absent): deflections, the most of one packet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deflected: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub most_deflections: Option<u8>,
    /// Packet trimming (`switch.trimming`, else absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trimming: Option<TrimmingSummary>,
    /// The collective jobs, in `[[jobs]]` order (absent without jobs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jobs: Option<Vec<JobSummary>>,
    /// The SHA-256 of every other file the run wrote into its folder, by
    /// name (filled by [`write_outputs`]; empty in memory).
    pub files: std::collections::BTreeMap<String, String>,
}

/// What the switches trimmed.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct TrimmingSummary {
    /// Data packets cut to their headers (once each: a trimmed packet is
    /// not trimmed again).
    pub trimmed_packets: u64,
    /// Egress ports that trimmed at least one.
    pub ports_trimming: usize,
}

/// One egress port's RED marking over the whole run.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct EcnPort {
    /// `<node>-><peer>`.
    pub port: String,
    /// Data packets RED decided on (control class and packets already
    /// marked upstream are not).
    pub data_packets: u64,
    pub ecn_marked: u64,
    /// `ecn_marked / data_packets` (null when no data packet left).
    pub mark_ratio: Option<f64>,
    /// Wire bytes sent over the run, and what that is as a rate.
    pub tx_bytes: u64,
    pub tx_gbps: f64,
}

fn ecn_ports(net: &fabric::Network, end: engine::Time) -> Vec<EcnPort> {
    net.sampled_ecn_ports()
        .iter()
        .map(|&p| {
            let st = net.ports()[p as usize].stats();
            let (marked, eligible) = net.ecn_counts(p);
            let ratio = (eligible > 0).then(|| marked as f64 / eligible as f64);
            EcnPort {
                port: net.port_name(p),
                data_packets: eligible,
                ecn_marked: marked,
                mark_ratio: ratio.map(|r| (r * 1e6).round() / 1e6),
                tx_bytes: st.tx_bytes,
                tx_gbps: round4(st.tx_bytes as f64 * 8.0 / to_ns_f64(end.max(1))),
            }
        })
        .collect()
}

/// MP-RDMA's per-connection state and its mechanisms' counters (all NICs).
#[derive(Serialize, Debug, Clone, PartialEq, Default)]
pub struct MpRdmaSummary {
    /// Extra state per connection over RoCEv2, as `transport::mprdma::state_fields` counts it.
    pub state_bytes_per_qp: u32,
    /// The paper's Table 1 total, for comparison.
    pub paper_state_bytes: u32,
    pub early_retransmits: u64,
    pub ooo_prunes: u64,
    pub window_reductions: u64,
    pub probes: u64,
    pub recoveries: u64,
    pub bitmap_drops: u64,
    pub sync_drops: u64,
    pub max_ooo_degree: u64,
    /// Out-of-order degree of new data packets (upper bounds of
    /// `transport::OodHistogram` buckets; every engine's packets).
    pub ood_p99: u64,
    pub ood_p999: u64,
    /// Only when synchronise operations were posted (so runs without any
    /// keep their summary unchanged).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synchronise: Option<SyncSummary>,
}

/// Synchronise operations and how many arrived out of order (paper Fig. 18:
/// "fraction of out-of-order synchronise messages"): a synchronise message
/// arrived early if the receiver dropped any of its packets because an
/// earlier message was incomplete (each message counted once; `sync_drops`
/// counts the dropped packets).
#[derive(Serialize, Debug, Clone, PartialEq, Default)]
pub struct SyncSummary {
    pub messages: u64,
    pub arrived_early: u64,
    pub early_fraction: f64,
}

/// MP-RDMA's block, when the NICs or any flow run it.
fn mprdma_summary(net: &fabric::Network) -> Option<MpRdmaSummary> {
    let cfg = std::iter::once(&net.nic(0).config().engine)
        .chain(net.flow_engines())
        .find_map(|r| match r {
            transport::Engine::MpRdma(c) => Some(*c),
            _ => None,
        })?;
    let mut m = MpRdmaSummary {
        state_bytes_per_qp: transport::mprdma::state_bytes(&cfg),
        paper_state_bytes: 66,
        ..MpRdmaSummary::default()
    };
    let mut ood = transport::OodHistogram::default();
    let mut sync = SyncSummary::default();
    for h in 0..net.host_count() {
        let st = net.nic(h).stats();
        m.early_retransmits += st.mp_early_retransmits;
        m.ooo_prunes += st.mp_ooo_prunes;
        m.window_reductions += st.mp_window_reductions;
        m.probes += st.mp_probes;
        m.recoveries += st.mp_recoveries;
        m.bitmap_drops += st.mp_bitmap_drops;
        m.sync_drops += st.mp_sync_drops;
        m.max_ooo_degree = m.max_ooo_degree.max(st.mp_max_ooo_degree);
        ood.merge(&st.ood);
        sync.messages += st.mp_sync_messages;
        sync.arrived_early += st.mp_sync_early;
    }
    m.ood_p99 = ood.quantile(0.99);
    m.ood_p999 = ood.quantile(0.999);
    if sync.messages > 0 {
        sync.early_fraction = sync.arrived_early as f64 / sync.messages as f64;
        m.synchronise = Some(sync);
    }
    Some(m)
}

/// Slowdown of the finished flows whose size is in [lo, hi).
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct SizeBucket {
    pub lo_bytes: u64,
    pub hi_bytes: Option<u64>,
    pub slowdown: Stat,
}

/// Fraction of the run each port spent paused by PFC, split as eunomia.txt
/// reports it: switch ports and host (NIC) ports.
#[derive(Serialize, Debug, Clone, PartialEq, Default)]
pub struct PauseSplit {
    pub switch_ports_paused: usize,
    pub switch_paused_fraction_mean: f64,
    pub switch_paused_fraction_max: f64,
    pub host_ports_paused: usize,
    pub host_paused_fraction_mean: f64,
    pub host_paused_fraction_max: f64,
    /// Each port that was paused: its paused time and PAUSEs received
    /// (left out when none was).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<crate::pfc_record::PausedPort>,
}

/// Flow-size bucket bounds of the slowdown table.
pub const SIZE_BUCKETS: [u64; 6] = [0, 10_000, 100_000, 1_000_000, 10_000_000, u64::MAX];

/// A size bucket's name, the one style of the summary, `compare` and the
/// report: `100KB-1MB` holds 100 KB <= size < 1 MB; `10MB-inf` has no
/// upper bound (`hi` None or `u64::MAX`).
pub fn size_bucket_label(lo: u64, hi: Option<u64>) -> String {
    match hi {
        Some(h) if h != u64::MAX => format!("{}-{}", size_label(lo), size_label(h)),
        _ => format!("{}-inf", size_label(lo)),
    }
}

/// A byte count in decimal units when it is a whole number of them:
/// `0`, `512B`, `10KB`, `1MB`, `1500KB`.
pub fn size_label(b: u64) -> String {
    match b {
        0 => "0".into(),
        b if b >= 1_000_000 && b % 1_000_000 == 0 => format!("{}MB", b / 1_000_000),
        b if b >= 1_000 && b % 1_000 == 0 => format!("{}KB", b / 1_000),
        b => format!("{b}B"),
    }
}

/// A CSV cell: empty for a statistic of no values.
fn cell(x: Option<f64>) -> String {
    x.map(|v| v.to_string()).unwrap_or_default()
}

fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

fn pause_split(o: &Outcome) -> PauseSplit {
    let net = &o.net;
    let end = o.end_time.max(1) as f64;
    let mut sw = Vec::new();
    let mut host = Vec::new();
    for (i, p) in net.ports().iter().enumerate() {
        let frac = p.paused_time_at(o.end_time) as f64 / end;
        if net.is_switch_port(i as u32) {
            sw.push(frac);
        } else {
            host.push(frac);
        }
    }
    let stats = |v: &[f64]| {
        let n = v.iter().filter(|&&f| f > 0.0).count();
        let mean = if v.is_empty() {
            0.0
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        };
        let max = v.iter().copied().fold(0.0, f64::max);
        (n, round4(mean * 100.0) / 100.0, round4(max * 100.0) / 100.0)
    };
    let (sn, smean, smax) = stats(&sw);
    let (hn, hmean, hmax) = stats(&host);
    PauseSplit {
        switch_ports_paused: sn,
        switch_paused_fraction_mean: smean,
        switch_paused_fraction_max: smax,
        host_ports_paused: hn,
        host_paused_fraction_mean: hmean,
        host_paused_fraction_max: hmax,
        ports: crate::pfc_record::paused_ports(net, o.end_time),
    }
}

fn verb_name(v: Verb) -> &'static str {
    match v {
        Verb::Write => "write",
        Verb::Read => "read",
        Verb::Send => "send",
        Verb::WriteImm => "write_imm",
        Verb::FetchAdd => "fetch_add",
        Verb::CmpSwap => "cmp_swap",
    }
}

pub fn flow_rows(o: &Outcome) -> Vec<FlowRow> {
    o.flows()
        .iter()
        .enumerate()
        .map(|(i, f)| (i, f, FlowReorder::of(&o.net, f)))
        .map(|(i, f, r)| FlowRow {
            flow_id: i,
            src: f.flow.src,
            dst: f.flow.dst,
            size_bytes: f.flow.bytes,
            start_ns: f.flow.start / NS,
            fct_ns: f.fct().map(|t| t / NS),
            ideal_fct_ns: f.ideal / NS,
            slowdown: f.slowdown().map(|s| format!("{s:.4}")),
            goodput_gbps: Outcome::goodput_bps(f).map(|g| format!("{:.4}", g / 1e9)),
            verb: verb_name(f.flow.verb),
            class: o
                .classes
                .get(f.flow.class as usize)
                .cloned()
                .unwrap_or_default(),
            ooo_packets: r.ooo_packets,
            ood_max: r.ood_max,
            reorder_retx: r.reorder_retx,
            ideal_fct_exact_ns: f.ideal_exact / NS,
            slowdown_exact: f.slowdown_exact().map(|s| format!("{s:.4}")),
            delivered_bytes: f.delivered,
        })
        .collect()
}

/// The summary of the run `o` of the scenario named `scenario`, made from
/// what `ran`.
pub fn summary(o: &Outcome, scenario: &str, seed: u64, ran: &crate::ran::Ran) -> SummaryJson {
    let net = &o.net;
    let c = o.counters();
    let finished = o.flows().iter().filter(|f| f.finish.is_some()).count();
    // The flows the statistics count: all, or those after the warm-up.
    let done: Vec<_> = o
        .flows()
        .iter()
        .filter(|f| f.finish.is_some() && ran.measure.counts(f))
        .collect();
    let fcts: Vec<f64> = done.iter().filter_map(|f| f.fct()).map(to_ns_f64).collect();
    let slow: Vec<f64> = done
        .iter()
        .filter_map(|f| f.slowdown())
        .map(|s| s.max(1.0))
        .collect();
    let goodput = (!done.is_empty()).then(|| {
        let first = done.iter().map(|f| f.flow.start).min().unwrap_or(0);
        let last = done.iter().filter_map(|f| f.finish).max().unwrap_or(0);
        let bytes: u64 = done.iter().map(|f| f.flow.bytes).sum();
        bytes as f64 * 8.0 / to_ns_f64(last.saturating_sub(first).max(1))
    });
    let (mut retx, mut timeouts, mut cnps_sent, mut cnps_received) = (0, 0, 0, 0);
    for h in 0..net.host_count() {
        let st = net.nic(h).stats();
        retx += st.retransmitted_packets;
        timeouts += st.timeouts;
        cnps_sent += st.cnps_sent;
        cnps_received += st.cnps_received;
    }
    let (in_flight, _) = net.in_flight();
    let bdp_bytes = o
        .flows()
        .iter()
        .map(|f| {
            let rtt = net.base_rtt(f.flow.src, f.flow.dst) as u128;
            (net.host_rate_bps(f.flow.src) as u128 * rtt / engine::time::SEC as u128 / 8) as u64
        })
        .max()
        .unwrap_or(0);
    let slow_where = |keep: &dyn Fn(u64) -> bool| -> Stat {
        let v: Vec<f64> = done
            .iter()
            .filter(|f| keep(f.flow.bytes))
            .filter_map(|f| f.slowdown())
            .map(|s| s.max(1.0))
            .collect();
        Summary::of(&v).into()
    };
    let hit = net.flows_hit_by_failures();
    let slowdown_by_size = SIZE_BUCKETS
        .windows(2)
        .map(|w| SizeBucket {
            lo_bytes: w[0],
            hi_bytes: (w[1] != u64::MAX).then_some(w[1]),
            slowdown: slow_where(&|b| b >= w[0] && b < w[1]),
        })
        .collect();
    SummaryJson {
        scenario: scenario.to_string(),
        seed,
        version: env!("CARGO_PKG_VERSION"),
        run_id: crate::out_dir::run_id(&ran.text, seed),
        scenario_sha256: crate::out_dir::sha256_hex(ran.text.as_bytes()),
        overrides: ran.overrides.clone(),
        setup: ran.setup.clone(),
        warnings: ran.warnings.clone(),
        hosts: net.host_count(),
        switches: net.topology().switch_count(),
        links: net.topology().links.len(),
        end_state: format!("{:?}", o.state),
        sim_time_ns: o.end_time / NS,
        flows: o.flows().len(),
        flows_finished: finished,
        measured: crate::measured::measured(&ran.measure, o.flows(), o.end_time),
        fct_over_time: crate::measured::over_time(&ran.measure, o.flows()),
        fct_ns: Summary::of(&fcts).into(),
        slowdown: Summary::of(&slow).into(),
        total_goodput_gbps: goodput.map(round4),
        delivered_gbps: round4(
            c.delivered_payload_bytes as f64 * 8.0 / to_ns_f64(o.end_time.max(1)),
        ),
        injected_packets: c.injected_packets,
        delivered_packets: c.delivered_packets,
        dropped_packets: c.total_dropped_packets(),
        drops: DropReason::ALL
            .iter()
            .map(|&r| (r.name(), c.dropped(r)))
            .collect(),
        in_flight_packets: in_flight,
        conservation_ok: net.check_conservation().is_ok(),
        pause_frames: c.pause_frames,
        resume_frames: c.resume_frames,
        ecn_marked: c.ecn_marked,
        packet_hops: c.packet_hops,
        events: c.events,
        retransmitted_packets: retx,
        timeouts,
        cnps_sent,
        cnps_received,
        memory: MemoryJson::of(net),
        bdp_bytes,
        slowdown_small: slow_where(&|b| b < bdp_bytes),
        slowdown_large: slow_where(&|b| b >= bdp_bytes),
        slowdown_by_size,
        pfc_pause: pause_split(o),
        mprdma: if net.host_count() > 0 {
            mprdma_summary(net)
        } else {
            None
        },
        nic_state: crate::nic_memory::nic_state(net),
        reordering: crate::reorder::summary(net, &o.jobs),
        ordering: crate::nic_memory::ordering(net),
        qp_cache: crate::nic_memory::qp_cache(net),
        load_balancer: crate::lb_summary::summary(net),
        rcm: crate::rcm_summary::summary(net),
        ecn_ports: ecn_ports(net, o.end_time),
        flows_hit_by_failures: hit.as_ref().map(|h| h.len()),
        slowdown_hit_by_failures: hit.map(|h| {
            let v: Vec<f64> = o
                .flows()
                .iter()
                .enumerate()
                .filter(|(i, _)| h.contains(&(*i as u32)))
                .filter_map(|(_, f)| f.slowdown())
                .map(|s| s.max(1.0))
                .collect();
            Summary::of(&v).into()
        }),
        deflected: net.deflected(),
        most_deflections: net.deflected().map(|_| net.most_deflections()),
        trimming: net.trimmed().map(|n| TrimmingSummary {
            trimmed_packets: n,
            ports_trimming: net.trimmed_by_port().iter().filter(|&&p| p > 0).count(),
        }),
        jobs: (!o.jobs.is_empty()).then(|| job_results(o).iter().map(JobSummary::of).collect()),
        files: Default::default(),
    }
}

/// What each collective job did, in `[[jobs]]` order.
pub fn job_results(o: &Outcome) -> Vec<crate::jobs::JobResult> {
    o.jobs
        .iter()
        .filter_map(|&id| crate::jobs::result(&o.net, id))
        .collect()
}

/// Writes `flows.csv`, `slowdown_by_size.csv`, and `series.csv`,
/// `fct_over_time.csv`,
/// `trace.pcap` and `pfc.csv` when asked for, `collectives.csv` when the
/// scenario has jobs, then `summary.json` with their digests, into `dir`
/// (created if missing), after removing the files an earlier run left
/// there (`crate::out_dir`). Each file is written to a temporary name and
/// renamed into place, so an interrupted run never leaves a half-written
/// file under the real name, nor a `summary.json` that lists files not
/// written.
pub fn write_outputs(o: &Outcome, s: &SummaryJson, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    crate::out_dir::clear_run(dir).map_err(|(p, e)| {
        std::io::Error::new(e.kind(), format!("{}: cannot remove: {e}", p.display()))
    })?;
    let mut files: Vec<(&str, Vec<u8>)> = Vec::new();
    let mut w = csv::Writer::from_writer(Vec::new());
    for row in flow_rows(o) {
        w.serialize(row).map_err(std::io::Error::other)?;
    }
    let csv = w
        .into_inner()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    files.push(("flows.csv", csv));
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["lo_bytes", "hi_bytes", "count", "mean", "p50", "p95", "p99"])
        .map_err(std::io::Error::other)?;
    for b in &s.slowdown_by_size {
        let st = &b.slowdown;
        w.write_record([
            b.lo_bytes.to_string(),
            b.hi_bytes.map(|h| h.to_string()).unwrap_or_default(),
            st.count.to_string(),
            cell(st.mean),
            cell(st.p50),
            cell(st.p95),
            cell(st.p99),
        ])
        .map_err(std::io::Error::other)?;
    }
    let table = w
        .into_inner()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    files.push(("slowdown_by_size.csv", table));
    let series = o.net.series();
    if !series.is_empty() {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(["time_ns", "series", "value"])
            .map_err(std::io::Error::other)?;
        for ts in series {
            for &(t, v) in &ts.points {
                w.write_record([(t / NS).to_string(), ts.name.clone(), format!("{v:.6}")])
                    .map_err(std::io::Error::other)?;
            }
        }
        let bytes = w
            .into_inner()
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        files.push(("series.csv", bytes));
        if let Some(t) = o.net.sampling_stopped() {
            eprintln!(
                "warning: series.csv: sampling stopped at {:.3} ms, at the most the series may \
                 hold ({} values); sample less often (output.sample_us) or over a window \
                 (output.until_us)",
                t as f64 / engine::time::MS as f64,
                fabric::MAX_SAMPLED_VALUES
            );
        }
    }
    if let Some(w) = &s.fct_over_time {
        files.push(("fct_over_time.csv", crate::measured::csv(w).into_bytes()));
    }
    if !o.jobs.is_empty() {
        let table = crate::jobs::output::csv(&job_results(o)).map_err(std::io::Error::other)?;
        files.push(("collectives.csv", table));
    }
    if let Some(pfc) = crate::pfc_record::pfc_csv(&o.net) {
        files.push(("pfc.csv", pfc.map_err(std::io::Error::other)?));
    }
    if let Some((trace, unencodable)) = o.net.pcap() {
        files.push(("trace.pcap", trace));
        if unencodable > 0 {
            eprintln!("warning: trace.pcap: {unencodable} packets left out (a field beyond its RoCEv2 range)");
        }
    }
    let mut s = s.clone();
    for (name, bytes) in &files {
        write_atomic(&dir.join(name), bytes)?;
        s.files
            .insert(name.to_string(), crate::out_dir::sha256_hex(bytes));
    }
    let mut json = serde_json::to_vec_pretty(&s).map_err(std::io::Error::other)?;
    json.push(b'\n');
    write_atomic(&dir.join(crate::out_dir::SUMMARY_FILE), &json)
}
