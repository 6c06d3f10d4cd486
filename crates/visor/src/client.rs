//! The client library: the paper's socket-like API (Fig 3) over a
//! session with the daemon: its Unix socket carries the control requests
//! (connect, listen, close) and tells the session's end; the shared-
//! memory rings (`ring`) carry the sends and everything the daemon
//! answers or pushes. Blocking calls, one session per [`Visor`]:
//! `connect`, `listen`, `accept`, `send`, `recv`, `recv_zero_copy`,
//! `close`, and `recv_any` (the next event on any fd, which rsocket
//! lacks). Messages keep their boundaries.
//!
//! Events the daemon pushes (a message, a close, a new connection) are
//! queued per fd while the library waits for a reply, so a call never
//! loses one.
//!
//! Sends are pipelined: `send` returns once its request is written, with
//! up to [`SEND_WINDOW`] replies outstanding (the daemon answers in
//! order); a send the daemon refused is reported by the next call. Every
//! other call first collects the outstanding replies. Without the window
//! each message cost a round trip through the daemon.
//!
//! A control request goes out only once every send is answered, so the
//! daemon, which reads both, never sees the two interleaved.
//!
//! Uses `proto`, `ring`, `fifo` and `cred`.

use std::collections::{HashMap, HashSet, VecDeque};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::Path;

use crate::fifo::Fifo;
use crate::proto::{self, Flags, Reply, Request, Sharing};
use crate::ring::Rings;

/// Why a call failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

/// One event of [`Visor::recv_any`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    Message {
        fd: u32,
        data: Vec<u8>,
    },
    /// The peer closed `fd`.
    Closed {
        fd: u32,
    },
    /// A connection `fd` arrived on listener `listener`.
    Incoming {
        listener: u32,
        fd: u32,
    },
}

/// Sends whose replies may be outstanding.
pub const SEND_WINDOW: usize = 64;

/// A session with the local daemon.
pub struct Visor {
    stream: UnixStream,
    rings: Rings,
    rbuf: Fifo,
    /// Events not yet taken, in arrival order.
    events: VecDeque<Event>,
    closed: HashSet<u32>,
    /// Connections that arrived, by listener, not yet accepted.
    incoming: HashMap<u32, VecDeque<u32>>,
    /// The fds of the sends whose replies are not yet read, in order, and
    /// the first refusal among those read.
    outstanding: VecDeque<u32>,
    refused: Option<Error>,
    /// A small send's frame, built here and written in one piece.
    frame: Vec<u8>,
}

impl Visor {
    /// Opens a session with the daemon serving `control`.
    pub fn open(control: &Path) -> Result<Visor, Error> {
        let stream = UnixStream::connect(control).map_err(|e| {
            Error(format!(
                "no daemon at {}: {e} (start one with rdmavisord)",
                control.display()
            ))
        })?;
        // A daemon that refuses the session (its limits) passes no rings
        // and says why.
        let rings = Rings::attach(stream.as_raw_fd()).map_err(|e| {
            last_word(&stream).unwrap_or_else(|| Error(format!("the daemon's rings: {e}")))
        })?;
        Ok(Visor {
            stream,
            rings,
            rbuf: Fifo::default(),
            events: VecDeque::new(),
            closed: HashSet::new(),
            incoming: HashMap::new(),
            outstanding: VecDeque::new(),
            refused: None,
            frame: Vec::new(),
        })
    }

    /// Connects to the listener on `addr` ("ip:port") through the daemon on
    /// that ip; returns the connection's fd. Its messages share the
    /// link's QPs with every connection between the two hosts.
    pub fn connect(&mut self, addr: &str) -> Result<u32, Error> {
        self.connect_with(addr, Sharing::Peer)
    }

    /// [`Visor::connect`] with the connection's QP chosen by `sharing`
    /// (the baselines: a QP of its own, or one per session).
    pub fn connect_with(&mut self, addr: &str, sharing: Sharing) -> Result<u32, Error> {
        let v = self.call(Request::Connect {
            addr: addr.into(),
            sharing,
        })?;
        Ok(v as u32)
    }

