//! The control port under slow and silent clients: a client trickling
//! its hello a byte at a time is cut off at the message's deadline,
//! whatever its pace, and three of them cannot keep a legitimate `net
//! run` from completing. A session's idle limit counts only its own
//! client's packets. Initial PSNs differ every session unless the job
//! asks for seeded ones.

use crate::common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use datapath::session::{Control, Msg, VERSION};
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
    server_idle(control_ms, 60_000)
}

fn server_idle(control_ms: u64, idle_ms: u64) -> (SocketAddr, JoinHandle<Result<(), String>>) {
    common::serve_with(ServeOptions {
        bind: "127.0.0.1:0".parse().unwrap(),
        port: common::settings(None, 64),
        max_bytes: 1 << 30,
        once: true,
        control_ms,
        idle_ms,
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
    // Nor is a connection closed before a whole line (a port scan).
    drop(TcpStream::connect(addr).unwrap());
    // The server goes on: the cut-off clients were not its session.
    run_within(addr, Duration::from_secs(4)).unwrap();
    server.join().unwrap().unwrap();
}

/// A client that says hello and then sends nothing is cut off at the
/// idle limit though a stranger sends a junk datagram to the server's
/// port every 10 ms.
#[test]
fn junk_from_strangers_does_not_keep_an_idle_session_alive() {
    let (addr, server) = server_idle(10_000, 300);
    let job = common::options(addr, "roce", VerbName::Write, 1 << 20).job;
    let mut ctl = Control::new(TcpStream::connect(addr).unwrap()).unwrap();
    ctl.send(&Msg::Hello {
        version: VERSION,
        psns: vec![0; job.qps as usize],
        job,
        udp_port: 9,
    })
    .unwrap();
    let ready: Msg = ctl.recv(Duration::from_secs(3)).unwrap();
    assert!(matches!(ready, Msg::Ready { .. }), "{ready:?}");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let junk = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = s.send_to(b"junk", addr);
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    };
    let start = Instant::now();
    let said: Result<Msg, String> = ctl.recv(Duration::from_secs(3));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    junk.join().unwrap();
    match said {
        Ok(Msg::Error { message }) => assert!(message.contains("no valid packet"), "{message}"),
        other => panic!("expected the idle limit's error, got {other:?}"),
    }
    assert!(start.elapsed() >= Duration::from_millis(250));
    let e = server.join().unwrap().unwrap_err();
    assert!(e.contains("no valid packet for 300 ms"), "{e}");
}

/// The server's initial PSNs in its ready answer to a hello of `job`.
fn server_psns(job: &datapath::Job) -> Vec<u32> {
    let (addr, server) = server_idle(10_000, 100);
    let mut ctl = Control::new(TcpStream::connect(addr).unwrap()).unwrap();
    ctl.send(&Msg::Hello {
        version: VERSION,
        psns: vec![0; job.qps as usize],
        job: job.clone(),
        udp_port: 9,
    })
    .unwrap();
    let Msg::Ready { psns, .. } = ctl.recv(Duration::from_secs(3)).unwrap() else {
        panic!("no ready");
    };
    drop(ctl);
    let _ = server.join().unwrap();
    psns
}

#[test]
fn unseeded_sessions_draw_their_own_initial_psns() {
    let mut job = common::options(
        "127.0.0.1:9".parse().unwrap(),
        "irn",
        VerbName::Write,
        1 << 20,
    )
    .job;
    job.seeded_psns = false;
    let (a, b) = (server_psns(&job), server_psns(&job));
    assert_ne!(a, b, "the server's PSNs of two unseeded sessions");
    assert_ne!(job.initial_psns(0).unwrap(), job.initial_psns(0).unwrap());
    // Seeded: the same PSNs every time, as before (seed 7 here).
    job.seeded_psns = true;
    let (a, b) = (server_psns(&job), server_psns(&job));
    assert_eq!(a, b);
    assert_eq!(a, datapath::session::psns(7 ^ 0x5e57e7, job.qps));
    assert_eq!(
        job.initial_psns(0).unwrap(),
        datapath::session::psns(7, job.qps)
    );
}
