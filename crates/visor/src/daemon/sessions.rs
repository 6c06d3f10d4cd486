//! The daemon's side of its local clients: accepting sessions on the
//! Unix socket (with the peer's credentials) and offering each its
//! shared-memory rings, reading and checking their frames (control
//! requests from the socket, sends from the ring, into one buffer: the
//! client sends a control request only once its sends are answered),
//! writing replies and events into the ring, parking before the loop
//! blocks, and ending a session (its connections closed, its peers
//! told; its last error on the socket).
//!
//! An `impl Daemon` block: uses the daemon's tables (`super`), `proto`
//! and `ring`.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;

use super::{Daemon, Session, MAX_UNREAD, SESSION0};
use crate::cred::peer_cred;
use crate::fifo::Fifo;
use crate::proto::{self, Reply};
use crate::ring::Rings;

/// Hands a message for `fd` to session `s`'s client. A large one goes
/// straight into its ring while no output waits before it (one copy,
/// from the slot), the rest after what waits; a small one joins the
/// output, which the turn's flush writes in one piece. A ring the client
/// broke takes nothing here; the next flush reports it.
pub(super) fn output(s: &mut Session, fd: u32, data: &[u8]) {
    if data.len() < proto::DIRECT {
        proto::encode_deliver(fd, data, s.wbuf.back());
        return;
    }
    let head = proto::deliver_head(fd, data.len());
    for part in [&head[..], data] {
        let mut n = 0;
        if s.wbuf.is_empty() {
            n = s.rings.push(part).unwrap_or(0);
        }
        s.wbuf.back().extend_from_slice(&part[n..]);
    }
}

/// Refuses a client's session: no rings (an empty offer) and why, as
/// far as the socket takes it (a new socket takes it all).
fn refuse(mut stream: &mio::net::UnixStream, why: &str) {
    let mut b = vec![0u8; 8];
    Reply::Err {
        message: format!("session refused: {why}"),
    }
    .encode(&mut b);
    let _ = stream.write(&b);
}

/// A `Send` frame's bytes besides its message (op, fd, flags).
const SEND_BODY: usize = 6;
/// A frame's length prefix, which its announced length does not count.
const LEN_BYTES: usize = 4;

/// The longest request frame (its announced length) a session may send:
/// a send of the largest message, or a connect's address (at most 256
/// bytes). A session's buffer holds at most this, its length prefix and
/// one read (64 KB),
/// so the daemon's buffers of partly received frames stay under
/// `--max-sessions` x that (about 128 KB a session, 128 MB in all at the
/// defaults), however long the frames clients announce.
fn max_request(slot_bytes: usize) -> usize {
    (slot_bytes + SEND_BODY).max(1024)
}

