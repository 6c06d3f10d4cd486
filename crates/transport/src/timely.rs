//! TIMELY (SIGCOMM'15): rate control from the RTT and its gradient, as
//! HPCC's ns-3 implements it for comparison (`CC_MODE 7`, `rdma-hw.cc`'s
//! `UpdateRateTimely`). Once per window of data (an ACK beyond the PSN
//! sent at the last update) the RTT of the ACK (now minus the send time
//! it echoes) is compared with the previous one: below `t_low` the rate
//! grows additively, above `t_high` it is cut by `beta * (1 - t_high/rtt)`,
//! between the two it grows when the smoothed RTT difference (EWMA weight
//! `alpha`) is not positive and is cut by `beta * gradient` otherwise,
//! the gradient being that difference over `min_rtt`. After five
//! consecutive increases each step is the hyper-additive `rhai`.
//!
//! Plain state the QP calls through the congestion-control hooks
//! (`crate::cc::hooks`, which it implements); uses `crate::int` and
//! `crate::packet` only for the hooks' signature.

use crate::cc::hooks::{CongestionControl, ControlParams};
use crate::int::IntStack;
use crate::packet::Packet;
use engine::Time;

/// TIMELY's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimelyParams {
    /// EWMA weight of a new RTT difference (`TimelyAlpha`).
    pub alpha: f64,
    /// Multiplicative decrease factor (`TimelyBeta`).
    pub beta: f64,
    pub t_low: Time,
    pub t_high: Time,
    /// The gradient's normaliser (`TimelyMinRtt`).
    pub min_rtt: Time,
    /// Additive step, bits per second (`RATE_AI`).
    pub rai_bps: u64,
    /// Hyper-additive step after five increases (`RATE_HAI`).
    pub rhai_bps: u64,
    pub min_rate_bps: u64,
}

/// Consecutive increases before the hyper-additive step (ns-3 hard-codes
/// 5; the paper's N).
const HAI_AFTER: u32 = 5;

impl TimelyParams {
    /// HPCC ns-3's `run.py --cc timely` at the given NIC rate: its
    /// attribute defaults (alpha 0.875, beta 0.8, Tlow 50 us, Thigh
    /// 500 us, minRtt 20 us), AI = 10*bw/10 Mb/s and HAI = 50*bw/10 Mb/s
    /// (bw in Gb/s: 100 and 500 Mb/s at 100G), `MIN_RATE` 1000 Mb/s.
    pub fn ns3(line_rate_bps: u64) -> TimelyParams {
        let us = engine::time::US;
        TimelyParams {
            alpha: 0.875,
            beta: 0.8,
            t_low: 50 * us,
            t_high: 500 * us,
            min_rtt: 20 * us,
            rai_bps: line_rate_bps / 1_000,
            rhai_bps: line_rate_bps / 200,
            min_rate_bps: 1_000_000_000,
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.alpha) || !(0.0..=1.0).contains(&self.beta) {
            return Err("timely.alpha and timely.beta must be in [0, 1]".into());
        }
        if self.t_low > self.t_high {
            return Err("timely.t_low_us must not exceed timely.t_high_us".into());
        }
        if self.min_rtt == 0 || self.t_high == 0 {
            return Err("timely.min_rtt_us and timely.t_high_us must be positive".into());
        }
        if self.min_rate_bps == 0 {
            return Err("timely.min_rate_mbps must be positive".into());
        }
        Ok(())
    }
}

/// One QP's TIMELY state.
#[derive(Clone, Debug)]
pub struct Timely {
    p: TimelyParams,
    line: u64,
    rate: u64,
    stage: u32,
    prev_rtt: Time,
    rtt_diff: f64,
    last_update: Option<u32>,
}

impl Timely {
    pub fn new(p: TimelyParams, line_rate_bps: u64) -> Timely {
        Timely {
            p,
            line: line_rate_bps,
            rate: line_rate_bps,
            stage: 0,
            prev_rtt: 0,
            rtt_diff: 0.0,
            last_update: None,
        }
    }

    #[inline]
    pub fn rate(&self) -> u64 {
        self.rate
    }

