//! RCM, regional congestion mitigation (Shi et al., "Regional Congestion
//! Mitigation in Lossless Datacenter Networks"), on the VOQ switch model
//! (`switch/queues/voq/`): its parameters and its state for every port of the
//! fabric. The behaviour is in `net.rs` (CRD, fast congestion region
//! detection: Fb on input and output queues, the flags, the notifications
//! upstream and their reception; RCC, the congestion window an output's
//! crossbar keeps for the harmful flows) and `sar.rs` (switch-level
//! adaptive routing). CFR, congestion flow recognition, is the cyclic CAM
//! of sampled flow IDs per output kept here. A flow's ID is its 5-tuple:
//! source host and UDP source port ([`Hdr::flow`]) and destination.
//!
//! CFR samples the packets passing an output queue (section 3.3), each at
//! random with a probability proportional to its bytes, so a flow's share
//! of the samples is its share of the port's bytes whatever the order the
//! packets come in (a sample every n-th packet locked onto round-robin
//! arrivals: in Fig 6 every 4th packet was the burst's, every 5th an
//! incast flow's). The harmful flows are those holding at least their
//! even share of the CAM's entries ("the flow with relatively higher
//! bandwidth will be sampled with higher probability"): with a CAM deeper
//! than the number of flows, every flow would be in it.
//!
//! Congestion degrees follow QCN's congestion point, as the paper says:
//! Fb = Qoff + wq x Qdelta (bytes; Qoff = Q - Qeq, Qdelta = Q - Q at the
//! previous sample), positive when congested, quantised to 6 bits over
//! Fbmax = (1 + 2 wq) Qeq (QCN's range), so Fbmax is 63 in the units of
//! `gd`. This file is plain data: it touches nothing else.

pub(crate) mod net;
pub(crate) mod sar;

use crate::net::arena::Hdr;
use engine::{Rng, StreamKind, Time};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// The largest quantised congestion degree (6 bits, as QCN's).
pub const FB_MAX: u32 = 63;

/// No input yet (a switch has at most 256 ports, so local indices are
/// below 255).
pub const NO_INPUT: u8 = u8::MAX;

/// RCM's parameters (`[switch.rcm]`; docs/rcm.md says which come from the
/// paper and which are ours).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RcmParams {
    /// The equilibrium queue length Qeq, bytes.
    pub qeq: u64,
    /// wq, the weight of Qdelta in Fb.
    pub wq: f64,
    /// w, the weight of the downstream degree Fbr in the regional degree
    /// Fb' = (1 - w) Fb + w Fbr, in [0, 1].
    pub w: f64,
    /// Gd, per quantised unit of Fb: Wc <- Wc (1 - Fb Gd); the paper's
    /// Fbmax x Gd = 1/2 is 1/126.
    pub gd: f64,
    /// Bytes of arrivals between two samples of a queue when it is not
    /// congested; a congested queue is sampled up to ten times as often
    /// (QCN's 1% to 10%).
    pub sample_bytes: u64,
    /// CFR: entries of each output's CAM, and full-size frames between
    /// two samples written into it, on average (each packet is sampled
    /// with probability its bytes / `cam_period` full frames).
    pub cam_depth: u32,
    pub cam_period: u32,
    /// RCC: the window W, bytes.
    pub window: u64,
    /// The least time between two notifications from one input port.
    pub cn_interval: Time,
    /// A remote congestion flag lapses this long after the last
    /// notification that set it.
    pub remote_timeout: Time,
    /// SAR: notifications an output must have received (in one episode of
    /// remote congestion) before flows are detoured from it; a locally
    /// congested output detours at once.
    pub sar_notifications: u32,
    /// Each component can be turned off (for ablation).
    pub rcc: bool,
    pub sar: bool,
}

impl RcmParams {
    pub const DEFAULT: RcmParams = RcmParams {
        qeq: 20_000,
        wq: 2.0,
        w: 0.5,
        gd: 1.0 / 126.0,
        sample_bytes: 10_000,
        cam_depth: 16,
        cam_period: 4,
        window: 16_000,
        cn_interval: engine::time::US,
        remote_timeout: 20 * engine::time::US,
        sar_notifications: 2,
        rcc: true,
        sar: true,
    };

