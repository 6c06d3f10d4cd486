//! HPCC (SIGCOMM'19): the sender's window and rate from in-band telemetry,
//! as HPCC's ns-3 codes it (`rdma-hw.cc`, `UpdateRateHp`, single rate:
//! `MULTI_RATE 0`). Every ACK echoes the hop records of the data packet it
//! answers (`crate::int`); per hop the sender estimates the normalised
//! inflight `u = txRate/B + min(qlen, qlen_prev)/(B*T)` against its
//! previous ACK's record, keeps the largest, and folds it into an EWMA
//! over the base RTT `T`. Once per RTT (an ACK beyond the PSN sent at the
//! last update) the reference rate moves: multiplicatively to
//! `rate_ref / (u/eta) + AI` when `u >= eta` or after `max_stage` additive
//! steps, else `rate_ref + AI`; with fast react, every other ACK sets the
//! rate from the reference without moving it. The window is the rate
//! times `T` (`var_win`), or a fixed `window_bytes`, or none.
//!
//! Plain state the QP calls through the congestion-control hooks
//! (`crate::cc::hooks`, which it implements); uses `crate::int` and
//! `crate::packet`.

use crate::cc::hooks::{CongestionControl, ControlParams};
use crate::int::{IntHop, IntStack};
use crate::packet::Packet;
use engine::Time;

/// HPCC's parameters. The window and base RTT depend on the topology
/// (ns-3's `GLOBAL_T 1`: the largest base RTT and BDP of any host pair);
/// the scenario fills them in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HpccParams {
    /// eta, the target utilisation (`U_TARGET`).
    pub eta: f64,
    /// Additive increase, bits per second (`RATE_AI`).
    pub rai_bps: u64,
    /// The rate never goes below this (`MIN_RATE`).
    pub min_rate_bps: u64,
    /// maxStage: additive steps before a multiplicative one while below
    /// eta (`MI_THRESH`; 0: every update is multiplicative).
    pub max_stage: u32,
    /// React to every ACK between per-RTT updates (`FAST_REACT`).
    pub fast_react: bool,
    /// Bound the bytes in flight (`HAS_WIN`).
    pub window: bool,
    /// The window follows the rate: `window_bytes * rate / line`
    /// (`VAR_WIN`).
    pub var_win: bool,
    /// The base window, bytes (ns-3's `maxBdp`): also the `B*T` of `u`.
    pub window_bytes: u64,
    /// The base RTT T (ns-3's `maxRtt`).
    pub base_rtt: Time,
    /// INT multiplier (`INT_MULTI`): coarser units in the hop records.
    pub int_multi: u32,
}

impl HpccParams {
    /// The HPCC ns-3 configuration the reference runs use
    /// (`../shared/reference/ns3-hpcc/config-ws128-hpcc.txt`): eta 0.95,
    /// AI 50 Mb/s, min rate 1 Gb/s, `MI_THRESH 0`, fast react, variable
    /// window, `INT_MULTI 4`. Window and base RTT as given.
    pub fn ns3(window_bytes: u64, base_rtt: Time) -> HpccParams {
        HpccParams {
            eta: 0.95,
            rai_bps: 50_000_000,
            min_rate_bps: 1_000_000_000,
            max_stage: 0,
            fast_react: true,
            window: true,
            var_win: true,
            window_bytes,
            base_rtt,
            int_multi: 4,
        }
    }

