//! Congestion control selection: the configuration enum [`CcConfig`] and the
//! per-QP runtime state [`Cc`], an enum with static dispatch (no trait
//! objects on the hot path). Each algorithm lives in its own module
//! (`dcqcn`, `hpcc`, `timely`, `dctcp`) and implements the hooks of
//! [`hooks`] (every one with a default that does nothing); this file only
//! dispatches to them (the `params!` and `state!` matches), and says
//! which of them an engine can run.
//!
//! Uses `crate::dcqcn`, `crate::hpcc`, `crate::timely`, `crate::dctcp`,
//! `crate::int`, `crate::packet` and the engines' plain configuration
//! (`engine::config`, `engine::names`: which engines a control can run
//! under); `crate::api` holds its configuration.

pub mod hooks;

use crate::dcqcn::{Dcqcn, DcqcnParams, Notification};
use crate::dctcp::{Dctcp, DctcpParams};
use crate::engine::config::Engine;
use crate::engine::names::EngineKind;
use crate::hpcc::{Hpcc, HpccParams};
use crate::int::IntStack;
use crate::packet::Packet;
use crate::timely::{Timely, TimelyParams};
use engine::Time;
use hooks::{CongestionControl, ControlParams};

/// Which congestion control a QP runs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum CcConfig {
    /// No congestion control: every QP sends at line rate.
    #[default]
    None,
    /// DCQCN rate control (HPCC/ConWeave "mlx" model).
    Dcqcn(DcqcnParams),
    /// HPCC: window and rate from in-band telemetry.
    Hpcc(HpccParams),
    /// TIMELY: rate from the RTT gradient.
    Timely(TimelyParams),
    /// DCTCP-style rate (and window) from the ECN-echo fraction.
    Dctcp(DctcpParams),
}

/// The one match over the configured controls: `params!(cfg, none, p =>
/// p.method())`, `none` for [`CcConfig::None`].
macro_rules! params {
    ($cfg:expr, $none:expr, $p:ident => $body:expr) => {
        match $cfg {
            CcConfig::None => $none,
            CcConfig::Dcqcn($p) => $body,
            CcConfig::Hpcc($p) => $body,
            CcConfig::Timely($p) => $body,
            CcConfig::Dctcp($p) => $body,
        }
    };
}

/// The one match over the controls' states: `state!(s, c => c.hook())`.
macro_rules! state {
    ($s:expr, $c:ident => $body:expr) => {
        match $s {
            CcState::Dcqcn($c) => $body,
            CcState::Hpcc($c) => $body,
            CcState::Timely($c) => $body,
            CcState::Dctcp($c) => $body,
        }
    };
}

/// Whether the state of a control configured by `P` reads ACKs.
fn reads_acks<P: ControlParams>(_: &P) -> bool {
    P::State::READS_ACKS
}

