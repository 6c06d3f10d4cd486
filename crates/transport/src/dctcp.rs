//! DCTCP-style rate control for RDMA as HPCC's ns-3 offers it (`CC_MODE 8`,
//! `rdma-hw.cc`'s `HandleAckDctcp`): alpha is an EWMA (gain g) of the
//! fraction of ACKs that echo a CE mark, taken once per window of data
//! (an ACK beyond the PSN sent at the last update); an echo outside
//! congestion-window-reduced state cuts the rate by alpha/2 and enters it
//! until the PSN sent then is acknowledged; each new window outside it
//! adds `rai`.
//!
//! Plain state the QP calls through the congestion-control hooks
//! (`crate::cc::hooks`, which it implements); uses `crate::int` and
//! `crate::packet` only for the hooks' signature.

use crate::cc::hooks::{CongestionControl, ControlParams};
use crate::int::IntStack;
use crate::packet::Packet;
use engine::Time;
/// DCTCP's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DctcpParams {
    /// EWMA gain of alpha (`EWMA_GAIN`).
    pub g: f64,
    /// Additive increase per window, bits per second (`DCTCP_RATE_AI`).
    pub rai_bps: u64,
    /// The rate never goes below this (`MIN_RATE`).
    pub min_rate_bps: u64,
    /// The window at line rate, bytes, scaled by rate / line as HPCC's
    /// (`VAR_WIN`); 0: no window.
    pub window_bytes: u64,
}

impl DctcpParams {
    /// HPCC ns-3's `run.py --cc dctcp`: g = 1/16 (`EWMA_GAIN`),
    /// `DCTCP_RATE_AI` 615 Mb/s ("calculated from RTT=13us and MTU=1KB"),
    /// `MIN_RATE` 1000 Mb/s, a variable window (`HAS_WIN 1`, `VAR_WIN 1`)
    /// of `window_bytes` (ns-3's `maxBdp`, which the scenario measures).
    pub fn ns3(window_bytes: u64) -> DctcpParams {
        DctcpParams {
            g: 1.0 / 16.0,
            rai_bps: 615_000_000,
            min_rate_bps: 1_000_000_000,
            window_bytes,
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(format!("dctcp.g must be in (0, 1], got {}", self.g));
        }
        if self.min_rate_bps == 0 {
            return Err("dctcp.min_rate_mbps must be positive".into());
        }
        Ok(())
    }
}

/// One QP's DCTCP state.
#[derive(Clone, Debug)]
pub struct Dctcp {
    p: DctcpParams,
    line: u64,
    /// Payload bytes of a full packet (the window counts packets so).
    mtu: u32,
    rate: u64,
    alpha: f64,
    /// Echoes counted in the current window.
    marked: u32,
    /// Packets the current window is expected to hold.
    batch: u32,
    /// The PSN sent last at the last alpha update; None before the first
    /// ACK.
    last_update: Option<u32>,
    /// In congestion-window-reduced state until this PSN is acknowledged.
    cwr_until: Option<u32>,
}

impl Dctcp {
    pub fn new(p: DctcpParams, line_rate_bps: u64, mtu: u32) -> Dctcp {
        Dctcp {
            p,
            line: line_rate_bps,
            mtu,
            rate: line_rate_bps,
            alpha: 1.0,
            marked: 0,
            batch: 0,
            last_update: None,
            cwr_until: None,
        }
    }

