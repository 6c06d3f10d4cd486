//! `rdmalab net serve`: the responder end. Binds the UDP socket RoCEv2
//! packets come to and a TCP control port on the same address, then
//! serves one client session at a time: agrees on the job, registers a
//! region for it (zeroed for WRITE and SEND, patterned for READ), posts
//! the receives a SEND needs, drives its endpoint until the client says
//! it is done, and answers with its region's checksum and its drops.
//!
//! A session that goes wrong (a malformed control message, a job outside
//! `--max-bytes`, a client that vanishes) ends with an error line; the
//! server goes on to the next unless `--once`.
//!
//! Uses `session`, `endpoint`, `socket`, `region`, `pcap`, `report`.

use std::net::{SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::time::Duration;

use engine::Time;

use crate::endpoint::{Endpoint, Peer, PortSettings, EXTERNAL};

/// The control connection's token in the endpoint's poll.
const CONTROL: usize = EXTERNAL;
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
}

/// A session whose client sends nothing for this long is over.
const IDLE: Time = 60 * engine::time::SEC;

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
    pub fn serve(&mut self) -> Result<(), String> {
        loop {
            let (tcp, from) = self
                .listener
                .accept()
                .map_err(|e| format!("accepting a control connection: {e}"))?;
            let result = self.session(tcp);
            match &result {
                Ok(line) => println!("session from {from}: {line}"),
                Err(e) => eprintln!("session from {from}: error: {e}"),
            }
            if self.opts.once {
                return result.map(|_| ());
            }
        }
    }

    fn session(&mut self, tcp: TcpStream) -> Result<String, String> {
        let mut ctl = Control::new(tcp).map_err(|e| e.to_string())?;
        let refuse = |ctl: &mut Control, message: String| {
            let _ = ctl.send(&Msg::Error {
                message: message.clone(),
            });
            Err(message)
        };
        let (job, udp_port, client_psns) = match ctl.recv(Duration::from_secs(10))? {
            Msg::Hello {
                version,
                job,
                udp_port,
                psns,
            } => {
                if version != VERSION {
                    return refuse(
                        &mut ctl,
                        format!("control protocol version {version}, this server speaks {VERSION}"),
                    );
                }
                (job, udp_port, psns)
            }
            other => return refuse(&mut ctl, format!("expected hello, got {other:?}")),
        };
        if let Err(e) = job.check(self.opts.max_bytes) {
            return refuse(&mut ctl, e);
        }
        if client_psns.len() != job.qps as usize || client_psns.iter().any(|&p| p >= 1 << 24) {
            return refuse(&mut ctl, "hello: one 24-bit PSN per QP expected".into());
        }
        let (SocketAddr::V4(client), SocketAddr::V4(local)) = (
            ctl.stream().peer_addr().map_err(|e| e.to_string())?,
            ctl.stream().local_addr().map_err(|e| e.to_string())?,
        ) else {
            return refuse(&mut ctl, "the control connection is not IPv4".into());
        };
        let Some(sock) = self.sock.take() else {
            return Err("the UDP socket was lost".into());
        };
        let port = sock.local.port();
        let own = session::psns(job.seed ^ 0x5e57e7, job.qps);
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
                return refuse(&mut ctl, e);
            }
        };
        let mut ep = Endpoint::new(nic, mem, vec![sock], *local.ip(), port)
            .map_err(|e| format!("the server's event loop: {e}"))?;
        let outcome = self.transfer(&mut ep, &mut ctl, &job, client, udp_port, &own);
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
        let mut heard = (ep.io.datagrams_received, ep.now());
        loop {
            ep.turn(Duration::from_millis(20))
                .map_err(|e| e.to_string())?;
            ep.completions.clear();
            let now = ep.now();
            if ep.io.datagrams_received != heard.0 {
                heard = (ep.io.datagrams_received, now);
            } else if now - heard.1 > IDLE {
                return Err(format!(
                    "the client sent nothing for {} s",
                    IDLE / engine::time::SEC
                ));
            }
            if !ep.take_ready().is_empty() || now - last_control > engine::time::MS {
                last_control = now;
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
