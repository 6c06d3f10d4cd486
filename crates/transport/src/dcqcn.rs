//! DCQCN: the reaction point (the sender's rate controller) as coded in the
//! HPCC / ConWeave ns-3 "mlx" model (`rdma-hw.cc`), plus the parameter
//! presets of `data/params/dcqcn.toml`.
//!
//! The model has three periodic timers per QP: the alpha update (every
//! `alpha_resume_interval`), the rate-decrease check (every
//! `rate_decrease_interval`, acting only if a CNP arrived since the last
//! check) and the rate-increase timer (every `rp_timer`, restarted by each
//! decrease). None of them generates an event here: their effect between two
//! inputs is a pure function of elapsed time, so [`Dcqcn::advance`] replays
//! every boundary up to `now` when the state is next needed (a CNP arrives,
//! the QP wants to send, someone asks for the rate). Runs of CNP-free alpha
//! slots collapse to `alpha * (1-g)^k`, idle decrease checks are skipped
//! arithmetically, and rate-increase periods after the rate has converged to
//! line rate are counted without being replayed one by one.
//!
//! Ordering convention at equal times (what ns-3 does, given when each
//! event was scheduled): alpha boundaries sit on the grid `t0 + k*A`; the
//! decrease checks on `t0 + 1 ns + m*D` (HPCC adds 1 ns so the decrease
//! sees the alpha of the same instant); a rate-increase boundary that
//! coincides with a decrease check runs first. All boundaries at time `t`
//! run before an input (a CNP, a send) at time `t`.
//!
//! Rounding: rates are integer bits per second. A decrease truncates
//! (`rate * (1 - alpha/2)` then `max(min_rate)`), an increase rounds up
//! (`(rate + target + 1) / 2`) so that the rate reaches its target exactly
//! instead of stalling one bit per second below it.
//!
//! Implements the congestion-control hooks (`crate::cc::hooks`), where
//! [`Notification`], the notification point's choice, lives.

pub use crate::cc::hooks::Notification;
use crate::cc::hooks::{CongestionControl, ControlParams};
use engine::time::{NS, US};
use engine::Time;

/// DCQCN parameters. Every field is public; the constructors are presets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DcqcnParams {
    /// Alpha EWMA period (`ALPHA_RESUME_INTERVAL`, Mellanox `dce_tcp_rtt`).
    pub alpha_resume_interval: Time,
    /// Rate-decrease check period (`RATE_DECREASE_INTERVAL`,
    /// Mellanox `rate_reduce_monitor_period`).
    pub rate_decrease_interval: Time,
    /// Rate-increase timer (`RP_TIMER`, Mellanox `rpg_time_reset`).
    pub rp_timer: Time,
    /// F: number of fast-recovery stages (`FAST_RECOVERY_TIMES`, `rpg_threshold`).
    pub fast_recovery_times: u32,
    /// EWMA gain g of alpha.
    pub g: f64,
    /// Additive increase step of the target rate, bits per second.
    pub rai_bps: u64,
    /// Hyper increase step of the target rate, bits per second.
    pub rhai_bps: u64,
    /// The rate never goes below this, bits per second.
    pub min_rate_bps: u64,
    /// On the first CNP of a QP: rate := rate * this (1.0 = unchanged).
    pub rate_on_first_cnp: f64,
    /// Alpha set by the first CNP.
    pub initial_alpha: f64,
    /// Always set target := rate on a decrease.
    pub clamp_target_rate: bool,
    /// Set target := rate on a decrease if the timer increased the rate
    /// since the previous decrease (HPCC hard-codes this to true).
    pub clamp_target_rate_after_time_inc: bool,
    /// Byte counter (`rpg_byte_reset`) of the original DCQCN: a rate-increase
    /// event every this many bytes sent since the last decrease; 0 = off (as
    /// in the HPCC/ConWeave model). With it on, the stage is chosen as in the
    /// DCQCN paper: fast recovery while max(T, BC) < F, hyper increase when
    /// min(T, BC) > F, additive otherwise.
    pub byte_counter: u64,
    /// Notification point behaviour (applies to the receiving NIC's QPs).
    pub notification: Notification,
}

