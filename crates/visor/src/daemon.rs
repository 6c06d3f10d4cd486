//! The daemon (`rdmavisord`): one per host, one thread, one event loop.
//! Local applications reach it over a Unix socket (`proto`); remote
//! daemons over links (`link`): a TCP control connection each, and QPs
//! on this daemon's one NIC (`datapath::endpoint`), shared by every
//! logical connection between the two hosts (RDMAvisor §2.3). A logical
//! connection is a vQPN, an index in the daemon's connection table; a
//! message on it is an RC SEND whose immediate is the vQPN at the other
//! end, which the receiving daemon's completion hands back to name the
//! connection. Messages are copied through one registered region of
//! fixed slots: a send takes a slot until its completion, and every
//! link QP keeps `recv_per_qp` slots posted as receives, re-posted as
//! soon as a message is handed on, so the receive buffers serve every
//! application on the host.
//!
//! Isolation: a client's session knows only the fds it opened or was
//! handed (per-session tables), and its peer credentials (SO_PEERCRED)
//! are recorded. A client's garbage ends its own session; a client that
//! goes (killed or not) has its connections closed, its peers told, its
//! listeners and buffers freed.
//!
//! Uses `proto`, `link`, `slab`, and `datapath`'s endpoint, region,
//! socket and session modules.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use datapath::endpoint::{Endpoint, Peer, PortOptions, EXTERNAL};
use datapath::region::Region;
use datapath::session::{Control, TransportName};
use datapath::socket::Socket;
use transport::{
    CompletionSide, Engine, InitialPsns, IrnConfig, Nic, NicConfig, QpConfig, Verb, WorkRequest,
};

use crate::link::{check_qps, Link, LinkMsg, VERSION};
use crate::proto::{self, Reply, Request};
use crate::slab::Slab;

/// The daemon's settings (`rdmavisord --help`).
#[derive(Clone, Debug)]
pub struct Config {
    /// The Unix socket applications connect to.
    pub control: PathBuf,
    /// UDP (RoCEv2) and TCP (links) address; every daemon of a cluster
    /// uses the same port.
    pub bind: SocketAddrV4,
    pub transport: TransportName,
    pub qps_per_peer: u32,
    pub mtu: u32,
    /// The largest message, and the size of every buffer slot.
    pub slot_bytes: usize,
    pub slots: usize,
    pub recv_per_qp: usize,
    pub rate_gbps: f64,
    pub rto_us: u64,
}

/// What the daemon has done, for its log and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub sessions_opened: u64,
    pub sessions_closed: u64,
    /// Sessions ended for garbage on their socket.
    pub bad_sessions: u64,
    pub conns_opened: u64,
    pub conns_closed: u64,
    pub links: u64,
    pub messages_sent: u64,
    pub messages_delivered: u64,
    /// Messages for a connection that no longer exists here.
    pub messages_orphaned: u64,
}

const APPS: usize = EXTERNAL;
const LINKS: usize = EXTERNAL + 1;
const SESSION0: usize = EXTERNAL + 1024;
const LINK0: usize = EXTERNAL + (1 << 19);
/// A send's `wr_id`: this bit and its slot.
const SEND_TAG: u64 = 1 << 63;
/// Where the region sits in the NIC's address space.
const BASE: u64 = 0x4000_0000_0000;
/// A session whose client does not read what it is sent is ended past this.
const MAX_UNREAD: usize = 256 << 20;

enum Handle {
    Conn(usize),
    Listener(u16),
}

/// What a session waits for before its next request.
enum Wait {
    /// A free slot, to send `data` on connection `fd`.
    Slot { fd: u32, data: Vec<u8> },
    /// The remote daemon's answer to connect on `fd`.
    Connect { fd: u32 },
}

struct Session {
    stream: mio::net::UnixStream,
    uid: u32,
    pid: i32,
    rbuf: Vec<u8>,
    wbuf: Vec<u8>,
    fds: HashMap<u32, Handle>,
    next_fd: u32,
    wait: Option<Wait>,
    /// The socket may hold unread bytes (it was not read to WouldBlock).
    unread: bool,
}

struct Conn {
    session: usize,
    fd: u32,
    link: usize,
    /// The vQPN at the other end, once it accepted.
    remote: Option<u32>,
}

