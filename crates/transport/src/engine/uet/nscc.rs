//! NSCC, the Ultra Ethernet sender's window control (UE 1.0's
//! network-signalled congestion control): [`NsccParams`], its
//! parameters, and [`Nscc`], one connection's window.
//!
//! Each ACK brings the bytes it newly acknowledges (cumulatively or by
//! SACK), the delay of the packet that triggered it (its round trip less
//! the base RTT) and its ECN echo. The four cases:
//!
//! | echo | delay vs target | reaction |
//! |---|---|---|
//! | no  | below   | proportional increase (by how far below), or fast increase near zero delay |
//! | no  | at or above | fair increase (a fixed share per byte acked) |
//! | yes | at or above | multiplicative decrease, by how far the average delay exceeds the target, at most once a base RTT |
//! | yes | below   | no change (a marked path that is not queueing: the entropy value moves instead) |
//!
//! Increases accumulate and are applied together once per `8 MTU` acked
//! or per base RTT (the fulfil step, which also adds `eta` once a base
//! RTT). Quick adapt: at most once per base RTT plus target, after a loss
//! (a trimmed packet's NACK) or a delay above 4 targets, if the bytes
//! acked in the last period fall below `maxwnd >> qa_gate`, the window
//! becomes what was acked then. A NACK of a trimmed packet takes its
//! bytes off the window; a timeout takes everything in flight.
//!
//! Written after the UEC simulator's `UecSrc` (htsim, `uec.cpp`: its
//! `initNsccParams`, `updateCwndOnAck_NSCC`, `quick_adapt`): read to learn,
//! written anew. Its constants are scaled to the network as htsim scales
//! them, from a reference network of 100 Gb/s and 12 us. Plain state:
//! uses only `engine::Time`.

use engine::time::{NS, SEC, US};
use engine::Time;
use std::num::NonZeroU32;

/// The reference network of NSCC's constants: 100 Gb/s, 12 us (its BDP,
/// 150,000 B, is `a`'s denominator).
const REF_RTT: Time = 12 * US;
const REF_BDP_BYTES: f64 = 150_000.0;
/// The largest window, in BDPs of the connection's base RTT (htsim's
/// `_maxwnd`, 1.5 BDP; also the initial window).
pub const MAX_WND_BDPS: f64 = 1.5;
/// Below this delay an increase is fast (htsim's `fast_increase`: 1 us).
const FAST_DELAY: Time = US;

/// NSCC's parameters (`[transport.uet.nscc]`); the constants derived from
/// them are in [`Nscc::new`]. Held in every QP's engine configuration,
/// so kept to 12 bytes (times in nanoseconds): a larger `UetConfig` would
/// grow every QP of every engine. htsim's other constants are fixed here:
/// [`GAMMA`] and [`DELAY_ALPHA`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NsccParams {
    /// The network's largest unloaded RTT, nanoseconds: the initial base
    /// RTT of every connection (lowered by the smallest RTT it measures),
    /// the period of the fulfil step and the scale of the constants. The
    /// scenario measures it from the topology (htsim:
    /// `network_max_unloaded_rtt`).
    pub base_rtt_ns: u32,
    /// The queueing delay NSCC aims at, nanoseconds; None: 0.75 base RTT
    /// (htsim with trimming; without trimming it takes 1 base RTT).
    pub target_qdelay_ns: Option<NonZeroU32>,
    /// Quick adapt runs only if the bytes acked in its period are below
    /// `maxwnd >> qa_gate` (htsim 3).
    pub qa_gate: u8,
    pub quick_adapt: bool,
}

/// How hard a marked, delayed ACK cuts: the window is multiplied by `1 -
/// GAMMA (avg - target) / avg`, at least 1/2 (htsim's `_gamma`).
pub const GAMMA: f64 = 0.8;
/// Gain of the average delay's EWMA (htsim's `_delay_alpha`).
pub const DELAY_ALPHA: f64 = 0.0125;

