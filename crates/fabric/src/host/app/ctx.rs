//! The context an application acts through ([`HostCtx`]: QPs, work
//! requests, timers, within its call's scope) and the network's calls of
//! its applications: their starts and fabric timers (global events), the
//! completions of their QPs and their host timers (`Ev::Timer`, shared
//! with the NICs' timers).
//! Touches the hosts' NICs (their public verbs), the QP owners, the
//! hosts' timers, the applications and the event queues; nothing else.

use super::{App, AppId, QpOwner, QpSpec, Scope};
use crate::host::Hosts;
use crate::net::at::AtHost;
use crate::net::event::{Ev, Global};
use engine::rng::stream_seed;
use engine::{StreamKind, Time};
use transport::{Completion, Nic, QpConfig, QpError, QpId, SendOptions, WorkRequest};

/// What an application acts through: the fabric, within its call's
/// [`Scope`]. Acting outside it (posting at another host from a
/// completion, say) is a bug of the application and panics.
pub struct HostCtx<'a> {
    at: &'a mut AtHost,
    app: AppId,
    scope: Scope,
    now: Time,
    /// Hosts posted a send to, in order: their NICs are driven after the
    /// call.
    posted: Vec<u32>,
}

impl HostCtx<'_> {
    pub fn scope(&self) -> Scope {
        self.scope
    }

    pub fn host_count(&self) -> u32 {
        self.at.read_hosts().nodes.len() as u32
    }

    /// Host `h`'s NIC (its configuration, statistics, QPs), read only.
    pub fn nic(&self, h: u32) -> &Nic {
        &self.at.read_hosts().nodes[h as usize].nic
    }

    /// A UDP source port drawn from the run's seed for `key` (the flows
    /// use their id): in 49152..65536, so that QPs spread over ECMP's
    /// paths as the seed says.
    pub fn sport(&self, key: u64) -> u16 {
        sport_of(self.at.read_hosts().seed, key)
    }

    fn check(&self, h: u32, what: &str) {
        if let Scope::Host(at) = self.scope {
            assert_eq!(h, at, "{what} at host {h} from a call at host {at}");
        }
    }

    /// Opens a QP at host `a` and one at host `b`, connected to each
    /// other; returns their numbers (at `a`, at `b`). Only in
    /// [`Scope::Fabric`]: it changes two hosts, which must be two.
    pub fn connect(&mut self, a: u32, b: u32, spec: QpSpec) -> Result<(QpId, QpId), QpError> {
        assert_eq!(
            self.scope,
            Scope::Fabric,
            "connect outside the fabric scope"
        );
        // The pair's numbers are taken before either QP exists (each
        // names the other): one host for both ends would hand the second
        // the number the first took.
        let hosts = self.host_count();
        assert!(
            a != b && a < hosts && b < hosts,
            "connect from host {a} to host {b}: two distinct hosts below {hosts}"
        );
        let owner = QpOwner {
            app: self.app,
            tag: spec.tag,
        };
        let b_qp = self.at.hosts().nodes[b as usize].qp_owner.len() as QpId;
        let mut create = |host: u32, peer: u32, peer_qp: QpId| {
            let h = &mut self.at.hosts().nodes[host as usize];
            let cfg = QpConfig {
                peer_host: peer,
                peer_qp,
                sport: spec.sport,
            };
            let qp = match spec.engine {
                None => h.nic.create_qp(cfg),
                Some(e) => {
                    let cc = h.nic.config().cc;
                    h.nic.create_qp_with(cfg, cc, e)
                }
            }?;
            h.qp_owner.push(owner);
            Ok::<_, QpError>(qp)
        };
        let a_qp = create(a, b, b_qp)?;
        let got = create(b, a, a_qp)?;
        debug_assert_eq!(got, b_qp);
        Ok((a_qp, got))
    }

    /// Destroys QP `qp` of host `h` (its peer's stays until destroyed at
    /// its own host).
    pub fn destroy_qp(&mut self, h: u32, qp: QpId) -> Result<(), QpError> {
        self.check(h, "destroy_qp");
        let host = &mut self.at.hosts().nodes[h as usize];
        host.nic.destroy_qp(qp)?;
        // Its held packets stay in line: processed, they are dropped as
        // for a destroyed QP.
        if let Some(c) = &mut host.qp_cache {
            c.forget(qp);
        }
        Ok(())
    }

    /// The tag [`QpSpec::tag`] gave host `h`'s QP `qp` (None: no such QP).
    pub fn tag(&self, h: u32, qp: QpId) -> Option<u32> {
        let o = self.at.read_hosts().nodes[h as usize]
            .qp_owner
            .get(qp as usize)?;
        Some(o.tag)
    }

    /// Posts a send-queue work request (WRITE, SEND, READ, atomics) on
    /// host `h`'s QP `qp`.
    pub fn post_send(
        &mut self,
        h: u32,
        qp: QpId,
        wr: WorkRequest,
        opts: SendOptions,
    ) -> Result<(), QpError> {
        self.check(h, "post_send");
        self.at.hosts().nodes[h as usize]
            .nic
            .post_send_with(self.now, qp, wr, opts)?;
        if !self.posted.contains(&h) {
            self.posted.push(h);
        }
        Ok(())
    }

    /// Posts a receive of `len` bytes on host `h`'s QP `qp` (for a SEND
    /// or a WRITE with immediate).
    pub fn post_recv(&mut self, h: u32, qp: QpId, wr_id: u64, len: u64) -> Result<(), QpError> {
        self.check(h, "post_recv");
        self.at.hosts().nodes[h as usize]
            .nic
            .post_recv(qp, wr_id, len)
    }

    /// Arms a timer at host `h`, due at `at` (not before now): the
    /// application's `on_timer` with `Scope::Host(h)` and `token`. Timers
    /// due at one time at one host run in the order armed.
    pub fn arm(&mut self, h: u32, at: Time, token: u64) {
        self.check(h, "arm");
        let at = at.max(self.now);
        self.at.hosts().nodes[h as usize]
            .app_timers
            .push(at, self.app, token);
        self.at.core().schedule(at, Ev::Timer(h));
    }

    /// Arms a fabric timer due at `at` (not before now): the application's
    /// `on_timer` with `Scope::Fabric`, alone between windows. Only in
    /// [`Scope::Fabric`] (from a host, it could fall inside the window
    /// running).
    pub fn arm_fabric(&mut self, at: Time, token: u64) {
        assert_eq!(
            self.scope,
            Scope::Fabric,
            "arm_fabric outside the fabric scope"
        );
        let at = at.max(self.now);
        self.at
            .core()
            .globals
            .push(at, Global::AppTimer(self.app, token));
    }

    /// The application is done: the run ends when the flows and every
    /// application are (`RunState::Done`). Its QPs and timers still work.
    pub fn finish(&mut self) {
        let i = self.app.0 as usize;
        assert!(i > 0, "the flows finish with their last flow");
        let apps = &mut self.at.hosts().apps;
        if !std::mem::replace(&mut apps.finished[i - 1], true) {
            apps.open -= 1;
            apps.last_finish = apps.last_finish.max(self.now);
        }
    }
}