impl Default for DcqcnParams {
    fn default() -> Self {
        DcqcnParams::conweave()
    }
}

/// Mb/s to b/s.
const MBPS: u64 = 1_000_000;

impl DcqcnParams {
    /// ConWeave ns-3 `run.py` (cc_mode 1) at 100 Gb/s, the setup Eunomia's
    /// evaluation matches: AI 40 Mb/s, HAI 100 Mb/s, min rate 100 Mb/s.
    pub fn conweave() -> Self {
        DcqcnParams::conweave_at(100_000_000_000)
    }

    /// ConWeave's formulas at another NIC rate: AI = 10*bw/25 Mb/s,
    /// HAI = 25*bw/25 Mb/s (bw in Gb/s).
    pub fn conweave_at(line_rate_bps: u64) -> Self {
        DcqcnParams {
            alpha_resume_interval: US,
            rate_decrease_interval: 4 * US,
            rp_timer: 300 * US,
            fast_recovery_times: 1,
            g: 1.0 / 256.0,
            rai_bps: line_rate_bps * 10 / 25_000,
            rhai_bps: line_rate_bps * 25 / 25_000,
            min_rate_bps: 100 * MBPS,
            rate_on_first_cnp: 1.0,
            initial_alpha: 1.0,
            clamp_target_rate: false,
            clamp_target_rate_after_time_inc: true,
            byte_counter: 0,
            notification: Notification::AckEcho,
        }
    }

    /// HPCC `run.py --cc dcqcn` at the given NIC rate: AI = 5*bw/25 Mb/s,
    /// HAI = 50*bw/25 Mb/s (20 and 200 Mb/s at 100G), min rate 1000 Mb/s.
    pub fn hpcc(line_rate_bps: u64) -> Self {
        DcqcnParams {
            rai_bps: line_rate_bps * 5 / 25_000,
            rhai_bps: line_rate_bps * 50 / 25_000,
            min_rate_bps: 1000 * MBPS,
            ..DcqcnParams::conweave_at(line_rate_bps)
        }
    }

    /// Mellanox firmware defaults as recorded in `[mellanox_defaults]`:
    /// 300 us timer, F = 1, AI 5 Mb/s, HAI 50 Mb/s, min 1 Mb/s,
    /// `dce_tcp_g` 1019 read as g = (1024-1019)/1024 (the NVIDIA docs give
    /// alpha = (G/1024)*alpha + (1024-G)/1024), byte counter 32767 B
    /// (`rpg_byte_reset`; the data file's unit, not cross-checked), CNP
    /// packets at most every 2 us (`min_time_between_cnps`, the data file's
    /// value; older ConnectX-4 documents quote 4 us).
    pub fn mellanox() -> Self {
        DcqcnParams {
            alpha_resume_interval: US,
            rate_decrease_interval: 4 * US,
            rp_timer: 300 * US,
            fast_recovery_times: 1,
            g: 5.0 / 1024.0,
            rai_bps: 5 * MBPS,
            rhai_bps: 50 * MBPS,
            min_rate_bps: MBPS,
            rate_on_first_cnp: 1.0,
            initial_alpha: 1023.0 / 1024.0,
            clamp_target_rate: false,
            clamp_target_rate_after_time_inc: true,
            byte_counter: 32_767,
            notification: Notification::Cnp {
                cnp_interval: 2 * US,
            },
        }
    }