    /// The paper's §5 setting: eta 0.95, maxStage 5, AI 50 Mb/s at 100G
    /// (W_AI = 80 B, `run.py`'s `hpcc_ai` at 100G), `INT_MULTI 1`.
    pub fn paper(window_bytes: u64, base_rtt: Time) -> HpccParams {
        HpccParams {
            max_stage: 5,
            int_multi: 1,
            ..HpccParams::ns3(window_bytes, base_rtt)
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        if !(self.eta > 0.0 && self.eta <= 1.0) {
            return Err(format!("hpcc.eta must be in (0, 1], got {}", self.eta));
        }
        if self.min_rate_bps == 0 {
            return Err("hpcc.min_rate_mbps must be positive".into());
        }
        if self.base_rtt == 0 {
            return Err("hpcc.base_rtt_us must be positive".into());
        }
        if self.window_bytes == 0 {
            return Err("hpcc.window_bytes must be positive".into());
        }
        if !(1..=1 << 12).contains(&self.int_multi) {
            return Err("hpcc.int_multi must be in 1..=4096".into());
        }
        Ok(())
    }
}

/// One QP's HPCC state.
#[derive(Clone, Debug)]
pub struct Hpcc {
    p: HpccParams,
    line: u64,
    /// Payload bytes of a full packet (the window counts packets so).
    mtu: u32,
    /// The sending rate (ns-3's `m_rate`).
    rate: u64,
    /// The reference rate of the per-RTT update (`hp.m_curRate`).
    rate_ref: u64,
    stage: u32,
    /// EWMA of the normalised inflight.
    u: f64,
    /// The PSN sent last at the last per-RTT update; None before the
    /// first ACK.
    last_update: Option<u32>,
    /// The hop records of the previous ACK.
    prev: IntStack,
}

impl Hpcc {
    pub fn new(p: HpccParams, line_rate_bps: u64, mtu: u32) -> Hpcc {
        Hpcc {
            p,
            line: line_rate_bps,
            mtu,
            rate: line_rate_bps,
            rate_ref: line_rate_bps,
            stage: 0,
            u: 1.0,
            last_update: None,
            prev: IntStack::default(),
        }
    }

    pub fn params(&self) -> &HpccParams {
        &self.p
    }

    #[inline]
    pub fn rate(&self) -> u64 {
        self.rate
    }

    /// The normalised inflight estimate (EWMA).
    pub fn u(&self) -> f64 {
        self.u
    }

    pub fn mtu(&self) -> u32 {
        self.mtu
    }

    /// Bytes the QP may have in flight, if bounded.
    #[inline]
    pub fn window(&self) -> Option<u64> {
        if !self.p.window {
            return None;
        }
        if !self.p.var_win {
            return Some(self.p.window_bytes);
        }
        let w = self.p.window_bytes as u128 * self.rate as u128 / self.line as u128;
        Some((w as u64).max(1))
    }

    /// An ACK (or NACK) acknowledging everything below `ack` (a 32-bit
    /// serial PSN) arrived with `int`; `snd_nxt` is the next PSN the QP
    /// would send.
    pub fn on_ack(&mut self, ack: u32, snd_nxt: u32, int: &IntStack) {
        let Some(last) = self.last_update else {
            // The first ACK: its records are the baseline.
            self.last_update = Some(snd_nxt);
            if let Some(h) = int.hops() {
                self.prev.hops[..h.len()].copy_from_slice(h);
            }
            return;
        };
        let full = (ack.wrapping_sub(last) as i32) > 0;
        if full || self.p.fast_react {
            self.update(int, !full);
        }
        if full && (snd_nxt.wrapping_sub(last) as i32) > 0 {
            self.last_update = Some(snd_nxt);
        }
    }

