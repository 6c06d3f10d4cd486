//! The daemon (`rdmavisord`): one per host, one thread, one event loop.
//! Local applications reach it over a Unix socket (control, `proto`'s
//! frames) and a shared-memory area per session (`ring`: their sends in,
//! replies, messages and events out, an eventfd each way); remote
//! daemons over links (`link`): a TCP control connection each, and QPs
//! on this daemon's one NIC (`datapath::endpoint`), shared by every
//! logical connection between the two hosts (RDMAvisor §2.3). A logical
//! connection is a vQPN, an index in the daemon's connection table and
//! its generation (`names.rs`); a
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
//! The baselines of the paper's §3 are a connection's choice
//! (`proto::Sharing`): a QP of its own (naive) or one per session (lock-
//! based sharing), made as the connection opens (`own_qps.rs`).
//!
//! This file holds the daemon's tables, its setup and loop, the
//! requests and the completions; `config.rs` its settings; `sessions.rs` its local clients' side,
//! `links.rs` its links', `own_qps.rs` the baselines' QPs, `one_sided.rs`
//! messages by WRITE and READ, `notices.rs` their notices' SENDs,
//! `link_out.rs` the links' control output, `windows.rs` the peers'
//! memory windows, `local.rs` connections within the host, `backlog.rs`
//! pausing the senders of a client that falls behind, `closing.rs` a
//! close that waits for its messages in flight, `names.rs` the vQPNs.
//! Uses `proto`, `ring`,
//! `fifo`, `link`, `notice`, `slab`, and `datapath`'s endpoint, region,
//! socket and session modules.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use datapath::endpoint::{Endpoint, PortSettings, EXTERNAL};
use datapath::region::Region;
use datapath::session::irn_rtos;
use datapath::socket::Socket;
use transport::{CompletionSide, Engine, Nic, NicConfig, QpId, Verb, WorkRequest};

use crate::fifo::Fifo;
use crate::link::{Link, LinkMsg};
use crate::notice::IMM;
use crate::proto::{self, Reply, Request, Sharing};
use crate::slab::Slab;

mod backlog;
mod closing;
mod config;
mod link_out;
mod links;
mod local;
mod names;
mod notices;
mod one_sided;
mod own_qps;
mod pending;
mod sessions;
mod windows;

pub use config::Config;
use names::MAX_CONNS;
use one_sided::{Chooser, OneSided, LEND, ONE_SIDED_TAG};
use own_qps::OwnQp;

const APPS: usize = EXTERNAL;
const LINKS: usize = EXTERNAL + 1;
const SESSION0: usize = EXTERNAL + 1024;
const LINK0: usize = EXTERNAL + (1 << 19);
/// Link handshakes in progress (`pending.rs`).
const PENDING0: usize = EXTERNAL + (1 << 20);
/// A send's `wr_id`: this bit and its slot.
const SEND_TAG: u64 = 1 << 63;
/// Where the region sits in the NIC's address space.
const BASE: u64 = 0x4000_0000_0000;
/// Free slots only notices may take (`notices.rs`).
const NOTICE_RESERVE: usize = 4;
/// A session whose client does not read what it is sent is ended past
/// this: its paused senders overshoot `backlog_bytes` by what they had
/// in flight and sent while the pause travelled (8-17 MB across two
/// daemons in the tests), so only a hostile or broken peer reaches it.
const MAX_UNREAD: usize = 256 << 20;
/// `Conn::link` of a connection within this host (`local.rs`).
const LOCAL: usize = usize::MAX;
/// `Conn::session` of a connection closed by its client whose messages
/// are still in flight (`closing.rs`): it belongs to no session.
const GONE: usize = usize::MAX;

enum Handle {
    Conn(usize),
    Listener(u16),
}

/// What a session waits for before its next request.
enum Wait {
    /// A free slot (or a lent buffer, for a WRITE), to send `data` on
    /// connection `fd`.
    Slot {
        fd: u32,
        flags: proto::Flags,
        data: Vec<u8>,
    },
    /// The remote daemon's answer to connect on `fd`.
    Connect { fd: u32 },
    /// The handshake of a link to the host of `to`, to connect there.
    Link { to: SocketAddrV4 },
}

