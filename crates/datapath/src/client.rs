//! `rdmalab net run`: the requester end of a transfer. Connects to the
//! server's control port, agrees on the job, then posts the job's
//! messages (at most `depth` outstanding per QP) and drives its endpoint
//! until every one completes; verifies the bytes by checksum against the
//! server's, and reports ([`Report`]).
//!
//! Ends with an error, never a hang, when the server refuses the job,
//! closes the control connection, or goes silent (retransmission
//! timeouts with nothing heard from it).
//!
//! Uses `session`, `endpoint`, `socket`, `region`, `pcap`, `report`.

use std::collections::VecDeque;
use std::net::{SocketAddr, SocketAddrV4, TcpStream};
use std::time::Duration;

use engine::Time;
use transport::{Verb, WorkRequest};

use crate::codec::{IP_UDP_HEADERS, MAX_DATAGRAM_OVERHEAD};
use crate::endpoint::{Endpoint, Peer, PortSettings, EXTERNAL};

/// The control connection's token in the endpoint's poll.
const CONTROL: usize = EXTERNAL;
use crate::region::Region;
use crate::report::{self, Report};
use crate::session::{Control, Job, Msg, VerbName, CLIENT_BASE, VERSION};
use crate::socket;

/// `rdmalab net run`'s options.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub to: SocketAddr,
    pub job: Job,
    pub port: PortSettings,
    /// Messages outstanding per QP.
    pub depth: u32,
    /// The run gives up once the server has been silent (no valid packet
    /// from it) for `peer_timeout_ms` and this many retransmission
    /// timeouts in a row.
    pub max_silent_timeouts: u64,
    pub peer_timeout_ms: u64,
}

/// Gives up when no message completes for this long though packets flow.
const STALL: Time = 30 * engine::time::SEC;

/// Refuses an MTU whose datagrams the path to `peer` cannot carry.
pub fn check_mtu(peer: SocketAddrV4, mtu: u32) -> Result<(), String> {
    let need = mtu as usize + MAX_DATAGRAM_OVERHEAD + IP_UDP_HEADERS;
    let carried = socket::path_mtu(peer).map_err(|e| format!("path MTU to {peer}: {e}"))?;
    if need > carried {
        return Err(format!(
            "--mtu {mtu}: packets of up to {need} bytes, but the path to {} carries {carried} (at most --mtu {})",
            peer.ip(),
            carried.saturating_sub(MAX_DATAGRAM_OVERHEAD + IP_UDP_HEADERS)
        ));
    }
    Ok(())
}

