//! Link handshakes in progress, none of which blocks the loop: a link
//! this daemon opens (a client's connect to a host with no link yet)
//! connects without waiting, writes its hello as the connection takes
//! it and reads the ready as it arrives; a link another daemon opens
//! reads its hello as it arrives. Each is a state the loop drives from
//! its connection's readiness and ends at its deadline, so a silent or
//! trickling peer delays only the connects waiting for that link
//! (before, the loop read the handshake blocking, up to 5 s a read, and
//! every client of the daemon waited that long).
//!
//! The link's QP numbers are told to the other daemon before its answer
//! gives what the QPs need, while other QPs may be made meanwhile: they
//! are reserved at the hello (`Nic::reserve_qp`) and made at the ready.
//!
//! An `impl Daemon` block: uses the daemon's tables (`super`), `link`,
//! `links.rs`'s `add_link`, and the datapath's control connection.

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use datapath::session::Control;
use transport::QpId;

use super::{err, Daemon, Wait, PENDING0};
use crate::fifo::Fifo;
use crate::link::{check_qps, LinkMsg, VERSION};
use crate::proto::{Reply, Sharing};

/// How long a handshake may take, connect included: a peer slower than
/// this is no daemon worth a link.
const HANDSHAKE: Duration = Duration::from_secs(5);

pub(super) struct Pending {
    ctl: Control,
    /// Our hello or ready, as far as the connection has not taken it.
    out: Fifo,
    deadline: Instant,
    side: Side,
}

enum Side {
    /// Opened here: to the daemon at `to`, our reserved QPs and their
    /// first PSNs; the sessions whose connects wait for it (session, port,
    /// sharing). `connected`: the TCP connect completed.
    Out {
        to: SocketAddrV4,
        qps: Vec<QpId>,
        psns: Vec<u32>,
        waiters: Vec<(usize, u16, Sharing)>,
        connected: bool,
    },
    /// Opened by the daemon at `from`: its hello not read yet.
    In { from: SocketAddrV4 },
}

/// A TCP connection to `to` from this daemon's own address (the other
/// daemon names the link by the connection's source address, which
/// would otherwise be whatever the kernel picks: 127.0.0.1 for any
/// loopback address), started without waiting for it to complete.
fn connect_from(ip: Ipv4Addr, to: SocketAddrV4) -> std::io::Result<TcpStream> {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::IPV4, Type::STREAM, None)?;
    s.set_nonblocking(true)?;
    s.bind(&SocketAddr::V4(SocketAddrV4::new(ip, 0)).into())?;
    match s.connect(&SocketAddr::V4(to).into()) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(e),
    }
    Ok(s.into())
}

/// Writes what `out` holds as far as `ctl` takes it without waiting.
fn write_out(ctl: &Control, out: &mut Fifo) -> Result<(), String> {
    while !out.is_empty() {
        match (&mut ctl.stream()).write(out.bytes()) {
            Ok(0) => return Err("control connection closed".into()),
            Ok(n) => out.take(n),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("control connection: {e}")),
        }
    }
    Ok(())
}

fn line(m: &LinkMsg, out: &mut Fifo) {
    // A LinkMsg always serializes.
    let _ = serde_json::to_writer(out.back(), m);
    out.back().push(b'\n');
}

impl Daemon {
    /// Session `i`'s connect to `port` on `ip`, which has no link yet:
    /// it waits for the link's handshake, started now if none is.
    pub(super) fn wait_for_link(
        &mut self,
        i: usize,
        to: SocketAddrV4,
        sharing: Sharing,
    ) -> Result<(), String> {
        let p = match self.pending_to.get(to.ip()) {
            Some(&p) => p,
            None => self.open_link(*to.ip())?,
        };
        if let Some(Pending {
            side: Side::Out { waiters, .. },
            ..
        }) = self.pending.get_mut(p)
        {
            waiters.push((i, to.port(), sharing));
        }
        if let Some(s) = self.sessions.get_mut(i) {
            s.wait = Some(Wait::Link { to });
        }
        Ok(())
    }