impl Daemon {
    /// Why a new session of user `uid` is refused, if it is: the limits
    /// on sessions open at once, in all and per user.
    fn session_limit(&self, uid: u32) -> Option<String> {
        let (all, each) = (self.cfg.max_sessions, self.cfg.max_sessions_per_user);
        if self.sessions.len() >= all {
            return Some(format!("{all} sessions open (rdmavisord --max-sessions)"));
        }
        let mine = self.per_user.get(&uid).copied().unwrap_or(0);
        (mine >= each).then(|| {
            format!(
                "uid {uid} has {mine} sessions open (rdmavisord --max-sessions-per-user {each})"
            )
        })
    }

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
            if let Some(why) = self.session_limit(uid) {
                refuse(&stream, &why);
                continue;
            }
            let rings = match Rings::create(self.cfg.ring_bytes) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("rdmavisord: client pid {pid}: no rings for it: {e}");
                    continue;
                }
            };
            if rings.offer(stream.as_raw_fd()).is_err() {
                continue;
            }
            let i = self.sessions.insert(Session {
                stream,
                rings,
                uid,
                pid,
                rbuf: Default::default(),
                wbuf: Default::default(),
                fds: HashMap::new(),
                next_fd: 1,
                wait: None,
                unread: true,
                own_qps: HashMap::new(),
                pausing: Vec::new(),
                skip: 0,
            });
            let s = self.sessions.get_mut(i).expect("just inserted");
            // The socket (control, and its end) and the eventfd (the
            // rings) wake the same session.
            let wake = s.rings.wake_fd();
            let ok = self
                .ep
                .register(&mut s.stream, SESSION0 + i, mio::Interest::READABLE)
                .and_then(|()| {
                    self.ep.register(
                        &mut mio::unix::SourceFd(&wake),
                        SESSION0 + i,
                        mio::Interest::READABLE,
                    )
                });
            if ok.is_err() {
                self.sessions.remove(i);
                continue;
            }
            *self.per_user.entry(uid).or_default() += 1;
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
            // Full once it holds a longest request whole, length prefix
            // included: a bound of the announced length alone stopped
            // reading with such a frame 1 to 4 bytes short of its end,
            // which then never came (the READ bench's hang).
            if s.rbuf.len() >= LEN_BYTES + max_request(self.cfg.slot_bytes) {
                s.unread = true;
                return;
            }
            match s.rings.pop(s.rbuf.back(), buf.len()) {
                Ok(0) => {}
                Ok(_) => continue,
                Err(e) => {
                    self.close_session(i, Some(e));
                    return;
                }
            }
            match s.stream.read(&mut buf) {
                Ok(0) => {
                    self.close_session(i, None);
                    return;
                }
                Ok(n) => s.rbuf.back().extend_from_slice(&buf[..n]),
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
    /// The buffer is taken out meanwhile, so a send's bytes go from it
    /// straight into a slot.
    pub(super) fn process_frames(&mut self, i: usize) -> Result<(), String> {
        let Some(s) = self.sessions.get_mut(i) else {
            return Ok(());
        };
        let mut rbuf = std::mem::take(&mut s.rbuf);
        let r = self.frames_in(i, &mut rbuf);
        // Gone if a request ended it (no session is opened meanwhile).
        if let Some(s) = self.sessions.get_mut(i) {
            s.rbuf = rbuf;
        }
        r
    }

    fn frames_in(&mut self, i: usize, rbuf: &mut Fifo) -> Result<(), String> {
        let max = max_request(self.cfg.slot_bytes);
        loop {
            let Some(s) = self.sessions.get_mut(i).filter(|s| s.wait.is_none()) else {
                return Ok(());
            };
            let n = s.skip.min(rbuf.len());
            rbuf.take(n);
            s.skip -= n;
            if s.skip > 0 {
                return Ok(());
            }
            // A frame longer than any request may be is refused on its
            // header, never buffered: a send is answered and its bytes
            // dropped as they come, anything else ends the session.
            match proto::announced(rbuf.bytes()) {
                Some((len, true)) if len > max && len <= proto::MAX_FRAME => {
                    let message = format!(
                        "send: {} bytes, the most a message may have is {}",
                        len - SEND_BODY,
                        self.cfg.slot_bytes
                    );
                    self.reply(i, Reply::Err { message });
                    let have = rbuf.len().min(LEN_BYTES + len);
                    rbuf.take(have);
                    if let Some(s) = self.sessions.get_mut(i) {
                        s.skip = LEN_BYTES + len - have;
                    }
                    continue;
                }
                Some((len, _)) if len > max => {
                    return Err(format!(
                        "a frame of {len} bytes announced, the most a request may have is {max} (--slot-bytes {})",
                        self.cfg.slot_bytes
                    ));
                }
                _ => {}
            }
            let Some((op, body, used)) = proto::split(rbuf.bytes())? else {
                return Ok(());
            };
            let reply = self.request(i, proto::decode_request(op, body)?);
            rbuf.take(used);
            if let Some(r) = reply {
                self.reply(i, r);
            }
        }
    }
    pub(super) fn reply(&mut self, i: usize, r: Reply) {
        if let Some(s) = self.sessions.get_mut(i) {
            r.encode(s.wbuf.back());
        }
    }
    pub(super) fn flush_session(&mut self, i: usize) {
        let Some(s) = self.sessions.get_mut(i) else {
            return;
        };
        if !s.wbuf.is_empty() {
            match s.rings.push(s.wbuf.bytes()) {
                Ok(n) => s.wbuf.take(n),
                Err(e) => {
                    self.close_session(i, Some(e));
                    return;
                }
            }
        }
        if s.wbuf.len() > MAX_UNREAD {
            self.close_session(i, Some("the client does not read what it is sent".into()));
            return;
        }
        self.maybe_resume(i);
    }
    /// Ends session `i`: an error frame first if `why`, then every
    /// connection closed (peers told), listeners and buffers freed.
    pub(super) fn close_session(&mut self, i: usize, why: Option<String>) {
        let Some(mut s) = self.sessions.remove(i) else {
            return;
        };
        if let Some(n) = self.per_user.get_mut(&s.uid) {
            *n -= 1;
            if *n == 0 {
                self.per_user.remove(&s.uid);
            }
        }
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
        // The client holds the eventfd too: it stays registered unless told.
        let _ = self
            .ep
            .deregister(&mut mio::unix::SourceFd(&s.rings.wake_fd()));
        for (_, h) in s.fds.drain() {
            self.close_handle(h, true);
        }
    }

    /// Before the loop may block: parks on every session's rings; whether
    /// one already has work (bytes in, or room for its waiting output),
    /// in which case the loop must not block.
    pub(super) fn park_sessions(&mut self) -> bool {
        let mut busy = false;
        for s in self.sessions.values() {
            s.rings.park();
            busy |= s.wait.is_none() && (s.unread || s.rings.pending())
                || !s.wbuf.is_empty() && s.rings.writable();
        }
        busy
    }

    pub(super) fn unpark_sessions(&mut self) {
        for s in self.sessions.values() {
            s.rings.unpark();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{Flags, Request};
    use std::os::unix::net::UnixStream;

    /// The READ bench's hang, driven to its state: the requests' ring had
    /// run a longest send into the session's buffer 1 to 4 bytes short of
    /// its end, and the daemon, whose bound on that buffer was the frame's
    /// announced length (4 bytes fewer than the whole frame), stopped
    /// reading there while the session looked busy: it neither finished
    /// the frame nor waited. Here the missing bytes come on the socket
    /// (the same buffer); the frame must be read to its end and answered.
    #[test]
    fn a_longest_send_short_of_its_last_bytes_is_read_to_its_end() {
        let control = std::env::temp_dir().join(format!("visor-unit-{}.sock", std::process::id()));
        let mut cfg = super::super::config::tests::good();
        cfg.control = control.clone();
        cfg.bind = "127.0.0.1:0".parse().unwrap();
        let slot_bytes = cfg.slot_bytes;
        let mut d = Daemon::bind(cfg).unwrap();
        let data = vec![7u8; slot_bytes];
        let mut frame = Vec::new();
        Request::Send {
            fd: 1,
            flags: Flags::Send,
            data: &data,
        }
        .encode(&mut frame);
        assert_eq!(frame.len(), LEN_BYTES + max_request(slot_bytes));
        for short in 1..=LEN_BYTES {
            let mut client = UnixStream::connect(&control).unwrap();
            d.accept_apps();
            let mut ids = Vec::new();
            d.sessions.keys_into(&mut ids);
            let i = *ids.last().unwrap();
            let cut = frame.len() - short;
            let s = d.sessions.get_mut(i).unwrap();
            s.rbuf.back().extend_from_slice(&frame[..cut]);
            client.write_all(&frame[cut..]).unwrap();
            d.read_session(i);
            let s = d.sessions.get(i).unwrap();
            assert_eq!(
                s.rbuf.len(),
                0,
                "{short} bytes short: the frame was not read to its end"
            );
            // Answered: the session has no connection fd 1.
            let (op, body, _) = proto::split(s.wbuf.bytes()).unwrap().unwrap();
            match proto::decode_reply(op, body).unwrap() {
                Reply::Err { message } => {
                    assert!(message.contains("no connection fd 1"), "{message}")
                }
                r => panic!("{short} bytes short: answered {r:?}"),
            }
        }
        let _ = std::fs::remove_file(&control);
    }
}