    /// Checks the parameters make sense.
    pub fn validate(&self) -> Result<(), String> {
        if self.alpha_resume_interval == 0 || self.rate_decrease_interval == 0 || self.rp_timer == 0
        {
            return Err("DCQCN timer periods must be positive".into());
        }
        if !(0.0..=1.0).contains(&self.g) {
            return Err(format!("DCQCN g must be in [0, 1], got {}", self.g));
        }
        if !(0.0..=1.0).contains(&self.initial_alpha) {
            return Err(format!(
                "DCQCN initial_alpha must be in [0, 1], got {}",
                self.initial_alpha
            ));
        }
        if !(self.rate_on_first_cnp > 0.0 && self.rate_on_first_cnp <= 1.0) {
            return Err(format!(
                "DCQCN rate_on_first_cnp must be in (0, 1], got {}",
                self.rate_on_first_cnp
            ));
        }
        if self.min_rate_bps == 0 {
            return Err("DCQCN min_rate_bps must be positive".into());
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    FastRecovery,
    Additive,
    Hyper,
}

/// The reaction-point state of one QP, laid out by cache line (`repr(C)`):
/// every packet sent asks for the rate (`advance`), which reads line 0
/// (what decides whether a timer is due) and, once an alpha period has
/// passed, the parameters that follow. With the parameters first,
/// `started` sat on line 3, which nothing asked for: 2.4% of A2A128's
/// samples under DCQCN waited on it.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct Dcqcn {
    // Line 0.
    line: u64,
    rate: u64,
    target: u64,
    /// Next alpha boundary.
    alpha_next: Time,
    /// Next decrease check (only meaningful while `dec_cnp`; normalised to
    /// the first grid point after the last `advance` otherwise).
    dec_next: Time,
    /// Next rate-increase timer; None before the first decrease.
    rp_next: Option<Time>,
    /// The first CNP has arrived (HPCC's `!m_first_cnp`): timers run.
    started: bool,
    /// A CNP arrived in the current alpha slot.
    alpha_cnp: bool,
    /// A CNP arrived since the last decrease check.
    dec_cnp: bool,
    // Line 1 and on.
    alpha: f64,
    p: DcqcnParams,
    rp_stage: u32,
    byte_stage: u32,
    bytes: u64,
    decreases: u64,
}

impl Dcqcn {
    /// A QP starting at line rate.
    pub fn new(p: DcqcnParams, line_rate_bps: u64) -> Self {
        Dcqcn {
            p,
            line: line_rate_bps,
            rate: line_rate_bps,
            target: line_rate_bps,
            alpha: p.initial_alpha,
            started: false,
            alpha_cnp: false,
            alpha_next: 0,
            dec_cnp: false,
            dec_next: 0,
            rp_next: None,
            rp_stage: 0,
            byte_stage: 0,
            bytes: 0,
            decreases: 0,
        }
    }

    pub fn params(&self) -> &DcqcnParams {
        &self.p
    }
    /// Current rate as of the last `advance`.
    pub fn rate(&self) -> u64 {
        self.rate
    }
    pub fn target(&self) -> u64 {
        self.target
    }
    /// Alpha as of the last `advance`.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
    /// Rate-increase timer stage (0 right after a decrease).
    pub fn rp_stage(&self) -> u32 {
        self.rp_stage
    }
    /// Rate decreases applied so far.
    pub fn decreases(&self) -> u64 {
        self.decreases
    }
    /// True once the first CNP arrived.
    pub fn started(&self) -> bool {
        self.started
    }

    /// The rate at `now` without changing the state.
    pub fn rate_at(&self, now: Time) -> u64 {
        let mut c = self.clone();
        c.advance(now);
        c.rate
    }

    /// Alpha at `now` without changing the state.
    pub fn alpha_at(&self, now: Time) -> f64 {
        let mut c = self.clone();
        c.advance(now);
        c.alpha
    }

    /// After `advance(now)`: the next time the rate may *increase* without
    /// an input (the rate-increase timer; byte-counter increases happen on
    /// sends). The scheduler re-evaluates a rate-limited QP then, so that a
    /// rate increase shortens its wait exactly as in HPCC's `ChangeRate`.
    /// Decreases need no such visit: they only make the QP wait longer,
    /// which the scheduler sees when the old wait ends and re-evaluates the
    /// limiter with the rate in force at that moment.
    pub fn next_increase(&self) -> Option<Time> {
        self.rp_next
    }