    /// Listens on `port` of this host; returns the listener's fd.
    pub fn listen(&mut self, port: u16) -> Result<u32, Error> {
        Ok(self.call(Request::Listen { port })? as u32)
    }

    /// The next connection on `listener` (waits for one).
    pub fn accept(&mut self, listener: u32) -> Result<u32, Error> {
        loop {
            if let Some(fd) = self
                .incoming
                .get_mut(&listener)
                .and_then(VecDeque::pop_front)
            {
                return Ok(fd);
            }
            self.read_one()?;
        }
    }

    /// Sends one message on `fd`; returns its length once the request is
    /// written to the daemon (pipelined: a refusal comes back from a later
    /// call, as a socket's asynchronous error does).
    pub fn send(&mut self, fd: u32, buf: &[u8], flags: Flags) -> Result<usize, Error> {
        self.take_refusal()?;
        if self.closed.contains(&fd) {
            return Err(Error(format!("send: fd {fd} was closed by its peer")));
        }
        while self.outstanding.len() >= SEND_WINDOW {
            self.collect_one()?;
            self.take_refusal()?;
        }
        if buf.len() >= proto::DIRECT {
            // The head, then the caller's bytes straight into the ring.
            self.write_ring(&proto::send_head(fd, flags, buf.len()))?;
            self.write_ring(buf)?;
        } else {
            // One frame, one write: the ring's indices and wake-up are
            // touched once per small message, not twice.
            let mut frame = std::mem::take(&mut self.frame);
            frame.clear();
            let send = Request::Send {
                fd,
                flags,
                data: buf,
            };
            send.encode(&mut frame);
            let written = self.write_ring(&frame);
            self.frame = frame;
            written?;
        }
        self.outstanding.push_back(fd);
        Ok(buf.len())
    }

    /// Whether the peer closed connection `fd` (its `Closed` event read
    /// from the daemon, taken by the application or not): a send on it
    /// fails.
    pub fn peer_closed(&self, fd: u32) -> bool {
        self.closed.contains(&fd)
    }

    /// Reads until every pipelined send is answered; its first refusal.
    /// A session that ends (dropped, or its process gone) with sends not
    /// yet answered loses them; those answered reach the other end, as a
    /// close waits for them (`close` flushes first).
    pub fn flush(&mut self) -> Result<(), Error> {
        while !self.outstanding.is_empty() {
            self.collect_one()?;
        }
        self.take_refusal()
    }