impl CcConfig {
    /// The name scenario files use (`[transport] cc`).
    pub fn name(&self) -> &'static str {
        match self {
            CcConfig::None => "none",
            CcConfig::Dcqcn(_) => "dcqcn",
            CcConfig::Hpcc(_) => "hpcc",
            CcConfig::Timely(_) => "timely",
            CcConfig::Dctcp(_) => "dctcp",
        }
    }

    /// How this NIC's QPs, as notification points, report CE marks
    /// ([`ControlParams::notification`]; no control: none).
    pub fn notification(&self) -> Notification {
        params!(self, Notification::Off, p => p.notification())
    }

    /// Header bytes the control adds to every data packet and ACK
    /// ([`ControlParams::wire_bytes`]). They are part of
    /// [`crate::NicConfig`]'s `header_bytes` and `ctrl_bytes` (the
    /// scenario adds them), so that a packet costs no more to build with a
    /// control that adds none; an ideal FCT leaves them out, as ns-3's does.
    pub fn wire_bytes(&self) -> u32 {
        params!(self, 0, p => p.wire_bytes())
    }

    /// Whether switches stamp in-band telemetry for this control.
    pub fn wants_int(&self) -> bool {
        params!(self, false, p => p.wants_int())
    }

    pub fn validate(&self) -> Result<(), String> {
        params!(self, Ok(()), p => ControlParams::validate(p))
    }

    /// Whether it reacts to ACKs (HPCC, TIMELY, DCTCP:
    /// [`CongestionControl::READS_ACKS`]): it reads the cumulative ACK of
    /// request PSNs and the QP's span.
    pub fn reads_acks(&self) -> bool {
        params!(self, false, p => reads_acks(p))
    }

    /// Whether `engine` can run this control: one that keeps its own
    /// window ([`Engine::keeps_own_window`], MP-RDMA) cannot run one that
    /// reads ACKs.
    pub fn check_engine(&self, engine: &Engine) -> Result<(), String> {
        if self.reads_acks() && engine.keeps_own_window() {
            return Err(format!(
                "cc = \"{}\" cannot run under {}, which keeps its own window control \
                 (use cc = \"none\" or \"dcqcn\" with {}, or kind = {})",
                self.name(),
                engine.name(),
                engine.name(),
                EngineKind::quoted_where(|e| !e.keeps_own_window())
            ));
        }
        Ok(())
    }
}

/// The congestion-control state of one QP: 8 bytes on the QP's first line
/// (a control's state is boxed: DCQCN's is 200 bytes), so that a QP without
/// congestion control reads no other line to learn its rate and a QP stays
/// small: at scale the QPs are most of a flow's memory. One box for every
/// control keeps `Cc` a pointer (a second boxed variant would double it and
/// push the QP's first line over 64 bytes).
#[derive(Clone, Debug)]
pub enum Cc {
    None,
    On(Box<CcState>),
}

/// A control's state, in the QP's box.
#[derive(Clone, Debug)]
pub enum CcState {
    Dcqcn(Dcqcn),
    Hpcc(Hpcc),
    Timely(Timely),
    Dctcp(Dctcp),
}

impl Cc {
    /// The state of a new QP of a NIC of `line_rate_bps` sending packets
    /// of `mtu` payload bytes.
    pub fn new(cfg: &CcConfig, line_rate_bps: u64, mtu: u32) -> Cc {
        let (line, mtu) = (line_rate_bps, mtu);
        let state = match cfg {
            CcConfig::None => return Cc::None,
            CcConfig::Dcqcn(p) => CcState::Dcqcn(p.state(line, mtu)),
            CcConfig::Hpcc(p) => CcState::Hpcc(p.state(line, mtu)),
            CcConfig::Timely(p) => CcState::Timely(p.state(line, mtu)),
            CcConfig::Dctcp(p) => CcState::Dctcp(p.state(line, mtu)),
        };
        Cc::On(Box::new(state))
    }

    /// Brings the state up to `now` and returns the sending rate (`line`
    /// without congestion control). `decreases` counts rate decreases
    /// applied while catching up.
    #[inline(always)]
    pub fn rate(&mut self, now: Time, line: u64, decreases: &mut u64) -> u64 {
        let Cc::On(s) = self else {
            return line;
        };
        state!(&mut **s, c => CongestionControl::rate(c, now, decreases))
    }

    /// The rate at `now` (`line` without congestion control), without
    /// changing the state.
    pub fn rate_at(&self, now: Time, line: u64) -> u64 {
        let Cc::On(s) = self else {
            return line;
        };
        state!(&**s, c => CongestionControl::rate_at(c, now))
    }

    /// After `rate(now)`: the next time the rate may increase on its own
    /// ([`CongestionControl::next_increase`]).
    #[inline]
    pub fn next_increase(&self) -> Option<Time> {
        let Cc::On(s) = self else {
            return None;
        };
        state!(&**s, c => CongestionControl::next_increase(c))
    }

    /// A congestion notification (CNP or ECN echo) arrived.
    #[inline]
    pub fn on_congestion(&mut self, now: Time, decreases: &mut u64) {
        if let Cc::On(s) = self {
            *decreases += state!(&mut **s, c => c.on_congestion(now));
        }
    }

