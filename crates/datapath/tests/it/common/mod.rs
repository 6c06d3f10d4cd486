//! A server on loopback in a thread, and the options of a small job.
#![allow(dead_code)] // each test file uses part of it

use std::net::SocketAddr;
use std::thread::JoinHandle;

use datapath::endpoint::PortSettings;
use datapath::impair::ImpairSpec;
use datapath::{EngineKind, Job, RunOptions, ServeOptions, Server, VerbName};

/// A server for one session on an ephemeral loopback port: its address,
/// and the thread serving it (its result: the session's).
pub fn serve_once(
    impair: Option<ImpairSpec>,
    ecn_backlog: usize,
) -> (SocketAddr, JoinHandle<Result<(), String>>) {
    serve_with(ServeOptions {
        bind: "127.0.0.1:0".parse().unwrap(),
        port: settings(impair, ecn_backlog),
        max_bytes: 1 << 30,
        once: true,
        control_ms: 10_000,
        idle_ms: 60_000,
    })
}

/// A server with options `o` on a thread: its address and the thread.
pub fn serve_with(o: ServeOptions) -> (SocketAddr, JoinHandle<Result<(), String>>) {
    let mut server = Server::bind(&o).unwrap();
    let addr = SocketAddr::V4(server.local_addr());
    (addr, std::thread::spawn(move || server.serve()))
}

/// A port at 10 Gb/s with GSO.
pub fn settings(impair: Option<ImpairSpec>, ecn_backlog: usize) -> PortSettings {
    PortSettings {
        rate_gbps: 10.0,
        gso: true,
        ecn_backlog,
        impair,
        pcap: None,
    }
}

/// A job of the transport named `transport` (the engines' table).
pub fn options(to: SocketAddr, transport: &str, verb: VerbName, bytes: u64) -> RunOptions {
    let transport = EngineKind::from_name(transport).unwrap();
    RunOptions {
        to,
        job: Job {
            transport,
            verb,
            cc: datapath::CcName::None,
            bytes,
            msg_bytes: 256 * 1024,
            qps: 2,
            mtu: 4096,
            paths: if transport.engine().multipath() { 8 } else { 1 },
            rto_us: 2000,
            seed: 7,
            seeded_psns: true,
        },
        port: settings(None, 64),
        depth: 4,
        max_silent_timeouts: 8,
        peer_timeout_ms: 2000,
    }
}

/// A one-message WRITE request of `len` bytes at `addr`, PSN `psn`, to QP
/// `dst_qp`, from UDP port `sport`: what forged datagrams carry.
pub fn write(psn: u32, dst_qp: u32, addr: u64, len: u32, sport: u16) -> transport::Packet {
    transport::Packet {
        kind: transport::PacketKind::Request,
        verb: transport::Verb::Write,
        src_qp: 0,
        dst_qp,
        psn,
        sport,
        payload: len,
        first: true,
        last: true,
        msg_len: u64::from(len),
        addr,
        ..transport::Packet::default()
    }
}

/// A responder endpoint of `transport` on loopback (MTU 1024, one QP
/// expecting PSN 100 first) over `len` bytes of memory at `SERVER_BASE`,
/// and its address.
pub fn responder(
    transport: &str,
    len: usize,
) -> (datapath::endpoint::Endpoint, std::net::SocketAddrV4) {
    let job = datapath::Job {
        transport: datapath::EngineKind::from_name(transport).unwrap(),
        verb: VerbName::Write,
        cc: datapath::CcName::None,
        bytes: 4096,
        msg_bytes: 4096,
        qps: 1,
        mtu: 1024,
        paths: 1,
        rto_us: 1000,
        seed: 1,
        seeded_psns: true,
    };
    let sock = datapath::socket::Socket::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let local = sock.local;
    let mut nic = job.nic(10_000_000_000).unwrap();
    job.create_qps(&mut nic, local.port(), &[0], &[100])
        .unwrap();
    let port = datapath::endpoint::PortOptions {
        rate_bps: 10_000_000_000,
        gso: true,
        impair: None,
        pcap: None,
        ecn_backlog: 0,
    };
    let mem = datapath::region::Region::zeroed(datapath::session::SERVER_BASE, len);
    let ep = datapath::endpoint::Endpoint::new(nic, mem, vec![sock], *local.ip(), port).unwrap();
    (ep, local)
}