pub fn run(o: &RunOptions) -> Result<Report, String> {
    let job = &o.job;
    let SocketAddr::V4(server) = o.to else {
        return Err(format!(
            "--to {}: only IPv4 is supported (RoCEv2 over IPv4)",
            o.to
        ));
    };
    job.check(u64::MAX)?;
    let rate = o.port.rate_bps()?;
    if o.depth == 0 {
        return Err("--depth must be at least 1".into());
    }
    let tcp = TcpStream::connect_timeout(&o.to, Duration::from_secs(5))
        .map_err(|e| format!("--to {}: cannot reach the server's control port: {e}", o.to))?;
    let local_ip = match tcp.local_addr().map_err(|e| e.to_string())? {
        SocketAddr::V4(a) => *a.ip(),
        SocketAddr::V6(a) => return Err(format!("local address {a} is not IPv4")),
    };
    check_mtu(server, job.mtu)?;
    let socks =
        socket::bind_run(SocketAddrV4::new(local_ip, 0), job.paths).map_err(|e| e.to_string())?;
    let base = socks[0].local.port();
    let own = job.initial_psns(0)?;
    let mut ctl = Control::new(tcp).map_err(|e| e.to_string())?;
    ctl.send(&Msg::Hello {
        version: VERSION,
        job: job.clone(),
        udp_port: base,
        psns: own.clone(),
    })?;
    let (udp_port, peer_psns, region_base, read_sum) = match ctl.recv(Duration::from_secs(10))? {
        Msg::Ready {
            udp_port,
            psns,
            region_base,
            checksum,
        } => (udp_port, psns, region_base, checksum),
        Msg::Error { message } => return Err(format!("the server refused the job: {message}")),
        other => return Err(format!("the server answered {other:?} instead of ready")),
    };
    if peer_psns.len() != job.qps as usize || peer_psns.iter().any(|&p| p >= 1 << 24) {
        return Err("the server's ready message has bad PSNs".into());
    }
    let mut nic = job.nic(rate)?;
    job.create_qps(&mut nic, base, &own, &peer_psns)?;
    let len = usize::try_from(job.bytes).map_err(|_| "--bytes too large".to_string())?;
    let mem = match job.verb {
        VerbName::Read => Region::zeroed(CLIENT_BASE, len),
        _ => Region::patterned(CLIENT_BASE, len, job.seed),
    };
    let port = o.port.options()?;
    let mut ep = Endpoint::new(nic, mem, socks, local_ip, port).map_err(|e| e.to_string())?;
    ep.add_peer(Peer {
        addr: SocketAddrV4::new(*server.ip(), udp_port),
        ports: 1,
    });
    ctl.watch(&mut ep, CONTROL)?;

    let mut queues: Vec<VecDeque<(u64, u64)>> =
        (0..job.qps).map(|q| job.messages_of(q).collect()).collect();
    let total: usize = queues.iter().map(VecDeque::len).sum();
    let mut outstanding = vec![0u32; job.qps as usize];
    let mut posted_at: Vec<Time> = Vec::with_capacity(total);
    let mut latencies = Vec::with_capacity(total);
    let start = ep.now();
    let mut last_progress = start;
    let mut last_control = start;
    while latencies.len() < total {
        let now = ep.now();
        let mut posted = false;
        for (q, queue) in queues.iter_mut().enumerate() {
            while outstanding[q] < o.depth {
                let Some((off, len)) = queue.pop_front() else {
                    break;
                };
                let wr = WorkRequest {
                    wr_id: posted_at.len() as u64,
                    verb: job.verb.verb(),
                    len,
                    remote_addr: region_base + off,
                    local_addr: CLIENT_BASE + off,
                    ..WorkRequest::default()
                };
                ep.nic
                    .post_send(now, q as u32, wr)
                    .map_err(|e| format!("posting: {e}"))?;
                posted_at.push(now);
                outstanding[q] += 1;
                posted = true;
            }
        }
        if posted {
            ep.after_input();
        }
        ep.turn(Duration::from_millis(20))
            .map_err(|e| e.to_string())?;
        let now = ep.now();
        for c in ep.completions.drain(..) {
            let Some(&at) = posted_at.get(c.wr_id as usize) else {
                continue;
            };
            latencies.push((now - at) / engine::time::NS);
            outstanding[c.qp as usize] -= 1;
            last_progress = now;
        }
        if !ep.take_ready().is_empty() || now - last_control > engine::time::MS {
            last_control = now;
            match ctl.try_recv() {
                Ok(None) => {}
                Ok(Some(Msg::Error { message })) => {
                    return Err(format!("the server ended the session: {message}"))
                }
                Ok(Some(other)) => return Err(format!("the server sent {other:?} mid-transfer")),
                Err(e) => return Err(format!("{e} mid-transfer")),
            }
        }
        let (timeouts, heard_at) = ep.silence();
        let quiet_for = now - heard_at.max(start);
        if timeouts >= o.max_silent_timeouts && quiet_for >= o.peer_timeout_ms * engine::time::MS {
            return Err(format!(
                "the server at {} went silent: no packet from it for {} ms and {timeouts} retransmission timeouts in a row ({} of {} messages done)",
                o.to,
                quiet_for / engine::time::MS,
                latencies.len(),
                total
            ));
        }
        if now - last_progress > STALL {
            return Err(format!(
                "no message completed for {} s ({} of {total} done)",
                STALL / engine::time::SEC,
                latencies.len()
            ));
        }
    }
    let seconds = (ep.now() - start) as f64 / engine::time::SEC as f64;
    ctl.send(&Msg::Done)?;
    let (server_sum, server_drops, server_retransmitted) = match ctl
        .recv(Duration::from_secs(30))?
    {
        Msg::Outcome {
            checksum,
            drops,
            retransmitted,
        } => (checksum, drops, retransmitted),
        Msg::Error { message } => return Err(format!("the server ended the session: {message}")),
        other => {
            return Err(format!(
                "the server answered {other:?} instead of its outcome"
            ))
        }
    };
    let ours = ep.mem.checksum();
    let want = if job.verb.verb() == Verb::Read {
        read_sum
    } else {
        server_sum
    };
    if ours != want {
        return Err(format!(
            "verification failed: the {} bytes have crc32 {ours:08x} here and {want:08x} at the server",
            job.bytes
        ));
    }
    ep.finish_pcap()?;
    let stats = *ep.nic.stats();
    Ok(Report {
        job: job.clone(),
        seconds,
        latencies_ns: latencies,
        io: ep.io,
        retransmitted: stats.retransmitted_packets,
        timeouts: stats.timeouts,
        cnps_received: stats.cnps_received,
        rate_decreases: stats.rate_decreases,
        data_packets: stats.data_packets_sent,
        drops: ep.drops,
        nic_drops: report::nic_drops(&stats),
        impaired: ep.impaired(),
        server_drops,
        server_retransmitted,
        checksum: ours,
    })
}