impl Default for NsccParams {
    /// htsim's values on its reference network (12 us).
    fn default() -> Self {
        NsccParams {
            base_rtt_ns: (REF_RTT / NS) as u32,
            target_qdelay_ns: None,
            qa_gate: 3,
            quick_adapt: true,
        }
    }
}

impl NsccParams {
    /// The base RTT.
    pub fn base_rtt(&self) -> Time {
        self.base_rtt_ns as Time * NS
    }

    /// The target queueing delay.
    pub fn target(&self) -> Time {
        self.target_qdelay_ns
            .map_or(self.base_rtt() * 3 / 4, |t| t.get() as Time * NS)
    }

    /// Refuses values out of range; the message names the key
    /// (`nscc.<key>`).
    pub fn validate(&self) -> Result<(), String> {
        if self.base_rtt_ns == 0 || self.base_rtt() > SEC {
            return Err(format!(
                "uet nscc.base_rtt_us must be in (0, 1e6], got {} us",
                self.base_rtt_ns as f64 / 1e3
            ));
        }
        if self.target() == 0 || self.target() > SEC {
            return Err(format!(
                "uet nscc.target_qdelay_us must be in (0, 1e6], got {} us",
                self.target() as f64 / US as f64
            ));
        }
        if self.qa_gate > 16 {
            return Err(format!(
                "uet nscc.qa_gate must be in 0..=16, got {}",
                self.qa_gate
            ));
        }
        Ok(())
    }
}

/// Which of the four cases (or quick adapt) an ACK took; for tests and
/// diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reaction {
    ProportionalIncrease,
    FastIncrease,
    FairIncrease,
    MultiplicativeDecrease,
    NoChange,
    QuickAdapt,
}

/// One connection's NSCC window.
#[derive(Clone, Debug)]
pub struct Nscc {
    // Constants, from the parameters, the link and the MTU.
    mtu: f64,
    line_bps: u64,
    /// The window's ceiling (the connection's PSN window), bytes.
    cap: f64,
    target: Time,
    /// Bytes of increase per byte acked per picosecond below the target.
    alpha: f64,
    /// Fair increase per byte acked, bytes.
    fi: f64,
    /// Added once per base RTT at the fulfil step, bytes.
    eta: f64,
    /// Fast increase per byte acked.
    fi_scale: f64,
    qa_gate: u8,
    quick_adapt: bool,
    /// The network's base RTT (the fulfil period; the NACK's delay).
    net_rtt: Time,
    // State.
    cwnd: f64,
    maxwnd: f64,
    /// The smallest RTT seen (starts at the network's).
    base_rtt: Time,
    /// EWMA of the delay, picoseconds.
    avg_delay: f64,
    /// Increases accumulated until the next fulfil step (bytes squared:
    /// divided by the window there).
    inc: f64,
    /// Bytes acked since the last fulfil step.
    received: u64,
    /// Bytes acked since quick adapt last looked.
    achieved: u64,
    /// Quick adapt looks again after this (None: it has not looked yet).
    qa_end: Option<Time>,
    trigger_qa: bool,
    /// After quick adapt, the ECN-echoing ACKs of the bytes then in flight
    /// are ignored (they tell of the window before).
    to_ignore: u64,
    ignored: u64,
    /// Bytes acked at near-zero delay in a row (fast increase).
    fi_count: u64,
    fast: bool,
    last_dec: Time,
    last_adjust: Time,
}

