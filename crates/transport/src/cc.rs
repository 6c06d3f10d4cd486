//! Congestion control selection: the configuration enum [`CcConfig`] and the
//! per-QP runtime state [`Cc`], an enum with static dispatch (no trait
//! objects on the hot path). New algorithms (e.g. MP-RDMA's window) become
//! new variants here.
//!
//! Uses only `crate::dcqcn`; `crate::api` holds its configuration.

use crate::dcqcn::{Dcqcn, DcqcnParams, Notification};
use engine::Time;

/// Which congestion control a QP runs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum CcConfig {
    /// No congestion control: every QP sends at line rate.
    #[default]
    None,
    /// DCQCN rate control (HPCC/ConWeave "mlx" model).
    Dcqcn(DcqcnParams),
}

impl CcConfig {
    /// How this NIC's QPs, as notification points, report CE marks.
    pub fn notification(&self) -> Notification {
        match self {
            CcConfig::None => Notification::Off,
            CcConfig::Dcqcn(p) => p.notification,
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        match self {
            CcConfig::None => Ok(()),
            CcConfig::Dcqcn(p) => p.validate(),
        }
    }
}

/// The congestion-control state of one QP: 8 bytes on the QP's first line
/// (DCQCN's 200 bytes of state are boxed), so that a QP without congestion
/// control reads no other line to learn its rate and a QP stays small: at
/// scale the QPs are most of a flow's memory.
#[derive(Clone, Debug)]
pub enum Cc {
    None,
    Dcqcn(Box<Dcqcn>),
}

impl Cc {
    pub fn new(cfg: &CcConfig, line_rate_bps: u64) -> Cc {
        match cfg {
            CcConfig::None => Cc::None,
            CcConfig::Dcqcn(p) => Cc::Dcqcn(Box::new(Dcqcn::new(*p, line_rate_bps))),
        }
    }

    /// Brings the state up to `now` and returns the sending rate (`line`
    /// without congestion control). `decreases` counts rate decreases
    /// applied while catching up.
    #[inline]
    pub fn rate(&mut self, now: Time, line: u64, decreases: &mut u64) -> u64 {
        match self {
            Cc::None => line,
            Cc::Dcqcn(d) => {
                *decreases += d.advance(now);
                d.rate()
            }
        }
    }

    /// The rate at `now` (`line` without congestion control), without
    /// changing the state.
    pub fn rate_at(&self, now: Time, line: u64) -> u64 {
        match self {
            Cc::None => line,
            Cc::Dcqcn(d) => d.rate_at(now),
        }
    }

    /// After `rate(now)`: the next time the rate may increase on its own
    /// (see [`Dcqcn::next_increase`]).
    #[inline]
    pub fn next_increase(&self) -> Option<Time> {
        match self {
            Cc::None => None,
            Cc::Dcqcn(d) => d.next_increase(),
        }
    }

    /// A congestion notification (CNP or ECN echo) arrived.
    #[inline]
    pub fn on_congestion(&mut self, now: Time, decreases: &mut u64) {
        match self {
            Cc::None => {}
            Cc::Dcqcn(d) => *decreases += d.on_cnp(now),
        }
    }

    /// A data packet of `wire` bytes left at `now`.
    #[inline]
    pub fn on_sent(&mut self, now: Time, wire: u64, decreases: &mut u64) {
        match self {
            Cc::None => {}
            Cc::Dcqcn(d) => *decreases += d.on_sent(now, wire),
        }
    }

    /// The DCQCN state, if this QP runs DCQCN.
    /// Hints the CPU to fetch the boxed state (the first lines a packet
    /// reads).
    #[inline]
    /// Asks for the lines of the box a packet sent reads (`Dcqcn`'s first
    /// two).
    pub fn prefetch(&self) {
        if let Cc::Dcqcn(d) = self {
            let at: *const Dcqcn = &**d;
            engine::prefetch::prefetch_ptr(at);
            engine::prefetch::prefetch_ptr(at.cast::<u8>().wrapping_add(64));
        }
    }

    pub fn as_dcqcn(&self) -> Option<&Dcqcn> {
        match self {
            Cc::Dcqcn(d) => Some(d),
            Cc::None => None,
        }
    }

    /// Bytes of state held outside the QP.
    pub fn heap_bytes(&self) -> usize {
        match self {
            Cc::None => 0,
            Cc::Dcqcn(_) => std::mem::size_of::<Dcqcn>(),
        }
    }
}