    fn take_refusal(&mut self) -> Result<(), Error> {
        match self.refused.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Reads frames until one send's reply.
    fn collect_one(&mut self) -> Result<(), Error> {
        loop {
            let r = self.read_frame()?;
            if self.take_reply(r) {
                return Ok(());
            }
        }
    }

    /// Takes one frame read while sends are outstanding: a send's reply
    /// (true), or an event, queued. A send refused because the peer
    /// closed the connection after it was sent (`send` refuses one on a
    /// connection known closed) is no error: its `Closed` event, which
    /// the daemon wrote before the refusal, says what happened, as a
    /// datagram to a closed socket is lost (an echo server answering a
    /// client that has just gone must not fail on it).
    fn take_reply(&mut self, r: Reply) -> bool {
        match r {
            Reply::Ok { .. } => {
                self.outstanding.pop_front();
                true
            }
            Reply::Err { message } => {
                let fd = self.outstanding.pop_front();
                if !fd.is_some_and(|fd| self.closed.contains(&fd)) {
                    self.refused.get_or_insert(Error(message));
                }
                true
            }
            other => {
                self.queue(other);
                false
            }
        }
    }

    /// The next message on `fd` into `buf`: its length, or 0 once the peer
    /// closed. A message longer than `buf` is an error that leaves it
    /// queued ([`Visor::recv_zero_copy`] takes any length).
    pub fn recv(&mut self, fd: u32, buf: &mut [u8]) -> Result<usize, Error> {
        let Some(data) = self.next_message(fd, Some(buf.len()))? else {
            return Ok(0);
        };
        buf[..data.len()].copy_from_slice(&data);
        Ok(data.len())
    }

    /// The next message on `fd`, handed over as the buffer it arrived in
    /// (no copy into the caller's); None once the peer closed.
    pub fn recv_zero_copy(&mut self, fd: u32) -> Result<Option<Vec<u8>>, Error> {
        self.next_message(fd, None)
    }

    /// The next event on any fd (waits for one).
    pub fn recv_any(&mut self) -> Result<Event, Error> {
        loop {
            if let Some(e) = self.events.pop_front() {
                if let Event::Incoming { listener, fd } = &e {
                    // Taken here: accept would return it otherwise.
                    if let Some(q) = self.incoming.get_mut(listener) {
                        q.retain(|f| f != fd);
                    }
                }
                return Ok(e);
            }
            self.read_one()?;
        }
    }

    /// Closes `fd`, dropping what it received and was not read. Closing a
    /// connection its peer closed succeeds, as a socket's close after end
    /// of file does: the daemon forgot it when it told the `Closed` event
    /// (read before this call or while it waits), and its fd is not
    /// reused. Closing an fd twice fails.
    pub fn close(&mut self, fd: u32) -> Result<(), Error> {
        self.flush()?;
        if !self.closed.contains(&fd) {
            if let Err(e) = self.call(Request::Close { fd }) {
                // The peer's close crossed this one.
                if !self.closed.contains(&fd) {
                    return Err(e);
                }
            }
        }
        self.closed.remove(&fd);
        self.events.retain(
            |e| !matches!(e, Event::Message { fd: f, .. } | Event::Closed { fd: f } if *f == fd),
        );
        Ok(())
    }

    fn next_message(&mut self, fd: u32, limit: Option<usize>) -> Result<Option<Vec<u8>>, Error> {
        loop {
            let at = self
                .events
                .iter()
                .position(|e| matches!(e, Event::Message { fd: f, .. } if *f == fd));
            if let Some(i) = at {
                if let (Some(max), Some(Event::Message { data, .. })) = (limit, self.events.get(i))
                {
                    if data.len() > max {
                        return Err(Error(format!(
                            "recv: a message of {} bytes does not fit a buffer of {max}",
                            data.len()
                        )));
                    }
                }
                if let Some(Event::Message { data, .. }) = self.events.remove(i) {
                    return Ok(Some(data));
                }
            }
            if self.closed.contains(&fd) {
                return Ok(None);
            }
            self.read_one()?;
        }
    }

    /// Sends a request and waits for its reply (after the pipelined
    /// sends' replies).
    fn call(&mut self, req: Request) -> Result<u64, Error> {
        self.flush()?;
        let mut b = Vec::new();
        req.encode(&mut b);
        self.stream.write_all(&b).map_err(|e| self.gone(e))?;
        loop {
            match self.read_frame()? {
                Reply::Ok { value } => return Ok(value),
                Reply::Err { message } => return Err(Error(message)),
                other => self.queue(other),
            }
        }
    }

    /// Reads one pushed event into the queues (an unexpected reply is the
    /// daemon's error).
    fn read_one(&mut self) -> Result<(), Error> {
        if !self.outstanding.is_empty() {
            return self.collect_one();
        }
        match self.read_frame()? {
            Reply::Ok { .. } => Err(Error("the daemon sent a reply to no request".into())),
            Reply::Err { message } => Err(Error(message)),
            other => {
                self.queue(other);
                Ok(())
            }
        }
    }

    fn queue(&mut self, r: Reply) {
        match r {
            Reply::Deliver { fd, data } => self.events.push_back(Event::Message { fd, data }),
            Reply::Closed { fd } => {
                self.closed.insert(fd);
                self.events.push_back(Event::Closed { fd });
            }
            Reply::Incoming { listener, fd } => {
                self.incoming.entry(listener).or_default().push_back(fd);
                self.events.push_back(Event::Incoming { listener, fd });
            }
            Reply::Ok { .. } | Reply::Err { .. } => {}
        }
    }

    fn read_frame(&mut self) -> Result<Reply, Error> {
        loop {
            if let Some((op, body, used)) = proto::split(self.rbuf.bytes()).map_err(Error)? {
                let r = proto::decode_reply(op, body).map_err(Error)?;
                self.rbuf.take(used);
                return Ok(r);
            }
            if let Some((fd, len)) = proto::deliver_alone(self.rbuf.bytes(), proto::DIRECT) {
                // A large message's bytes go from the ring straight into
                // the buffer handed over.
                self.rbuf.take(9);
                let mut data = Vec::with_capacity(len);
                while data.len() < len {
                    let want = len - data.len();
                    if self.rings.pop(&mut data, want).map_err(Error)? == 0 {
                        self.park(Rings::pending)?;
                    }
                }
                return Ok(Reply::Deliver { fd, data });
            }
            // With nothing waiting, a frame's head alone first: if it
            // starts a large message, the message skips this buffer.
            let max = if self.rbuf.is_empty() { 9 } else { 64 * 1024 };
            if self.rings.pop(self.rbuf.back(), max).map_err(Error)? == 0 {
                self.park(Rings::pending)?;
            }
        }
    }

    /// Writes a whole frame into the requests' ring, waiting for room,
    /// and reading what the daemon writes meanwhile: two clients whose
    /// sends to each other are paused (their daemons' back-pressure)
    /// would otherwise each wait for the other to read.
    fn write_ring(&mut self, mut b: &[u8]) -> Result<(), Error> {
        while !b.is_empty() {
            let n = self.rings.push(b).map_err(Error)?;
            b = &b[n..];
            if n == 0 {
                self.absorb()?;
                self.park(|r| r.writable() || r.pending())?;
            }
        }
        Ok(())
    }

    /// Takes up to 64 KB the daemon wrote, without blocking: replies to
    /// pipelined sends and events, into the queues.
    fn absorb(&mut self) -> Result<(), Error> {
        self.rings.pop(self.rbuf.back(), 64 * 1024).map_err(Error)?;
        while let Some((op, body, used)) = proto::split(self.rbuf.bytes()).map_err(Error)? {
            let r = proto::decode_reply(op, body).map_err(Error)?;
            self.rbuf.take(used);
            self.take_reply(r);
        }
        Ok(())
    }

    /// Blocks until `ready` holds or the daemon wakes this side; an error
    /// if the session's socket speaks instead (the daemon ends sessions
    /// only there).
    fn park(&mut self, ready: fn(&Rings) -> bool) -> Result<(), Error> {
        self.rings.park();
        let socket = if ready(&self.rings) {
            false
        } else {
            self.rings
                .wait(self.stream.as_raw_fd())
                .map_err(|e| self.gone(e))?
        };
        self.rings.unpark();
        if socket {
            return Err(self.ended());
        }
        Ok(())
    }

    /// The daemon's last word on the socket: its error frame, or the end.
    fn ended(&mut self) -> Error {
        last_word(&self.stream).unwrap_or_else(|| {
            Error("the daemon closed the session (it stopped or restarted)".into())
        })
    }

    /// The daemon's process id (its socket's peer credentials), for
    /// measuring its memory and CPU.
    pub fn daemon_pid(&self) -> Result<u32, Error> {
        let (_, pid) = crate::cred::peer_cred(&self.stream).map_err(|e| Error(e.to_string()))?;
        Ok(pid as u32)
    }

    fn gone(&self, e: std::io::Error) -> Error {
        Error(format!(
            "the daemon's session: {e} (it stopped or restarted)"
        ))
    }
}

/// The error frame the daemon wrote before it closed `stream`, if any
/// (at most a frame's worth is read).
fn last_word(mut stream: &UnixStream) -> Option<Error> {
    let mut last = Vec::new();
    let _ = (&mut stream)
        .take(proto::MAX_FRAME as u64)
        .read_to_end(&mut last);
    let (op, body, _) = proto::split(&last).ok()??;
    match proto::decode_reply(op, body) {
        Ok(Reply::Err { message }) => Some(Error(message)),
        _ => None,
    }
}