struct Session {
    stream: mio::net::UnixStream,
    rings: crate::ring::Rings,
    uid: u32,
    pid: i32,
    rbuf: Fifo,
    wbuf: Fifo,
    fds: HashMap<u32, Handle>,
    next_fd: u32,
    wait: Option<Wait>,
    /// The socket or the ring may hold unread bytes (not read to the end).
    unread: bool,
    /// Its QPs shared by its connections (`Sharing::Session`), by link.
    own_qps: HashMap<usize, usize>,
    /// Its connections whose senders were asked to pause (`backlog.rs`).
    pausing: Vec<usize>,
    /// Bytes still to come of a send refused for its length, dropped as
    /// they arrive (`sessions.rs`).
    skip: usize,
}

struct Conn {
    session: usize,
    fd: u32,
    /// Its link, or `LOCAL`.
    link: usize,
    /// The vQPN at the other end, once it accepted.
    remote: Option<u32>,
    /// Its QP, if not the link's (the baselines): an index in `own_qps`.
    own: Option<usize>,
    /// The other end asked this one to stop sending (its client is
    /// behind): a send waits until it resumes.
    paused: bool,
    /// Its messages sent and not yet at the other end.
    in_flight: u32,
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
    /// Sessions open, by their client's uid (`--max-sessions-per-user`).
    per_user: HashMap<u32, usize>,
    conns: Slab<Conn>,
    /// Each connection index's generation (`names.rs`).
    generations: Vec<u16>,
    listeners: HashMap<u16, Listener>,
    links: Slab<Link>,
    link_of: HashMap<Ipv4Addr, usize>,
    /// Link handshakes in progress, and those opened here by host.
    pending: Slab<pending::Pending>,
    pending_to: HashMap<Ipv4Addr, usize>,
    free_slots: Vec<u32>,
    /// The baselines' QPs.
    own_qps: Slab<OwnQp>,
    /// Send slots in flight: their link and QP, and the connection whose
    /// message each holds (none for notices and READs into a slot).
    sending: HashMap<u32, (usize, QpId, Option<usize>)>,
    /// What the one-sided slots among them are for.
    one_sided: HashMap<u32, OneSided>,
    /// READs asked for, waiting for a slot: link, vQPN, address, length.
    read_backlog: std::collections::VecDeque<(usize, u32, u64, u32)>,
    chooser: Chooser,
    /// Whether the kernel took the advice to back the region with huge
    /// pages.
    huge_pages: bool,
    /// Sessions waiting for a free slot, oldest first.
    slot_waiters: std::collections::VecDeque<usize>,
    /// Buffers the loop reuses each turn: completions, session ids.
    done: Vec<transport::Completion>,
    ids: Vec<usize>,
    /// Where a batch of notices is encoded.
    batch: Vec<u8>,
    /// Packets dropped outside windows when last logged, and when.
    window_drops_logged: (u64, std::time::Instant),
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// The control socket at `path`, listening before it appears there: it is
/// bound under a temporary name, given `mode` (who may open sessions),
/// and renamed into place, so a client that finds the path never meets a
/// socket that refuses it (bound, not yet listening, or not yet open to
/// it) and a daemon whose ports fail never leaves one behind.
fn listen_at(path: &std::path::Path, mode: u32) -> Result<mio::net::UnixListener, String> {
    use std::os::unix::fs::PermissionsExt;
    let named = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let _ = std::fs::remove_file(&tmp);
    let apps = mio::net::UnixListener::bind(&tmp).map_err(named)?;
    let placed = std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(mode))
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = placed {
        let _ = std::fs::remove_file(&tmp);
        return Err(named(e));
    }
    Ok(apps)
}
impl Daemon {
    /// Binds the control socket (a stale file from a daemon that is gone
    /// is replaced; a live daemon's is not) and the link address.
    pub fn bind(cfg: Config) -> Result<Daemon, String> {
        cfg.check()?;
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
        let sock = Socket::bind(cfg.bind).map_err(err)?;
        let links_listener = TcpListener::bind(sock.local)
            .map_err(|e| format!("cannot bind the link port {}: {e}", sock.local))?;
        let mut apps = listen_at(&cfg.control, cfg.socket_mode)?;
        links_listener.set_nonblocking(true).map_err(err)?;
        let engine = match cfg.transport.engine() {
            Engine::Irn(c) => Engine::Irn(irn_rtos(c, cfg.rto_us)),
            e => e,
        };
        let settings = PortSettings {
            rate_gbps: cfg.rate_gbps,
            gso: true,
            ecn_backlog: 64,
            impair: cfg.impair,
            pcap: None,
        };
        let rate = settings.rate_bps()?;
        let nic = Nic::new(NicConfig {
            mtu: cfg.mtu,
            rto: cfg.rto_us * engine::time::US,
            line_rate_bps: rate,
            engine,
            ..NicConfig::default()
        })
        .map_err(|e| format!("transport configuration: {e}"))?;
        let (mem, huge_pages) = Region::zeroed_huge(BASE, cfg.slots * cfg.slot_bytes);
        let port = settings.options()?;
        let mut ep = Endpoint::new(nic, mem, vec![sock], *cfg.bind.ip(), port).map_err(err)?;
        ep.windows = Some(datapath::window::Windows::default());
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
        let one_sided_bytes = cfg.one_sided_bytes;
        Ok(Daemon {
            cfg,
            ep,
            apps,
            links_listener,
            sessions: Slab::default(),
            per_user: HashMap::new(),
            conns: Slab::default(),
            generations: Vec::new(),
            listeners: HashMap::new(),
            links: Slab::default(),
            link_of: HashMap::new(),
            pending: Slab::default(),
            pending_to: HashMap::new(),
            free_slots,
            own_qps: Slab::default(),
            sending: HashMap::new(),
            one_sided: HashMap::new(),
            read_backlog: Default::default(),
            chooser: Chooser::new(one_sided_bytes),
            huge_pages,
            slot_waiters: Default::default(),
            done: Vec::new(),
            ids: Vec::new(),
            batch: Vec::new(),
            window_drops_logged: (0, std::time::Instant::now()),
        })
    }

