//! Congestion control selection: the configuration enum [`CcConfig`] and the
//! per-QP runtime state [`Cc`], an enum with static dispatch (no trait
//! objects on the hot path). Each algorithm lives in its own module
//! (`dcqcn`, `hpcc`, `timely`, `dctcp`); this file only dispatches, and
//! says which of them an engine can run.
//!
//! Uses `crate::dcqcn`, `crate::hpcc`, `crate::timely`, `crate::dctcp`,
//! `crate::int`, `crate::packet` and the engines' plain configuration
//! (`engine::config`, `engine::names`: which engines a control can run
//! under); `crate::api` holds its configuration.

use crate::dcqcn::{Dcqcn, DcqcnParams, Notification};
use crate::dctcp::{Dctcp, DctcpParams};
use crate::engine::config::Engine;
use crate::engine::names::EngineKind;
use crate::hpcc::{Hpcc, HpccParams};
use crate::int::IntStack;
use crate::packet::Packet;
use crate::timely::{Timely, TimelyParams};
use engine::Time;

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

    /// How this NIC's QPs, as notification points, report CE marks.
    pub fn notification(&self) -> Notification {
        match self {
            CcConfig::None => Notification::Off,
            CcConfig::Dcqcn(p) => p.notification,
            _ => Notification::AckEcho,
        }
    }

    /// Header bytes the control adds to every data packet and ACK: HPCC's
    /// INT stack; TIMELY's timestamp (ns-3's `IntHeader` in `TS` mode).
    /// They are part of [`crate::NicConfig`]'s `header_bytes` and
    /// `ctrl_bytes` (the scenario adds them), so that a packet costs no
    /// more to build with a control that adds none; an ideal FCT leaves
    /// them out, as ns-3's does.
    pub fn wire_bytes(&self) -> u32 {
        match self {
            CcConfig::Hpcc(_) => IntStack::WIRE_BYTES,
            CcConfig::Timely(_) => 8,
            _ => 0,
        }
    }

    /// Whether switches stamp in-band telemetry for this control.
    pub fn wants_int(&self) -> bool {
        matches!(self, CcConfig::Hpcc(_))
    }

    pub fn validate(&self) -> Result<(), String> {
        match self {
            CcConfig::None => Ok(()),
            CcConfig::Dcqcn(p) => p.validate(),
            CcConfig::Hpcc(p) => p.validate(),
            CcConfig::Timely(p) => p.validate(),
            CcConfig::Dctcp(p) => p.validate(),
        }
    }

    /// Whether it reacts to ACKs (HPCC, TIMELY, DCTCP): it reads the
    /// cumulative ACK of request PSNs and the QP's span.
    pub fn reads_acks(&self) -> bool {
        matches!(
            self,
            CcConfig::Hpcc(_) | CcConfig::Timely(_) | CcConfig::Dctcp(_)
        )
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
        let state = match cfg {
            CcConfig::None => return Cc::None,
            CcConfig::Dcqcn(p) => CcState::Dcqcn(Dcqcn::new(*p, line_rate_bps)),
            CcConfig::Hpcc(p) => CcState::Hpcc(Hpcc::new(*p, line_rate_bps, mtu)),
            CcConfig::Timely(p) => CcState::Timely(Timely::new(*p, line_rate_bps)),
            CcConfig::Dctcp(p) => CcState::Dctcp(Dctcp::new(*p, line_rate_bps, mtu)),
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
        match &mut **s {
            CcState::Dcqcn(d) => {
                *decreases += d.advance(now);
                d.rate()
            }
            CcState::Hpcc(h) => h.rate(),
            CcState::Timely(t) => t.rate(),
            CcState::Dctcp(d) => d.rate(),
        }
    }

    /// The rate at `now` (`line` without congestion control), without
    /// changing the state.
    pub fn rate_at(&self, now: Time, line: u64) -> u64 {
        let Cc::On(s) = self else {
            return line;
        };
        match &**s {
            CcState::Dcqcn(d) => d.rate_at(now),
            CcState::Hpcc(h) => h.rate(),
            CcState::Timely(t) => t.rate(),
            CcState::Dctcp(d) => d.rate(),
        }
    }

    /// After `rate(now)`: the next time the rate may increase on its own
    /// (see [`Dcqcn::next_increase`]). The others change their rate only on
    /// an ACK, which wakes the QP.
    #[inline]
    pub fn next_increase(&self) -> Option<Time> {
        self.dcqcn().and_then(Dcqcn::next_increase)
    }

    /// A congestion notification (CNP or ECN echo) arrived. DCTCP reads
    /// its echoes in [`Cc::on_ack`].
    #[inline]
    pub fn on_congestion(&mut self, now: Time, decreases: &mut u64) {
        if let Some(d) = self.dcqcn_mut() {
            *decreases += d.on_cnp(now);
        }
    }

    /// A data packet of `wire` bytes left at `now`.
    #[inline]
    pub fn on_sent(&mut self, now: Time, wire: u64, decreases: &mut u64) {
        if let Some(d) = self.dcqcn_mut() {
            *decreases += d.on_sent(now, wire);
        }
    }

    /// An ACK or NACK of requests arrived at `now` with telemetry `int`.
    /// `span` gives, only when a control asks, the PSN it acknowledges
    /// below and the next PSN the QP would send, as 32-bit serial numbers.
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
        if matches!(**s, CcState::Dcqcn(_)) {
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
        let (w, mtu) = match &**s {
            CcState::Hpcc(h) => (h.window(), h.mtu()),
            CcState::Dctcp(d) => (d.window(), d.mtu()),
            _ => return true,
        };
        w.is_none_or(|w| (in_flight() as u64) * (mtu as u64) < w)
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

    fn dcqcn_mut(&mut self) -> Option<&mut Dcqcn> {
        match self {
            Cc::On(s) => match &mut **s {
                CcState::Dcqcn(d) => Some(d),
                _ => None,
            },
            Cc::None => None,
        }
    }

    fn dcqcn(&self) -> Option<&Dcqcn> {
        match self {
            Cc::On(s) => match &**s {
                CcState::Dcqcn(d) => Some(d),
                _ => None,
            },
            Cc::None => None,
        }
    }

    pub fn as_dcqcn(&self) -> Option<&Dcqcn> {
        self.dcqcn()
    }

    pub fn as_hpcc(&self) -> Option<&Hpcc> {
        match self {
            Cc::On(s) => match &**s {
                CcState::Hpcc(h) => Some(h),
                _ => None,
            },
            Cc::None => None,
        }
    }

    pub fn as_dctcp(&self) -> Option<&Dctcp> {
        match self {
            Cc::On(s) => match &**s {
                CcState::Dctcp(d) => Some(d),
                _ => None,
            },
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
    /// [`Cc::on_ack`] of the controls that read ACKs, out of line.
    #[inline(never)]
    fn on_ack(&mut self, now: Time, pkt: &Packet, int: &IntStack, ack: u32, nxt: u32) {
        match self {
            CcState::Dcqcn(_) => {}
            CcState::Hpcc(h) => h.on_ack(ack, nxt, int),
            CcState::Timely(t) => t.on_ack(ack, nxt, now.saturating_sub(pkt.sent_at)),
            CcState::Dctcp(d) => d.on_ack(ack, nxt, pkt.ecn_echo),
        }
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
