//! Connections within one host: a client connecting to a listener of
//! its own daemon (`ip:port` with this daemon's `--bind` ip). Both ends
//! are connections of this daemon (`Conn::link` is `LOCAL`), each the
//! other's `remote`; a message is copied from the sender's request
//! straight into the receiver's output, with no QP, slot or verb (its
//! FLAGS and the connection's sharing mean nothing here), and a close
//! of either end closes both, the other's client told.
//!
//! An `impl Daemon` block: uses the daemon's tables (`super`).

use super::{Conn, Daemon, Handle, LOCAL};
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
        let end = |d: &mut Daemon, s: usize, remote: Option<u32>| {
            let sess = d.sessions.get_mut(s)?;
            let fd = sess.next_fd;
            sess.next_fd += 1;
            let v = d.conns.insert(Conn {
                session: s,
                fd,
                link: LOCAL,
                remote,
                own: None,
                paused: false,
                in_flight: 0,
            });
            d.sessions.get_mut(s)?.fds.insert(fd, Handle::Conn(v));
            Some((v, fd))
        };
        let (v, fd) = end(self, i, None)?;
        let (u, pfd) = end(self, si, Some(v as u32))?;
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
        let Some(c) = self
            .conns
            .get(u)
            .filter(|c| c.link == LOCAL && c.remote == Some(v as u32))
        else {
            return;
        };
        let (si, fd) = (c.session, c.fd);
        self.drop_conn(u);
        if let Some(s) = self.sessions.get_mut(si) {
            s.fds.remove(&fd);
        }
        self.reply(si, Reply::Closed { fd });
    }
}
