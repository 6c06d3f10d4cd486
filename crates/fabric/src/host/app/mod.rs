//! Host applications: what gives the NICs work. An [`App`] is called at
//! its start, on each completion of a QP it opened and on each timer it
//! armed; through a [`HostCtx`] (`ctx.rs`, with the calls) it opens QPs
//! between hosts, posts work requests and arms timers. The flow lists
//! (`flows.rs`) are one application, always present as [`AppId::FLOWS`];
//! the others are added with `Network::add_app` and called through
//! `Box<dyn App>`, only on their own completions and timers (never per
//! packet). This file holds the interface and the types the network and
//! its hosts keep (the applications, the QPs' owners, the hosts' timers);
//! it touches nothing.
//!
//! Each QP's owner (its application and the application's tag, for flows
//! the flow id) is kept by host and QP number (`Host::qp_owner`), so a
//! completion reaches the application that opened the QP, whatever its
//! work request ids; QPs shared between flows (`QpSharing::PerPeer`)
//! belong to the flows, which tell their messages apart by `wr_id`.
//!
//! Where an application may act follows from where it runs: its start
//! and its fabric timers run between two windows of the event loop
//! (`Scope::Fabric`), alone, and may touch any host; a completion or a
//! host timer runs inside a window at one host (`Scope::Host`) and may
//! touch that host only, so results do not depend on how the loop groups
//! events.

mod ctx;
mod flows;
#[cfg(test)]
mod tests;

pub(crate) use ctx::sport_of;
pub use ctx::HostCtx;

use std::any::Any;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use engine::Time;
use transport::{Completion, Engine};

/// An application on the fabric: the flows are [`AppId::FLOWS`], the
/// others are numbered from 1 in the order `Network::add_app` added them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AppId(pub u16);

impl AppId {
    /// The flow lists (`Network::add_flow`).
    pub const FLOWS: AppId = AppId(0);
}

/// Where a call of an application runs, and so what it may touch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Between windows, alone: any host (its start, a fabric timer).
    Fabric,
    /// At this host, inside a window: this host only (a completion, a
    /// host timer).
    Host(u32),
}

/// A host application. Every method has the context it may act through;
/// what it posts is sent once the call returns.
pub trait App: Any + Send {
    /// Called once, at the start time given to `Network::add_app`, in
    /// [`Scope::Fabric`]: open the QPs, post the first work, arm timers.
    fn on_start(&mut self, now: Time, ctx: &mut HostCtx);

    /// A work request of one of its QPs at `host` completed (the
    /// requester's, or at the responder a received SEND or WRITE; its
    /// `qp` is the host's QP number).
    fn on_completion(&mut self, now: Time, host: u32, c: Completion, ctx: &mut HostCtx);

    /// A timer it armed is due: `scope` says which kind
    /// ([`HostCtx::arm`] at a host, [`HostCtx::arm_fabric`]).
    fn on_timer(&mut self, now: Time, scope: Scope, token: u64, ctx: &mut HostCtx);
}

/// How [`HostCtx::connect`] opens a QP pair.
#[derive(Clone, Copy, Debug)]
pub struct QpSpec {
    /// The engine, or None for the NICs' own.
    pub engine: Option<Engine>,
    /// The UDP source port of both QPs' packets (what ECMP hashes): see
    /// [`HostCtx::sport`].
    pub sport: u16,
    /// The application's own number for the pair (the flows: the flow
    /// id), read back with [`HostCtx::tag`].
    pub tag: u32,
}

/// The owner of a host's QP.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QpOwner {
    pub app: AppId,
    pub tag: u32,
}

/// A host's pending application timers: (due, arming order, app, token),
/// earliest first. Each has an `Ev::Timer` of the host, the kind its
/// NIC's timers have: the event runs the earliest application timer if
/// one is due, else the NIC's.
pub(crate) struct AppTimers {
    heap: BinaryHeap<Reverse<(Time, u64, AppId, u64)>>,
    seq: u64,
    /// The earliest one's due time (`Time::MAX`: none): the one load a
    /// NIC's timer event makes.
    next: Time,
}

impl Default for AppTimers {
    fn default() -> Self {
        AppTimers {
            heap: BinaryHeap::new(),
            seq: 0,
            next: Time::MAX,
        }
    }
}

impl AppTimers {
    pub fn push(&mut self, at: Time, app: AppId, token: u64) {
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq, app, token)));
        self.next = self.next.min(at);
    }

    /// Whether one is due at `now`.
    #[inline(always)]
    pub fn due(&self, now: Time) -> bool {
        self.next <= now
    }

    /// The earliest timer (the one armed first among those due with it):
    /// (due, app, token).
    pub fn pop(&mut self) -> Option<(Time, AppId, u64)> {
        let Reverse((at, _, app, token)) = self.heap.pop()?;
        self.next = self.heap.peek().map_or(Time::MAX, |Reverse(t)| t.0);
        Some((at, app, token))
    }
}

/// The applications other than the flows, and which are still running.
#[derive(Default)]
pub(crate) struct Apps {
    /// By `AppId` - 1; None only while the application is being called.
    pub list: Vec<Option<Box<dyn App>>>,
    pub finished: Vec<bool>,
    /// How many have not called [`HostCtx::finish`].
    pub open: usize,
    /// When the last one finished.
    pub last_finish: Time,
}

impl Apps {
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Adds an application, not yet started; returns its id.
    pub fn add(&mut self, app: Box<dyn App>) -> Result<AppId, String> {
        if self.len() >= u16::MAX as usize {
            return Err("too many applications".into());
        }
        self.list.push(Some(app));
        self.finished.push(false);
        self.open += 1;
        Ok(AppId(self.len() as u16))
    }

    /// Application `id` (not the flows), as its own type.
    pub fn get<T: App>(&self, id: AppId) -> Option<&T> {
        let app = self.list.get((id.0 as usize).checked_sub(1)?)?;
        let app: &dyn Any = app.as_deref()?;
        app.downcast_ref()
    }
}