impl Nscc {
    /// The window of a connection on a link of `line_bps` sending packets
    /// of `mtu` payload bytes, at most `cap_packets` in flight.
    pub fn new(p: &NsccParams, line_bps: u64, mtu: u32, cap_packets: u32) -> Nscc {
        let mss = (mtu as f64).max(1.0);
        let bdp = bdp_bytes(p.base_rtt(), line_bps);
        let target = p.target();
        let a = bdp / REF_BDP_BYTES;
        let b = target as f64 / REF_RTT as f64;
        let cap = cap_packets as f64 * mss;
        let maxwnd = (MAX_WND_BDPS * bdp).min(cap).max(mss);
        Nscc {
            mtu: mss,
            line_bps,
            cap,
            target,
            alpha: 4.0 * mss * a * b / target as f64,
            fi: 5.0 * mss * a,
            eta: 0.15 * mss * a,
            fi_scale: 0.25 * a,
            qa_gate: p.qa_gate,
            quick_adapt: p.quick_adapt,
            net_rtt: p.base_rtt(),
            cwnd: maxwnd,
            maxwnd,
            base_rtt: p.base_rtt(),
            avg_delay: 0.0,
            inc: 0.0,
            received: 0,
            achieved: 0,
            qa_end: None,
            trigger_qa: false,
            to_ignore: 0,
            ignored: 0,
            fi_count: 0,
            fast: false,
            last_dec: 0,
            last_adjust: 0,
        }
    }

    /// The window, bytes.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// Whether one more packet fits with `in_flight` packets in flight.
    #[inline]
    pub fn window_open(&self, in_flight: u32) -> bool {
        (in_flight as f64 + 1.0) * self.mtu <= self.cwnd
    }

    /// An ACK at `now` newly acknowledging `acked` packets (cumulatively or
    /// by SACK), with `in_flight` packets still out; `rtt` the round trip
    /// of the packet that triggered it (None: no sample), `ecn` its echo.
    pub fn on_ack(
        &mut self,
        now: Time,
        acked: u32,
        in_flight: u32,
        rtt: Option<Time>,
        ecn: bool,
    ) -> Reaction {
        let bytes = (acked as f64 * self.mtu) as u64;
        self.achieved += bytes;
        self.received += bytes;
        self.ignored += bytes;
        let delay = match rtt {
            Some(raw) => {
                self.lower_base_rtt(raw);
                if raw >= self.base_rtt {
                    self.update_delay(raw - self.base_rtt, ecn);
                    raw - self.base_rtt
                } else {
                    self.avg_delay as Time
                }
            }
            None => self.avg_delay as Time,
        };
        if self.quick_adapt(now, false, ecn, delay, in_flight) {
            return Reaction::QuickAdapt;
        }
        let reaction = match (ecn, delay >= self.target) {
            (false, true) => {
                self.inc += self.fi * bytes as f64;
                Reaction::FairIncrease
            }
            (false, false) => self.proportional_increase(bytes, delay),
            (true, true) => {
                self.multiplicative_decrease(now);
                Reaction::MultiplicativeDecrease
            }
            (true, false) => Reaction::NoChange,
        };
        self.bound();
        if self.received as f64 > 8.0 * self.mtu || now - self.last_adjust > self.net_rtt {
            self.fulfil(now);
        }
        reaction
    }

    /// A NACK of `nacked` trimmed packets at `now`: a loss. Quick adapt,
    /// or the window loses their bytes.
    pub fn on_trim_nack(&mut self, now: Time, nacked: u32, in_flight: u32) {
        let bytes = nacked as f64 * self.mtu;
        self.ignored += bytes as u64;
        // The trimmed packet queued about a network RTT (the trimming
        // threshold's worth) before it was cut.
        self.update_delay(self.net_rtt, true);
        self.trigger_qa = true;
        if !self.quick_adapt(now, true, true, 0, in_flight) {
            self.cwnd -= bytes;
            self.bound();
        }
    }

    /// A retransmission timeout with `lost` packets to resend: the window
    /// loses their bytes.
    pub fn on_timeout(&mut self, lost: u32) {
        self.cwnd -= lost as f64 * self.mtu;
        self.bound();
    }

    fn lower_base_rtt(&mut self, raw: Time) {
        if raw > 0 && raw < self.base_rtt {
            self.base_rtt = raw;
            let bdp = bdp_bytes(raw, self.line_bps);
            self.maxwnd = (MAX_WND_BDPS * bdp).min(self.cap).max(self.mtu);
        }
    }