    /// Starts the handshake of a link to the daemon on `ip`.
    fn open_link(&mut self, ip: Ipv4Addr) -> Result<usize, String> {
        let to = SocketAddrV4::new(ip, self.cfg.bind.port());
        let tcp =
            connect_from(*self.cfg.bind.ip(), to).map_err(|e| format!("no daemon at {to}: {e}"))?;
        let ctl = Control::new(tcp).map_err(err)?;
        let n = self.cfg.qps_per_peer;
        let qps = (0..n)
            .map(|_| self.ep.nic.reserve_qp())
            .collect::<Result<Vec<_>, _>>()
            .map_err(err)?;
        let psns = datapath::session::psns(u64::from(qps[0]) ^ 0x5a5a, n);
        let mut out = Fifo::default();
        let hello = LinkMsg::Hello {
            version: VERSION,
            udp_port: self.local_addr().port(),
            qpns: qps.clone(),
            psns: psns.clone(),
        };
        line(&hello, &mut out);
        let side = Side::Out {
            to,
            qps,
            psns,
            waiters: Vec::new(),
            connected: false,
        };
        let p = self.watch_pending(ctl, out, side)?;
        self.pending_to.insert(ip, p);
        Ok(p)
    }

    /// Watches a new handshake's connection (readable, and writable: a
    /// connect completing, room for what waits in `out`).
    fn watch_pending(&mut self, ctl: Control, out: Fifo, side: Side) -> Result<usize, String> {
        let fd = ctl.stream().as_raw_fd();
        let p = self.pending.insert(Pending {
            ctl,
            out,
            deadline: Instant::now() + HANDSHAKE,
            side,
        });
        let watched = self.ep.register(
            &mut mio::unix::SourceFd(&fd),
            PENDING0 + p,
            mio::Interest::READABLE | mio::Interest::WRITABLE,
        );
        if let Err(e) = watched {
            self.pending.remove(p);
            return Err(err(e));
        }
        Ok(p)
    }

    pub(super) fn accept_links(&mut self) {
        while let Ok((tcp, from)) = self.links_listener.accept() {
            let SocketAddr::V4(from) = from else {
                continue;
            };
            let Ok(ctl) = tcp.set_nonblocking(true).and_then(|()| Control::new(tcp)) else {
                continue;
            };
            let _ = self.watch_pending(ctl, Fifo::default(), Side::In { from });
        }
    }

    /// Handshake `p`'s connection is ready: its connect completed, its
    /// output written, its message read, as far as they go now.
    pub(super) fn drive_pending(&mut self, p: usize) {
        let Some(h) = self.pending.get_mut(p) else {
            return;
        };
        if let Side::Out { connected, to, .. } = &mut h.side {
            if !*connected {
                if let Ok(Some(e)) | Err(e) = h.ctl.stream().take_error() {
                    let why = format!("no daemon at {to}: {e}");
                    return self.end_pending(p, Err(why));
                }
                // Not connected yet: a spurious wakeup.
                if h.ctl.stream().peer_addr().is_err() {
                    return;
                }
                *connected = true;
            }
        }
        if let Err(e) = write_out(&h.ctl, &mut h.out) {
            return self.end_pending(p, Err(e));
        }
        match h.ctl.try_recv::<LinkMsg>() {
            Ok(None) => {}
            Ok(Some(m)) => self.end_pending(p, Ok(m)),
            Err(e) => self.end_pending(p, Err(e)),
        }
    }

    /// Ends the handshakes past their deadline.
    pub(super) fn expire_pending(&mut self) {
        let now = Instant::now();
        let mut late = Vec::new();
        for (p, h) in self.pending.iter() {
            if h.deadline <= now {
                late.push(p);
            }
        }
        for p in late {
            let why = format!("no answer within {} s", HANDSHAKE.as_secs());
            self.end_pending(p, Err(why));
        }
    }

