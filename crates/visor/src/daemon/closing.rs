//! Closing a connection to a remote host without losing what it sent.
//! A send is answered once posted, so when a client closes a connection
//! (or its session ends) messages of it may still be on their way. So a
//! connection with messages in flight leaves its session at once
//! (`Conn::session` becomes `GONE`: nothing is delivered to it any
//! more, and it names no session's fd) and tells the other end only when
//! the last of them has arrived: a SEND acknowledged, a WRITE
//! acknowledged and its `Written` queued, a READ of it done. The close
//! is a notice (`notice::Notice::Close`), queued after that `Written`
//! and carried in the same batch, not a control message on the link's
//! TCP connection, which could overtake it. A client killed mid-transfer
//! closes the same way. Its link's end drops it at once, as every
//! connection over that link.
//!
//! An `impl Daemon` block: uses the daemon's tables (`super`) and
//! `notice`.

use transport::QpId;

use super::{Daemon, Wait, GONE};
use crate::notice::Notice;
use crate::proto::Reply;

impl Daemon {
    /// `slot` holds a message of connection `v` on its way over `link`'s
    /// `qp`.
    pub(super) fn track_send(&mut self, slot: u32, (link, qp): (usize, QpId), v: usize) {
        self.sending.insert(slot, (link, qp, Some(v)));
        if let Some(c) = self.conns.get_mut(v) {
            c.in_flight += 1;
        }
    }

    /// A message of connection `conn` (if it was one's) reached the
    /// other end.
    pub(super) fn send_done(&mut self, conn: Option<usize>) {
        let Some(v) = conn else {
            return;
        };
        let Some(c) = self.conns.get_mut(v) else {
            return;
        };
        c.in_flight = c.in_flight.saturating_sub(1);
        if c.session == GONE && c.in_flight == 0 {
            self.finish_close(v);
        }
    }

    /// Connection `v`, whose fd its session no longer holds, closes; the
    /// other end is told (if `tell`) once its messages have arrived.
    pub(super) fn close_remote(&mut self, v: usize, tell: bool) {
        let Some(c) = self.conns.get(v) else {
            return;
        };
        if !tell {
            self.drop_conn(v);
        } else if c.in_flight > 0 && c.remote.is_some() {
            self.detach(v);
            if let Some(c) = self.conns.get_mut(v) {
                c.session = GONE;
            }
        } else {
            self.finish_close(v);
        }
    }

    fn finish_close(&mut self, v: usize) {
        let Some(c) = self.drop_conn(v) else {
            return;
        };
        if let Some(remote) = c.remote {
            self.tell(c.link, Notice::Close { vqpn: remote });
        }
    }

    /// Link `l`'s daemon closed the connection that is `vqpn` here (one
    /// on another link is not its to name): its client is told.
    pub(super) fn closed_by_peer(&mut self, l: usize, vqpn: u32) {
        let Some(v) = self.on_link(l, vqpn) else {
            return;
        };
        if let Some((si, fd)) = self.unlink_conn(v) {
            self.reply(si, Reply::Closed { fd });
        }
    }

    /// Connection `v` leaves its session: no longer one of the senders
    /// it paused (its number may be reused), and a send of the session
    /// waiting on it is answered.
    pub(super) fn detach(&mut self, v: usize) {
        let Some(c) = self.conns.get(v) else {
            return;
        };
        let (si, fd) = (c.session, c.fd);
        let Some(s) = self.sessions.get_mut(si) else {
            return;
        };
        s.pausing.retain(|&p| p != v);
        let waited = s
            .wait
            .take_if(|w| matches!(w, Wait::Slot { fd: f, .. } if *f == fd))
            .is_some();
        if waited {
            s.unread = true;
            let message = format!("send: fd {fd} was closed");
            self.reply(si, Reply::Err { message });
        }
    }
}