    /// After `advance(now)`: the next pending timer event of any kind (a
    /// decrease check with a CNP pending, or the rate-increase timer).
    pub fn next_change(&self) -> Option<Time> {
        let dec = self.dec_cnp.then_some(self.dec_next);
        match (dec, self.rp_next) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Replays every timer boundary `<= now`. Returns the number of rate
    /// decreases applied.
    pub fn advance(&mut self, now: Time) -> u64 {
        if !self.started {
            return 0;
        }
        let before = self.decreases;
        let period = self.p.rp_timer;
        loop {
            let t_dec = if self.dec_cnp {
                self.dec_next
            } else {
                Time::MAX
            };
            let t_rp = self.rp_next.unwrap_or(Time::MAX);
            let t = t_dec.min(t_rp);
            if t > now {
                break;
            }
            if t_rp <= t_dec {
                if self.rate == self.line && self.target == self.line {
                    // Converged: increases are no-ops; count the periods up to
                    // min(now, t_dec) (ties go to the timer) in one step.
                    let limit = now.min(t_dec);
                    let n = (limit - t_rp) / period + 1;
                    self.rp_stage = self
                        .rp_stage
                        .saturating_add(u32::try_from(n).unwrap_or(u32::MAX));
                    self.rp_next = Some(t_rp + n * period);
                } else {
                    let ph = self.phase();
                    self.increase(ph);
                    self.rp_stage = self.rp_stage.saturating_add(1);
                    self.rp_next = Some(t_rp + period);
                }
            } else {
                self.update_alpha(t_dec);
                self.decrease(t_dec);
                self.dec_next += self.p.rate_decrease_interval;
            }
        }
        self.update_alpha(now);
        if !self.dec_cnp && self.dec_next <= now {
            let d = self.p.rate_decrease_interval;
            self.dec_next += ((now - self.dec_next) / d + 1) * d;
        }
        self.decreases - before
    }

    /// A congestion notification (CNP, or an ACK/NACK with `ecn_echo`)
    /// arrived at `now`. Returns the number of rate decreases applied while
    /// catching up.
    pub fn on_cnp(&mut self, now: Time) -> u64 {
        let n = self.advance(now);
        if !self.started {
            self.started = true;
            self.alpha = self.p.initial_alpha;
            self.alpha_cnp = false;
            self.dec_cnp = true;
            self.alpha_next = now + self.p.alpha_resume_interval;
            self.dec_next = now + self.p.rate_decrease_interval + NS;
            let r = (self.rate as f64 * self.p.rate_on_first_cnp) as u64;
            self.rate = r.max(self.p.min_rate_bps).min(self.line);
            self.target = self.rate;
        } else {
            self.alpha_cnp = true;
            self.dec_cnp = true;
        }
        n
    }

    /// `bytes` were put on the wire at `now` (drives the optional byte
    /// counter). Returns the number of rate decreases applied while catching up.
    pub fn on_sent(&mut self, now: Time, bytes: u64) -> u64 {
        let n = self.advance(now);
        let b = self.p.byte_counter;
        if b > 0 && self.rp_next.is_some() {
            self.bytes += bytes;
            while self.bytes >= b {
                self.bytes -= b;
                let ph = self.phase();
                self.increase(ph);
                self.byte_stage = self.byte_stage.saturating_add(1);
            }
        }
        n
    }

    fn phase(&self) -> Phase {
        let f = self.p.fast_recovery_times;
        let t = self.rp_stage;
        if self.p.byte_counter == 0 {
            match t.cmp(&f) {
                std::cmp::Ordering::Less => Phase::FastRecovery,
                std::cmp::Ordering::Equal => Phase::Additive,
                std::cmp::Ordering::Greater => Phase::Hyper,
            }
        } else {
            let b = self.byte_stage;
            if t.max(b) < f {
                Phase::FastRecovery
            } else if t.min(b) > f {
                Phase::Hyper
            } else {
                Phase::Additive
            }
        }
    }

    fn increase(&mut self, ph: Phase) {
        match ph {
            Phase::FastRecovery => {}
            Phase::Additive => {
                self.target = self.target.saturating_add(self.p.rai_bps).min(self.line)
            }
            Phase::Hyper => {
                self.target = self.target.saturating_add(self.p.rhai_bps).min(self.line)
            }
        }
        let r = (self.rate as u128 + self.target as u128).div_ceil(2) as u64;
        self.rate = r.min(self.line);
    }

    fn decrease(&mut self, at: Time) {
        let clamp = self.p.clamp_target_rate
            || (self.p.clamp_target_rate_after_time_inc && self.rp_stage != 0);
        if clamp {
            self.target = self.rate;
        }
        let r = (self.rate as f64 * (1.0 - self.alpha / 2.0)) as u64;
        self.rate = r.max(self.p.min_rate_bps);
        self.rp_stage = 0;
        self.byte_stage = 0;
        self.bytes = 0;
        self.dec_cnp = false;
        self.rp_next = Some(at + self.p.rp_timer);
        self.decreases += 1;
    }

    /// Applies every alpha boundary `<= t`.
    fn update_alpha(&mut self, t: Time) {
        if self.alpha_next > t {
            return;
        }
        let a = self.p.alpha_resume_interval;
        let k = (t - self.alpha_next) / a + 1;
        let keep = 1.0 - self.p.g;
        self.alpha = keep * self.alpha + if self.alpha_cnp { self.p.g } else { 0.0 };
        self.alpha_cnp = false;
        let rest = k - 1;
        if rest <= 64 {
            for _ in 0..rest {
                self.alpha *= keep;
            }
        } else {
            self.alpha *= keep.powi(rest.min(i32::MAX as u64) as i32);
        }
        self.alpha_next += k * a;
    }
}

impl ControlParams for DcqcnParams {
    type State = Dcqcn;
    fn state(&self, line_rate_bps: u64, _mtu: u32) -> Dcqcn {
        Dcqcn::new(*self, line_rate_bps)
    }
    fn validate(&self) -> Result<(), String> {
        DcqcnParams::validate(self)
    }
    fn notification(&self) -> Notification {
        self.notification
    }
}

/// DCQCN's rate moves on notifications, timers and bytes sent; it reads
/// no ACK and keeps no window.
impl CongestionControl for Dcqcn {
    #[inline(always)]
    fn rate(&mut self, now: Time, decreases: &mut u64) -> u64 {
        *decreases += self.advance(now);
        Dcqcn::rate(self)
    }
    #[inline(always)]
    fn rate_at(&self, now: Time) -> u64 {
        Dcqcn::rate_at(self, now)
    }
    #[inline(always)]
    fn next_increase(&self) -> Option<Time> {
        Dcqcn::next_increase(self)
    }
    #[inline(always)]
    fn on_congestion(&mut self, now: Time) -> u64 {
        self.on_cnp(now)
    }
    #[inline(always)]
    fn on_sent(&mut self, now: Time, wire: u64) -> u64 {
        Dcqcn::on_sent(self, now, wire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::{Rng, StreamKind};

    const LINE: u64 = 100_000_000_000;

    #[test]
    fn presets_follow_the_data_file() {
        let c = DcqcnParams::conweave();
        assert_eq!(c.rai_bps, 40 * MBPS);
        assert_eq!(c.rhai_bps, 100 * MBPS);
        assert_eq!(c.min_rate_bps, 100 * MBPS);
        let h = DcqcnParams::hpcc(LINE);
        assert_eq!(h.rai_bps, 20 * MBPS);
        assert_eq!(h.rhai_bps, 200 * MBPS);
        assert_eq!(h.min_rate_bps, 1000 * MBPS);
        let h4 = DcqcnParams::hpcc(4 * LINE);
        assert_eq!(h4.rai_bps, 80 * MBPS);
        for p in [c, h, h4, DcqcnParams::mellanox()] {
            p.validate().unwrap();
        }
    }

    #[test]
    fn no_cnp_means_line_rate_and_no_change() {
        let mut d = Dcqcn::new(DcqcnParams::conweave(), LINE);
        assert_eq!(d.advance(10 * engine::time::MS), 0);
        assert_eq!(d.rate(), LINE);
        assert_eq!(d.next_change(), None);
    }

    #[test]
    fn first_cnp_then_decrease_after_one_interval() {
        let p = DcqcnParams::conweave();
        let mut d = Dcqcn::new(p, LINE);
        let t0 = 10 * US;
        d.on_cnp(t0);
        assert_eq!(d.alpha(), 1.0);
        assert_eq!(d.rate(), LINE);
        // The check sits 1 ns after the 4th alpha boundary.
        assert_eq!(d.next_change(), Some(t0 + 4 * US + NS));
        assert_eq!(d.next_increase(), None);
        assert_eq!(d.advance(t0 + 4 * US), 0);
        assert_eq!(d.rate(), LINE);
        assert_eq!(d.advance(t0 + 4 * US + NS), 1);
        // Four CNP-free slots: alpha = (1-g)^4; rate cut by alpha/2.
        let a = (1.0 - p.g).powi(4);
        assert!((d.alpha() - a).abs() < 1e-15);
        assert_eq!(d.rate(), (LINE as f64 * (1.0 - a / 2.0)) as u64);
        assert_eq!(d.target(), LINE, "no clamp at stage 0 (HPCC mlx)");
        assert_eq!(d.next_change(), Some(t0 + 4 * US + NS + p.rp_timer));
        assert_eq!(d.next_increase(), Some(t0 + 4 * US + NS + p.rp_timer));
    }

    #[test]
    fn cnp_stream_cuts_rate_and_alpha_grows() {
        let p = DcqcnParams::conweave();
        let mut d = Dcqcn::new(p, LINE);
        // First CNP, then a long quiet time: alpha decays to ~0.
        d.on_cnp(0);
        d.advance(3 * engine::time::MS);
        let low = d.alpha();
        assert!(low < 1e-4, "alpha decayed: {low}");
        let r0 = d.rate_at(3 * engine::time::MS);
        // Now a CNP every microsecond (one per alpha slot): alpha rises each
        // slot and the rate falls at every decrease check.
        let start = 3 * engine::time::MS;
        let mut prev_alpha = d.alpha();
        let mut prev_rate = r0;
        for i in 0..200u64 {
            let t = start + i * US + 500 * NS;
            d.on_cnp(t);
            if i > 0 {
                assert!(d.alpha() > prev_alpha, "alpha grows at slot {i}");
            }
            prev_alpha = d.alpha();
            assert!(d.rate() <= prev_rate);
            prev_rate = d.rate();
        }
        assert!(d.alpha() > 0.5, "alpha {}", d.alpha());
        assert!(d.rate() < r0 / 2, "rate {} vs {}", d.rate(), r0);
        assert!(d.decreases() >= 49);
    }

    /// The rate never goes below min_rate, and does reach it.
    #[test]
    fn min_rate_is_respected() {
        let p = DcqcnParams::hpcc(LINE);
        let mut d = Dcqcn::new(p, LINE);
        for i in 0..20_000u64 {
            d.on_cnp(i * US);
            assert!(d.rate() >= p.min_rate_bps);
        }
        assert_eq!(d.rate(), p.min_rate_bps);
    }

    /// Independent re-implementation of the stage rules, one period at a time.
    fn reference_recovery(p: &DcqcnParams, mut rate: u64, mut target: u64, line: u64) -> Vec<u64> {
        let mut out = vec![];
        let mut stage = 0u32;
        while out.len() < 100_000 {
            if stage == p.fast_recovery_times {
                target = (target + p.rai_bps).min(line);
            } else if stage > p.fast_recovery_times {
                target = (target + p.rhai_bps).min(line);
            }
            rate = (rate + target).div_ceil(2).min(line);
            stage += 1;
            out.push(rate);
            if rate == line {
                break;
            }
        }
        out
    }

    #[test]
    fn recovers_to_line_rate_through_fr_ai_hai() {
        // Clamp the target so that AI and HAI matter.
        let p = DcqcnParams {
            clamp_target_rate: true,
            ..DcqcnParams::conweave()
        };
        let mut d = Dcqcn::new(p, LINE);
        // Two CNPs 10 us apart: decreases at t0+4us+1ns and t0+12us+1ns.
        d.on_cnp(0);
        d.on_cnp(10 * US);
        let t_dec = 12 * US + NS;
        d.advance(t_dec);
        assert_eq!(d.decreases(), 2);
        let (r, tg) = (d.rate(), d.target());
        assert!(tg < LINE && r < tg, "rate {r} target {tg}");
        let expect = reference_recovery(&p, r, tg, LINE);
        let n = expect.len() as u64;
        // Analytic cross-check: one FR stage, then the target climbs by RAI
        // once and RHAI per period until it hits line rate; the rate then
        // halves its remaining gap every period.
        let hai = (LINE - tg - p.rai_bps).div_ceil(p.rhai_bps);
        let target_full = 1 + 1 + hai;
        assert!(
            n >= target_full && n <= target_full + 40,
            "n={n} target_full={target_full}"
        );
        // Step through every period, checking each one.
        for (k, want) in expect.iter().enumerate() {
            let t = t_dec + (k as u64 + 1) * p.rp_timer;
            assert_eq!(d.rate_at(t - 1), if k == 0 { r } else { expect[k - 1] });
            assert_eq!(d.rate_at(t), *want, "period {}", k + 1);
        }
        // Lazily, in a single jump (the fast path), the same answer.
        let mut e = d.clone();
        e.advance(t_dec + n * p.rp_timer);
        assert_eq!(e.rate(), LINE);
        let mut f = d.clone();
        f.advance(t_dec + (n - 1) * p.rp_timer);
        assert!(f.rate() < LINE);
        // Far in the future: still line rate, and stage counts every period.
        let mut g = d.clone();
        g.advance(t_dec + 10_000 * p.rp_timer);
        assert_eq!(g.rate(), LINE);
        assert_eq!(g.rp_stage(), 10_000);
    }

    /// Step-by-step discrete-event reference of the HPCC mlx timers, with an
    /// explicit event for every alpha slot, decrease check and RP period.
    struct Reference {
        p: DcqcnParams,
        line: u64,
        rate: u64,
        target: u64,
        alpha: f64,
        started: bool,
        alpha_cnp: bool,
        dec_cnp: bool,
        next_alpha: Time,
        next_dec: Time,
        next_rp: Option<Time>,
        stage: u32,
    }

    impl Reference {
        fn run_until(&mut self, now: Time) {
            if !self.started {
                return;
            }
            loop {
                let rp = self.next_rp.unwrap_or(Time::MAX);
                let t = self.next_alpha.min(self.next_dec).min(rp);
                if t > now {
                    return;
                }
                if self.next_alpha == t {
                    self.alpha =
                        (1.0 - self.p.g) * self.alpha + if self.alpha_cnp { self.p.g } else { 0.0 };
                    self.alpha_cnp = false;
                    self.next_alpha += self.p.alpha_resume_interval;
                } else if rp == t {
                    let f = self.p.fast_recovery_times;
                    if self.stage == f {
                        self.target = (self.target + self.p.rai_bps).min(self.line);
                    } else if self.stage > f {
                        self.target = (self.target + self.p.rhai_bps).min(self.line);
                    }
                    self.rate = ((self.rate + self.target).div_ceil(2)).min(self.line);
                    self.stage += 1;
                    self.next_rp = Some(t + self.p.rp_timer);
                } else {
                    self.next_dec += self.p.rate_decrease_interval;
                    if self.dec_cnp {
                        if self.p.clamp_target_rate || self.stage != 0 {
                            self.target = self.rate;
                        }
                        self.rate = ((self.rate as f64 * (1.0 - self.alpha / 2.0)) as u64)
                            .max(self.p.min_rate_bps);
                        self.stage = 0;
                        self.dec_cnp = false;
                        self.next_rp = Some(t + self.p.rp_timer);
                    }
                }
            }
        }
        fn cnp(&mut self, now: Time) {
            self.run_until(now);
            if !self.started {
                self.started = true;
                self.alpha = 1.0;
                self.dec_cnp = true;
                self.next_alpha = now + self.p.alpha_resume_interval;
                self.next_dec = now + self.p.rate_decrease_interval + NS;
                self.target = self.rate;
            } else {
                self.alpha_cnp = true;
                self.dec_cnp = true;
            }
        }
    }

    #[test]
    fn lazy_matches_step_by_step_reference_on_random_cnps() {
        let p = DcqcnParams::conweave();
        for seed in 0..4 {
            let mut rng = Rng::new(seed, StreamKind::Workload, 0);
            let mut lazy = Dcqcn::new(p, LINE);
            let mut r = Reference {
                p,
                line: LINE,
                rate: LINE,
                target: LINE,
                alpha: 1.0,
                started: false,
                alpha_cnp: false,
                dec_cnp: false,
                next_alpha: 0,
                next_dec: 0,
                next_rp: None,
                stage: 0,
            };
            let mut t: Time = 0;
            let mut checks = 0;
            for _ in 0..3000 {
                // Bursts of closely spaced CNPs and long quiet gaps, so that
                // alpha both saturates and decays far, and all stages occur.
                let gap = if rng.bernoulli(0.1) {
                    rng.below(2 * engine::time::MS)
                } else {
                    rng.below(3 * US)
                };
                t += gap + 1;
                if rng.bernoulli(0.7) {
                    lazy.on_cnp(t);
                    r.cnp(t);
                } else {
                    lazy.advance(t);
                    r.run_until(t);
                }
                if r.started {
                    checks += 1;
                    let rel = (lazy.alpha() - r.alpha).abs() / r.alpha.max(1e-300);
                    assert!(
                        rel < 1e-9,
                        "seed {seed} t {t}: alpha {} vs {}",
                        lazy.alpha(),
                        r.alpha
                    );
                    let dr = lazy.rate().abs_diff(r.rate);
                    assert!(
                        dr <= 16,
                        "seed {seed} t {t}: rate {} vs {}",
                        lazy.rate(),
                        r.rate
                    );
                    assert!(lazy.target().abs_diff(r.target) <= 16);
                    assert_eq!(lazy.rp_stage(), r.stage, "seed {seed} t {t}");
                }
            }
            assert!(checks > 2000);
        }
    }

    #[test]
    fn byte_counter_speeds_up_recovery() {
        let base = DcqcnParams::conweave();
        let bc = DcqcnParams {
            byte_counter: 10_000,
            ..base
        };
        let mut a = Dcqcn::new(base, LINE);
        let mut b = Dcqcn::new(bc, LINE);
        for d in [&mut a, &mut b] {
            d.on_cnp(0);
            d.advance(5 * US);
        }
        assert_eq!(a.rate(), b.rate());
        let cut = a.rate();
        // Send 1048-byte packets at the current rate for 100 us (< one RP period).
        let mut t = 5 * US;
        while t < 105 * US {
            a.on_sent(t, 1048);
            b.on_sent(t, 1048);
            t += engine::time::serialization(1048, b.rate());
        }
        assert_eq!(a.rate_at(t), cut, "timer-only DCQCN has not increased yet");
        assert!(b.rate_at(t) > cut, "byte counter increased the rate");
    }
}
