//! Connections within one host: a client connecting to a listener of
//! its own daemon (`ip:port` with this daemon's `--bind` ip). Both ends
//! are connections of this daemon (`Conn::link` is `LOCAL`), each the
//! other's `remote`; a message is copied from the sender's request
//! straight into the receiver's output, with no QP, slot or verb (its
//! FLAGS and the connection's sharing mean nothing here), and a close
//! of either end closes both, the other's client told.
//!
//! An `impl Daemon` block: uses the daemon's tables (`super`).

use super::{Daemon, LOCAL, MAX_CONNS};
use crate::proto::Reply;

impl Daemon {
    /// Session `i` connects to this host's listener on `port`: the
    /// listener's client is told of the new connection at once, and the
    /// answer is the connecting end's fd.
    pub(super) fn connect_local(&mut self, i: usize, port: u16) -> Option<Reply> {
        let Some(li) = self.listeners.get(&port) else {
            return Some(Reply::Err {
                message: format!("connect: refused: nothing listens on port {port}"),
            });
        };
        let (si, lfd) = (li.session, li.fd);
        self.sessions.get(si)?;
        if self.conns.len() + 2 > MAX_CONNS {
            return Some(Reply::Err {
                message: format!("connect: {MAX_CONNS} connections open here"),
            });
        }
        let (v, fd) = self.open_conn(i, LOCAL, None, None)?;
        let (u, pfd) = self.open_conn(si, LOCAL, Some(v as u32), None)?;
        self.conns.get_mut(v)?.remote = Some(u as u32);
        self.reply(
            si,
            Reply::Incoming {
                listener: lfd,
                fd: pfd,
            },
        );
        Some(Reply::Ok { value: fd.into() })
    }

    /// A message for the local connection `u` (the receiving end).
    pub(super) fn send_local(&mut self, u: usize, data: &[u8]) -> Option<Reply> {
        let len = data.len() as u64;
        let c = self.conns.get(u)?;
        let (si, fd) = (c.session, c.fd);
        let s = self.sessions.get_mut(si)?;
        super::sessions::output(s, fd, data);
        self.note_backlog(si, u);
        Some(Reply::Ok { value: len })
    }

    /// Local connection `v` was closed: its other end `u` goes too.
    pub(super) fn close_local_peer(&mut self, u: usize, v: usize) {
        let ours = self
            .conns
            .get(u)
            .is_some_and(|c| c.link == LOCAL && c.remote == Some(v as u32));
        if !ours {
            return;
        }
        if let Some((si, fd)) = self.unlink_conn(u) {
            self.reply(si, Reply::Closed { fd });
        }
    }
}