    /// Feeds a delay sample to the average: a delay above the target on
    /// an unmarked ACK is not believed (the queue is on another path) and
    /// pulls the average toward a quarter base RTT instead.
    fn update_delay(&mut self, delay: Time, ecn: bool) {
        let sample = if !ecn && delay > self.target {
            self.base_rtt as f64 * 0.25
        } else {
            delay as f64
        };
        self.avg_delay = DELAY_ALPHA * sample + (1.0 - DELAY_ALPHA) * self.avg_delay;
    }

    fn proportional_increase(&mut self, bytes: u64, delay: Time) -> Reaction {
        if delay < FAST_DELAY {
            self.fi_count += bytes;
            if self.fi_count as f64 > self.cwnd || self.fast {
                self.cwnd += bytes as f64 * self.fi_scale;
                self.fast = true;
                return Reaction::FastIncrease;
            }
        } else {
            self.fi_count = 0;
        }
        self.fast = false;
        self.inc += self.alpha * bytes as f64 * (self.target - delay) as f64;
        Reaction::ProportionalIncrease
    }

    fn multiplicative_decrease(&mut self, now: Time) {
        self.fast = false;
        self.fi_count = 0;
        let avg = self.avg_delay;
        if avg > self.target as f64 && now.saturating_sub(self.last_dec) > self.base_rtt {
            let f = 1.0 - GAMMA * (avg - self.target as f64) / avg;
            self.cwnd *= f.max(0.5);
            self.last_dec = now;
        }
    }

    /// Quick adapt; true if it ran or the ACK is ignored after it (the
    /// four cases are then skipped).
    fn quick_adapt(
        &mut self,
        now: Time,
        loss: bool,
        ecn: bool,
        delay: Time,
        in_flight: u32,
    ) -> bool {
        if !self.quick_adapt {
            return false;
        }
        let mut done = false;
        if ecn && self.ignored < self.to_ignore {
            done = true;
        } else if self.qa_end.is_none_or(|e| now > e) {
            let cause = self.trigger_qa || loss || delay > 4 * self.target;
            let slow = (self.achieved as f64) < self.maxwnd / (1u64 << self.qa_gate) as f64;
            if self.qa_end.is_some() && cause && slow {
                self.cwnd = (self.achieved as f64).max(self.mtu);
                self.to_ignore = (in_flight as f64 * self.mtu) as u64;
                self.ignored = 0;
                self.trigger_qa = false;
                done = true;
            }
            self.achieved = 0;
            self.qa_end = Some(now + self.base_rtt + self.target);
        }
        if done {
            self.inc = 0.0;
            self.received = 0;
        }
        done
    }

    /// Applies the increases accumulated since the last step, and `eta`
    /// once a base RTT.
    fn fulfil(&mut self, now: Time) {
        self.cwnd += self.inc / self.cwnd;
        if now - self.last_adjust >= self.net_rtt {
            self.cwnd += self.eta;
            self.last_adjust = now;
        }
        self.inc = 0.0;
        self.received = 0;
        self.bound();
    }

    fn bound(&mut self) {
        self.cwnd = self.cwnd.clamp(self.mtu, self.maxwnd);
    }
}