    /// A data packet of `wire` bytes left at `now`.
    #[inline]
    pub fn on_sent(&mut self, now: Time, wire: u64, decreases: &mut u64) {
        if let Cc::On(s) = self {
            *decreases += state!(&mut **s, c => CongestionControl::on_sent(c, now, wire));
        }
    }

    /// An ACK or NACK of requests arrived at `now` with telemetry `int`.
    /// `span` gives, only when a control reads ACKs, the PSN it
    /// acknowledges below and the next PSN the QP would send, as 32-bit
    /// serial numbers.
    #[inline(always)]
    pub fn on_ack(
        &mut self,
        now: Time,
        pkt: &Packet,
        int: &IntStack,
        span: impl FnOnce() -> (u32, u32),
    ) {
        let Cc::On(s) = self else {
            return;
        };
        if !s.reads_acks() {
            return;
        }
        let (ack, nxt) = span();
        s.on_ack(now, pkt, int, ack, nxt);
    }

    /// Whether a QP with `in_flight` packets sent and not acknowledged
    /// may send more: always, but under a window (HPCC, DCTCP), which
    /// counts them as full packets (ns-3 counts bytes; only a message's
    /// last packet differs).
    #[inline(always)]
    pub fn window_open(&self, in_flight: impl FnOnce() -> u32) -> bool {
        let Cc::On(s) = self else {
            return true;
        };
        match state!(&**s, c => CongestionControl::window(c)) {
            None => true,
            Some((w, mtu)) => (in_flight() as u64) * (mtu as u64) < w,
        }
    }

    #[inline]
    /// Asks for the lines of the box a packet sent reads (`Dcqcn`'s first
    /// two).
    pub fn prefetch(&self) {
        if let Cc::On(s) = self {
            let at: *const CcState = &**s;
            engine::prefetch::prefetch_ptr(at);
            engine::prefetch::prefetch_ptr(at.cast::<u8>().wrapping_add(64));
        }
    }

    /// The control's state (None without congestion control), for
    /// diagnostics and tests.
    pub fn state(&self) -> Option<&CcState> {
        match self {
            Cc::On(s) => Some(s),
            Cc::None => None,
        }
    }

    /// Bytes of state held outside the QP (the box).
    pub fn heap_bytes(&self) -> usize {
        match self {
            Cc::None => 0,
            Cc::On(_) => std::mem::size_of::<CcState>(),
        }
    }
}

impl CcState {
    /// Whether the control reads ACKs ([`CongestionControl::READS_ACKS`]).
    #[inline(always)]
    fn reads_acks(&self) -> bool {
        fn reads<C: CongestionControl>(_: &C) -> bool {
            C::READS_ACKS
        }
        state!(self, c => reads(c))
    }

    /// [`Cc::on_ack`] of the controls that read ACKs, out of line.
    #[inline(never)]
    fn on_ack(&mut self, now: Time, pkt: &Packet, int: &IntStack, ack: u32, nxt: u32) {
        state!(self, c => CongestionControl::on_ack(c, now, pkt, int, ack, nxt))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The QP keeps 8 bytes of congestion control, and a box costs what
    /// DCQCN's did (the other states fit around its niche or within it).
    #[test]
    fn the_state_is_a_pointer_and_the_box_dcqcn_sized() {
        assert_eq!(std::mem::size_of::<Cc>(), 8);
        eprintln!(
            "CcState {} Dcqcn {} Hpcc {} Timely {} Dctcp {}",
            std::mem::size_of::<CcState>(),
            std::mem::size_of::<Dcqcn>(),
            std::mem::size_of::<Hpcc>(),
            std::mem::size_of::<Timely>(),
            std::mem::size_of::<Dctcp>()
        );
        assert_eq!(std::mem::size_of::<CcState>(), std::mem::size_of::<Dcqcn>());
    }
}