struct Listener {
    session: usize,
    fd: u32,
}

pub struct Daemon {
    cfg: Config,
    ep: Endpoint,
    apps: mio::net::UnixListener,
    links_listener: TcpListener,
    sessions: Slab<Session>,
    conns: Slab<Conn>,
    listeners: HashMap<u16, Listener>,
    links: Slab<Link>,
    link_of: HashMap<Ipv4Addr, usize>,
    free_slots: Vec<u32>,
    /// Send slots in flight, and their link.
    sending: HashMap<u32, usize>,
    pub stats: Stats,
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// The uid and pid of the process at the other end of a Unix socket.
fn peer_cred(s: &impl AsRawFd) -> io::Result<(u32, i32)> {
    let mut c = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: a valid socket and a ucred with its length for the output.
    let rc = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut c as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((c.uid, c.pid))
}

impl Daemon {
    /// Binds the control socket (a stale file from a daemon that is gone
    /// is replaced; a live daemon's is not) and the link address.
    pub fn bind(cfg: Config) -> Result<Daemon, String> {
        if cfg.slot_bytes == 0 || cfg.slot_bytes > proto::MAX_MESSAGE {
            return Err(format!(
                "--slot-bytes must be in 1..={}, got {}",
                proto::MAX_MESSAGE,
                cfg.slot_bytes
            ));
        }
        if cfg.qps_per_peer == 0 || cfg.recv_per_qp == 0 {
            return Err("--qps-per-peer and --recv-per-qp must be at least 1".into());
        }
        let per_link = cfg.qps_per_peer as usize * cfg.recv_per_qp;
        if cfg.slots < per_link + 1 || cfg.slots > u32::MAX as usize {
            return Err(format!(
                "--slots must be at least --qps-per-peer x --recv-per-qp + 1 = {}",
                per_link + 1
            ));
        }
        if cfg.control.exists() {
            if std::os::unix::net::UnixStream::connect(&cfg.control).is_ok() {
                return Err(format!(
                    "{}: a daemon is already serving there",
                    cfg.control.display()
                ));
            }
            std::fs::remove_file(&cfg.control)
                .map_err(|e| format!("{}: {e}", cfg.control.display()))?;
        }
        let mut apps = mio::net::UnixListener::bind(&cfg.control)
            .map_err(|e| format!("{}: {e}", cfg.control.display()))?;
        let sock = Socket::bind(cfg.bind).map_err(err)?;
        let links_listener = TcpListener::bind(sock.local)
            .map_err(|e| format!("cannot bind the link port {}: {e}", sock.local))?;
        links_listener.set_nonblocking(true).map_err(err)?;
        let engine = match cfg.transport {
            TransportName::Roce => Engine::GoBackN,
            TransportName::Irn => Engine::Irn(IrnConfig {
                rto_high: cfg.rto_us * engine::time::US,
                rto_low: (cfg.rto_us * engine::time::US * 10 / 32).max(1),
                ..IrnConfig::default()
            }),
            TransportName::Mprdma => {
                return Err("--transport mprdma: the daemon runs roce or irn".into())
            }
        };
        let rate = datapath::client::rate_bps(cfg.rate_gbps)?;
        let nic = Nic::new(NicConfig {
            mtu: cfg.mtu,
            rto: cfg.rto_us * engine::time::US,
            line_rate_bps: rate,
            engine,
            ..NicConfig::default()
        })
        .map_err(|e| format!("transport configuration: {e}"))?;
        let mem = Region::zeroed(BASE, cfg.slots * cfg.slot_bytes);
        let port = PortOptions {
            rate_bps: rate,
            gso: true,
            impair: None,
            pcap: None,
            ecn_backlog: 64,
        };
        let mut ep = Endpoint::new(nic, mem, vec![sock], *cfg.bind.ip(), port).map_err(err)?;
        ep.register(&mut apps, APPS, mio::Interest::READABLE)
            .map_err(err)?;
        let fd = links_listener.as_raw_fd();
        ep.register(
            &mut mio::unix::SourceFd(&fd),
            LINKS,
            mio::Interest::READABLE,
        )
        .map_err(err)?;
        let free_slots = (0..cfg.slots as u32).rev().collect();
        Ok(Daemon {
            cfg,
            ep,
            apps,
            links_listener,
            sessions: Slab::default(),
            conns: Slab::default(),
            listeners: HashMap::new(),
            links: Slab::default(),
            link_of: HashMap::new(),
            free_slots,
            sending: HashMap::new(),
            stats: Stats::default(),
        })
    }