    /// Fbmax in bytes: (1 + 2 wq) Qeq.
    pub fn fb_max_bytes(&self) -> f64 {
        (1.0 + 2.0 * self.wq) * self.qeq as f64
    }
}

impl Default for RcmParams {
    fn default() -> Self {
        RcmParams::DEFAULT
    }
}

/// A flow's ID: `flow << 32 | dst`.
#[inline]
pub fn flow_id(hdr: &Hdr) -> u64 {
    (hdr.flow as u64) << 32 | hdr.dst as u64
}

/// One queue's detector (QCN's congestion point).
#[derive(Clone, Copy, Debug, Default)]
pub struct Detector {
    /// Bytes of arrivals before the next sample.
    pub left: i64,
    /// Queue length at the previous sample.
    pub q_old: u64,
    /// The last sample's quantised degree (0 when not congested).
    pub fb: u32,
    /// The last sample found congestion (the local flag).
    pub congested: bool,
}

/// What one port knows of congestion, as an output (its own queue, the
/// notifications from its downstream neighbour, its CAM, its RCC window)
/// and as an input (its input queue, its notifications upstream).
#[derive(Clone, Debug, Default)]
pub struct PortCong {
    pub out: Detector,
    pub input: Detector,
    /// Remote: the degree the neighbour last sent, until when it holds,
    /// notifications in this episode, and the harmful flows they named.
    pub fbr: u32,
    pub remote_until: Time,
    pub notes: u32,
    pub remote_ids: Vec<u64>,
    /// CFR: the cyclic CAM, its next slot, and the flows holding at least
    /// their even share of its entries (the harmful ones).
    pub cam: Vec<u64>,
    pub cam_next: usize,
    pub cam_harmful: Vec<u64>,
    /// RCC: the congestion window Wc (W when not controlling), whether
    /// the current window passed a harmful packet over (another flow's
    /// moved while it waited); an input (local index) the window's
    /// harmful packets came by and one the others came by (`NO_INPUT`
    /// until one moves), and whether this window and the last moved
    /// harmful and other packets from different inputs.
    pub controlling: bool,
    pub wc: u64,
    pub win_held: bool,
    pub win_c_in: u8,
    pub win_nc_in: u8,
    pub win_mixed: bool,
    pub last_mixed: bool,
    /// The last window cut (at most one per window span).
    pub last_cut: Option<Time>,
    pub win_sent: u64,
    pub win_c_sent: u64,
    /// The input's last notification upstream, and whether it told of
    /// congestion (a clearing one follows when it is gone).
    pub cn_sent_at: Option<Time>,
    pub cn_congested: bool,
}

impl PortCong {
    /// The remote flag at `now`.
    #[inline]
    pub fn remote(&self, now: Time) -> bool {
        now < self.remote_until
    }

    /// The flows RCC throttles at this output: those named by the
    /// downstream notification (the root's) while it holds, else the
    /// CAM's.
    pub fn harmful(&self, now: Time) -> &[u64] {
        if self.remote(now) {
            &self.remote_ids
        } else {
            &self.cam_harmful
        }
    }

    pub fn is_harmful(&self, now: Time, id: u64) -> bool {
        self.harmful(now).contains(&id)
    }

    /// The flows that hit at this output: named by the downstream
    /// notifications while they hold, else in any CAM entry. Wider than
    /// RCC's harmful flows: the notifications upstream name them and SAR
    /// never moves them ("whether the flow hits in the CAM"), so a flow
    /// at about its even share, in and out of the harmful set from one
    /// sample to the next, is neither dropped from a notification nor
    /// detoured.
    pub fn named(&self, now: Time) -> &[u64] {
        if self.remote(now) {
            &self.remote_ids
        } else {
            &self.cam
        }
    }

    pub fn hits(&self, now: Time, id: u64) -> bool {
        self.named(now).contains(&id)
    }

