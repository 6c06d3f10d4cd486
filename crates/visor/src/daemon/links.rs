//! The daemon's side of its links to remote daemons, once their
//! handshake is done (`pending.rs`): making their shared QPs and posting
//! their receives, the control messages of logical
//! connections (connect, accepted, refused, close), and a link's end.
//!
//! An `impl Daemon` block: uses the daemon's tables (`super`), `link`,
//! and the datapath's endpoint and control connection.

use std::net::SocketAddrV4;
use std::os::fd::AsRawFd;

use datapath::endpoint::Peer;
use datapath::session::Control;
use transport::{InitialPsns, QpConfig, QpId};

use super::{err, Daemon, Wait, BASE, LEND, LINK0, MAX_CONNS, NOTICE_RESERVE};
use crate::fifo::Fifo;
use crate::link::{Link, LinkMsg};
use crate::proto::Reply;

impl Daemon {
    /// Makes the link's QPs (`ours`, reserved, to `peer`'s `qpns`),
    /// posts its receives and watches its control connection, `out`
    /// (what the handshake has not written yet) first on it.
    pub(super) fn add_link(
        &mut self,
        ctl: Control,
        out: Fifo,
        peer: SocketAddrV4,
        (ours, psns): (&[QpId], &[u32]),
        (qpns, their_psns): (&[u32], &[u32]),
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
            self.ep
                .nic
                .create_reserved_qp(ours[k], cfg, psn)
                .map_err(err)?;
        }
        let qps = ours.to_vec();
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
            out,
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
        self.flush_link(l);
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
                        if self.conns.len() >= MAX_CONNS {
                            let reason = format!("{MAX_CONNS} connections open there");
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
                            to: self.name_of(v),
                            qpn,
                        }
                    }
                };
                let _ = self.link_send(l, &answer);
            }
            LinkMsg::Accepted { from, to, qpn } => {
                let v = self.on_link(l, from);
                let Some(c) = v.and_then(|v| self.conns.get_mut(v)) else {
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
                let Some(v) = self.on_link(l, from) else {
                    return;
                };
                let Some((si, fd)) = self.unlink_conn(v) else {
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