    /// The link address (UDP and TCP).
    pub fn local_addr(&self) -> SocketAddrV4 {
        self.ep.local_addr()
    }

    /// Serves until `stop` is set.
    pub fn run(&mut self, stop: &AtomicBool) -> Result<(), String> {
        while !stop.load(Ordering::Relaxed) {
            self.ep.turn(Duration::from_millis(10)).map_err(err)?;
            for t in self.ep.take_ready() {
                match t {
                    APPS => self.accept_apps(),
                    LINKS => self.accept_links(),
                    t if t >= LINK0 => self.read_link(t - LINK0),
                    t => {
                        let i = t - SESSION0;
                        if let Some(s) = self.sessions.get_mut(i) {
                            s.unread = true;
                        }
                    }
                }
            }
            for c in std::mem::take(&mut self.ep.completions) {
                self.on_completion(c);
            }
            for i in self.sessions.keys() {
                if self.sessions.get(i).is_some_and(|s| s.unread) {
                    self.read_session(i);
                }
                self.flush_session(i);
            }
        }
        Ok(())
    }

    /// Bytes of memory the daemon's tables and buffers hold (its RSS
    /// grows with this).
    pub fn footprint(&self) -> usize {
        self.cfg.slots * self.cfg.slot_bytes
            + self.sessions.capacity() * std::mem::size_of::<Session>()
            + self.conns.capacity() * std::mem::size_of::<Conn>()
            + self
                .sessions
                .keys()
                .iter()
                .filter_map(|&i| self.sessions.get(i))
                .map(|s| s.rbuf.capacity() + s.wbuf.capacity())
                .sum::<usize>()
    }

    pub fn sessions(&self) -> usize {
        self.sessions.len()
    }

    pub fn connections(&self) -> usize {
        self.conns.len()
    }

    fn accept_apps(&mut self) {
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
            self.stats.sessions_opened += 1;
        }
    }

