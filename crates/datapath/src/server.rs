//! `rdmalab net serve`: the responder end. Binds the UDP socket RoCEv2
//! packets come to and a TCP control port on the same address, then
//! serves one transfer at a time: agrees on the job, registers a
//! region for it (zeroed for WRITE and SEND, patterned for READ), posts
//! the receives a SEND needs, drives its endpoint until the client says
//! it is done, and answers with its region's checksum and its drops.
//!
//! Control clients are hostile: up to [`MAX_PENDING`] connections wait
//! for their hello at once, each cut off when its whole message has not
//! come within `control_ms` (however its bytes trickle), so slow or
//! silent clients cannot lock out others; beyond that, and while a
//! transfer runs, a new connection is answered "busy" at once.
//!
//! A session that goes wrong (a malformed control message, a job outside
//! `--max-bytes`, a client that vanishes) ends with an error line; the
//! server goes on to the next unless `--once`.
//!
//! Uses `session`, `endpoint`, `socket`, `region`, `pcap`, `report`.

use std::net::{SocketAddr, SocketAddrV4, TcpListener};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use crate::endpoint::{Endpoint, Peer, PortSettings, EXTERNAL};

/// The control connection's and the listener's tokens in the
/// endpoint's poll.
const CONTROL: usize = EXTERNAL;
const LISTENER: usize = EXTERNAL + 1;
/// Every connection waiting for its hello, in the server's own poll.
const PENDING: usize = 1;
/// Control connections waiting for their hello at once; more are
/// answered "busy".
pub const MAX_PENDING: usize = 32;
use crate::region::Region;
use crate::report;
use crate::session::{self, Control, Msg, VerbName, SERVER_BASE, VERSION};
use crate::socket::Socket;

/// `rdmalab net serve`'s options.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    pub bind: SocketAddr,
    pub port: PortSettings,
    /// The largest region a client may ask for.
    pub max_bytes: u64,
    /// Serve one session, then exit with its result.
    pub once: bool,
    /// The longest a whole control message may take to arrive (ms).
    pub control_ms: u64,
    /// A session whose client sends no valid packet for this long is
    /// over (ms); datagrams from anyone else do not count.
    pub idle_ms: u64,
}

/// A control connection waiting for its hello.
struct Pending {
    ctl: Control,
    from: SocketAddr,
    since: Instant,
}

/// A bound server: its UDP socket and control listener.
pub struct Server {
    sock: Option<Socket>,
    listener: TcpListener,
    opts: ServeOptions,
    rate: u64,
}

impl Server {
    pub fn bind(o: &ServeOptions) -> Result<Server, String> {
        let SocketAddr::V4(addr) = o.bind else {
            return Err(format!(
                "--bind {}: only IPv4 is supported (RoCEv2 over IPv4)",
                o.bind
            ));
        };
        let rate = o.port.rate_bps()?;
        let sock = Socket::bind(addr).map_err(|e| e.to_string())?;
        let listener = TcpListener::bind(sock.local)
            .map_err(|e| format!("cannot bind the TCP control port {}: {e}", sock.local))?;
        listener.set_nonblocking(true).map_err(|e| e.to_string())?;
        if o.control_ms == 0 || o.idle_ms == 0 {
            return Err("--control-timeout-ms and --idle-timeout-ms must be at least 1".into());
        }
        Ok(Server {
            sock: Some(sock),
            listener,
            opts: o.clone(),
            rate,
        })
    }

    /// The address clients connect to (UDP and TCP).
    pub fn local_addr(&self) -> SocketAddrV4 {
        self.sock
            .as_ref()
            .map_or(SocketAddrV4::new(0.into(), 0), |s| s.local)
    }