    /// Whether the region asked for (transparent) huge pages and the
    /// kernel took the advice.
    pub fn huge_pages(&self) -> bool {
        self.huge_pages
    }

    /// The link address (UDP and TCP).
    pub fn local_addr(&self) -> SocketAddrV4 {
        self.ep.local_addr()
    }

    /// Serves until `stop` is set.
    pub fn run(&mut self, stop: &AtomicBool) -> Result<(), String> {
        while !stop.load(Ordering::Relaxed) {
            // Parked, a session's client wakes the loop through its
            // eventfd; busy, the loop looks at its rings each turn.
            let busy = self.park_sessions();
            let wait = if busy {
                Duration::ZERO
            } else {
                Duration::from_millis(10)
            };
            self.ep.turn(wait).map_err(err)?;
            self.unpark_sessions();
            self.chooser.tick();
            // Completions first: a message that arrived in this turn is
            // delivered before a close read from its link in the same
            // turn, which its sender sent after it.
            let mut done = std::mem::take(&mut self.done);
            done.append(&mut self.ep.completions);
            for c in done.drain(..) {
                self.on_completion(c);
            }
            self.done = done;
            for t in self.ep.take_ready() {
                match t {
                    APPS => self.accept_apps(),
                    LINKS => self.accept_links(),
                    t if t >= PENDING0 => self.drive_pending(t - PENDING0),
                    t if t >= LINK0 => self.read_link(t - LINK0),
                    t => {
                        let i = t - SESSION0;
                        if let Some(s) = self.sessions.get_mut(i) {
                            s.rings.take_wakeup();
                            s.unread = true;
                        }
                    }
                }
            }
            // Kept across turns, as `done`: a turn allocates nothing.
            let mut ids = std::mem::take(&mut self.ids);
            self.sessions.keys_into(&mut ids);
            for &i in &ids {
                if self
                    .sessions
                    .get(i)
                    .is_some_and(|s| s.unread || s.rings.pending())
                {
                    self.read_session(i);
                }
                self.flush_session(i);
            }
            self.ids = ids;
            self.flush_notices();
            self.expire_pending();
            self.log_window_drops();
        }
        Ok(())
    }

