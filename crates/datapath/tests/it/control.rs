//! The control port under slow and silent clients: a client trickling
//! its hello a byte at a time is cut off at the message's deadline,
//! whatever its pace, and three of them cannot keep a legitimate `net
//! run` from completing.

use crate::common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use datapath::{ServeOptions, VerbName};

/// A control client on `tcp` sending a byte of a hello that never ends
/// every `every`, until the server answers a line or closes (its text),
/// or `give_up` passes.
fn trickle(mut tcp: TcpStream, every: Duration, give_up: Instant) -> JoinHandle<String> {
    std::thread::spawn(move || {
        tcp.set_read_timeout(Some(every)).unwrap();
        let junk = b"{\"msg\":\"hello\",\"version\":1,\"pad\":\"";
        let mut got = Vec::new();
        let mut buf = [0u8; 512];
        for i in 0.. {
            assert!(Instant::now() < give_up, "no answer from the server");
            let _ = tcp.write_all(&junk[i % junk.len()..][..1]);
            match tcp.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                Err(_) => break,
            }
            if got.contains(&b'\n') {
                break;
            }
        }
        String::from_utf8_lossy(&got).into_owned()
    })
}

fn server(control_ms: u64) -> (SocketAddr, JoinHandle<Result<(), String>>) {
    common::serve_with(ServeOptions {
        bind: "127.0.0.1:0".parse().unwrap(),
        port: common::settings(None, 64),
        max_bytes: 1 << 30,
        once: true,
        control_ms,
    })
}

/// `net run` on a thread; its result within `limit`, or a failure.
fn run_within(addr: SocketAddr, limit: Duration) -> Result<datapath::Report, String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let o = common::options(addr, "roce", VerbName::Write, 1 << 20);
        let _ = tx.send(datapath::run(&o));
    });
    rx.recv_timeout(limit)
        .map_err(|_| format!("net run did not end within {limit:?}"))?
}

#[test]
fn a_run_completes_while_three_clients_trickle() {
    let (addr, server) = server(10_000);
    let give_up = Instant::now() + Duration::from_secs(4);
    let tricklers: Vec<_> = (0..3)
        .map(|_| {
            let tcp = TcpStream::connect(addr).unwrap();
            trickle(tcp, Duration::from_millis(20), give_up)
        })
        .collect();
    let report = run_within(addr, Duration::from_secs(4)).unwrap();
    assert_eq!(report.job.bytes, 1 << 20);
    server.join().unwrap().unwrap();
    for t in tricklers {
        let said = t.join().unwrap();
        assert!(said.contains("busy"), "a trickler was told: {said:?}");
    }
}

#[test]
fn a_trickled_hello_is_cut_off_at_the_message_deadline() {
    let (addr, server) = server(300);
    let start = Instant::now();
    let give_up = start + Duration::from_secs(3);
    let tricklers: Vec<_> = (0..3)
        .map(|_| {
            let tcp = TcpStream::connect(addr).unwrap();
            trickle(tcp, Duration::from_millis(20), give_up)
        })
        .collect();
    for t in tricklers {
        let said = t.join().unwrap();
        assert!(
            said.contains("no whole message within 300 ms"),
            "a trickler was told: {said:?}"
        );
    }
    assert!(start.elapsed() >= Duration::from_millis(300));
    // The server goes on: the cut-off clients were not its session.
    run_within(addr, Duration::from_secs(4)).unwrap();
    server.join().unwrap().unwrap();
}
