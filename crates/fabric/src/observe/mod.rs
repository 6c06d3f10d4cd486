//! What a run reports and how it is checked: counters (`counters.rs`),
//! time series (`sampling.rs`), a pcap trace (`capture.rs`, `pcap.rs`),
//! the PFC record (`pfc_log.rs`), invariants (`checks.rs`) and the
//! simulator's memory footprint (`footprint.rs`). Reads the fabric; the
//! counters are written by the components that count. The sampler's
//! state and the names of its series, plain data, are here.

mod capture;
pub(crate) mod checks;
pub mod counters;
pub mod footprint;
pub mod pcap;
pub mod pfc_log;
mod sampling;

use engine::stats::TimeSeries;
use engine::Time;

/// What observes the run beyond the counters: port sampling, the pcap
/// trace and the PFC record (none unless asked for), and whether the
/// trace still takes records.
pub(crate) struct Observe {
    pub sampling: Option<Sampling>,
    pub capture: Option<Box<pcap::Capture>>,
    pub capturing: bool,
    pub pfc_log: Option<Vec<pfc_log::PfcEvent>>,
}

/// The ordering-memory series, in the order they are recorded: over the
/// NICs, the mean and the max of bitmap bytes, then of bitmap plus
/// metadata bytes.
pub const ORDERING_SERIES: [&str; 4] = [
    "ordering_bitmap_bytes_mean",
    "ordering_bitmap_bytes_max",
    "ordering_total_bytes_mean",
    "ordering_total_bytes_max",
];

/// The RCM state series of each sampled port (`rcm_ports`), in order:
/// the output queue's quantised degree, the input queue's, the remote
/// degree while the flag holds (else 0), the point (0 none, 1 root, 2
/// edge, 3 inner) and the congestion window Wc in bytes (W when not
/// controlling).
pub const RCM_SERIES: [&str; 5] = [
    "rcm_fb",
    "rcm_in_fb",
    "rcm_fbr",
    "rcm_point",
    "rcm_wc_bytes",
];

/// The most values the series may hold (16 bytes each: 320 MB): a run
/// whose sampled window's end is known is refused beyond it before it
/// starts; one whose end is not stops sampling there.
pub const MAX_SAMPLED_VALUES: u64 = 20_000_000;

/// What to sample, and how often.
#[derive(Clone, Debug, Default)]
pub struct SampleSpec {
    pub interval: Time,
    /// Samples are recorded from this time on (the counters behind rates
    /// are read once an interval before it), and none after `until`: a
    /// run whose traffic starts late need not record its idle start.
    pub from: Time,
    pub until: Option<Time>,
    /// Egress ports whose queue length and utilisation to record.
    pub ports: Vec<u32>,
    /// Flows whose throughput and sending rate to record.
    pub flows: Vec<u32>,
    /// Egress ports whose ECN marking ratio to record.
    pub ecn_ports: Vec<u32>,
    /// The ordering layer's NIC memory over the NICs (needs a bitmap
    /// layer): the mean and the max of bitmap bytes and of bitmap plus
    /// metadata bytes in use.
    pub ordering_memory: bool,
    /// Switch ports whose RCM state to record (needs RCM): the output's
    /// degree Fb, the input's, the remote degree Fbr while its flag holds,
    /// the point (0 none, 1 root, 2 edge, 3 inner) and the window Wc.
    pub rcm_ports: Vec<u32>,
    /// Switches (topology node ids) whose buffer occupancy, the bytes
    /// their MMU holds, to record.
    pub switches: Vec<u32>,
}

/// The sampler's state: the spec, the previous sample's counts and the
/// series.
pub(crate) struct Sampling {
    pub spec: SampleSpec,
    pub last_tx: Vec<u64>,
    pub last_rx: Vec<u64>,
    /// (marked, eligible) of each ECN port at the previous sample.
    pub last_ecn: Vec<(u64, u64)>,
    /// The switch index of each of `spec.switches`.
    pub switches: Vec<u32>,
    pub series: Vec<TimeSeries>,
    /// When sampling stopped at [`MAX_SAMPLED_VALUES`] (None: it did
    /// not).
    pub stopped: Option<Time>,
    /// Samples recorded so far.
    pub recorded: u64,
}
