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