    fn read_session(&mut self, i: usize) {
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
                self.stats.bad_sessions += 1;
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
                        self.stats.bad_sessions += 1;
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
    fn process_frames(&mut self, i: usize) -> Result<(), String> {
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

    fn reply(&mut self, i: usize, r: Reply) {
        if let Some(s) = self.sessions.get_mut(i) {
            r.encode(&mut s.wbuf);
        }
    }

    fn flush_session(&mut self, i: usize) {
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

    /// One request of session `i`: its reply now, or None if it waits.
    fn request(&mut self, i: usize, req: Request) -> Option<Reply> {
        let fail = |m: String| Some(Reply::Err { message: m });
        match req {
            Request::Connect { addr } => {
                let to: SocketAddrV4 = match addr.parse() {
                    Ok(a) => a,
                    Err(_) => return fail(format!("connect: `{addr}` is not an IPv4 ip:port")),
                };
                if to.ip() == self.cfg.bind.ip() {
                    return fail(format!(
                        "connect: {addr} is this host's daemon; connections within one host are not supported"
                    ));
                }
                let link = match self.link_to(*to.ip()) {
                    Ok(l) => l,
                    Err(e) => return fail(format!("connect {addr}: {e}")),
                };
                let s = self.sessions.get_mut(i)?;
                let fd = s.next_fd;
                s.next_fd += 1;
                let v = self.conns.insert(Conn {
                    session: i,
                    fd,
                    link,
                    remote: None,
                });
                let s = self.sessions.get_mut(i)?;
                s.fds.insert(fd, Handle::Conn(v));
                s.wait = Some(Wait::Connect { fd });
                let msg = LinkMsg::Connect {
                    from: v as u32,
                    port: to.port(),
                };
                if let Err(e) = self.links.get_mut(link)?.ctl.send(&msg) {
                    self.link_down(link);
                    return fail(format!("connect {addr}: {e}"));
                }
                None
            }
            Request::Listen { port } => {
                if self.listeners.contains_key(&port) {
                    return fail(format!("listen: port {port} is in use on this host"));
                }
                let s = self.sessions.get_mut(i)?;
                let fd = s.next_fd;
                s.next_fd += 1;
                s.fds.insert(fd, Handle::Listener(port));
                self.listeners.insert(port, Listener { session: i, fd });
                Some(Reply::Ok { value: fd.into() })
            }
            Request::Send { fd, data, .. } => {
                let s = self.sessions.get(i)?;
                let v = match s.fds.get(&fd) {
                    Some(Handle::Conn(v)) => *v,
                    Some(Handle::Listener(_)) => {
                        return fail(format!("send: fd {fd} is a listener"))
                    }
                    None => return fail(format!("send: no connection fd {fd} in this session")),
                };
                if data.len() > self.cfg.slot_bytes {
                    return fail(format!(
                        "send: {} bytes, the most a message may have is {}",
                        data.len(),
                        self.cfg.slot_bytes
                    ));
                }
                self.send(i, fd, v, data)
            }
            Request::Close { fd } => {
                let s = self.sessions.get_mut(i)?;
                match s.fds.remove(&fd) {
                    Some(h) => {
                        self.close_handle(h, true);
                        Some(Reply::Ok { value: 0 })
                    }
                    None => fail(format!("close: no fd {fd} in this session")),
                }
            }
        }
    }

    /// Sends `data` on connection `v` (fd `fd` of session `i`), or waits
    /// for a slot.
    fn send(&mut self, i: usize, fd: u32, v: usize, data: Vec<u8>) -> Option<Reply> {
        let c = self.conns.get(v)?;
        let Some(remote) = c.remote else {
            return Some(Reply::Err {
                message: format!("send: fd {fd} is not connected yet"),
            });
        };
        let link = c.link;
        let Some(slot) = self.free_slots.pop() else {
            self.sessions.get_mut(i)?.wait = Some(Wait::Slot { fd, data });
            return None;
        };
        let addr = BASE + slot as u64 * self.cfg.slot_bytes as u64;
        let len = data.len();
        use transport::Memory;
        self.ep.mem.write(addr, &data);
        let qp = self.links.get(link)?.qp_for(v as u32);
        let wr = WorkRequest {
            wr_id: SEND_TAG | u64::from(slot),
            verb: Verb::Send,
            len: len as u64,
            local_addr: addr,
            imm: u64::from(remote),
            ..WorkRequest::default()
        };
        let now = self.ep.now();
        if let Err(e) = self.ep.nic.post_send(now, qp, wr) {
            self.free_slots.push(slot);
            return Some(Reply::Err {
                message: format!("send: {e}"),
            });
        }
        self.sending.insert(slot, link);
        self.ep.after_input();
        self.stats.messages_sent += 1;
        Some(Reply::Ok { value: len as u64 })
    }

    fn on_completion(&mut self, c: transport::Completion) {
        match c.side {
            CompletionSide::Requester => {
                if c.wr_id & SEND_TAG != 0 {
                    let slot = c.wr_id as u32;
                    if self.sending.remove(&slot).is_some() {
                        self.free_slots.push(slot);
                        self.resume_waiting();
                    }
                }
            }
            CompletionSide::Responder => {
                let slot = c.wr_id as u32;
                let addr = BASE + slot as u64 * self.cfg.slot_bytes as u64;
                let start = (addr - BASE) as usize;
                let len = (c.len as usize).min(self.cfg.slot_bytes);
                let target = self.conns.get(c.imm as usize).and_then(|conn| {
                    self.links
                        .get(conn.link)
                        .filter(|l| l.qps.contains(&c.qp))
                        .map(|_| (conn.session, conn.fd))
                });
                match target {
                    Some((si, fd)) => {
                        let data = self.ep.mem.bytes()[start..start + len].to_vec();
                        self.reply(si, Reply::Deliver { fd, data });
                        self.stats.messages_delivered += 1;
                    }
                    None => self.stats.messages_orphaned += 1,
                }
                let _ = self.ep.nic.post_recv_at(
                    c.qp,
                    u64::from(slot),
                    addr,
                    self.cfg.slot_bytes as u64,
                );
            }
        }
    }

    /// Sessions waiting for a slot try again.
    fn resume_waiting(&mut self) {
        for i in self.sessions.keys() {
            if self.free_slots.is_empty() {
                return;
            }
            let Some(s) = self.sessions.get_mut(i) else {
                continue;
            };
            if !matches!(s.wait, Some(Wait::Slot { .. })) {
                continue;
            }
            let Some(Wait::Slot { fd, data }) = s.wait.take() else {
                continue;
            };
            let reply = match s.fds.get(&fd) {
                Some(Handle::Conn(v)) => {
                    let v = *v;
                    self.send(i, fd, v, data)
                }
                _ => Some(Reply::Err {
                    message: format!("send: fd {fd} was closed"),
                }),
            };
            if let Some(r) = reply {
                self.reply(i, r);
                if let Some(s) = self.sessions.get_mut(i) {
                    s.unread = true;
                }
            }
        }
    }

    /// Closes a session's handle; `tell`: the peer is told.
    fn close_handle(&mut self, h: Handle, tell: bool) {
        match h {
            Handle::Listener(port) => {
                self.listeners.remove(&port);
            }
            Handle::Conn(v) => {
                let Some(c) = self.conns.remove(v) else {
                    return;
                };
                self.stats.conns_closed += 1;
                if let (true, Some(remote)) = (tell, c.remote) {
                    let down = match self.links.get_mut(c.link) {
                        Some(l) => l.ctl.send(&LinkMsg::Close { vqpn: remote }).is_err(),
                        None => false,
                    };
                    if down {
                        self.link_down(c.link);
                    }
                }
            }
        }
    }

    /// Ends session `i`: an error frame first if `why`, then every
    /// connection closed (peers told), listeners and buffers freed.
    fn close_session(&mut self, i: usize, why: Option<String>) {
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
        self.stats.sessions_closed += 1;
    }

    // Links.

    /// The link to the daemon on `ip`, opened if there is none.
    fn link_to(&mut self, ip: Ipv4Addr) -> Result<usize, String> {
        if let Some(&l) = self.link_of.get(&ip) {
            return Ok(l);
        }
        let to = SocketAddrV4::new(ip, self.cfg.bind.port());
        let tcp = TcpStream::connect_timeout(&SocketAddr::V4(to), Duration::from_secs(2))
            .map_err(|e| format!("no daemon at {to}: {e}"))?;
        let mut ctl = Control::new(tcp).map_err(err)?;
        let n = self.cfg.qps_per_peer as usize;
        let first = self.ep.nic.num_qps() as u32;
        let qpns: Vec<u32> = (first..first + n as u32).collect();
        let psns = datapath::session::psns(u64::from(first) ^ 0x5a5a, n as u32);
        ctl.send(&LinkMsg::Hello {
            version: VERSION,
            udp_port: self.local_addr().port(),
            qpns: qpns.clone(),
            psns: psns.clone(),
        })?;
        let (udp_port, their_qpns, their_psns) = match ctl.recv(Duration::from_secs(5))? {
            LinkMsg::Ready {
                udp_port,
                qpns,
                psns,
            } => (udp_port, qpns, psns),
            LinkMsg::Error { message } => {
                return Err(format!("the daemon at {to} refused: {message}"))
            }
            other => return Err(format!("the daemon at {to} answered {other:?}")),
        };
        check_qps(&their_qpns, &their_psns, n)?;
        self.add_link(
            ctl,
            SocketAddrV4::new(ip, udp_port),
            &psns,
            &their_qpns,
            &their_psns,
        )
    }

    fn accept_links(&mut self) {
        loop {
            let (tcp, from) = match self.links_listener.accept() {
                Ok(x) => x,
                Err(_) => return,
            };
            let SocketAddr::V4(from) = from else {
                continue;
            };
            let _ = tcp.set_nonblocking(false);
            let Ok(mut ctl) = Control::new(tcp) else {
                continue;
            };
            let n = self.cfg.qps_per_peer as usize;
            let hello = ctl.recv::<LinkMsg>(Duration::from_secs(2));
            let refuse = |ctl: &mut Control, m: String| {
                let _ = ctl.send(&LinkMsg::Error { message: m });
            };
            let (udp_port, qpns, psns) = match hello {
                Ok(LinkMsg::Hello {
                    version: VERSION,
                    udp_port,
                    qpns,
                    psns,
                }) => (udp_port, qpns, psns),
                Ok(other) => {
                    refuse(&mut ctl, format!("expected hello, got {other:?}"));
                    continue;
                }
                Err(_) => continue,
            };
            if let Err(e) = check_qps(&qpns, &psns, n) {
                refuse(
                    &mut ctl,
                    format!("hello: {e} (this daemon uses --qps-per-peer {n})"),
                );
                continue;
            }
            if self.link_of.contains_key(from.ip()) {
                refuse(&mut ctl, "a link from this host exists".into());
                continue;
            }
            let first = self.ep.nic.num_qps() as u32;
            let ours: Vec<u32> = (first..first + n as u32).collect();
            let our_psns = datapath::session::psns(u64::from(first) ^ 0xa5a5, n as u32);
            let ready = LinkMsg::Ready {
                udp_port: self.local_addr().port(),
                qpns: ours,
                psns: our_psns.clone(),
            };
            if ctl.send(&ready).is_err() {
                continue;
            }
            let peer = SocketAddrV4::new(*from.ip(), udp_port);
            let _ = self.add_link(ctl, peer, &our_psns, &qpns, &psns);
        }
    }

    /// Makes the link's QPs (to `peer`'s `qpns`), posts its receives and
    /// watches its control connection.
    fn add_link(
        &mut self,
        ctl: Control,
        peer: SocketAddrV4,
        psns: &[u32],
        qpns: &[u32],
        their_psns: &[u32],
    ) -> Result<usize, String> {
        let n = qpns.len();
        let need = n * self.cfg.recv_per_qp;
        if self.free_slots.len() < need + 1 {
            return Err(format!(
                "no buffer slots left for another link ({} free, {need} needed)",
                self.free_slots.len()
            ));
        }
        let host = self.ep.add_peer(Peer {
            addr: peer,
            ports: 1,
        });
        let mut qps = Vec::with_capacity(n);
        for k in 0..n {
            let cfg = QpConfig {
                peer_host: host,
                peer_qp: qpns[k],
                sport: self.local_addr().port(),
            };
            let psn = InitialPsns {
                sq_psn: psns[k],
                rq_psn: their_psns[k],
            };
            qps.push(self.ep.nic.create_qp_with_psns(cfg, psn).map_err(err)?);
        }
        let mut recv_slots = Vec::with_capacity(need);
        for &qp in &qps {
            for _ in 0..self.cfg.recv_per_qp {
                let slot = self.free_slots.pop().expect("counted above");
                let addr = BASE + slot as u64 * self.cfg.slot_bytes as u64;
                self.ep
                    .nic
                    .post_recv_at(qp, u64::from(slot), addr, self.cfg.slot_bytes as u64)
                    .map_err(err)?;
                recv_slots.push(slot);
            }
        }
        let fd = ctl.stream().as_raw_fd();
        let l = self.links.insert(Link {
            ctl,
            host,
            peer,
            qps,
            recv_slots,
        });
        self.ep
            .register(
                &mut mio::unix::SourceFd(&fd),
                LINK0 + l,
                mio::Interest::READABLE,
            )
            .map_err(err)?;
        self.link_of.insert(*peer.ip(), l);
        self.stats.links += 1;
        Ok(l)
    }

    fn read_link(&mut self, l: usize) {
        loop {
            let Some(link) = self.links.get_mut(l) else {
                return;
            };
            match link.ctl.try_recv::<LinkMsg>() {
                Ok(None) => return,
                Ok(Some(m)) => self.link_msg(l, m),
                Err(_) => {
                    self.link_down(l);
                    return;
                }
            }
        }
    }

    fn link_msg(&mut self, l: usize, m: LinkMsg) {
        match m {
            LinkMsg::Connect { from, port } => {
                let answer = match self.listeners.get(&port) {
                    None => LinkMsg::Refused {
                        from,
                        reason: format!("nothing listens on port {port}"),
                    },
                    Some(li) => {
                        let (si, lfd) = (li.session, li.fd);
                        let Some(s) = self.sessions.get_mut(si) else {
                            return;
                        };
                        let fd = s.next_fd;
                        s.next_fd += 1;
                        let v = self.conns.insert(Conn {
                            session: si,
                            fd,
                            link: l,
                            remote: Some(from),
                        });
                        self.stats.conns_opened += 1;
                        let s = self.sessions.get_mut(si).expect("checked");
                        s.fds.insert(fd, Handle::Conn(v));
                        self.reply(si, Reply::Incoming { listener: lfd, fd });
                        LinkMsg::Accepted { from, to: v as u32 }
                    }
                };
                if let Some(link) = self.links.get_mut(l) {
                    if link.ctl.send(&answer).is_err() {
                        self.link_down(l);
                    }
                }
            }
            LinkMsg::Accepted { from, to } => {
                let Some(c) = self.conns.get_mut(from as usize).filter(|c| c.link == l) else {
                    return;
                };
                c.remote = Some(to);
                let (si, fd) = (c.session, c.fd);
                self.stats.conns_opened += 1;
                self.end_connect_wait(si, fd, Reply::Ok { value: fd.into() });
            }
            LinkMsg::Refused { from, reason } => {
                let Some(c) = self.conns.get(from as usize).filter(|c| c.link == l) else {
                    return;
                };
                let (si, fd) = (c.session, c.fd);
                self.conns.remove(from as usize);
                if let Some(s) = self.sessions.get_mut(si) {
                    s.fds.remove(&fd);
                }
                self.end_connect_wait(
                    si,
                    fd,
                    Reply::Err {
                        message: format!("connect: refused: {reason}"),
                    },
                );
            }
            LinkMsg::Close { vqpn } => {
                let Some(c) = self.conns.get(vqpn as usize).filter(|c| c.link == l) else {
                    return;
                };
                let (si, fd) = (c.session, c.fd);
                self.conns.remove(vqpn as usize);
                self.stats.conns_closed += 1;
                if let Some(s) = self.sessions.get_mut(si) {
                    s.fds.remove(&fd);
                }
                self.reply(si, Reply::Closed { fd });
            }
            LinkMsg::Hello { .. } | LinkMsg::Ready { .. } | LinkMsg::Error { .. } => {
                self.link_down(l)
            }
        }
    }

    fn end_connect_wait(&mut self, si: usize, fd: u32, r: Reply) {
        let Some(s) = self.sessions.get_mut(si) else {
            return;
        };
        if matches!(s.wait, Some(Wait::Connect { fd: w }) if w == fd) {
            s.wait = None;
            s.unread = true;
        }
        self.reply(si, r);
    }

    /// The link is gone (its daemon stopped, or spoke garbage): its
    /// connections are closed to their clients, its QPs destroyed and
    /// its slots returned.
    fn link_down(&mut self, l: usize) {
        let Some(mut link) = self.links.remove(l) else {
            return;
        };
        let fd = link.ctl.stream().as_raw_fd();
        let _ = self.ep.deregister(&mut mio::unix::SourceFd(&fd));
        self.link_of.remove(link.peer.ip());
        for v in self.conns.keys() {
            let Some(c) = self.conns.get(v).filter(|c| c.link == l) else {
                continue;
            };
            let (si, fd, connected) = (c.session, c.fd, c.remote.is_some());
            self.conns.remove(v);
            self.stats.conns_closed += 1;
            if let Some(s) = self.sessions.get_mut(si) {
                s.fds.remove(&fd);
            }
            if connected {
                self.reply(si, Reply::Closed { fd });
            } else {
                self.end_connect_wait(
                    si,
                    fd,
                    Reply::Err {
                        message: "connect: the remote daemon went away".into(),
                    },
                );
            }
        }
        for &qp in &link.qps {
            let _ = self.ep.nic.destroy_qp(qp);
        }
        self.free_slots.append(&mut link.recv_slots);
        let sent: Vec<u32> = self
            .sending
            .iter()
            .filter(|(_, &k)| k == l)
            .map(|(&s, _)| s)
            .collect();
        for s in sent {
            self.sending.remove(&s);
            self.free_slots.push(s);
        }
        self.resume_waiting();
    }
}