    /// Ends handshake `p` with the message read from the other daemon,
    /// or why it failed: a link made, or refused, and its waiters told.
    fn end_pending(&mut self, p: usize, got: Result<LinkMsg, String>) {
        let Some(h) = self.pending.remove(p) else {
            return;
        };
        let fd = h.ctl.stream().as_raw_fd();
        let _ = self.ep.deregister(&mut mio::unix::SourceFd(&fd));
        match h.side {
            Side::In { from } => self.hello_from(h.ctl, from, got),
            Side::Out {
                to,
                qps,
                psns,
                waiters,
                ..
            } => {
                self.pending_to.remove(to.ip());
                let link = got.and_then(|m| self.ready_from(h.ctl, h.out, to, &qps, &psns, m));
                if link.is_err() {
                    for &qp in &qps {
                        let _ = self.ep.nic.destroy_qp(qp);
                    }
                }
                // The other daemon's own link may have come up meanwhile
                // (both opened one at once): the connects take it.
                let link = link.or_else(|e| self.link_of.get(to.ip()).copied().ok_or(e));
                for (i, port, sharing) in waiters {
                    let addr = SocketAddrV4::new(*to.ip(), port);
                    let waits = self.sessions.get_mut(i).is_some_and(|s| {
                        s.wait
                            .take_if(|w| matches!(w, Wait::Link { to } if *to == addr))
                            .is_some()
                    });
                    if !waits {
                        continue;
                    }
                    let reply = match &link {
                        Ok(l) => self.connect_on(i, addr, *l, sharing),
                        Err(e) => Some(Reply::Err {
                            message: format!("connect {addr}: {e}"),
                        }),
                    };
                    if let Some(r) = reply {
                        self.reply(i, r);
                    }
                    if let Some(s) = self.sessions.get_mut(i) {
                        s.unread = true;
                    }
                }
            }
        }
    }

    /// The other daemon's answer to our hello: the link, or why not.
    fn ready_from(
        &mut self,
        ctl: Control,
        out: Fifo,
        to: SocketAddrV4,
        qps: &[QpId],
        psns: &[u32],
        m: LinkMsg,
    ) -> Result<usize, String> {
        let (udp_port, their_qpns, their_psns) = match m {
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
        check_qps(&their_qpns, &their_psns, qps.len())?;
        if self.link_of.contains_key(to.ip()) {
            return Err(format!("a link to {} came up meanwhile", to.ip()));
        }
        let peer = SocketAddrV4::new(*to.ip(), udp_port);
        self.add_link(ctl, out, peer, (qps, psns), (&their_qpns, &their_psns))
    }

    /// The hello of the daemon at `from` (or why none came): a link, its
    /// ready queued first on it, or a refusal written as far as the
    /// connection takes it.
    fn hello_from(&mut self, ctl: Control, from: SocketAddrV4, got: Result<LinkMsg, String>) {
        let n = self.cfg.qps_per_peer as usize;
        let refuse = |ctl: Control, m: String| {
            let mut out = Fifo::default();
            line(&LinkMsg::Error { message: m }, &mut out);
            let _ = write_out(&ctl, &mut out);
        };
        let (udp_port, qpns, psns) = match got {
            Ok(LinkMsg::Hello {
                version: VERSION,
                udp_port,
                qpns,
                psns,
            }) => (udp_port, qpns, psns),
            Ok(other) => return refuse(ctl, format!("expected hello, got {other:?}")),
            Err(_) => return,
        };
        if let Err(e) = check_qps(&qpns, &psns, n) {
            let m = format!("hello: {e} (this daemon uses --qps-per-peer {n})");
            return refuse(ctl, m);
        }
        if self.link_of.contains_key(from.ip()) {
            return refuse(ctl, "a link from this host exists".into());
        }
        // Both daemons opening a link at once: the one from the lower
        // address is kept (its opener's connects then take it).
        if self.pending_to.contains_key(from.ip()) && from.ip() > self.cfg.bind.ip() {
            return refuse(ctl, "a link to this host is being opened".into());
        }
        let Ok(ours) = (0..n)
            .map(|_| self.ep.nic.reserve_qp())
            .collect::<Result<Vec<_>, _>>()
        else {
            return refuse(ctl, "no QP numbers left".into());
        };
        let our_psns = datapath::session::psns(u64::from(ours[0]) ^ 0xa5a5, n as u32);
        let mut out = Fifo::default();
        let ready = LinkMsg::Ready {
            udp_port: self.local_addr().port(),
            qpns: ours.clone(),
            psns: our_psns.clone(),
        };
        line(&ready, &mut out);
        let peer = SocketAddrV4::new(*from.ip(), udp_port);
        if let Err(e) = self.add_link(ctl, out, peer, (&ours, &our_psns), (&qpns, &psns)) {
            eprintln!("rdmavisord: link from {}: {e}", from.ip());
            for qp in ours {
                let _ = self.ep.nic.destroy_qp(qp);
            }
        }
    }
}