    /// RCC counts a packet moved into this output's queue from input
    /// `input`, harmful or not (whether it controls or not: the cut
    /// that starts control needs the window's mix).
    pub fn moved(&mut self, wire: u64, harmful: bool, input: u8) {
        self.win_sent += wire;
        let (mine, other) = if harmful {
            self.win_c_sent += wire;
            (&mut self.win_c_in, self.win_nc_in)
        } else {
            (&mut self.win_nc_in, self.win_c_in)
        };
        *mine = input;
        self.win_mixed |= other != NO_INPUT && other != input;
    }

    /// RCC starts a new window.
    pub fn next_window(&mut self) {
        self.last_mixed = self.win_mixed;
        self.win_mixed = false;
        self.win_held = false;
        self.win_sent = 0;
        self.win_c_sent = 0;
        self.win_c_in = NO_INPUT;
        self.win_nc_in = NO_INPUT;
    }

    /// Root (local only), edge (remote only) or inner (both) point.
    pub fn point(&self, now: Time) -> Point {
        let local = self.out.congested || self.input.congested;
        match (local, self.remote(now)) {
            (false, false) => Point::None,
            (true, false) => Point::Root,
            (false, true) => Point::Edge,
            (true, true) => Point::Inner,
        }
    }

    /// The regional degree Fb' = (1 - w) Fb + w Fbr of the output, in
    /// quantised units.
    pub fn regional(&self, now: Time, w: f64) -> f64 {
        let fbr = if self.remote(now) { self.fbr } else { 0 };
        (1.0 - w) * self.out.fb as f64 + w * fbr as f64
    }
}

/// Where a port stands in a congestion region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Point {
    None,
    Root,
    Edge,
    Inner,
}

/// A notification on its way: the degree and the harmful flows.
#[derive(Clone, Debug, Default)]
pub struct Note {
    pub fb: u32,
    pub ids: Vec<u64>,
}

/// What RCM did, for the summary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RcmStats {
    /// Notifications sent (clearing ones included) and their wire bytes.
    pub notifications: u64,
    pub notification_bytes: u64,
    /// Notifications that told of congestion (the rest cleared it).
    pub congested_notifications: u64,
    /// Packets of harmful flows RCC held back at least once (counted when
    /// they move on), and their bytes.
    pub throttled_packets: u64,
    pub throttled_bytes: u64,
    /// Congestion-window cuts (a local sample or a notification).
    pub window_cuts: u64,
    /// Flows SAR moved off their ECMP port (each counted once per switch),
    /// and their packets that took the detour.
    pub detoured_flows: u64,
    pub detoured_packets: u64,
    /// Detours SAR let go (the flow's own port no longer pressed).
    pub released_detours: u64,
}

/// RCM's state for the whole fabric (empty when off).
#[derive(Default)]
pub(crate) struct Rcm {
    pub on: bool,
    pub p: RcmParams,
    /// By port (global id).
    pub ports: Vec<PortCong>,
    /// By port: CFR's random stream (which packets it samples). Seeded by
    /// the port alone: `Rcm::new`'s caller (net/) does not pass the run's
    /// seed.
    pub cfr_rngs: Vec<Rng>,
    /// By sending port: the notifications on its control queue and wire,
    /// in order (the frames carry only their count of flows).
    pub wire_notes: Vec<VecDeque<Note>>,
    /// SAR's pinned flows: (switch, flow ID) -> output port.
    pub pinned: BTreeMap<(u32, u64), u32>,
    /// By arena slot: the packet was held back by RCC (to count it once).
    pub held: Vec<bool>,
    pub stats: RcmStats,
    /// Audit trail for the tests: every flow ID that was ever harmful at
    /// some port (written into a CAM or named by a notification), every
    /// flow RCC held back, every flow SAR detoured and every flow that was
    /// harmful at the port SAR moved a flow from (by construction
    /// disjoint from the detoured ones).
    pub ever_harmful: BTreeSet<u64>,
    pub throttled: BTreeSet<u64>,
    pub detoured: BTreeSet<u64>,
    /// Holds of a packet not harmful at its port, detours of a flow
    /// harmful at its port: the tests' guard that both stay 0.
    pub not_harmful_holds: u64,
    pub harmful_detours: u64,
}