/// See [`HostCtx::sport`].
pub(crate) fn sport_of(seed: u64, key: u64) -> u16 {
    49152 + (stream_seed(seed, StreamKind::Host, key) % 16384) as u16
}

impl AtHost {
    /// Calls application `app` in `scope` at `now`; then drives the NICs
    /// it posted to, unless the call is inside the drive loop of the one
    /// host it may post to (`drive` false: a completion).
    fn call_app(
        &mut self,
        now: Time,
        app: AppId,
        scope: Scope,
        drive: bool,
        call: impl FnOnce(&mut dyn App, &mut HostCtx),
    ) {
        let posted = if app == AppId::FLOWS {
            let mut flows = std::mem::take(&mut self.hosts().flows);
            let mut ctx = HostCtx {
                at: self,
                app,
                scope,
                now,
                posted: Vec::new(),
            };
            call(&mut flows, &mut ctx);
            let posted = ctx.posted;
            self.hosts().flows = flows;
            posted
        } else {
            let i = app.0 as usize - 1;
            let mut a = self.hosts().apps.list[i]
                .take()
                .expect("not called from itself");
            let mut ctx = HostCtx {
                at: self,
                app,
                scope,
                now,
                posted: Vec::new(),
            };
            call(&mut *a, &mut ctx);
            let posted = ctx.posted;
            self.hosts().apps.list[i] = Some(a);
            posted
        };
        if drive {
            // In a sharded run, a global event's posts at another shard's
            // host are that shard's to drive (`net/shard.rs`).
            for h in posted {
                let node = self.core().host_node[h as usize];
                if self.core().owns(node) {
                    self.after_nic_input(now, h);
                }
            }
        }
    }

    /// A completion at host `h`: to the application that owns its QP.
    #[inline]
    pub(crate) fn app_completion(&mut self, now: Time, h: u32, c: Completion) {
        let Some(&owner) = self.hosts().nodes[h as usize].qp_owner.get(c.qp as usize) else {
            return;
        };
        self.call_app(now, owner.app, Scope::Host(h), false, |a, ctx| {
            a.on_completion(now, h, c, ctx)
        });
    }

    /// Host `h`'s earliest application timer is due (an `Ev::Timer`).
    #[inline(never)]
    #[cold]
    pub(crate) fn app_timer(&mut self, now: Time, h: u32) {
        let Some((at, app, token)) = self.hosts().nodes[h as usize].app_timers.pop() else {
            return;
        };
        debug_assert_eq!(at, now, "application timers come in order");
        self.call_app(now, app, Scope::Host(h), true, |a, ctx| {
            a.on_timer(now, Scope::Host(h), token, ctx)
        });
    }

    /// Application `app`'s start (a global event).
    pub(crate) fn app_start(&mut self, now: Time, app: AppId) {
        self.call_app(now, app, Scope::Fabric, true, |a, ctx| a.on_start(now, ctx));
    }

    /// Application `app`'s fabric timer `token` (a global event).
    pub(crate) fn app_fabric_timer(&mut self, now: Time, app: AppId, token: u64) {
        self.call_app(now, app, Scope::Fabric, true, |a, ctx| {
            a.on_timer(now, Scope::Fabric, token, ctx)
        });
    }
}

impl Hosts {
    /// The flow that owns host `h`'s QP `qp`, if a flow does.
    #[inline]
    pub(crate) fn flow_of_qp(&self, h: u32, qp: QpId) -> Option<u32> {
        let o = self.nodes.get(h as usize)?.qp_owner.get(qp as usize)?;
        (o.app == AppId::FLOWS).then_some(o.tag)
    }

    /// Every flow and every application is done.
    pub(crate) fn all_done(&self) -> bool {
        self.flows.done == self.flows.records.len() && self.apps.open == 0
    }

    /// There is something to be done: a flow or an application.
    pub(crate) fn has_work(&self) -> bool {
        !self.flows.records.is_empty() || self.apps.len() > 0
    }

    /// When the last flow or application finished.
    pub(crate) fn last_finish(&self) -> Time {
        self.flows.last_finish.max(self.apps.last_finish)
    }
}
