//! Two daemons on loopback (127.0.0.1 and 127.0.0.2, one port), driven
//! by the example program's processes and by the client library:
//! checksum-verified data from 100 processes of 10 connections each; a
//! killed client cleaned up and its peer told; garbage on the control
//! socket, and in the shared-memory rings, ending only that session; one
//! session unable to use another's fds; a restarted daemon reported
//! clearly; memory bounded under connection churn; connections within
//! one host; a client that does not read pausing its senders. A
//! hand-made link (a TCP hello and an endpoint of the test's own,
//! `FakeLink`) plays a broken or hostile daemon: bad notices end its
//! link, a link that does not read is ended without stalling the daemon,
//! and its one-sided verbs reach only the windows opened to it.

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use visor::process::DaemonProcess;
use visor::{Event, Flags, Visor};

/// The tests' daemons' options.
pub(crate) const OPTIONS: [&str; 6] = [
    "--slots",
    "2048",
    "--recv-per-qp",
    "256",
    "--rate-gbps",
    "5",
];

fn daemon(ip: &str, port: u16, tag: &str, options: &[&str]) -> DaemonProcess {
    let control =
        std::env::temp_dir().join(format!("visor-{}-{port}-{tag}.sock", std::process::id()));
    let bin = Path::new(env!("CARGO_BIN_EXE_rdmavisord"));
    DaemonProcess::start(bin, control, &format!("{ip}:{port}"), options).unwrap()
}

/// A pair of daemons on a port of their own.
fn pair() -> (DaemonProcess, DaemonProcess, u16) {
    pair_with(&OPTIONS)
}

/// [`pair`], the daemons given these options.
pub(crate) fn pair_with(more: &[&str]) -> (DaemonProcess, DaemonProcess, u16) {
    let port = free_port_on_both();
    (
        daemon("127.0.0.1", port, "a", more),
        daemon("127.0.0.2", port, "b", more),
        port,
    )
}

/// A UDP port free on both 127.0.0.1 and 127.0.0.2 just now, as the
/// kernel hands out ephemeral ports: a port computed from the process id
/// clashed with other processes' sockets ("cannot bind the link port").
fn free_port_on_both() -> u16 {
    for _ in 0..100 {
        let first = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = first.local_addr().unwrap().port();
        if std::net::UdpSocket::bind(("127.0.0.2", port)).is_ok() {
            return port;
        }
    }
    panic!("no UDP port free on both 127.0.0.1 and 127.0.0.2 in 100 tries");
}

/// Connects `v` to `to`, trying again for up to `secs` while the refusal
/// says `transient` (a listener not up yet, a link still closing); any
/// other error fails the test.
fn connect_while(v: &mut Visor, to: &str, transient: &str, secs: u64) -> u32 {
    let t = Instant::now();
    loop {
        match v.connect(to) {
            Ok(fd) => return fd,
            Err(e) if e.0.contains(transient) && t.elapsed() < Duration::from_secs(secs) => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("{to}: {e}"),
        }
    }
}

fn echo(control: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_visor-echo"));
    c.args(["--daemon", control.to_str().unwrap()]);
    c
}