    /// Serves sessions (one, with `--once`), printing a line per session.
    /// A session is a connection that sent a whole line; one cut off,
    /// closed before a whole line or answered "busy" is logged but is
    /// not one.
    pub fn serve(&mut self) -> Result<(), String> {
        let mut poll = mio::Poll::new().map_err(|e| e.to_string())?;
        let mut events = mio::Events::with_capacity(64);
        let fd = self.listener.as_raw_fd();
        poll.registry()
            .register(
                &mut mio::unix::SourceFd(&fd),
                mio::Token(LISTENER),
                mio::Interest::READABLE,
            )
            .map_err(|e| e.to_string())?;
        let limit = Duration::from_millis(self.opts.control_ms);
        let mut pending: Vec<Pending> = Vec::new();
        loop {
            let wait = pending
                .iter()
                .map(|p| limit.saturating_sub(p.since.elapsed()))
                .min()
                .unwrap_or(Duration::from_secs(1))
                .max(Duration::from_millis(1));
            match poll.poll(&mut events, Some(wait)) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(format!("waiting for control connections: {e}")),
            }
            self.accept_all(&poll, &mut pending);
            let mut hello = None;
            let mut i = 0;
            while i < pending.len() {
                let p = &mut pending[i];
                let got = match p.ctl.try_recv::<Msg>() {
                    Ok(None) if p.since.elapsed() < limit => {
                        i += 1;
                        continue;
                    }
                    Ok(None) => None,
                    Ok(Some(m)) => Some(Ok(m)),
                    Err(e) => Some(Err(e)),
                };
                let mut p = pending.swap_remove(i);
                match got {
                    None => {
                        let m = format!(
                            "control connection: no whole message within {} ms ({} bytes of one): cut off",
                            limit.as_millis(),
                            p.ctl.partial_len()
                        );
                        let _ = p.ctl.send_now(&Msg::Error { message: m.clone() });
                        eprintln!("control connection from {}: {m}", p.from);
                    }
                    // Closed, or a line too long, before any whole one:
                    // no session (a port scan must not end `--once`). A
                    // client still there learns why.
                    Some(Err(e)) if p.ctl.lines() == 0 => {
                        let _ = p.ctl.send_now(&Msg::Error { message: e.clone() });
                        eprintln!("control connection from {}: {e}", p.from);
                    }
                    Some(m) => {
                        hello = Some((p, m));
                        break;
                    }
                }
            }
            let Some((mut p, first)) = hello else {
                continue;
            };
            for mut other in pending.drain(..) {
                busy(&mut other.ctl, other.from);
            }
            let result = match first {
                Ok(m) => self.session(&mut p.ctl, m),
                // A line that is no message (a client of another version,
                // a typo): the client learns why, as for a refused job.
                Err(e) => {
                    let _ = p.ctl.send_now(&Msg::Error { message: e.clone() });
                    Err(e)
                }
            };
            match &result {
                Ok(line) => println!("session from {}: {line}", p.from),
                Err(e) => eprintln!("session from {}: error: {e}", p.from),
            }
            if self.opts.once {
                return result.map(|_| ());
            }
        }
    }

    /// Accepts every waiting connection: pending, or answered "busy"
    /// beyond [`MAX_PENDING`].
    /// Each pending connection is watched in `poll`, so that its bytes
    /// wake the loop (their fds leave it when they close).
    fn accept_all(&self, poll: &mio::Poll, pending: &mut Vec<Pending>) {
        loop {
            let (tcp, from) = match self.listener.accept() {
                Ok(c) => c,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                // A connection reset before it was accepted, or out of
                // descriptors for now: the next one may do.
                Err(e) => {
                    eprintln!("accepting a control connection: {e}");
                    return;
                }
            };
            let Ok(mut ctl) = Control::new(tcp) else {
                continue;
            };
            let fd = ctl.stream().as_raw_fd();
            let watched = poll.registry().register(
                &mut mio::unix::SourceFd(&fd),
                mio::Token(PENDING),
                mio::Interest::READABLE,
            );
            if pending.len() >= MAX_PENDING || watched.is_err() {
                busy(&mut ctl, from);
                continue;
            }
            pending.push(Pending {
                ctl,
                from,
                since: Instant::now(),
            });
        }
    }

    /// Answers every waiting connection "busy" (a transfer runs).
    fn answer_busy(&self) {
        while let Ok((tcp, from)) = self.listener.accept() {
            if let Ok(mut ctl) = Control::new(tcp) {
                busy(&mut ctl, from);
            }
        }
    }

    fn session(&mut self, ctl: &mut Control, hello: Msg) -> Result<String, String> {
        let refuse = |ctl: &mut Control, message: String| {
            let _ = ctl.send(&Msg::Error {
                message: message.clone(),
            });
            Err(message)
        };
        let (job, udp_port, client_psns) = match hello {
            Msg::Hello {
                version,
                job,
                udp_port,
                psns,
            } => {
                if version != VERSION {
                    return refuse(
                        ctl,
                        format!("control protocol version {version}, this server speaks {VERSION}"),
                    );
                }
                (job, udp_port, psns)
            }
            other => return refuse(ctl, format!("expected hello, got {other:?}")),
        };
        if let Err(e) = job.check(self.opts.max_bytes) {
            return refuse(ctl, e);
        }
        if client_psns.len() != job.qps as usize || client_psns.iter().any(|&p| p >= 1 << 24) {
            return refuse(ctl, "hello: one 24-bit PSN per QP expected".into());
        }
        let (SocketAddr::V4(client), SocketAddr::V4(local)) = (
            ctl.stream().peer_addr().map_err(|e| e.to_string())?,
            ctl.stream().local_addr().map_err(|e| e.to_string())?,
        ) else {
            return refuse(ctl, "the control connection is not IPv4".into());
        };
        let Some(sock) = self.sock.take() else {
            return Err("the UDP socket was lost".into());
        };
        let port = sock.local.port();
        let own = match job.initial_psns(0x5e57e7) {
            Ok(p) => p,
            Err(e) => return refuse(ctl, e),
        };
        let result = (|| {
            let mut nic = job.nic(self.rate)?;
            job.create_qps(&mut nic, port, &own, &client_psns)?;
            let len = usize::try_from(job.bytes).map_err(|_| "--bytes too large".to_string())?;
            let mem = match job.verb {
                VerbName::Read => Region::patterned(SERVER_BASE, len, job.seed ^ 0x5e57e7),
                _ => Region::zeroed(SERVER_BASE, len),
            };
            if job.verb == VerbName::Send {
                for q in 0..job.qps {
                    for (i, (off, l)) in job.messages_of(q).enumerate() {
                        nic.post_recv_at(q, i as u64, SERVER_BASE + off, l)
                            .map_err(|e| e.to_string())?;
                    }
                }
            }
            let port = self.opts.port.options()?;
            Ok((nic, mem, port))
        })();
        let (nic, mem, port) = match result {
            Ok(parts) => parts,
            Err(e) => {
                self.sock = Some(sock);
                return refuse(ctl, e);
            }
        };
        let mut ep = Endpoint::new(nic, mem, vec![sock], *local.ip(), port)
            .map_err(|e| format!("the server's event loop: {e}"))?;
        let outcome = self.transfer(&mut ep, ctl, &job, client, udp_port, &own);
        let pcap = ep.finish_pcap();
        self.sock = ep.into_sockets().into_iter().next();
        let line = outcome?;
        pcap?;
        Ok(line)
    }

    fn transfer(
        &self,
        ep: &mut Endpoint,
        ctl: &mut Control,
        job: &session::Job,
        client: SocketAddrV4,
        udp_port: u16,
        own: &[u32],
    ) -> Result<String, String> {
        ep.add_peer(Peer {
            addr: SocketAddrV4::new(*client.ip(), udp_port),
            ports: job.paths,
        });
        ctl.watch(ep, CONTROL)?;
        let fd = self.listener.as_raw_fd();
        ep.register(
            &mut mio::unix::SourceFd(&fd),
            LISTENER,
            mio::Interest::READABLE,
        )
        .map_err(|e| e.to_string())?;
        let limit = Duration::from_millis(self.opts.control_ms);
        ctl.send(&Msg::Ready {
            udp_port: ep.local_addr().port(),
            psns: own.to_vec(),
            region_base: SERVER_BASE,
            checksum: if job.verb == VerbName::Read {
                ep.mem.checksum()
            } else {
                0
            },
        })?;
        let mut last_control = ep.now();
        let start = ep.now();
        let idle = self.opts.idle_ms.saturating_mul(engine::time::MS);
        loop {
            ep.turn(Duration::from_millis(20))
                .map_err(|e| e.to_string())?;
            ep.completions.clear();
            let now = ep.now();
            // When a valid packet of the session's peer last came: junk
            // from anyone else does not keep the session alive.
            let heard_at = ep.silence().1.max(start);
            if now - heard_at > idle {
                let m = format!(
                    "the client sent no valid packet for {} ms",
                    self.opts.idle_ms
                );
                let _ = ctl.send_now(&Msg::Error { message: m.clone() });
                return Err(m);
            }
            let ready = ep.take_ready();
            if ready.contains(&LISTENER) {
                self.answer_busy();
            }
            if !ready.is_empty() || now - last_control > engine::time::MS {
                last_control = now;
                if ctl.partial_for().is_some_and(|t| t > limit) {
                    return Err(format!(
                        "control connection: no whole message within {} ms",
                        limit.as_millis()
                    ));
                }
                match ctl.try_recv()? {
                    None => {}
                    Some(Msg::Done) => break,
                    Some(other) => {
                        let m = format!("expected done, got {other:?}");
                        let _ = ctl.send(&Msg::Error { message: m.clone() });
                        return Err(m);
                    }
                }
            }
        }
        let mut drops = report::drops_list(&ep.drops);
        drops.extend(report::nic_drops(ep.nic.stats()));
        let checksum = ep.mem.checksum();
        ctl.send(&Msg::Outcome {
            checksum,
            drops: drops.clone(),
            retransmitted: ep.nic.stats().retransmitted_packets,
        })?;
        let dropped: u64 = drops.iter().map(|(_, n)| n).sum();
        Ok(format!(
            "{} {} of {} bytes over {} QP(s): {} datagrams in, {} out; crc32 {checksum:08x}; {dropped} dropped ({})",
            job.transport.name(),
            job.verb.name(),
            job.bytes,
            job.qps,
            ep.io.datagrams_received,
            ep.io.datagrams_sent,
            drops
                .iter()
                .filter(|(_, n)| *n > 0)
                .map(|(k, n)| format!("{k} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}

/// Tells a control client the server cannot take it now, without
/// waiting for it to read.
fn busy(ctl: &mut Control, from: SocketAddr) {
    let message = "busy: the server is serving another client; try again later".to_string();
    let _ = ctl.send_now(&Msg::Error { message });
    eprintln!("control connection from {from}: answered busy");
}