impl Rcm {
    pub fn new(p: RcmParams, ports: usize) -> Rcm {
        let fresh = PortCong {
            wc: p.window,
            win_c_in: NO_INPUT,
            win_nc_in: NO_INPUT,
            ..PortCong::default()
        };
        Rcm {
            on: true,
            p,
            ports: vec![fresh; ports],
            cfr_rngs: (0..ports as u64)
                .map(|p| Rng::new(0, StreamKind::Cfr, p))
                .collect(),
            wire_notes: vec![VecDeque::new(); ports],
            ..Rcm::default()
        }
    }

    /// Quantised Fb of a queue of `q` bytes that was `q_old` at the last
    /// sample: 0 unless congested.
    pub fn degree(&self, q: u64, q_old: u64) -> u32 {
        let fb = (q as f64 - self.p.qeq as f64) + self.p.wq * (q as f64 - q_old as f64);
        if fb <= 0.0 {
            return 0;
        }
        ((fb / self.p.fb_max_bytes() * FB_MAX as f64).ceil() as u32).min(FB_MAX)
    }

    /// Bytes to the next sample after one that found degree `fb`.
    pub fn interval(&self, fb: u32) -> i64 {
        (self.p.sample_bytes as f64 / (1.0 + 9.0 * fb as f64 / FB_MAX as f64)) as i64
    }

    /// CFR: a packet of flow `id`, `wire` bytes, passed output `o`'s
    /// queue; it is written into the CAM with probability `wire` /
    /// (`cam_period` x `frame`), `frame` being a full frame's bytes.
    pub fn cam_sample(&mut self, o: u32, id: u64, wire: u64, frame: u64) {
        let p = wire as f64 / (self.p.cam_period as f64 * frame as f64);
        if !self.cfr_rngs[o as usize].bernoulli(p.min(1.0)) {
            return;
        }
        let depth = self.p.cam_depth as usize;
        let pc = &mut self.ports[o as usize];
        if pc.cam.len() < depth {
            pc.cam.push(id);
        } else {
            pc.cam[pc.cam_next] = id;
        }
        pc.cam_next = (pc.cam_next + 1) % depth;
        // The flows with at least cam.len() / distinct entries each.
        let mut counts: Vec<(u64, usize)> = Vec::new();
        for &f in &pc.cam {
            match counts.iter_mut().find(|c| c.0 == f) {
                Some(c) => c.1 += 1,
                None => counts.push((f, 1)),
            }
        }
        let (n, distinct) = (pc.cam.len(), counts.len());
        pc.cam_harmful.clear();
        pc.cam_harmful
            .extend(counts.iter().filter(|c| c.1 * distinct >= n).map(|c| c.0));
        self.ever_harmful.extend(pc.cam_harmful.iter().copied());
    }

    /// RCC: a congestion signal of degree `fb` at output `o`: the window
    /// starts (or continues) and Wc <- Wc (1 - Fb Gd), at least one frame.
    /// Only while the harmful flows share the port with others that come
    /// by other inputs (this window or the last), the only case where the
    /// crossbar can favour the others: a
    /// queue that stands at the port (its upstream keeps it full at line
    /// rate) signals congestion at every sample, and cutting on each took
    /// Wc to one frame within 10-20 us even where nothing was left to
    /// favour.
    pub fn cut(&mut self, o: u32, fb: u32, min: u64) {
        let gd = self.p.gd;
        let pc = &mut self.ports[o as usize];
        if !self.p.rcc || fb == 0 || !(pc.win_mixed || pc.last_mixed) {
            return;
        }
        pc.controlling = true;
        pc.wc = ((pc.wc as f64 * (1.0 - fb as f64 * gd)) as u64).max(min);
        self.stats.window_cuts += 1;
    }