#[test]
fn a_hundred_processes_of_ten_connections_move_verified_data() {
    let (a, b, _) = pair();
    let mut server = echo(&b.control)
        .args(["serve", "--port", "81", "--expect", "1000"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Clients start once the server listens (a fixed sleep was too short
    // on a loaded machine: "nothing listens on port 81").
    let mut said = std::io::BufReader::new(server.stdout.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut said, &mut first).unwrap();
    assert!(first.contains("listening on port 81"), "{first}");
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
    let mut out = String::new();
    said.read_to_string(&mut out).unwrap();
    assert!(server.wait().unwrap().success());
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

/// 100 random messages: random bytes, and frames with a plausible length
/// and a random op and body.
fn junk(rng: &mut engine::Rng) -> Vec<u8> {
    let mut junk = Vec::new();
    for _ in 0..100 {
        let n = rng.below(64) as usize;
        if rng.bernoulli(0.5) {
            junk.extend_from_slice(&(n as u32 + 1).to_le_bytes());
            junk.push(rng.below(8) as u8);
        }
        junk.extend((0..n).map(|_| rng.next_u64() as u8));
    }
    junk
}

#[test]
fn garbage_on_the_control_socket_ends_only_that_session() {
    let (a, b, _) = pair();
    let mut rng = engine::Rng::new(11, engine::StreamKind::Host, 0);
    for k in 0..100 {
        let mut s = std::os::unix::net::UnixStream::connect(&a.control).unwrap();
        // 10,000 random messages in all.
        let _ = s.write_all(&junk(&mut rng));
        // The daemon has dealt with the junk once it closes the session:
        // at an error in it, or at its end (the junk is fixed, so no
        // request in it leaves the session waiting on anything).
        let _ = s.shutdown(std::net::Shutdown::Write);
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut last = Vec::new();
        let ended = s.read_to_end(&mut last);
        assert!(
            ended.is_ok()
                || ended
                    .as_ref()
                    .is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset),
            "garbage session {k} not ended within 10 s: {ended:?}"
        );
    }
    let mut server = Visor::open(&b.control).unwrap();
    server.listen(91).unwrap();
    let mut v = Visor::open(&a.control).unwrap();
    let fd = v.connect("127.0.0.2:91").unwrap();
    assert_eq!(v.send(fd, b"still serving", Flags::Auto).unwrap(), 13);
}

#[test]
fn garbage_in_the_shared_rings_ends_only_that_session() {
    let (a, b, _) = pair();
    let mut rng = engine::Rng::new(12, engine::StreamKind::Host, 0);
    let mut scribbled = Vec::new();
    for k in 0..40 {
        let s = std::os::unix::net::UnixStream::connect(&a.control).unwrap();
        let mut rings = visor::ring::Rings::attach(s.as_raw_fd()).unwrap();
        if k % 2 == 0 {
            // Garbage through the ring as the protocol has it.
            let _ = rings.push(&junk(&mut rng));
        } else {
            // Random bytes over the whole area, indices included.
            let (base, len) = rings.area();
            for at in 0..len {
                // SAFETY: within this process's mapping of the area; the
                // daemon reads its own mapping only through copies and
                // atomics, which is what this test checks.
                unsafe { base.add(at).write_volatile(rng.next_u64() as u8) };
            }
        }
        scribbled.push((s, rings, k));
    }
    // A session whose indices were scribbled on is ended with the reason.
    for (mut s, _, k) in scribbled.drain(..) {
        if k % 2 == 1 {
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let mut last = Vec::new();
            let _ = s.read_to_end(&mut last);
            let text = String::from_utf8_lossy(&last);
            assert!(text.contains("session closed: the ring's"), "{text}");
        }
    }
    let mut server = Visor::open(&b.control).unwrap();
    let l = server.listen(95).unwrap();
    let mut v = Visor::open(&a.control).unwrap();
    let fd = v.connect("127.0.0.2:95").unwrap();
    v.send(fd, b"still serving", Flags::Auto).unwrap();
    let sfd = server.accept(l).unwrap();
    let mut buf = [0u8; 64];
    let n = server.recv(sfd, &mut buf).unwrap();
    assert_eq!(&buf[..n], b"still serving");
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

/// Run by `a_second_users_process_cannot_reach_the_first_users_connection`
/// as another user (a no-op otherwise): opens a session on
/// `VISOR_OTHER_SOCK` and tries the first user's fd `VISOR_OTHER_FD`.
#[test]
fn as_another_user() {
    let (Ok(sock), Ok(fd)) = (
        std::env::var("VISOR_OTHER_SOCK"),
        std::env::var("VISOR_OTHER_FD"),
    ) else {
        return;
    };
    let fd: u32 = fd.parse().unwrap();
    let mut v = Visor::open(Path::new(&sock)).unwrap();
    v.send(fd, b"stolen", Flags::Auto).unwrap();
    let e = v.flush().unwrap_err();
    assert!(e.0.contains(&format!("no connection fd {fd}")), "{e}");
    assert!(v.close(fd).is_err());
    // SAFETY: getuid has no preconditions.
    println!("isolated as uid {}", unsafe { libc::getuid() });
}

/// The issue's test, literally: a process of another user (uid 65534,
/// run as root; skipped otherwise) opens a session on the same daemon
/// (its socket is open to every user, `--socket-mode 666`) and cannot
/// send on or close the first user's connection, which still works.
#[test]
fn a_second_users_process_cannot_reach_the_first_users_connection() {
    use std::os::unix::process::CommandExt;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: running a process as another user needs root");
        return;
    }
    // The other user runs this very binary: every folder on its path
    // must let others through (a clone under a private home does not).
    let exe = std::env::current_exe().unwrap();
    let others_may = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o001 != 0)
    };
    if !exe.ancestors().all(others_may) {
        eprintln!("skipped: other users cannot run {}", exe.display());
        return;
    }
    let (a, b, _) = pair();
    let mut server = Visor::open(&b.control).unwrap();
    server.listen(95).unwrap();
    let mut first = Visor::open(&a.control).unwrap();
    let fd = first.connect("127.0.0.2:95").unwrap();
    // The test's name as the harness knows it: its module path without
    // the test executable's crate name (`visor_daemon::as_another_user`).
    let name = module_path!().split_once("::").unwrap().1.to_owned() + "::as_another_user";
    let out = Command::new(&exe)
        .args(["--exact", &name, "--nocapture"])
        .env("VISOR_OTHER_SOCK", &a.control)
        .env("VISOR_OTHER_FD", fd.to_string())
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("isolated as uid 65534"),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    first.send(fd, b"mine", Flags::Auto).unwrap();
    first.flush().unwrap();
    loop {
        match server.recv_any().unwrap() {
            Event::Message { data, .. } => break assert_eq!(data, b"mine"),
            Event::Incoming { .. } => {}
            e => panic!("unexpected {e:?}"),
        }
    }
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
pub(crate) fn rss_kb(pid: u32) -> u64 {
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
    let before = rss_kb(a.pid());
    churn(&mut v, 3000);
    let after = rss_kb(a.pid());
    assert!(
        after < before + 2048,
        "RSS grew from {before} kB to {after} kB over 3000 connections"
    );
}

/// The baselines and the verbs: every sharing (the link's QPs, a
/// session's, one per connection) with every FLAGS (send, write, read,
/// auto: 20000 bytes go by WRITE) moves checksum-verified data, the echo
/// server answering with the same verb, all at once through one pair.
#[test]
fn every_sharing_and_verb_moves_verified_data() {
    let (a, b, _) = pair();
    let verbs = ["send", "write", "read", "auto"];
    let servers: Vec<Child> = verbs
        .iter()
        .enumerate()
        .map(|(k, v)| {
            echo(&b.control)
                .args(["--verb", v, "serve", "--port", &(100 + k).to_string()])
                .args(["--expect", "10"])
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // Each server listens before its clients start: a probe connection
    // (the tenth each server counts) is accepted.
    let mut probe = Visor::open(&a.control).unwrap();
    for k in 0..verbs.len() {
        let to = format!("127.0.0.2:{}", 100 + k);
        let fd = connect_while(&mut probe, &to, "nothing listens", 10);
        probe.close(fd).unwrap();
    }
    let mut clients = Vec::new();
    for (k, v) in verbs.iter().enumerate() {
        for s in ["peer", "session", "connection"] {
            let to = format!("127.0.0.2:{}", 100 + k);
            let c = echo(&a.control)
                .args(["--verb", v, "client", "--to", &to, "--sharing", s])
                .args(["--connections", "3", "--messages", "10", "--bytes", "20000"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            clients.push((format!("{v} {s}"), c));
        }
    }
    for (what, c) in clients {
        let o = c.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{what}: {err}");
        assert!(String::from_utf8_lossy(&o.stdout).contains("verified"));
    }
    for s in servers {
        let o = s.wait_with_output().unwrap();
        assert!(o.status.success());
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("10 connections, 90 messages"), "{out}");
    }
}

/// `rdmalab visor bench` for each mode prints its one line, with exactly
/// the documented keys, numbers for values, and messages delivered.
#[test]
fn the_bench_line_parses_for_every_mode() {
    let runs: [&[&str]; 3] = [
        &["--mode", "naive", "--connections", "3"],
        &[
            "--mode",
            "locked",
            "--q",
            "3",
            "--connections",
            "6",
            "--verb",
            "write",
        ],
        &["--mode", "shared", "--connections", "2", "--verb", "read"],
    ];
    for args in runs {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rdmalab"))
            .args(["visor", "bench", "--seconds", "0.3", "--msg-bytes", "8192"])
            .args(args)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let line = text.trim();
        let fields: Vec<(&str, &str)> = line
            .split(' ')
            .skip(1)
            .map(|f| f.split_once('=').unwrap())
            .collect();
        let keys: Vec<&str> = fields.iter().map(|f| f.0).collect();
        assert!(line.starts_with("visor "), "{line}");
        let mut want = vec![
            "mode",
            "connections",
            "msg_bytes",
            "goodput_gbps",
            "msgs_per_s",
            "daemon_rss_mb",
            "daemon_cpu_pct",
        ];
        if args[1] == "locked" {
            want.push("lock_idle_pct");
        }
        assert_eq!(keys, want);
        assert_eq!(fields[0].1, args[1]);
        assert_eq!(
            fields[1].1,
            args[args.iter().position(|a| *a == "--connections").unwrap() + 1]
        );
        for (k, v) in &fields[2..] {
            assert!(v.parse::<f64>().is_ok(), "{k}={v}");
        }
        assert!(fields[4].1.parse::<f64>().unwrap() > 0.0, "{line}");
    }
}

/// `visor bench --peer`: against daemons and a sink already running, it
/// counts what the sink received (asked before and after), so a second
/// bench counts its own messages, not the first's too.
#[test]
fn the_bench_with_a_peer_counts_what_the_sink_received() {
    let (a, b, _) = pair();
    let rdmalab = env!("CARGO_BIN_EXE_rdmalab");
    let mut sink = Command::new(rdmalab)
        .args(["visor", "sink", "--port", "9", "--daemon"])
        .arg(&b.control)
        .spawn()
        .unwrap();
    let bench = |seconds: &str| {
        let t = Instant::now();
        loop {
            let out = Command::new(rdmalab)
                .args([
                    "visor",
                    "bench",
                    "--peer",
                    "127.0.0.2:9",
                    "--seconds",
                    seconds,
                ])
                .args(["--msg-bytes", "1000", "--connections", "4", "--daemon"])
                .arg(&a.control)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            // The sink may not listen yet.
            if !out.status.success() && err.contains("nothing listens") {
                assert!(t.elapsed() < Duration::from_secs(10), "{err}");
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
            assert!(out.status.success(), "{err}");
            let line = String::from_utf8_lossy(&out.stdout).trim().to_string();
            let field = |k: &str| -> f64 {
                let f = line.split(' ').find_map(|f| f.strip_prefix(k)).unwrap();
                f.trim_start_matches('=').parse().unwrap()
            };
            return (field("msgs_per_s"), field("goodput_gbps"));
        }
    };
    let (long, _) = bench("1.0");
    let (short, gbps) = bench("0.15");
    let _ = sink.kill();
    let _ = sink.wait();
    assert!(short > 0.0 && long > 0.0, "{short} {long}");
    // Counting the first bench's messages too would make the second's
    // rate about 7.7 times the first's. Only that direction is checked: a
    // short bench on a loaded machine runs slower, not faster (166719
    // against 53922 messages/s was seen with four builds beside it).
    assert!(short < 3.0 * long, "{long} {short}");
    assert!((gbps - short * 8000.0 / 1e9).abs() < 1e-3 + 0.01 * gbps);
}

/// A hand-made link to the daemon on 127.0.0.2:`port`, as a broken or
/// hostile daemon would open one: the hello over TCP, and an endpoint of
/// its own with one QP connected to the daemon's (IRN, the daemon's
/// default). `hold` sees the link ended when the daemon closes it.
struct FakeLink {
    ctl: std::io::BufReader<std::net::TcpStream>,
    ep: datapath::endpoint::Endpoint,
    qp: transport::QpId,
    /// Notice SENDs received.
    batches: usize,
}

const FAKE_BASE: u64 = 0x7000_0000_0000;

impl FakeLink {
    fn open(port: u16) -> FakeLink {
        use datapath::endpoint::{Endpoint, Peer, PortOptions};
        use std::io::BufRead;
        use transport::{Engine, InitialPsns, IrnConfig, Nic, NicConfig, QpConfig};
        let sock = datapath::socket::Socket::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let local = sock.local;
        let us = engine::time::US;
        let nic = Nic::new(NicConfig {
            mtu: 4096,
            rto: 4000 * us,
            line_rate_bps: 5_000_000_000,
            engine: Engine::Irn(IrnConfig {
                rto_high: 4000 * us,
                rto_low: 1250 * us,
                ..IrnConfig::default()
            }),
            ..NicConfig::default()
        })
        .unwrap();
        let mem = datapath::region::Region::zeroed(FAKE_BASE, 1 << 20);
        let opts = PortOptions {
            rate_bps: 5_000_000_000,
            gso: false,
            impair: None,
            pcap: None,
            ecn_backlog: 0,
        };
        let mut ep = Endpoint::new(nic, mem, vec![sock], *local.ip(), opts).unwrap();
        // The last link from this address may still be closing there.
        let t = Instant::now();
        let (ctl, ready) = loop {
            let tcp = std::net::TcpStream::connect(("127.0.0.2", port)).unwrap();
            tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut ctl = std::io::BufReader::new(tcp);
            writeln!(
                ctl.get_mut(),
                r#"{{"msg":"hello","version":1,"udp_port":{},"qpns":[0],"psns":[0]}}"#,
                local.port()
            )
            .unwrap();
            let mut got = String::new();
            ctl.read_line(&mut got).unwrap();
            let ready: serde_json::Value = serde_json::from_str(&got).unwrap();
            if ready["msg"] == "ready" {
                break (ctl, ready);
            }
            assert!(got.contains("a link from this host exists"), "{got}");
            assert!(t.elapsed() < Duration::from_secs(5), "{got}");
            std::thread::sleep(Duration::from_millis(20));
        };
        let host = ep.add_peer(Peer {
            addr: std::net::SocketAddrV4::new(
                [127, 0, 0, 2].into(),
                ready["udp_port"].as_u64().unwrap() as u16,
            ),
            ports: 1,
        });
        let cfg = QpConfig {
            peer_host: host,
            peer_qp: ready["qpns"][0].as_u64().unwrap() as u32,
            sport: local.port(),
        };
        let psns = InitialPsns {
            sq_psn: 0,
            rq_psn: ready["psns"][0].as_u64().unwrap() as u32,
        };
        let qp = ep.nic.create_qp_with_psns(cfg, psns).unwrap();
        // Room for the daemon's own notices (it lends buffers at once).
        for k in 0..8u64 {
            ep.nic
                .post_recv_at(qp, k, FAKE_BASE + k * 65536, 65536)
                .unwrap();
        }
        FakeLink {
            ctl,
            ep,
            qp,
            batches: 0,
        }
    }

    /// Sends `bytes` as one SEND with immediate `imm`.
    fn send(&mut self, imm: u32, bytes: &[u8]) {
        use transport::Memory;
        let at = FAKE_BASE + (1 << 19);
        self.ep.mem.write(at, bytes);
        let wr = transport::WorkRequest {
            wr_id: 99,
            verb: transport::Verb::Send,
            len: bytes.len() as u64,
            local_addr: at,
            imm: imm.into(),
            ..Default::default()
        };
        let now = self.ep.now();
        self.ep.nic.post_send(now, self.qp, wr).unwrap();
        self.ep.after_input();
    }

    /// Drives the endpoint for `d`: the notices the daemon sent (their
    /// receives re-posted), and the work requests completed here.
    fn drive(&mut self, d: Duration) -> (Vec<visor::notice::Notice>, Vec<u64>) {
        let (mut notices, mut done) = (Vec::new(), Vec::new());
        let t = Instant::now();
        while t.elapsed() < d {
            self.ep.turn(Duration::from_millis(1)).unwrap();
            for c in std::mem::take(&mut self.ep.completions) {
                if c.side == transport::CompletionSide::Requester {
                    done.push(c.wr_id);
                    continue;
                }
                let at = FAKE_BASE + c.wr_id * 65536;
                let start = (at - FAKE_BASE) as usize;
                let bytes = &self.ep.mem.bytes()[start..start + c.len as usize];
                assert_eq!(c.imm, u64::from(visor::notice::IMM));
                self.batches += 1;
                visor::notice::decode_batch(bytes, &mut notices).unwrap();
                self.ep
                    .nic
                    .post_recv_at(self.qp, c.wr_id, at, 65536)
                    .unwrap();
            }
        }
        (notices, done)
    }

    /// Posts a one-sided `verb` of `len` bytes at the daemon's `remote`.
    fn one_sided(&mut self, wr_id: u64, verb: transport::Verb, remote: u64, len: u64) {
        let wr = transport::WorkRequest {
            wr_id,
            verb,
            len,
            local_addr: FAKE_BASE + (1 << 19),
            remote_addr: remote,
            ..Default::default()
        };
        let now = self.ep.now();
        self.ep.nic.post_send(now, self.qp, wr).unwrap();
        self.ep.after_input();
    }

    /// Drives the endpoint until the daemon closes the control connection
    /// (true) or `limit` passes (false).
    fn ended_within(&mut self, limit: Duration) -> bool {
        use std::io::BufRead;
        self.ctl.get_ref().set_nonblocking(true).unwrap();
        let t = Instant::now();
        while t.elapsed() < limit {
            self.ep.turn(Duration::from_millis(1)).unwrap();
            let mut l = String::new();
            match self.ctl.read_line(&mut l) {
                Ok(0) => return true,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => panic!("{e}"),
            }
        }
        false
    }
}

/// A remote daemon whose notices name a buffer it was not lent, ask for
/// a READ longer than a slot, lend more than a link may borrow, or do
/// not decode, loses its link; one that offers a bad QP has its
/// connection refused; the daemon keeps serving. A well-formed notice
/// keeps the link.
#[test]
fn a_hostile_link_is_ended_and_the_daemon_keeps_serving() {
    use std::io::BufRead;
    use visor::notice::{encode_batch, Notice, IMM};
    let (a, b, port) = pair();
    let mut server = Visor::open(&b.control).unwrap();
    server.listen(95).unwrap();
    let batch = |ns: &[Notice]| {
        let mut out = Vec::new();
        assert_eq!(encode_batch(ns, 1 << 16, &mut out), ns.len());
        out
    };
    let many = vec![Notice::Lend { addr: 1 }; 300];
    let bad: [(&str, Vec<u8>); 6] = [
        (
            "written, not lent",
            batch(&[Notice::Written {
                to: 0,
                addr: 1,
                len: 5,
            }]),
        ),
        (
            "a read over a slot",
            batch(&[Notice::ReadFrom {
                to: 0,
                addr: 0,
                len: 4_000_000_000,
            }]),
        ),
        ("read done, no slot", batch(&[Notice::ReadDone { addr: 3 }])),
        ("more than a link may borrow", batch(&many)),
        ("an unknown kind", vec![9; 17]),
        (
            "cut short",
            batch(&[Notice::ReadDone { addr: 3 }])[..5].to_vec(),
        ),
    ];
    let mut fake = FakeLink::open(port);
    fake.send(IMM, &batch(&[Notice::Lend { addr: 1 }]));
    assert!(
        !fake.ended_within(Duration::from_millis(300)),
        "a good notice ended the link"
    );
    drop(fake);
    for (what, bytes) in bad {
        let mut fake = FakeLink::open(port);
        fake.send(IMM, &bytes);
        assert!(
            fake.ended_within(Duration::from_secs(5)),
            "{what}: the link stayed"
        );
    }
    // A bad offer is refused instead (the connection, not the link, is
    // wrong).
    let mut fake = FakeLink::open(port);
    writeln!(
        fake.ctl.get_mut(),
        r#"{{"msg":"connect","from":1,"port":95,"qp":{{"qpn":4294967295,"sq_psn":0,"rq_psn":0}}}}"#
    )
    .unwrap();
    let mut rest = String::new();
    fake.ctl.read_line(&mut rest).unwrap();
    assert!(rest.contains("over 24 bits"), "{rest}");
    drop(fake);
    // The hand-written links came from 127.0.0.1, daemon a's address:
    // the last one may still be closing at b when a opens its own.
    let mut client = Visor::open(&a.control).unwrap();
    let fd = connect_while(
        &mut client,
        "127.0.0.2:95",
        "a link from this host exists",
        5,
    );
    client.send(fd, b"still here", Flags::Write).unwrap();
    match server.recv_any().unwrap() {
        Event::Incoming { .. } => {}
        e => panic!("{e:?}"),
    }
    match server.recv_any().unwrap() {
        Event::Message { data, .. } => assert_eq!(data, b"still here"),
        e => panic!("{e:?}"),
    }
}

/// A close that crosses the other end's, answered by a connect: the
/// other daemon's close of the old connection names a vQPN this daemon
/// has already freed, and which its next connection may take. The
/// hand-made link plays the other daemon: it accepts a client's
/// connection, and after the client closes it, closes its end too (a
/// `Close` notice naming the old vQPN) while the client connects again.
/// Arriving before the new connect's answer, the stale close must not
/// take the new connection (the daemon would drop it, and the connect
/// would never be answered: the client hung); arriving after, it must
/// not close it. Either way the new connection then carries a message.
#[test]
fn a_close_crossing_the_peers_does_not_reach_the_next_connection() {
    use std::io::BufRead;
    use std::sync::mpsc;
    use visor::notice::{encode_batch, Notice, IMM};
    enum Order {
        Connect,
        Close(u32),
        Read,
    }
    let (_a, b, port) = pair();
    let mut fake = FakeLink::open(port);
    let mut client = Visor::open(&b.control).unwrap();
    let (orders, order) = mpsc::channel();
    let (said, hear) = mpsc::channel();
    // The client, in a thread of its own (a hung connect must not hang
    // the test): each order's result, said as text.
    std::thread::spawn(move || {
        for o in order {
            let r = match o {
                Order::Connect => client.connect("127.0.0.1:90").map(|fd| fd.to_string()),
                Order::Close(fd) => client.close(fd).map(|()| "closed".into()),
                Order::Read => client.recv_any().map(|e| match e {
                    Event::Message { fd, data } => {
                        format!("fd {fd}: {}", String::from_utf8_lossy(&data))
                    }
                    e => format!("{e:?}"),
                }),
            };
            let _ = said.send(r.unwrap_or_else(|e| e.0));
        }
    });
    let hear = |what: &str| -> String {
        hear.recv_timeout(Duration::from_secs(3))
            .unwrap_or_else(|_| panic!("{what}: no answer within 3 s"))
    };
    // The client's connect, as the fake daemon reads it: the vQPN.
    let connect = |fake: &mut FakeLink| -> u32 {
        orders.send(Order::Connect).unwrap();
        let mut line = String::new();
        fake.ctl.read_line(&mut line).unwrap();
        let m: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(m["msg"], "connect", "{line}");
        m["from"].as_u64().unwrap() as u32
    };
    let accept = |fake: &mut FakeLink, from: u32, to: u32| {
        let line = format!(r#"{{"msg":"accepted","from":{from},"to":{to}}}"#);
        writeln!(fake.ctl.get_mut(), "{line}").unwrap();
    };
    // A SEND from the fake daemon, driven until it is acknowledged.
    let send = |fake: &mut FakeLink, imm: u32, bytes: &[u8]| {
        fake.send(imm, bytes);
        let t = Instant::now();
        while !fake.drive(Duration::from_millis(10)).1.contains(&99) {
            assert!(t.elapsed() < Duration::from_secs(5), "not acknowledged");
        }
    };
    let close = |fake: &mut FakeLink, vqpn: u32| {
        let mut batch = Vec::new();
        encode_batch(&[Notice::Close { vqpn }], 1 << 16, &mut batch);
        send(fake, IMM, &batch);
    };
    let first = connect(&mut fake);
    accept(&mut fake, first, 5);
    let fd = hear("the first connect");
    orders.send(Order::Close(fd.parse().unwrap())).unwrap();
    assert_eq!(hear("the first close"), "closed");
    // The stale close before the next connect's answer.
    let second = connect(&mut fake);
    close(&mut fake, first);
    accept(&mut fake, second, 6);
    let fd = hear("the connect after a crossing close (hung)");
    orders.send(Order::Close(fd.parse().unwrap())).unwrap();
    assert_eq!(hear("the second close"), "closed");
    // The stale close after it.
    let third = connect(&mut fake);
    accept(&mut fake, third, 7);
    let fd = hear("the third connect");
    close(&mut fake, second);
    send(&mut fake, third, b"still open");
    orders.send(Order::Read).unwrap();
    assert_eq!(
        hear("the message on the third connection"),
        format!("fd {fd}: still open"),
        "a stale close took the new connection"
    );
}

/// A linked daemon reaches only the windows opened to it: a WRITE into
/// a buffer it was lent completes; a WRITE into another slot (here the
/// link's own receive buffers, which hold other applications' messages)
/// and a READ of the lent buffer (writable, not readable) are dropped
/// before the NIC, and the daemon logs the count.
#[test]
fn a_linked_daemon_reaches_only_the_windows_opened_to_it() {
    use transport::Verb;
    use visor::notice::Notice;
    let (_a, b, port) = pair();
    let mut fake = FakeLink::open(port);
    let (notices, _) = fake.drive(Duration::from_millis(300));
    let lent: Vec<u64> = notices
        .iter()
        .filter_map(|n| match n {
            Notice::Lend { addr } => Some(*addr),
            _ => None,
        })
        .collect();
    assert_eq!(lent.len(), 64, "{notices:?}");
    assert_eq!(fake.batches, 1, "the 64 loans of one turn in one SEND");
    fake.one_sided(1, Verb::Write, lent[0], 1000);
    let (_, done) = fake.drive(Duration::from_millis(300));
    assert_eq!(done, [1], "the WRITE into a lent buffer");
    // WRITEs with immediate into the lent buffer take the link's posted
    // receives (256 here): each is re-posted, so 300 all complete (before
    // the dropped ones below, which hold later completions back).
    for k in 0..300 {
        fake.one_sided(100 + k, Verb::WriteImm, lent[0], 100);
    }
    let t = Instant::now();
    let mut n = 0;
    while n < 300 && t.elapsed() < Duration::from_secs(10) {
        n += fake.drive(Duration::from_millis(50)).1.len();
    }
    assert_eq!(n, 300, "WRITEs with immediate completed");
    // The daemon's region starts at slot 0, never lent (receives are
    // posted first).
    let slot0 = 0x4000_0000_0000;
    assert!(!lent.contains(&slot0));
    fake.one_sided(2, Verb::Write, slot0, 1000);
    fake.one_sided(3, Verb::Read, lent[1], 1000);
    let (_, done) = fake.drive(Duration::from_millis(500));
    assert!(done.is_empty(), "{done:?}");
    let log = format!("{}.log", b.control.display());
    let t = Instant::now();
    loop {
        let text = std::fs::read_to_string(&log).unwrap();
        if text.contains("outside the windows open to their sender") {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(5), "not logged: {text}");
        fake.drive(Duration::from_millis(50));
    }
}

/// A remote daemon that floods its link with connects and never reads
/// the answers does not stall the daemon: its answers wait in the link's
/// outbox, the daemon keeps serving its clients meanwhile, and the link
/// is ended once the outbox passes its bound (before, the daemon blocked
/// in a write once the TCP buffers filled, for good).
#[test]
fn a_link_that_does_not_read_is_ended_and_does_not_stall_the_daemon() {
    use std::io::Read;
    let (a, b, port) = pair();
    let mut fake = FakeLink::open(port);
    let mut w = fake.ctl.get_ref().try_clone().unwrap();
    w.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    // About 17 MB of refusals: past the kernel's buffers (4 MB of send
    // buffer at most here, a small receive window unread) and the 4 MB
    // outbox.
    let flooded = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let flood_done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (count, done) = (flooded.clone(), flood_done.clone());
    let flood = std::thread::spawn(move || {
        let mut buf = Vec::new();
        for from in 0..250_000 {
            writeln!(buf, r#"{{"msg":"connect","from":{from},"port":9}}"#).unwrap();
            if buf.len() > 64 << 10 {
                if w.write_all(&buf).is_err() {
                    break;
                }
                count.fetch_add(std::mem::take(&mut buf).len(), Ordering::Relaxed);
            }
        }
        let _ = w.write_all(&buf);
        done.store(true, Ordering::Relaxed);
    });
    // Meanwhile the daemon serves a client of its own.
    let control = b.control.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // Once the flood is under way: past the kernel's buffers, so the
        // daemon has answers waiting (or the link already ended).
        let t = Instant::now();
        while flooded.load(Ordering::Relaxed) < 4 << 20 && !flood_done.load(Ordering::Relaxed) {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "the flood stuck before 4 MB"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut v = Visor::open(&control).unwrap();
        let listened = v.listen(96).map_err(|e| e.0);
        // The session (and so its listener) lives on with the receiver.
        let _ = tx.send((listened, v));
    });
    let got = rx.recv_timeout(Duration::from_secs(10));
    assert!(
        matches!(got, Ok((Ok(_), _))),
        "the daemon stalled: {:?}",
        got.as_ref().map(|(l, _)| l)
    );
    flood.join().unwrap();
    // The link was ended: its answers end in EOF (or a reset), not a
    // wait.
    let s = fake.ctl.get_mut();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut sink = vec![0u8; 1 << 16];
    let mut got = 0usize;
    let ended = loop {
        match s.read(&mut sink) {
            Ok(0) => break Ok(got),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break Ok(got),
            Err(e) => break Err(e),
        }
    };
    assert!(ended.is_ok(), "the link stayed: {ended:?}");
    drop(fake);
    // And the host's link can be opened again.
    let mut server = Visor::open(&b.control).unwrap();
    server.listen(97).unwrap();
    let mut client = Visor::open(&a.control).unwrap();
    let fd = connect_while(
        &mut client,
        "127.0.0.2:97",
        "a link from this host exists",
        5,
    );
    client.send(fd, b"after", Flags::Send).unwrap();
    match server.recv_any().unwrap() {
        Event::Incoming { .. } => {}
        e => panic!("{e:?}"),
    }
}

/// A daemon whose port is taken says so and leaves no control socket
/// behind (a client finding one would be refused, not told why); one that
/// starts has its socket listening the moment it appears.
#[test]
fn a_daemon_that_cannot_start_says_why_and_leaves_no_socket() {
    let taken = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let control = std::env::temp_dir().join(format!("visor-{}-taken.sock", std::process::id()));
    let bin = Path::new(env!("CARGO_BIN_EXE_rdmavisord"));
    let e = DaemonProcess::start(bin, control.clone(), &format!("127.0.0.1:{port}"), &[])
        .err()
        .expect("the port is taken");
    assert!(e.contains("in use"), "{e}");
    assert!(!control.exists(), "{}", control.display());
    drop(taken);
    let (a, _b, _) = pair();
    Visor::open(&a.control).expect("listening as soon as it appears");
}

/// Message `k` of a test stream: its index, then bytes that depend on it.
fn message(k: u32, len: usize) -> Vec<u8> {
    let mut m: Vec<u8> = (0..len)
        .map(|i| (i as u32 ^ k.wrapping_mul(2654435761)) as u8)
        .collect();
    m[..4].copy_from_slice(&k.to_le_bytes());
    m
}

/// A client connects to a listener of its own daemon: messages of every
/// FLAGS go both ways, verified and in order; a port nobody listens on
/// is refused; a close reaches the other end, and a send on it fails.
#[test]
fn connections_within_one_host_move_data_and_close() {
    let (a, _b, _) = pair();
    let mut server = Visor::open(&a.control).unwrap();
    let l = server.listen(77).unwrap();
    let mut client = Visor::open(&a.control).unwrap();
    let e = client.connect("127.0.0.1:78").unwrap_err();
    assert!(e.0.contains("nothing listens on port 78"), "{e}");
    let c = client.connect("127.0.0.1:77").unwrap();
    let s = server.accept(l).unwrap();
    let flags = [Flags::Auto, Flags::Send, Flags::Write, Flags::Read];
    for k in 0..40u32 {
        let m = message(k, 4 + (k as usize * 1531) % 65000);
        client.send(c, &m, flags[k as usize % 4]).unwrap();
    }
    client.flush().unwrap();
    for k in 0..40u32 {
        let got = server.recv_zero_copy(s).unwrap().unwrap();
        assert_eq!(
            got,
            message(k, 4 + (k as usize * 1531) % 65000),
            "message {k}"
        );
        server.send(s, &got[..4], Flags::Auto).unwrap();
    }
    server.flush().unwrap();
    for k in 0..40u32 {
        let got = client.recv_zero_copy(c).unwrap().unwrap();
        assert_eq!(got, k.to_le_bytes(), "answer {k}");
    }
    client.close(c).unwrap();
    let mut buf = [0u8; 8];
    assert_eq!(
        server.recv(s, &mut buf).unwrap(),
        0,
        "the close reached the server"
    );
    let e = server.send(s, b"late", Flags::Auto).unwrap_err();
    assert!(e.0.contains("closed by its peer"), "{e}");
    // Closing after end of file succeeds, as a socket's does; twice not.
    server.close(s).unwrap();
    let e = server.close(s).unwrap_err();
    assert!(e.0.contains("no fd"), "{e}");
}

/// Across two daemons: a connection whose peer closed is closed without
/// an error, whether its `Closed` event was read (recv returned 0) or
/// not yet (the two closes cross).
#[test]
fn closing_after_the_peers_close_succeeds() {
    let (a, b, _) = pair();
    let mut server = Visor::open(&b.control).unwrap();
    let l = server.listen(81).unwrap();
    let mut client = Visor::open(&a.control).unwrap();
    let to = "127.0.0.2:81";
    // After end of file.
    let c = client.connect(to).unwrap();
    let s = server.accept(l).unwrap();
    client.send(c, b"ping", Flags::Auto).unwrap();
    let mut buf = [0u8; 8];
    assert_eq!(server.recv(s, &mut buf).unwrap(), 4);
    server.close(s).unwrap();
    assert_eq!(client.recv(c, &mut buf).unwrap(), 0, "end of file");
    client.close(c).unwrap();
    // Crossing: the client closes without reading, its `Closed` event
    // on its way or already there.
    let c = client.connect(to).unwrap();
    let s = server.accept(l).unwrap();
    server.close(s).unwrap();
    client.close(c).unwrap();
    assert!(!client.peer_closed(c), "forgotten once closed");
}

/// A client that does not read: its daemon, past `--backlog-bytes`, asks
/// the sender to pause, so the sender's sends block (within one host,
/// and across two daemons); once the client reads, every message
/// arrives, once and intact, even the last ones, sent just before the
/// sender's session ended (a close waits for the messages in flight).
#[test]
fn a_client_that_does_not_read_pauses_its_senders() {
    const BACKLOG: usize = 1 << 20;
    const RING: usize = 1 << 18;
    const LEN: usize = 65000;
    const N: u32 = 800;
    let (a, b, _) = pair_with(&[
        "--backlog-bytes",
        "1048576",
        "--ring-bytes",
        "262144",
        "--slots",
        "192",
        "--recv-per-qp",
        "32",
        "--rate-gbps",
        "5",
    ]);
    for (to, server_daemon) in [("127.0.0.1:79", &a), ("127.0.0.2:79", &b)] {
        let mut server = Visor::open(&server_daemon.control).unwrap();
        let l = server.listen(79).unwrap();
        let sent = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = sent.clone();
        let control = a.control.clone();
        let dest = to.to_string();
        let sender = std::thread::spawn(move || {
            let mut client = Visor::open(&control).unwrap();
            let c = client.connect(&dest).unwrap();
            for k in 0..N {
                let flags = [Flags::Send, Flags::Write, Flags::Read][k as usize % 3];
                client.send(c, &message(k, LEN), flags).unwrap();
                count.fetch_add(LEN, Ordering::Relaxed);
            }
            client.flush().unwrap();
        });
        let s = server.accept(l).unwrap();
        // Long enough for a sender that is not paused to send them all
        // (52 MB at 5 Gb/s take 85 ms), and then as long again: a paused
        // sender makes no progress at all. These sleeps are the test (no
        // event says "paused for good"): what is sent over a half second
        // of waiting, which must be nothing.
        std::thread::sleep(Duration::from_millis(1000));
        let paused_at = sent.load(Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(500));
        let before = sent.load(Ordering::Relaxed);
        assert_eq!(before, paused_at, "{to}: the sender went on");
        // What a sender may have accepted: the backlog, the two rings
        // between (the server's events', the sender's requests'), its
        // daemon's read-ahead of the requests (`read_session`: past a
        // request's longest frame it stops, having read 64 KB at a time;
        // two of the protocol's longest frames bound it), and, across daemons, what the sending daemon
        // holds in its slots (READs wait there to be pulled) and what it
        // sends while the pause travels, which nothing bounds: there the
        // test asserts the stop, and that most was held back.
        let read_ahead = 2 * visor::proto::MAX_FRAME + 64 * 1024;
        if to.starts_with("127.0.0.1") {
            let bound = BACKLOG + 2 * RING + read_ahead;
            assert!(
                before <= bound,
                "{to}: {before} bytes sent to a client that reads nothing (bound {bound})"
            );
        } else {
            let all = N as usize * LEN;
            assert!(before < all / 2, "{to}: {before} of {all} bytes sent");
        }
        assert!(before >= BACKLOG, "{to}: only {before} bytes sent");
        // Messages sent by different verbs may arrive out of order.
        let mut seen = vec![false; N as usize];
        for got in 0..N {
            let m = server.recv_zero_copy(s).unwrap();
            let m = m.unwrap_or_else(|| panic!("{to}: closed after {got} messages"));
            let k = u32::from_le_bytes(m[..4].try_into().unwrap());
            assert!(k < N && !seen[k as usize], "{to}: message {k} again");
            assert!(m == message(k, LEN), "{to}: message {k} corrupted");
            seen[k as usize] = true;
        }
        sender.join().unwrap();
        eprintln!("{to}: {before} bytes sent before the client read");
    }
}

/// Two clients that only send to each other, neither reading until it
/// has sent everything: each pauses the other, and each, blocked in
/// `send`, still reads what its daemon writes, so both finish.
#[test]
fn two_clients_sending_to_each_other_do_not_wait_on_each_other() {
    let (a, b, _) = pair_with(&[
        "--backlog-bytes",
        "1048576",
        "--ring-bytes",
        "262144",
        "--rate-gbps",
        "5",
    ]);
    let mut server = Visor::open(&b.control).unwrap();
    let l = server.listen(81).unwrap();
    let (done, finished) = std::sync::mpsc::channel();
    // Sends 200 messages of 65000 bytes on `fd`, then reads as many.
    let talk = |mut v: Visor, fd: u32, done: std::sync::mpsc::Sender<()>| {
        move || {
            for k in 0..200 {
                v.send(fd, &message(k, 65000), Flags::Send).unwrap();
            }
            for k in 0..200 {
                assert!(v.recv_zero_copy(fd).unwrap().unwrap() == message(k, 65000));
            }
            // Sends not yet answered when a session ends are dropped.
            v.flush().unwrap();
            done.send(()).unwrap();
        }
    };
    let mut client = Visor::open(&a.control).unwrap();
    let c = client.connect("127.0.0.2:81").unwrap();
    let s = server.accept(l).unwrap();
    std::thread::spawn(talk(client, c, done.clone()));
    std::thread::spawn(talk(server, s, done));
    for _ in 0..2 {
        finished
            .recv_timeout(Duration::from_secs(30))
            .expect("the two clients wait on each other");
    }
}

/// The live children of `parent` (from /proc: a zombie or a process
/// already gone does not count).
fn live_children(parent: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // "pid (comm) state ppid ...": the fields after the last ')'.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let mut f = rest.split_whitespace();
        let (state, ppid) = (f.next(), f.next().and_then(|p| p.parse::<u32>().ok()));
        if ppid == Some(parent) && state != Some("Z") {
            out.push(pid);
        }
    }
    out
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, r)| r.split_whitespace().next() != Some("Z"))
        })
        .unwrap_or(false)
}

/// `rdmalab visor bench` killed by a signal (no destructor runs) takes
/// its two daemons with it: they are started to die with their parent.
#[test]
#[cfg(target_os = "linux")]
fn a_bench_killed_by_a_signal_leaves_no_daemon_running() {
    let mut bench = Command::new(env!("CARGO_BIN_EXE_rdmalab"))
        .args([
            "visor",
            "bench",
            "--connections",
            "2",
            "--msg-bytes",
            "4096",
            "--seconds",
            "60",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    let daemons = loop {
        let d = live_children(bench.id());
        if d.len() == 2 {
            break d;
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the bench started no two daemons: {d:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    bench.kill().unwrap();
    bench.wait().unwrap();
    let t = Instant::now();
    while daemons.iter().any(|&p| alive(p)) {
        if t.elapsed() > Duration::from_secs(10) {
            for &p in &daemons {
                // SAFETY: a plain kill(2) of a pid read just above.
                unsafe { libc::kill(p as libc::pid_t, libc::SIGKILL) };
            }
            panic!("daemons {daemons:?} outlived their bench");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
