//! Two daemons on loopback (127.0.0.1 and 127.0.0.2, one port), driven
//! by the example program's processes and by the client library:
//! checksum-verified data from 100 processes of 10 connections each; a
//! killed client cleaned up and its peer told; garbage on the control
//! socket ending only that session; one session unable to use another's
//! fds; a restarted daemon reported clearly; memory bounded under
//! connection churn.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::{Duration, Instant};

use visor::{Event, Flags, Visor};

static NEXT: AtomicU16 = AtomicU16::new(0);

/// A daemon process, killed when dropped.
struct Daemon {
    child: Child,
    control: PathBuf,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.control);
    }
}

fn daemon(ip: &str, port: u16, tag: &str) -> Daemon {
    let control =
        std::env::temp_dir().join(format!("visor-{}-{port}-{tag}.sock", std::process::id()));
    let _ = std::fs::remove_file(&control);
    let child = Command::new(env!("CARGO_BIN_EXE_rdmavisord"))
        .args([
            "--control",
            control.to_str().unwrap(),
            "--bind",
            &format!("{ip}:{port}"),
        ])
        .args([
            "--slots",
            "2048",
            "--recv-per-qp",
            "256",
            "--rate-gbps",
            "5",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !control.exists() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the daemon did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    Daemon { child, control }
}

/// A pair of daemons on a port of their own.
fn pair() -> (Daemon, Daemon, u16) {
    let port =
        48000 + (std::process::id() % 1000) as u16 * 8 + NEXT.fetch_add(1, Ordering::Relaxed);
    (
        daemon("127.0.0.1", port, "a"),
        daemon("127.0.0.2", port, "b"),
        port,
    )
}

fn echo(control: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_visor-echo"));
    c.args(["--daemon", control.to_str().unwrap()]);
    c
}

#[test]
fn a_hundred_processes_of_ten_connections_move_verified_data() {
    let (a, b, _) = pair();
    let server = echo(&b.control)
        .args(["serve", "--port", "81", "--expect", "1000"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let clients: Vec<Child> = (0..100)
        .map(|i| {
            echo(&a.control)
                .args(["client", "--to", "127.0.0.2:81", "--connections", "10"])
                .args([
                    "--messages",
                    "4",
                    "--bytes",
                    "4096",
                    "--seed",
                    &i.to_string(),
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in clients {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(String::from_utf8_lossy(&o.stdout).contains("verified"));
    }
    let o = server.wait_with_output().unwrap();
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("1000 connections, 4000 messages"), "{out}");
}

#[test]
fn a_killed_client_is_cleaned_up_and_its_peer_sees_the_close() {
    let (a, b, _) = pair();
    let mut server = Visor::open(&b.control).unwrap();
    let l = server.listen(90).unwrap();
    let mut client = echo(&a.control)
        .args([
            "client",
            "--to",
            "127.0.0.2:90",
            "--connections",
            "3",
            "--messages",
            "100000000",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Echo until the client has sent on every connection, then kill it.
    let mut fds = Vec::new();
    let mut messages = 0;
    while messages < 30 {
        match server.recv_any().unwrap() {
            Event::Incoming { listener, fd } if listener == l => fds.push(fd),
            Event::Message { fd, data } => {
                server.send(fd, &data, Flags::Auto).unwrap();
                messages += 1;
            }
            e => panic!("unexpected {e:?}"),
        }
    }
    client.kill().unwrap();
    client.wait().unwrap();
    let t = Instant::now();
    let mut closed = 0;
    while closed < 3 {
        assert!(t.elapsed() < Duration::from_secs(10));
        match server.recv_any().unwrap() {
            Event::Closed { fd } => {
                assert!(fds.contains(&fd));
                closed += 1;
            }
            Event::Message { .. } => {}
            e => panic!("unexpected {e:?}"),
        }
    }
    // The daemon that lost its client still serves.
    let mut again = Visor::open(&a.control).unwrap();
    let fd = again.connect("127.0.0.2:90").unwrap();
    again.send(fd, b"after", Flags::Auto).unwrap();
    loop {
        match server.recv_any().unwrap() {
            Event::Message { data, .. } => {
                assert_eq!(data, b"after");
                break;
            }
            Event::Incoming { .. } => {}
            e => panic!("unexpected {e:?}"),
        }
    }
}

#[test]
fn garbage_on_the_control_socket_ends_only_that_session() {
    let (a, b, _) = pair();
    let mut rng = engine::Rng::new(11, engine::StreamKind::Host, 0);
    for _ in 0..100 {
        let mut s = std::os::unix::net::UnixStream::connect(&a.control).unwrap();
        let mut junk = Vec::new();
        for _ in 0..100 {
            // 10,000 random messages in all: random bytes, and frames
            // with a plausible length and a random op and body.
            let n = rng.below(64) as usize;
            if rng.bernoulli(0.5) {
                junk.extend_from_slice(&(n as u32 + 1).to_le_bytes());
                junk.push(rng.below(8) as u8);
            }
            junk.extend((0..n).map(|_| rng.next_u64() as u8));
        }
        let _ = s.write_all(&junk);
    }
    std::thread::sleep(Duration::from_millis(200));
    let mut server = Visor::open(&b.control).unwrap();
    server.listen(91).unwrap();
    let mut v = Visor::open(&a.control).unwrap();
    let fd = v.connect("127.0.0.2:91").unwrap();
    assert_eq!(v.send(fd, b"still serving", Flags::Auto).unwrap(), 13);
}

#[test]
fn one_session_cannot_use_another_sessions_connection() {
    let (a, b, _) = pair();
    let mut server = Visor::open(&b.control).unwrap();
    server.listen(92).unwrap();
    let mut first = Visor::open(&a.control).unwrap();
    let fd = first.connect("127.0.0.2:92").unwrap();
    let mut second = Visor::open(&a.control).unwrap();
    // Pipelined: the refusal comes back from the flush.
    second.send(fd, b"stolen", Flags::Auto).unwrap();
    let e = second.flush().unwrap_err();
    assert!(
        e.0.contains(&format!("no connection fd {fd} in this session")),
        "{e}"
    );
    assert!(second.close(fd).is_err());
    assert_eq!(first.send(fd, b"mine", Flags::Auto).unwrap(), 4);
    first.flush().unwrap();
}

#[test]
fn a_client_of_a_restarted_daemon_gets_a_clear_error() {
    let (a, b, port) = pair();
    let mut v = Visor::open(&a.control).unwrap();
    v.listen(93).unwrap();
    drop(a);
    let e = v.listen(94).unwrap_err();
    assert!(e.0.contains("stopped or restarted"), "{e}");
    let e = Visor::open(Path::new("/nonexistent/visor.sock"))
        .err()
        .unwrap();
    assert!(e.0.contains("start one with rdmavisord"), "{e}");
    drop(b);
    let _ = port;
}

/// Resident memory of a process, kB.
fn rss_kb(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap()
}

#[test]
fn memory_stays_bounded_under_connection_churn() {
    let (a, b, _) = pair();
    let mut server = Visor::open(&b.control).unwrap();
    server.listen(95).unwrap();
    let mut v = Visor::open(&a.control).unwrap();
    let churn = |v: &mut Visor, n: u32| {
        for _ in 0..n {
            let fd = v.connect("127.0.0.2:95").unwrap();
            v.send(fd, &[7u8; 1000], Flags::Auto).unwrap();
            v.close(fd).unwrap();
        }
    };
    churn(&mut v, 500);
    let before = rss_kb(a.child.id());
    churn(&mut v, 3000);
    let after = rss_kb(a.child.id());
    assert!(
        after < before + 2048,
        "RSS grew from {before} kB to {after} kB over 3000 connections"
    );
}
