//! Back-pressure from a client that falls behind to the senders of its
//! connections. What a client has not taken from its ring waits in its
//! session's output (`Session::wbuf`); once that passes
//! `--backlog-bytes`, each connection that delivers to it asks its
//! sender to pause (a link's `Pause`, or a flag for a connection within
//! the host), and once the client has brought it under half, every
//! connection asked resumes. A paused connection's next send waits, and
//! with it its session (a session's requests are served in order), so
//! its client's requests ring fills and its sends block, as a blocking
//! socket's do. Messages already in flight when the pause is asked
//! still arrive, and so does what a sender sends while the pause
//! travels: the overshoot is what the senders had in flight, which their
//! slots bound, and that, which nothing bounds (credits would; this is
//! on and off). READs for a client over its backlog are not
//! started (`one_sided::start_reads`) until it has caught up.
//!
//! An `impl Daemon` block: uses the daemon's tables (`super`) and
//! `link`'s messages.

use super::{Daemon, Wait, LOCAL};
use crate::link::LinkMsg;

impl Daemon {
    /// A message for connection `v` went into session `si`'s output.
    pub(super) fn note_backlog(&mut self, si: usize, v: usize) {
        let Some(s) = self.sessions.get_mut(si) else {
            return;
        };
        if s.wbuf.len() <= self.cfg.backlog_bytes || s.pausing.contains(&v) {
            return;
        }
        s.pausing.push(v);
        self.ask(v, true);
    }

    /// Session `si`'s output moved into its ring: under half
    /// `backlog_bytes`, the senders it paused resume.
    pub(super) fn maybe_resume(&mut self, si: usize) {
        let Some(s) = self.sessions.get_mut(si) else {
            return;
        };
        if s.pausing.is_empty() || s.wbuf.len() > self.cfg.backlog_bytes / 2 {
            return;
        }
        for v in std::mem::take(&mut s.pausing) {
            self.ask(v, false);
        }
        self.start_reads();
    }

    /// Asks the sender of connection `v` (the other end) to pause or
    /// resume.
    fn ask(&mut self, v: usize, pause: bool) {
        let Some(c) = self.conns.get(v) else {
            return;
        };
        let Some(remote) = c.remote else {
            return;
        };
        if c.link == LOCAL {
            self.set_paused(remote as usize, pause);
            return;
        }
        let l = c.link;
        let m = if pause {
            LinkMsg::Pause { vqpn: remote }
        } else {
            LinkMsg::Resume { vqpn: remote }
        };
        let _ = self.link_send(l, &m);
    }

    /// Link `l` asks connection `vqpn` here to pause or resume (one on
    /// another link is not its to name).
    pub(super) fn pause_from(&mut self, l: usize, vqpn: u32, pause: bool) {
        if let Some(v) = self.on_link(l, vqpn) {
            self.set_paused(v, pause);
        }
    }

    fn set_paused(&mut self, v: usize, pause: bool) {
        let Some(c) = self.conns.get_mut(v) else {
            return;
        };
        c.paused = pause;
        let (si, fd) = (c.session, c.fd);
        let waits = self
            .sessions
            .get(si)
            .is_some_and(|s| matches!(s.wait, Some(Wait::Slot { fd: w, .. }) if w == fd));
        if !pause && waits {
            self.retry_send(si);
        }
    }
}