    fn update(&mut self, int: &IntStack, fast: bool) {
        let Some(hops) = int.hops() else {
            return;
        };
        let m = self.p.int_multi;
        let (mut top, mut dt) = (0.0f64, 0u64);
        for (i, &h) in hops.iter().enumerate() {
            let prev: IntHop = self.prev.hops[i];
            let tau = h.ns_since(prev);
            let b = h.rate_bps() as f64;
            let tx = h.bytes_since(prev, m) as f64 * 8.0 / (tau as f64 * 1e-9);
            let q = h.qlen(m).min(prev.qlen(m)) as f64;
            let u = tx / b + q * self.line as f64 / b / self.p.window_bytes as f64;
            if u > top {
                top = u;
                dt = tau;
            }
            self.prev.hops[i] = h;
        }
        if hops.is_empty() {
            return;
        }
        let t = (self.p.base_rtt / engine::time::NS).max(1);
        let dt = dt.min(t);
        self.u = (self.u * (t - dt) as f64 + top * dt as f64) / t as f64;
        let c = self.u / self.p.eta;
        let (rate, stage) = if c >= 1.0 || self.stage >= self.p.max_stage {
            ((self.rate_ref as f64 / c) as u64 + self.p.rai_bps, 0)
        } else {
            (self.rate_ref + self.p.rai_bps, self.stage + 1)
        };
        let rate = rate.clamp(self.p.min_rate_bps.min(self.line), self.line);
        self.rate = rate;
        if !fast {
            self.rate_ref = rate;
            self.stage = stage;
        }
    }
}

impl ControlParams for HpccParams {
    type State = Hpcc;
    fn state(&self, line_rate_bps: u64, mtu: u32) -> Hpcc {
        Hpcc::new(*self, line_rate_bps, mtu)
    }
    fn validate(&self) -> Result<(), String> {
        HpccParams::validate(self)
    }
    fn wire_bytes(&self) -> u32 {
        IntStack::WIRE_BYTES
    }
    fn wants_int(&self) -> bool {
        true
    }
}

/// HPCC's rate and window move on ACKs, from their telemetry.
impl CongestionControl for Hpcc {
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
    fn on_ack(&mut self, _now: Time, _pkt: &Packet, int: &IntStack, ack: u32, nxt: u32) {
        Hpcc::on_ack(self, ack, nxt, int)
    }
    #[inline(always)]
    fn window(&self) -> Option<(u64, u32)> {
        Hpcc::window(self).map(|w| (w, self.mtu))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::time::{NS, US};

    const LINE: u64 = 100_000_000_000;

    fn stack(now: Time, tx: u64, q: u64) -> IntStack {
        let mut s = IntStack::default();
        s.push(IntHop::new(now, tx, q, LINE, 1));
        s
    }

    fn params() -> HpccParams {
        HpccParams {
            int_multi: 1,
            ..HpccParams::ns3(100_000, 8 * US)
        }
    }

    #[test]
    fn an_idle_path_keeps_line_rate_and_a_queue_cuts_it() {
        let mut h = Hpcc::new(params(), LINE, 1000);
        // The link runs at half rate, no queue: u falls, the rate stays at
        // line (bounded).
        let mut tx = 0;
        for k in 0..40u64 {
            let now = k * US;
            h.on_ack(k as u32 + 1, k as u32 + 9, &stack(now, tx, 0));
            tx += 6_250; // 50 Gb/s for 1 us
        }
        assert_eq!(h.rate(), LINE);
        assert!(h.u() < 0.6, "u {}", h.u());
        // Now the link is full and 100 KB queue (one BDP): u about 2.
        for k in 40..80u64 {
            let now = k * US;
            h.on_ack(k as u32 + 1, k as u32 + 9, &stack(now, tx, 100_000));
            tx += 12_500;
        }
        assert!(h.u() > 1.5, "u {}", h.u());
        assert!(h.rate() < LINE * 6 / 10, "rate {}", h.rate());
        assert_eq!(h.window(), Some(100_000 * h.rate() / LINE));
    }

    #[test]
    fn fast_react_moves_the_rate_not_the_reference() {
        let mut h = Hpcc::new(params(), LINE, 1000);
        h.on_ack(1, 100, &stack(0, 0, 0));
        // ACKs below PSN 100 are fast reactions.
        h.on_ack(2, 100, &stack(US, 12_500, 50_000));
        let r = h.rate();
        assert!(r < LINE);
        assert_eq!(h.rate_ref, LINE);
        h.on_ack(3, 100, &stack(2 * US, 25_000, 50_000));
        assert!(h.rate() < r, "each fast reaction starts from the reference");
        let _ = NS;
    }
}
