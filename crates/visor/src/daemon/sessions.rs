//! The daemon's side of its local clients: accepting sessions on the
//! Unix socket (with the peer's credentials), reading and checking their
//! frames, writing replies and events, and ending a session (its
//! connections closed, its peers told).
//!
//! An `impl Daemon` block: uses the daemon's tables (`super`) and `proto`.

use std::collections::HashMap;
use std::io::{self, Read, Write};

use super::{Daemon, Session, MAX_UNREAD, SESSION0};
use crate::cred::peer_cred;
use crate::proto::{self, Reply};

impl Daemon {
    pub(super) fn accept_apps(&mut self) {
        loop {
            let (stream, _) = match self.apps.accept() {
                Ok(s) => s,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(_) => return,
            };
            let Ok((uid, pid)) = peer_cred(&stream) else {
                continue;
            };
            let i = self.sessions.insert(Session {
                stream,
                uid,
                pid,
                rbuf: Vec::new(),
                wbuf: Vec::new(),
                fds: HashMap::new(),
                next_fd: 1,
                wait: None,
                unread: true,
                own_qps: HashMap::new(),
            });
            let s = self.sessions.get_mut(i).expect("just inserted");
            let ok = self.ep.register(
                &mut s.stream,
                SESSION0 + i,
                mio::Interest::READABLE | mio::Interest::WRITABLE,
            );
            if ok.is_err() {
                self.sessions.remove(i);
                continue;
            }
        }
    }
    pub(super) fn read_session(&mut self, i: usize) {
        let mut buf = [0u8; 64 * 1024];
        loop {
            let Some(s) = self.sessions.get_mut(i) else {
                return;
            };
            s.unread = false;
            if s.wait.is_some() {
                // Not read until the wait ends: the socket holds the rest.
                s.unread = true;
                return;
            }
            if let Err(e) = self.process_frames(i) {
                self.close_session(i, Some(e));
                return;
            }
            let Some(s) = self.sessions.get_mut(i) else {
                return;
            };
            if s.wait.is_some() {
                s.unread = true;
                return;
            }
            if s.rbuf.len() > 2 * proto::MAX_FRAME {
                s.unread = true;
                return;
            }
            match s.stream.read(&mut buf) {
                Ok(0) => {
                    self.close_session(i, None);
                    return;
                }
                Ok(n) => s.rbuf.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if let Err(e) = self.process_frames(i) {
                        self.close_session(i, Some(e));
                    }
                    return;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    self.close_session(i, None);
                    return;
                }
            }
        }
    }
    /// Handles the whole frames in session `i`'s buffer, until it waits.
    pub(super) fn process_frames(&mut self, i: usize) -> Result<(), String> {
        loop {
            let Some(s) = self.sessions.get_mut(i) else {
                return Ok(());
            };
            if s.wait.is_some() {
                return Ok(());
            }
            let (req, used) = match proto::split(&s.rbuf)? {
                None => return Ok(()),
                Some((op, body, used)) => (proto::decode_request(op, body)?, used),
            };
            s.rbuf.drain(..used);
            let reply = self.request(i, req);
            if let Some(r) = reply {
                self.reply(i, r);
            }
        }
    }
    pub(super) fn reply(&mut self, i: usize, r: Reply) {
        if let Some(s) = self.sessions.get_mut(i) {
            r.encode(&mut s.wbuf);
        }
    }
    pub(super) fn flush_session(&mut self, i: usize) {
        let Some(s) = self.sessions.get_mut(i) else {
            return;
        };
        while !s.wbuf.is_empty() {
            match s.stream.write(&s.wbuf) {
                Ok(0) => break,
                Ok(n) => {
                    s.wbuf.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    self.close_session(i, None);
                    return;
                }
            }
        }
        if s.wbuf.len() > MAX_UNREAD {
            self.close_session(i, Some("the client does not read what it is sent".into()));
        }
    }
    /// Ends session `i`: an error frame first if `why`, then every
    /// connection closed (peers told), listeners and buffers freed.
    pub(super) fn close_session(&mut self, i: usize, why: Option<String>) {
        let Some(mut s) = self.sessions.remove(i) else {
            return;
        };
        if let Some(m) = why {
            eprintln!(
                "rdmavisord: client pid {} (uid {}): session closed: {m}",
                s.pid, s.uid
            );
            let mut b = Vec::new();
            Reply::Err {
                message: format!("session closed: {m}"),
            }
            .encode(&mut b);
            let _ = s.stream.write(&b);
        }
        let _ = self.ep.deregister(&mut s.stream);
        for (_, h) in s.fds.drain() {
            self.close_handle(h, true);
        }
    }
}
