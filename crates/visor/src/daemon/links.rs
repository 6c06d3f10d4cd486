//! The daemon's side of its links to remote daemons: opening one (the
//! first connection to a host) or accepting one, making its shared QPs
//! and posting their receives, the control messages of logical
//! connections (connect, accepted, refused, close), and a link's end.
//!
//! An `impl Daemon` block: uses the daemon's tables (`super`), `link`,
//! and the datapath's endpoint and control connection.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpStream};
use std::os::fd::AsRawFd;
use std::time::Duration;

use datapath::endpoint::Peer;
use datapath::session::Control;
use transport::{InitialPsns, QpConfig};

use super::{err, Daemon, Wait, BASE, LEND, LINK0, NOTICE_RESERVE};
use crate::link::{check_qps, Link, LinkMsg, VERSION};
use crate::notice::MAX_VQPN;
use crate::proto::Reply;

/// A TCP connection to `to` from this daemon's own address: the other
/// daemon names the link by the connection's source address, which
/// would otherwise be whatever the kernel picks (127.0.0.1 for any
/// loopback address).
fn connect_from(ip: Ipv4Addr, to: SocketAddrV4) -> std::io::Result<TcpStream> {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::IPV4, Type::STREAM, None)?;
    s.bind(&SocketAddr::V4(SocketAddrV4::new(ip, 0)).into())?;
    s.connect_timeout(&SocketAddr::V4(to).into(), Duration::from_secs(2))?;
    Ok(s.into())
}

impl Daemon {
    /// The link to the daemon on `ip`, opened if there is none.
    pub(super) fn link_to(&mut self, ip: Ipv4Addr) -> Result<usize, String> {
        if let Some(&l) = self.link_of.get(&ip) {
            return Ok(l);
        }
        let to = SocketAddrV4::new(ip, self.cfg.bind.port());
        let tcp =
            connect_from(*self.cfg.bind.ip(), to).map_err(|e| format!("no daemon at {to}: {e}"))?;
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
    pub(super) fn accept_links(&mut self) {
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
    pub(super) fn add_link(
        &mut self,
        ctl: Control,
        peer: SocketAddrV4,
        psns: &[u32],
        qpns: &[u32],
        their_psns: &[u32],
    ) -> Result<usize, String> {
        let n = qpns.len();
        let need = n * self.cfg.recv_per_qp;
        if self.free_slots.len() < need + LEND + NOTICE_RESERVE + 1 {
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
        ctl.stream().set_nonblocking(true).map_err(err)?;
        let fd = ctl.stream().as_raw_fd();
        let l = self.links.insert(Link {
            ctl,
            peer,
            host,
            qps,
            recv_slots,
            accepted: Default::default(),
            lent: Default::default(),
            borrowed: Vec::new(),
            notices: Vec::new(),
            out: Default::default(),
        });
        // Writable too: a turn that finds room flushes what waits.
        self.ep
            .register(
                &mut mio::unix::SourceFd(&fd),
                LINK0 + l,
                mio::Interest::READABLE | mio::Interest::WRITABLE,
            )
            .map_err(err)?;
        self.link_of.insert(*peer.ip(), l);
        self.lend(l)?;
        Ok(l)
    }
    pub(super) fn read_link(&mut self, l: usize) {
        self.flush_link(l);
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
    pub(super) fn link_msg(&mut self, l: usize, m: LinkMsg) {
        match m {
            LinkMsg::Connect { from, port, qp } => {
                let answer = match self.listeners.get(&port) {
                    None => LinkMsg::Refused {
                        from,
                        reason: format!("nothing listens on port {port}"),
                    },
                    Some(li) => 'accept: {
                        let (si, lfd) = (li.session, li.fd);
                        if self.sessions.get(si).is_none() {
                            return;
                        }
                        if self.conns.len() >= MAX_VQPN {
                            let reason = format!("{MAX_VQPN} connections open there");
                            break 'accept LinkMsg::Refused { from, reason };
                        }
                        let own = match qp.map(|offer| self.own_qp_for_offer(l, offer)) {
                            None => None,
                            Some(Ok(o)) => Some(o),
                            Some(Err(reason)) => break 'accept LinkMsg::Refused { from, reason },
                        };
                        let qpn = own.and_then(|o| Some(self.own_qps.get(o)?.qp));
                        let Some((v, fd)) = self.open_conn(si, l, Some(from), own) else {
                            return;
                        };
                        self.reply(si, Reply::Incoming { listener: lfd, fd });
                        LinkMsg::Accepted {
                            from,
                            to: v as u32,
                            qpn,
                        }
                    }
                };
                let _ = self.link_send(l, &answer);
            }
            LinkMsg::Accepted { from, to, qpn } => {
                let Some(c) = self.conns.get_mut(from as usize).filter(|c| c.link == l) else {
                    return;
                };
                c.remote = Some(to);
                let (si, fd, own) = (c.session, c.fd, c.own);
                if let (Some(o), Some(n)) = (own, qpn) {
                    self.connect_own_qp(o, n);
                }
                self.end_connect_wait(si, fd, Reply::Ok { value: fd.into() });
            }
            LinkMsg::Refused { from, reason } => {
                if self.conns.get(from as usize).is_none_or(|c| c.link != l) {
                    return;
                }
                let Some((si, fd)) = self.unlink_conn(from as usize) else {
                    return;
                };
                self.end_connect_wait(
                    si,
                    fd,
                    Reply::Err {
                        message: format!("connect: refused: {reason}"),
                    },
                );
            }
            LinkMsg::Pause { vqpn } => self.pause_from(l, vqpn, true),
            LinkMsg::Resume { vqpn } => self.pause_from(l, vqpn, false),
            LinkMsg::Hello { .. } | LinkMsg::Ready { .. } | LinkMsg::Error { .. } => {
                self.link_down(l)
            }
        }
    }
    pub(super) fn end_connect_wait(&mut self, si: usize, fd: u32, r: Reply) {
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
    pub(super) fn link_down(&mut self, l: usize) {
        let Some(mut link) = self.links.remove(l) else {
            return;
        };
        let fd = link.ctl.stream().as_raw_fd();
        let _ = self.ep.deregister(&mut mio::unix::SourceFd(&fd));
        self.link_of.remove(link.peer.ip());
        let mut conns = Vec::new();
        self.conns.keys_into(&mut conns);
        for v in conns {
            let Some(c) = self.conns.get(v).filter(|c| c.link == l) else {
                continue;
            };
            let connected = c.remote.is_some();
            let Some((si, fd)) = self.unlink_conn(v) else {
                continue;
            };
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
        self.close_windows(link.host);
        self.free_slots.append(&mut link.recv_slots);
        self.free_slots.extend(link.lent.drain());
        self.free_sending(|k, _| k == l);
        self.resume_waiting();
    }
}