    /// An ACK acknowledging everything below `ack` (32-bit serial PSNs)
    /// measured `rtt`; `snd_nxt` is the next PSN to send.
    pub fn on_ack(&mut self, ack: u32, snd_nxt: u32, rtt: Time) {
        let after = |a: u32, b: u32| (a.wrapping_sub(b) as i32) > 0;
        let full = self.last_update.is_none_or(|l| after(ack, l));
        if !full {
            return;
        }
        if self.last_update.is_some() {
            let diff = self.p.alpha * (rtt as f64 - self.prev_rtt as f64)
                + (1.0 - self.p.alpha) * self.rtt_diff;
            let gradient = diff / self.p.min_rtt as f64;
            let cut = if rtt < self.p.t_low {
                None
            } else if rtt > self.p.t_high {
                Some(1.0 - self.p.beta * (1.0 - self.p.t_high as f64 / rtt as f64))
            } else if gradient <= 0.0 {
                None
            } else {
                Some((1.0 - self.p.beta * gradient).max(0.0))
            };
            match cut {
                None => {
                    let step = if self.stage < HAI_AFTER {
                        self.p.rai_bps
                    } else {
                        self.p.rhai_bps
                    };
                    self.rate = (self.rate + step).min(self.line);
                    self.stage += 1;
                }
                Some(c) => {
                    let r = (self.rate as f64 * c) as u64;
                    self.rate = r.max(self.p.min_rate_bps.min(self.line));
                    self.stage = 0;
                }
            }
            self.rtt_diff = diff;
        }
        if self.last_update.is_none_or(|l| after(snd_nxt, l)) {
            self.last_update = Some(snd_nxt);
            self.prev_rtt = rtt;
        }
    }
}

impl ControlParams for TimelyParams {
    type State = Timely;
    fn state(&self, line_rate_bps: u64, _mtu: u32) -> Timely {
        Timely::new(*self, line_rate_bps)
    }
    fn validate(&self) -> Result<(), String> {
        TimelyParams::validate(self)
    }
    /// Its timestamp (ns-3's `IntHeader` in `TS` mode).
    fn wire_bytes(&self) -> u32 {
        8
    }
}

/// TIMELY's rate moves on ACKs, from the RTT each measures (now minus the
/// echoed send time).
impl CongestionControl for Timely {
    const READS_ACKS: bool = true;
    #[inline(always)]
    fn rate(&mut self, _now: Time, _decreases: &mut u64) -> u64 {
        self.rate
    }
    #[inline(always)]
    fn rate_at(&self, _now: Time) -> u64 {
        self.rate
    }
    #[inline(always)]
    fn on_ack(&mut self, now: Time, pkt: &Packet, _int: &IntStack, ack: u32, nxt: u32) {
        Timely::on_ack(self, ack, nxt, now.saturating_sub(pkt.sent_at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::time::US;

    const LINE: u64 = 100_000_000_000;

    #[test]
    fn the_rate_falls_when_rtt_rises_above_t_high() {
        let p = TimelyParams::ns3(LINE);
        let mut t = Timely::new(p, LINE);
        // A steady RTT below Tlow: the rate stays at line.
        for k in 0..20u32 {
            t.on_ack(k * 10 + 1, k * 10 + 10, 10 * US);
        }
        assert_eq!(t.rate(), LINE);
        // The RTT rises above Thigh and stays there: every window cuts
        // (by 1 - beta (1 - Thigh/rtt) = 0.7 here) until the floor.
        let mut prev = t.rate();
        for k in 20..40u32 {
            t.on_ack(k * 10 + 1, k * 10 + 10, 800 * US);
            let r = t.rate();
            assert!(r < prev || r == p.min_rate_bps, "window {k}: {r} !< {prev}");
            prev = r;
        }
        // ... down to the floor, never below.
        for k in 40..400u32 {
            t.on_ack(k * 10 + 1, k * 10 + 10, 800 * US);
        }
        assert_eq!(t.rate(), p.min_rate_bps);
    }

    #[test]
    fn a_rising_rtt_between_the_thresholds_cuts_a_falling_one_grows() {
        let p = TimelyParams::ns3(LINE);
        let mut t = Timely::new(p, LINE);
        t.on_ack(1, 10, 100 * US);
        t.on_ack(11, 20, 140 * US);
        let r = t.rate();
        assert!(r < LINE);
        // Falling RTTs turn the smoothed difference negative: growth.
        t.on_ack(21, 30, 60 * US);
        t.on_ack(31, 40, 55 * US);
        assert!(t.rate() > r);
    }
}