    #[inline]
    pub fn rate(&self) -> u64 {
        self.rate
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    pub fn mtu(&self) -> u32 {
        self.mtu
    }

    /// Bytes the QP may have in flight, if bounded.
    #[inline]
    pub fn window(&self) -> Option<u64> {
        let w = self.p.window_bytes as u128 * self.rate as u128 / self.line as u128;
        (self.p.window_bytes > 0).then_some((w as u64).max(1))
    }

    /// An ACK acknowledging everything below `ack` (32-bit serial PSNs),
    /// echoing a CE mark if `ce`; `snd_nxt` is the next PSN to send.
    pub fn on_ack(&mut self, ack: u32, snd_nxt: u32, ce: bool) {
        let after = |a: u32, b: u32| (a.wrapping_sub(b) as i32) > 0;
        self.marked += ce as u32;
        let mut new_window = false;
        match self.last_update {
            None => {
                new_window = true;
                self.last_update = Some(snd_nxt);
                // ns-3: `snd_nxt / mtu + 1`, the packets sent so far and
                // one; here the packets beyond this ACK, the one it
                // acknowledges and one.
                self.batch = snd_nxt.wrapping_sub(ack).wrapping_add(2);
            }
            Some(last) if after(ack, last) => {
                new_window = true;
                let frac = (self.marked as f64 / self.batch.max(1) as f64).min(1.0);
                self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g * frac;
                self.last_update = Some(snd_nxt);
                self.marked = 0;
                self.batch = snd_nxt.wrapping_sub(ack).wrapping_add(1);
            }
            Some(_) => {}
        }
        if self.cwr_until.is_some_and(|h| after(ack, h)) {
            self.cwr_until = None;
        }
        if ce && self.cwr_until.is_none() {
            let r = (self.rate as f64 * (1.0 - self.alpha / 2.0)) as u64;
            self.rate = r.max(self.p.min_rate_bps.min(self.line));
            self.cwr_until = Some(snd_nxt);
        }
        if self.cwr_until.is_none() && new_window {
            self.rate = (self.rate + self.p.rai_bps).min(self.line);
        }
    }
}

impl ControlParams for DctcpParams {
    type State = Dctcp;
    fn state(&self, line_rate_bps: u64, mtu: u32) -> Dctcp {
        Dctcp::new(*self, line_rate_bps, mtu)
    }
    fn validate(&self) -> Result<(), String> {
        DctcpParams::validate(self)
    }
}

/// DCTCP's rate and window move on ACKs, from the ECN echoes they carry
/// (it reads its echoes there, not as notifications).
impl CongestionControl for Dctcp {
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
    fn on_ack(&mut self, _now: Time, pkt: &Packet, _int: &IntStack, ack: u32, nxt: u32) {
        Dctcp::on_ack(self, ack, nxt, pkt.ecn_echo)
    }
    #[inline(always)]
    fn window(&self) -> Option<(u64, u32)> {
        Dctcp::window(self).map(|w| (w, self.mtu))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: u64 = 100_000_000_000;

    /// A sender with 10 packets in flight whose ACKs echo a mark with
    /// probability `f`: alpha settles near `f`.
    fn alpha_for(f: f64) -> f64 {
        let p = DctcpParams {
            g: 1.0 / 256.0,
            ..DctcpParams::ns3(0)
        };
        let mut d = Dctcp::new(p, LINE, 1000);
        let mut rng = engine::Rng::new(7, engine::StreamKind::Workload, 0);
        for ack in 1..200_000u32 {
            d.on_ack(ack, ack + 9, rng.bernoulli(f));
        }
        d.alpha()
    }

    #[test]
    fn alpha_tracks_the_marked_fraction() {
        for f in [0.0, 0.1, 0.3, 0.6, 1.0] {
            let a = alpha_for(f);
            assert!((a - f).abs() < 0.05, "fraction {f}: alpha {a}");
        }
    }

    #[test]
    fn a_mark_cuts_by_half_alpha_once_per_window() {
        let mut d = Dctcp::new(DctcpParams::ns3(0), LINE, 1000);
        d.on_ack(1, 10, false);
        d.on_ack(2, 11, true);
        let r = d.rate();
        assert_eq!(r, LINE / 2, "alpha starts at 1");
        // Marks before PSN 11 is acknowledged do not cut again.
        d.on_ack(5, 14, true);
        assert_eq!(d.rate(), r);
        d.on_ack(12, 21, true);
        assert!(d.rate() < r);
    }
}