    /// RCC: output `o` moved a whole window W in which no harmful packet
    /// was passed over, or with its congestion gone (neither flag): Wc
    /// grows halfway back to W, QCN's fast recovery (RCM's cut, formula 4,
    /// is QCN's rate decrease; the paper's section 3.4 gives no increase,
    /// and has control last until "packets belong to all the congestion
    /// flow has been sent" and quit "once the congestion state
    /// disappears"). Control ends once Wc is within a frame of W. A
    /// standing queue holds the local flag, so the flags alone never ended
    /// control.
    pub fn grow(&mut self, o: u32, frame: u64) {
        let window = self.p.window;
        let pc = &mut self.ports[o as usize];
        pc.wc += (window - pc.wc).div_ceil(2);
        if pc.wc + frame > window {
            self.end(o);
        }
    }

    /// RCC at output `o` ends: Wc is W again.
    pub fn end(&mut self, o: u32) {
        let window = self.p.window;
        let pc = &mut self.ports[o as usize];
        pc.controlling = false;
        pc.wc = window;
        pc.next_window();
        pc.last_mixed = false;
    }

    /// Output `o` has nothing queued (its OQ and every VOQ toward it are
    /// empty): the congested region drained there, so its local flag is
    /// stale and control ends.
    pub fn drained(&mut self, o: u32) {
        let d = &mut self.ports[o as usize].out;
        d.congested = false;
        d.fb = 0;
        if self.ports[o as usize].controlling {
            self.end(o);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rcm() -> Rcm {
        Rcm::new(RcmParams::DEFAULT, 2)
    }

    /// Fb = Qoff + wq Qdelta, 0 unless positive, quantised over
    /// (1 + 2 wq) Qeq to at most 63.
    #[test]
    fn degree_is_qcn_fb_quantised() {
        let r = rcm();
        // Qeq 20 KB, wq 2: Fbmax = 100 KB.
        assert_eq!(r.degree(10_000, 10_000), 0);
        assert_eq!(r.degree(20_000, 20_000), 0);
        // A queue above Qeq but falling fast is not congested.
        assert_eq!(r.degree(30_000, 40_000), 0);
        // 10 KB over Qeq, steady: 10% of Fbmax -> ceil(6.3) = 7.
        assert_eq!(r.degree(30_000, 30_000), 7);
        // Rising: 10 KB + 2 x 10 KB = 30 KB -> ceil(18.9) = 19.
        assert_eq!(r.degree(30_000, 20_000), 19);
        assert_eq!(r.degree(500_000, 0), FB_MAX);
        // Sampling: every 10 KB when calm, ten times as often at Fbmax.
        assert_eq!(r.interval(0), 10_000);
        assert_eq!(r.interval(FB_MAX), 1_000);
    }

    /// The CAM keeps the last `cam_depth` samples cyclically; with
    /// `cam_period` 1 every full frame is sampled.
    #[test]
    fn cam_is_cyclic() {
        let mut r = Rcm::new(
            RcmParams {
                cam_depth: 3,
                cam_period: 1,
                ..RcmParams::DEFAULT
            },
            1,
        );
        for id in 1..=10u64 {
            r.cam_sample(0, id, 1_000, 1_000);
        }
        let mut cam = r.ports[0].cam.clone();
        cam.sort();
        assert_eq!(cam, vec![8, 9, 10]);
        // Three flows, one entry each: each holds its even share.
        assert_eq!(r.ports[0].cam_harmful.len(), 3);
        assert!(r.ever_harmful.contains(&2));
    }

    /// Packets in a fixed cycle, one flow of rate 4 (every other packet)
    /// and four of rate 1: whatever the sampling period, the CAM holds
    /// the fast flow about four times as often as each slow one, and it
    /// alone is harmful much of the time (a sample every n-th packet saw
    /// only the fast flow at even n and mostly the slow ones at odd n).
    #[test]
    fn cfr_samples_in_proportion_to_rate_at_every_period() {
        for period in 1..=8 {
            let mut r = Rcm::new(
                RcmParams {
                    cam_period: period,
                    ..RcmParams::DEFAULT
                },
                1,
            );
            let (mut fast, mut slow, mut fast_alone) = (0usize, 0usize, 0usize);
            let cycle = [9, 1, 9, 2, 9, 3, 9, 4];
            for k in 0..40_000 {
                r.cam_sample(0, cycle[k % 8], 1_000, 1_000);
                if k % 97 == 0 && k > 1_000 {
                    let cam = &r.ports[0].cam;
                    fast += cam.iter().filter(|&&f| f == 9).count();
                    slow += cam.iter().filter(|&&f| f != 9).count();
                    fast_alone += (r.ports[0].cam_harmful == [9]) as usize;
                }
            }
            let ratio = fast as f64 / slow as f64;
            assert!((0.8..1.25).contains(&ratio), "period {period}: {ratio:.2}");
            assert!(fast_alone > 160, "period {period}: {fast_alone} of 401");
        }
    }

    /// Wc <- Wc (1 - Fb Gd): at Fbmax a cut halves it; never below the
    /// floor.
    #[test]
    fn window_cuts_by_degree() {
        let mut r = rcm();
        r.cut(0, 21, 1_000);
        assert!(!r.ports[0].controlling, "no other flow to favour");
        r.ports[0].moved(1_000, true, 0);
        r.ports[0].moved(1_000, false, 1);
        r.cut(0, 21, 1_000);
        assert_eq!(r.ports[0].wc, 13_333);
        assert!(r.ports[0].controlling);
        r.cut(0, 0, 1_000);
        assert_eq!(r.ports[0].wc, 13_333, "no congestion, no cut");
        // No cut while harmful and other flows do not come by different
        // inputs.
        r.ports[0].next_window();
        r.ports[0].next_window();
        r.ports[0].moved(1_000, true, 0);
        r.ports[0].moved(1_000, false, 0);
        r.cut(0, FB_MAX, 1_000);
        assert_eq!(r.ports[0].wc, 13_333);
        r.ports[0].moved(1_000, false, 1);
        r.cut(0, FB_MAX, 1_000);
        assert_eq!(r.ports[0].wc, 6_666);
        for _ in 0..10 {
            r.cut(0, FB_MAX, 1_000);
        }
        assert_eq!(r.ports[0].wc, 1_000, "never below the floor");
    }

    /// Once the congestion is gone, each window moved grows Wc halfway
    /// back to W; control ends within a frame of W, or at once when the
    /// output's queues drain.
    #[test]
    fn window_grows_back_and_control_ends() {
        let mut r = rcm();
        r.ports[0].win_mixed = true;
        r.cut(0, FB_MAX, 1_000);
        r.cut(0, FB_MAX, 1_000);
        assert_eq!(r.ports[0].wc, 4_000);
        r.grow(0, 1_000);
        assert_eq!(r.ports[0].wc, 10_000);
        r.grow(0, 1_000);
        assert_eq!(r.ports[0].wc, 13_000);
        r.grow(0, 1_000);
        assert_eq!(r.ports[0].wc, 14_500);
        assert!(r.ports[0].controlling);
        r.grow(0, 1_000);
        assert_eq!(r.ports[0].wc, 16_000);
        assert!(!r.ports[0].controlling);
        r.cut(0, 7, 1_000);
        r.ports[0].out.congested = true;
        r.drained(0);
        assert!(!r.ports[0].controlling && !r.ports[0].out.congested);
        assert_eq!(r.ports[0].wc, 16_000);
    }

    /// An edge point throttles the flows the notification named, not its
    /// own CAM's, while the remote flag holds.
    #[test]
    fn harmful_flows_come_from_the_root_while_remote() {
        let mut r = rcm();
        let pc = &mut r.ports[0];
        pc.cam_harmful = vec![1, 2];
        pc.remote_ids = vec![3];
        pc.remote_until = 100;
        assert_eq!(pc.harmful(50), &[3]);
        assert_eq!(pc.point(50), Point::Edge);
        pc.out.congested = true;
        assert_eq!(pc.point(50), Point::Inner);
        assert_eq!(pc.harmful(100), &[1, 2]);
        assert_eq!(pc.point(100), Point::Root);
    }
}