/// Bytes a link of `line_bps` carries in `rtt`.
fn bdp_bytes(rtt: Time, line_bps: u64) -> f64 {
    rtt as f64 * line_bps as f64 / 8.0 / SEC as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: u64 = 100_000_000_000;
    const MTU: u32 = 4096;

    /// htsim's incast network: base RTT 14 us, so a target of 10.5 us.
    fn params(quick_adapt: bool) -> NsccParams {
        NsccParams {
            base_rtt_ns: 14_000,
            quick_adapt,
            ..NsccParams::default()
        }
    }

    /// A window below its ceiling (a timeout took 20 packets off), quick
    /// adapt off: the four cases alone.
    fn window() -> Nscc {
        let mut n = Nscc::new(&params(false), LINE, MTU, 1000);
        n.on_timeout(20);
        n
    }

    /// The window after ACKs of one packet every 100 ns for 20 us (so
    /// the fulfil step runs), each with round trip `rtt` and echo `ecn`.
    fn after_acks(n: &mut Nscc, rtt: Time, ecn: bool) -> Reaction {
        let mut r = Reaction::NoChange;
        for k in 1..=200 {
            r = n.on_ack(k * 100 * 1000, 1, 10, Some(rtt), ecn);
        }
        r
    }

    #[test]
    fn proportional_increase_grows_more_the_lower_the_delay() {
        let (mut low, mut high) = (window(), window());
        let w0 = low.cwnd();
        // Delays 2 us and 8 us, both below the 10.5 us target.
        assert_eq!(
            after_acks(&mut low, 16 * US, false),
            Reaction::ProportionalIncrease
        );
        assert_eq!(
            after_acks(&mut high, 22 * US, false),
            Reaction::ProportionalIncrease
        );
        assert!(high.cwnd() > w0, "{} -> {}", w0, high.cwnd());
        assert!(
            low.cwnd() - w0 > 2.0 * (high.cwnd() - w0),
            "2 us: +{}, 8 us: +{}",
            low.cwnd() - w0,
            high.cwnd() - w0
        );
    }

    #[test]
    fn fast_increase_below_one_microsecond_of_delay() {
        let mut n = window();
        let w0 = n.cwnd();
        // Delay 0.5 us: proportional until a window's worth is acked.
        let r = after_acks(&mut n, 14 * US + US / 2, false);
        assert_eq!(r, Reaction::FastIncrease);
        assert!(n.cwnd() > w0);
    }

    #[test]
    fn fair_increase_at_or_above_the_target_whatever_the_delay() {
        let (mut a, mut b) = (window(), window());
        let w0 = a.cwnd();
        // Delays 12 us and 30 us: both at or above the target.
        assert_eq!(after_acks(&mut a, 26 * US, false), Reaction::FairIncrease);
        assert_eq!(after_acks(&mut b, 44 * US, false), Reaction::FairIncrease);
        assert!(a.cwnd() > w0);
        assert_eq!(a.cwnd(), b.cwnd(), "the same increase per byte acked");
    }

    #[test]
    fn marked_and_delayed_decreases_at_most_once_per_base_rtt() {
        let mut n = window();
        // The average delay must exceed the target first: a marked ACK's
        // delay is believed.
        for k in 0..400 {
            n.on_ack(k * 10, 0, 10, Some(50 * US), true);
        }
        let w0 = n.cwnd();
        let now = 1000 * US;
        let r = n.on_ack(now, 1, 10, Some(50 * US), true);
        assert_eq!(r, Reaction::MultiplicativeDecrease);
        let w1 = n.cwnd();
        assert!(w1 < w0 && w1 >= w0 / 2.0, "{w0} -> {w1}");
        // Within a base RTT: no second cut.
        n.on_ack(now + 10 * US, 1, 10, Some(50 * US), true);
        assert!(n.cwnd() >= w1);
        // After one: another.
        n.on_ack(now + 20 * US, 1, 10, Some(50 * US), true);
        assert!(n.cwnd() < w1);
    }

    #[test]
    fn marked_but_not_delayed_changes_nothing() {
        let mut n = window();
        let w0 = n.cwnd();
        // Delay 2 us, below the target: the path is marked but not
        // queueing; the window stays (the entropy value moves instead).
        for k in 1..=200 {
            let r = n.on_ack(k * 100 * 1000, 1, 10, Some(16 * US), true);
            assert_eq!(r, Reaction::NoChange);
        }
        // Only the fulfil step's `eta` (0.15 MTU scaled, once per base
        // RTT) moved it; unmarked, the same ACKs add several packets.
        assert!(n.cwnd() - w0 < MTU as f64 / 2.0, "{w0} -> {}", n.cwnd());
        let mut unmarked = window();
        after_acks(&mut unmarked, 16 * US, false);
        assert!(unmarked.cwnd() - w0 > 4.0 * MTU as f64);
    }

    #[test]
    fn quick_adapt_on_a_loss_when_little_was_acked() {
        let mut n = Nscc::new(&params(true), LINE, MTU, 1000);
        let max = n.cwnd();
        // The first ACK opens quick adapt's first period (20 us: base RTT
        // and target): it only looks.
        n.on_ack(0, 1, 40, Some(14 * US), false);
        // Two packets acked in the period, far below maxwnd / 8.
        n.on_ack(5 * US, 2, 40, Some(14 * US), false);
        assert_eq!(n.cwnd(), max, "no loss yet");
        // A trimmed packet's NACK before the period ends: the window
        // loses the packet's bytes, no more.
        n.on_trim_nack(10 * US, 1, 40);
        assert_eq!(n.cwnd(), max - MTU as f64);
        // The next ACK after the period: quick adapt to what was acked.
        let r = n.on_ack(30 * US, 1, 40, Some(14 * US), false);
        assert_eq!(r, Reaction::QuickAdapt);
        assert_eq!(n.cwnd(), 3.0 * MTU as f64);
    }

    #[test]
    fn no_quick_adapt_when_enough_was_acked_or_without_a_cause() {
        let mut n = Nscc::new(&params(true), LINE, MTU, 1000);
        n.on_ack(0, 1, 40, Some(14 * US), false);
        // A loss, but a window's worth acked in the period.
        n.on_ack(5 * US, 60, 40, Some(14 * US), false);
        n.on_trim_nack(10 * US, 1, 40);
        let r = n.on_ack(30 * US, 1, 40, Some(14 * US), false);
        assert_ne!(r, Reaction::QuickAdapt);

        let mut n = Nscc::new(&params(true), LINE, MTU, 1000);
        let max = n.cwnd();
        n.on_ack(0, 1, 40, Some(14 * US), false);
        // Little acked in the period, but no loss and a delay below 4
        // targets: no quick adapt.
        let r = n.on_ack(30 * US, 1, 40, Some(20 * US), false);
        assert_ne!(r, Reaction::QuickAdapt);
        assert!(n.cwnd() > max / 2.0);
        // A delay above 4 targets (46 us) with little acked: quick adapt.
        let r = n.on_ack(60 * US, 1, 40, Some(60 * US), false);
        assert_eq!(r, Reaction::QuickAdapt);
        assert_eq!(n.cwnd(), MTU as f64);
    }

    #[test]
    fn the_window_starts_at_one_and_a_half_bdp_within_the_cap() {
        let n = Nscc::new(&params(true), LINE, MTU, 1000);
        // 14 us at 100 Gb/s: 175,000 B; 1.5 of it.
        assert!((n.cwnd() - 262_500.0).abs() < 1.0, "{}", n.cwnd());
        let capped = Nscc::new(&params(true), LINE, MTU, 10);
        assert_eq!(capped.cwnd(), 10.0 * MTU as f64);
        assert!(capped.window_open(9) && !capped.window_open(10));
    }

    #[test]
    fn parameters_out_of_range_are_refused_by_name() {
        let d = NsccParams::default();
        let bad = [
            (NsccParams { qa_gate: 17, ..d }, "qa_gate"),
            (
                NsccParams {
                    base_rtt_ns: 0,
                    ..d
                },
                "base_rtt_us",
            ),
            (
                NsccParams {
                    base_rtt_ns: u32::MAX,
                    ..d
                },
                "base_rtt_us",
            ),
            (
                NsccParams {
                    target_qdelay_ns: NonZeroU32::new(u32::MAX),
                    ..d
                },
                "target_qdelay_us",
            ),
        ];
        for (p, k) in bad {
            let e = p.validate().unwrap_err();
            assert!(e.starts_with(&format!("uet nscc.{k} ")), "{e}");
        }
        d.validate().unwrap();
    }
}