    /// One request of session `i`: its reply now, or None if it waits.
    fn request(&mut self, i: usize, req: Request) -> Option<Reply> {
        let fail = |m: String| Some(Reply::Err { message: m });
        match req {
            Request::Connect { addr, sharing } => {
                let Ok(to) = addr.parse::<SocketAddrV4>() else {
                    return fail(format!("connect: `{addr}` is not an IPv4 ip:port"));
                };
                self.connect(i, to, sharing)
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
            Request::Send { fd, flags, data } => {
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
                self.send(i, fd, v, flags, data)
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

    /// Session `i`'s connect to `to`: its reply now, or None if it waits
    /// (for the other end's answer, or for the link's handshake).
    fn connect(&mut self, i: usize, to: SocketAddrV4, sharing: Sharing) -> Option<Reply> {
        let fail = |m: String| Some(Reply::Err { message: m });
        let ip = to.ip();
        if ip == self.cfg.bind.ip() {
            return self.connect_local(i, to.port());
        }
        // 0.0.0.0 reaches this host: the daemon would link to itself.
        if ip.is_unspecified() || ip.is_broadcast() || ip.is_multicast() {
            return fail(format!("connect {to}: not the address of a host"));
        }
        if self.conns.len() >= MAX_CONNS {
            return fail(format!("connect {to}: {MAX_CONNS} connections open here"));
        }
        match self.link_of.get(ip) {
            Some(&link) => self.connect_on(i, to, link, sharing),
            None => match self.wait_for_link(i, to, sharing) {
                Ok(()) => None,
                Err(e) => fail(format!("connect {to}: {e}")),
            },
        }
    }

    /// Session `i`'s connect to `to` over its host's link `link`.
    fn connect_on(
        &mut self,
        i: usize,
        to: SocketAddrV4,
        link: usize,
        sharing: Sharing,
    ) -> Option<Reply> {
        let fail = |m: String| Some(Reply::Err { message: m });
        let own = match sharing {
            Sharing::Peer => None,
            Sharing::Session | Sharing::Connection => {
                let per_session = sharing == Sharing::Session;
                match self.own_qp_for_connect(i, link, per_session) {
                    Ok(o) => Some(o),
                    Err(e) => return fail(format!("connect {to}: {e}")),
                }
            }
        };
        let qp = own.and_then(|o| self.own_qps.get(o)?.offer);
        let (v, fd) = self.open_conn(i, link, None, own)?;
        self.sessions.get_mut(i)?.wait = Some(Wait::Connect { fd });
        let msg = LinkMsg::Connect {
            from: self.name_of(v),
            port: to.port(),
            qp,
        };
        if let Err(e) = self.link_send(link, &msg) {
            return fail(format!("connect {to}: {e}"));
        }
        None
    }

    /// Sends `data` on connection `v` (fd `fd` of session `i`) by the verb
    /// `flags` choose, or waits for a slot (or a lent buffer).
    fn send(
        &mut self,
        i: usize,
        fd: u32,
        v: usize,
        flags: proto::Flags,
        data: &[u8],
    ) -> Option<Reply> {
        let c = self.conns.get(v)?;
        let Some(remote) = c.remote else {
            return Some(Reply::Err {
                message: format!("send: fd {fd} is not connected yet"),
            });
        };
        if c.paused {
            // Resumed by the other end (`backlog.rs`), not by a slot.
            let data = data.to_vec();
            self.sessions.get_mut(i)?.wait = Some(Wait::Slot { fd, flags, data });
            return None;
        }
        if c.link == LOCAL {
            return self.send_local(remote as usize, data);
        }
        let link = c.link;
        let qp = match c.own {
            Some(o) => self.own_qps.get(o)?.qp,
            None => self.links.get(link)?.qp_for(v as u32),
        };
        let verb = self.chooser.verb(flags, data.len());
        let lent =
            verb != Verb::Write || self.links.get(link).is_some_and(|l| !l.borrowed.is_empty());
        // (Popping first and filtering would lose the slot.)
        let free = lent && self.free_slots.len() > NOTICE_RESERVE;
        let Some(slot) = free.then(|| self.free_slots.pop()).flatten() else {
            let data = data.to_vec();
            self.sessions.get_mut(i)?.wait = Some(Wait::Slot { fd, flags, data });
            self.slot_waiters.push_back(i);
            return None;
        };
        let addr = BASE + slot as u64 * self.cfg.slot_bytes as u64;
        let len = data.len();
        use transport::Memory;
        self.ep.mem.write(addr, data);
        if verb != Verb::Send {
            let posted = self.post_one_sided(verb, (v, remote, link, qp), slot, len);
            if !matches!(posted, Ok(true)) {
                self.free_slots.push(slot);
                let message = match posted {
                    Err(e) => format!("send: {e}"),
                    _ => "send: no lent buffer".into(),
                };
                return Some(Reply::Err { message });
            }
            self.track_send(slot, (link, qp), v);
            self.ep.after_input();
            return Some(Reply::Ok { value: len as u64 });
        }
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
        self.track_send(slot, (link, qp), v);
        self.ep.after_input();
        Some(Reply::Ok { value: len as u64 })
    }

    fn on_completion(&mut self, c: transport::Completion) {
        match c.side {
            CompletionSide::Requester => {
                if c.wr_id & ONE_SIDED_TAG != 0 {
                    self.one_sided_done(&c);
                } else if c.wr_id & SEND_TAG != 0 {
                    let slot = c.wr_id as u32;
                    if let Some((_, _, conn)) = self.sending.remove(&slot) {
                        self.send_done(conn);
                        self.free_slots.push(slot);
                        self.resume_waiting();
                    }
                }
            }
            // A WRITE's responder completion (it took no receive) is
            // the data landing in a lent buffer: its notice follows.
            // A WRITE with immediate (no daemon sends one; the windows
            // let it only into a lent buffer) took a posted receive,
            // which goes back, or the QP would run out of them.
            CompletionSide::Responder if c.verb == Verb::WriteImm => {
                let (slot, sb) = (c.wr_id as u32, self.cfg.slot_bytes as u64);
                let addr = BASE + u64::from(slot) * sb;
                let _ = self.ep.nic.post_recv_at(c.qp, u64::from(slot), addr, sb);
            }
            CompletionSide::Responder if c.verb != Verb::Send => {}
            CompletionSide::Responder if c.imm == u64::from(IMM) => self.on_notices(&c),
            CompletionSide::Responder => {
                let slot = c.wr_id as u32;
                let addr = BASE + slot as u64 * self.cfg.slot_bytes as u64;
                let start = (addr - BASE) as usize;
                let len = (c.len as usize).min(self.cfg.slot_bytes);
                // The connection's own QP, or its link's: a message
                // naming a connection on another QP is not delivered.
                let v = self.named(c.imm);
                let target = v.and_then(|v| self.conns.get(v)).and_then(|conn| {
                    let ok = match conn.own {
                        Some(o) => self.own_qps.get(o).is_some_and(|q| q.qp == c.qp),
                        None => self
                            .links
                            .get(conn.link)
                            .is_some_and(|l| l.qps.contains(&c.qp)),
                    };
                    ok.then_some((conn.session, conn.fd))
                });
                // A message for a connection closed here is dropped.
                if let (Some((si, fd)), Some(v)) = (target, v) {
                    if let Some(s) = self.sessions.get_mut(si) {
                        // Straight from the slot into the session's
                        // output: one copy.
                        let data = &self.ep.mem.bytes()[start..start + len];
                        sessions::output(s, fd, data);
                        self.note_backlog(si, v);
                    }
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

    /// READs asked for, then sessions waiting for a slot, try again, in
    /// the order they began waiting (an entry whose session no longer
    /// waits is skipped; one that waits again goes to the back, once per
    /// call).
    fn resume_waiting(&mut self) {
        self.start_reads();
        for _ in 0..self.slot_waiters.len() {
            if self.free_slots.len() <= NOTICE_RESERVE {
                return;
            }
            let Some(i) = self.slot_waiters.pop_front() else {
                return;
            };
            self.retry_send(i);
        }
    }

    /// Session `i`'s waiting send, tried again (it may wait again).
    fn retry_send(&mut self, i: usize) {
        let Some(s) = self.sessions.get_mut(i) else {
            return;
        };
        let Some(Wait::Slot { fd, flags, data }) =
            s.wait.take_if(|w| matches!(w, Wait::Slot { .. }))
        else {
            return;
        };
        let reply = match s.fds.get(&fd) {
            Some(Handle::Conn(v)) => {
                let v = *v;
                self.send(i, fd, v, flags, &data)
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

    /// Closes a session's handle; `tell`: the peer is told.
    fn close_handle(&mut self, h: Handle, tell: bool) {
        match h {
            Handle::Listener(port) => {
                self.listeners.remove(&port);
            }
            Handle::Conn(v) => {
                let Some(c) = self.conns.get(v) else {
                    return;
                };
                if c.link != LOCAL {
                    return self.close_remote(v, tell);
                }
                let peer = c.remote;
                self.drop_conn(v);
                if let Some(peer) = peer {
                    self.close_local_peer(peer as usize, v);
                }
            }
        }
    }

    /// A new connection of session `si` over `link` (or `LOCAL`), and
    /// its fd there: its vQPN and fd.
    fn open_conn(
        &mut self,
        si: usize,
        link: usize,
        remote: Option<u32>,
        own: Option<usize>,
    ) -> Option<(usize, u32)> {
        let s = self.sessions.get_mut(si)?;
        let fd = s.next_fd;
        s.next_fd += 1;
        let v = self.conns.insert(Conn {
            session: si,
            fd,
            link,
            remote,
            own,
            paused: false,
            in_flight: 0,
        });
        self.rename(v);
        self.sessions.get_mut(si)?.fds.insert(fd, Handle::Conn(v));
        Some((v, fd))
    }

    /// Removes connection `v` and its fd from its session: the session
    /// and the fd it was.
    fn unlink_conn(&mut self, v: usize) -> Option<(usize, u32)> {
        let c = self.drop_conn(v)?;
        if let Some(s) = self.sessions.get_mut(c.session) {
            s.fds.remove(&c.fd);
        }
        Some((c.session, c.fd))
    }

    /// Removes connection `v` (and its own QP, if it was the last of it).
    fn drop_conn(&mut self, v: usize) -> Option<Conn> {
        self.detach(v);
        let c = self.conns.remove(v)?;
        // Its number may be reused: a send of it completing later must
        // not count against the new connection.
        if c.in_flight > 0 {
            for (_, _, conn) in self.sending.values_mut() {
                conn.take_if(|w| *w == v);
            }
        }
        if let Some(o) = c.own {
            self.release_own_qp(o);
        }
        Some(c)
    }

    /// Frees the send slots in flight that `gone(link, qp)` names (their
    /// QP or link was destroyed: no completion will come).
    fn free_sending(&mut self, gone: impl Fn(usize, QpId) -> bool) {
        let before = self.free_slots.len();
        let mut offered = Vec::new();
        self.sending.retain(|&slot, &mut (l, qp, _)| {
            let keep = !gone(l, qp);
            if !keep {
                self.free_slots.push(slot);
                if let Some(OneSided::ReadOut) = self.one_sided.remove(&slot) {
                    offered.push((l, slot));
                }
            }
            keep
        });
        // A freed slot is no longer the peer's to READ.
        for (l, slot) in offered {
            let addr = BASE + u64::from(slot) * self.cfg.slot_bytes as u64;
            self.close_window(l, addr);
        }
        if self.free_slots.len() > before {
            self.resume_waiting();
        }
    }
}
