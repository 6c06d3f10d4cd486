//! `rdmavisord` under hostile peers and clients (issue 39): a link
//! handshake tarpitted by its peer, outgoing or incoming, delays no other
//! client's echo rounds; a connect to 0.0.0.0 is refused at once; past
//! the session limits one user's new sessions are refused while another
//! user's still opens; partly received frames take memory only as far as
//! a request may be long.
//! Daemons on 127.0.0.1 and 127.0.0.2 (`visor_daemon::pair_with`); the
//! tarpit is the test's own TCP listener on 127.0.0.3 at the daemons'
//! port, and the test's own TCP connection to a daemon's link port.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use visor::{Flags, Visor};

use crate::visor_daemon::{pair_with, OPTIONS};

/// Writes a byte (never a line's end) to `s` every 100 ms until `stop`.
fn trickle(mut s: TcpStream, stop: Arc<AtomicBool>) {
    while !stop.load(Ordering::Relaxed) {
        if s.write_all(b" ").is_err() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// One message from `client` to `server` and back, verified.
pub(crate) fn echo_round(client: &mut Visor, c: u32, server: &mut Visor, s: u32, k: u32) {
    let msg = format!("round {k}").into_bytes();
    client.send(c, &msg, Flags::Send).unwrap();
    client.flush().unwrap();
    let got = server.recv_zero_copy(s).unwrap().unwrap();
    assert_eq!(got, msg);
    server.send(s, &got, Flags::Send).unwrap();
    server.flush().unwrap();
    assert_eq!(client.recv_zero_copy(c).unwrap().unwrap(), msg);
}

#[test]
fn a_tarpitted_link_handshake_delays_no_other_client() {
    let (a, b, port) = pair_with(&OPTIONS);
    let mut server = Visor::open(&b.control).unwrap();
    let l = server.listen(91).unwrap();
    let mut client = Visor::open(&a.control).unwrap();
    let c = client.connect("127.0.0.2:91").unwrap();
    let s = server.accept(l).unwrap();
    echo_round(&mut client, c, &mut server, s, 0);

    // A peer that accepts daemon a's link and trickles its answer.
    let stop = Arc::new(AtomicBool::new(false));
    let tarpit = TcpListener::bind(("127.0.0.3", port)).unwrap();
    let (accepted, link_held) = mpsc::channel();
    let held = stop.clone();
    let peer = std::thread::spawn(move || {
        let (conn, _) = tarpit.accept().unwrap();
        accepted.send(()).unwrap();
        trickle(conn, held);
    });
    let control = a.control.clone();
    let (answered, connect_answer) = mpsc::channel();
    std::thread::spawn(move || {
        let mut v = Visor::open(&control).unwrap();
        answered
            .send(v.connect(&format!("127.0.0.3:{port}")))
            .unwrap();
    });
    link_held
        .recv_timeout(Duration::from_secs(3))
        .expect("daemon a never connected to the tarpit");
    // And a "daemon" that opens a link to a and trickles its hello.
    let hello = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let held = stop.clone();
    let incoming = std::thread::spawn(move || trickle(hello, held));

    // The rounds on a thread of their own, so that a daemon stalled
    // fails the test (the tarpits stopped) rather than hanging it.
    let (round, rounds) = mpsc::channel();
    let echoes = std::thread::spawn(move || {
        for k in 1..=20 {
            echo_round(&mut client, c, &mut server, s, k);
            round.send(k).unwrap();
        }
        server
    });
    for k in 1..=20 {
        let t = Instant::now();
        if rounds.recv_timeout(Duration::from_secs(2)) != Ok(k) {
            stop.store(true, Ordering::Relaxed);
            panic!("round {k} took over 2 s");
        }
        eprintln!("round {k}: {:?}", t.elapsed());
    }
    let _server = echoes.join().unwrap();
    // The tarpitted connect still waits: it alone was delayed.
    assert!(connect_answer.try_recv().is_err());
    stop.store(true, Ordering::Relaxed);
    peer.join().unwrap();
    incoming.join().unwrap();
    // Its peer gone, it fails, saying why.
    let e = connect_answer
        .recv_timeout(Duration::from_secs(3))
        .expect("the tarpitted connect never ended")
        .unwrap_err();
    assert!(
        e.0.starts_with("connect 127.0.0.3:") && e.0.contains("control connection"),
        "{e}"
    );
    // A new link to b still works.
    let mut other = Visor::open(&a.control).unwrap();
    other.connect("127.0.0.2:91").unwrap();
}

#[test]
fn a_connect_to_the_unspecified_address_is_refused_at_once() {
    let (a, _b, port) = pair_with(&OPTIONS);
    let mut v = Visor::open(&a.control).unwrap();
    let t = Instant::now();
    let e = v.connect(&format!("0.0.0.0:{port}")).unwrap_err();
    assert!(e.0.contains("not the address of a host"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    // The daemon's own address is a connection within the host.
    let l = v.listen(92).unwrap();
    let c = v.connect("127.0.0.1:92").unwrap();
    let s = v.accept(l).unwrap();
    assert_ne!(c, s);
}

/// Run by `past_the_session_limit_one_user_is_refused_another_opens` as
/// another user (a no-op otherwise): opens two sessions on
/// `VISOR_LIMIT_SOCK` and prints what became of each.
#[test]
fn as_a_second_user() {
    let Ok(sock) = std::env::var("VISOR_LIMIT_SOCK") else {
        return;
    };
    let sock = std::path::Path::new(&sock);
    let first = Visor::open(sock);
    // SAFETY: getuid has no preconditions.
    println!(
        "uid {} opened: {}",
        unsafe { libc::getuid() },
        first.is_ok()
    );
    match Visor::open(sock) {
        Ok(_) => println!("second opened"),
        Err(e) => println!("second refused: {e}"),
    }
}

/// `--max-sessions-per-user 3 --max-sessions 4`: a fourth session of
/// this user (root) is refused, naming the flag; a process of another
/// user (uid 65534; skipped unless run as root) still opens one, and its
/// second, past the total, is refused; a session closed frees its place.
#[test]
fn past_the_session_limit_one_user_is_refused_another_opens() {
    use std::os::unix::process::CommandExt;
    let mut more = OPTIONS.to_vec();
    more.extend(["--max-sessions-per-user", "3", "--max-sessions", "4"]);
    let (a, _b, _) = pair_with(&more);
    let mut mine: Vec<Visor> = (0..3).map(|_| Visor::open(&a.control).unwrap()).collect();
    let e = Visor::open(&a.control).err().expect("a 4th session opened");
    assert!(
        e.0.starts_with("session refused: uid ")
            && e.0
                .ends_with("has 3 sessions open (rdmavisord --max-sessions-per-user 3)"),
        "{e}"
    );
    // The sessions refused left nothing behind: ours still work.
    let l = mine[0].listen(93).unwrap();
    let c = mine[1].connect("127.0.0.1:93").unwrap();
    mine[0].accept(l).unwrap();
    mine[1].close(c).unwrap();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        let exe = std::env::current_exe().unwrap();
        let name = module_path!().split_once("::").unwrap().1.to_owned() + "::as_a_second_user";
        let out = std::process::Command::new(&exe)
            .args(["--exact", &name, "--nocapture"])
            .env("VISOR_LIMIT_SOCK", &a.control)
            .uid(65534)
            .gid(65534)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("uid 65534 opened: true"), "{text}");
        assert!(
            text.contains(
                "second refused: session refused: 4 sessions open (rdmavisord --max-sessions)"
            ),
            "{text}"
        );
    } else {
        eprintln!("second user skipped: running a process as another user needs root");
    }
    // A place freed is taken again.
    mine.pop();
    let t = Instant::now();
    while Visor::open(&a.control).is_err() {
        assert!(
            t.elapsed() < Duration::from_secs(3),
            "the closed session's place stays taken"
        );
        std::thread::yield_now();
    }
}

/// Raw sessions (the socket alone, the rings offered and ignored): a
/// connect frame announced at the longest length the protocol knows
/// ends its session at once, saying why; 40 sessions each sending a
/// send frame of that length, one byte short, leave the daemon's memory
/// as it was (the bytes dropped as they come), where the daemon before
/// buffered them all (about 40 MB).
#[test]
fn partly_received_frames_are_bounded() {
    use std::io::Read;
    use std::os::unix::net::UnixStream;
    use visor::proto::{self, MAX_FRAME};
    let (a, _b, _) = pair_with(&OPTIONS);
    // Ops: 1 is connect, 4 is send (`proto`).
    let head = |op: u8| {
        let mut h = (MAX_FRAME as u32).to_le_bytes().to_vec();
        h.push(op);
        h
    };
    let mut s = UnixStream::connect(&a.control).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    s.write_all(&head(1)).unwrap();
    let mut got = Vec::new();
    s.read_to_end(&mut got)
        .expect("the session was not ended at once");
    // The rings' offer (8 bytes), then the error frame.
    let (op, body, _) = proto::split(&got[8..]).unwrap().unwrap();
    let proto::Reply::Err { message } = proto::decode_reply(op, body).unwrap() else {
        panic!("{got:?}");
    };
    assert!(
        message.contains(&format!("a frame of {MAX_FRAME} bytes announced")),
        "{message}"
    );

    let before = crate::visor_daemon::rss_kb(a.pid());
    let body = vec![7u8; MAX_FRAME - 2];
    let held: Vec<UnixStream> = (0..40)
        .map(|_| {
            let mut s = UnixStream::connect(&a.control).unwrap();
            s.write_all(&head(4)).unwrap();
            s.write_all(&body).unwrap();
            s
        })
        .collect();
    let after = crate::visor_daemon::rss_kb(a.pid());
    assert!(
        after < before + 10 * 1024,
        "RSS grew from {before} kB to {after} kB"
    );
    drop(held);
}

/// `visor-echo serve` given an empty message and a message of 3 bytes
/// (neither carries the CRC its messages start with) reports each and
/// goes on: a checked message sent after them is echoed (the server
/// before exited on the empty one).
#[test]
fn visor_echo_survives_any_message() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let (a, b, _) = pair_with(&OPTIONS);
    let mut server = Command::new(env!("CARGO_BIN_EXE_visor-echo"))
        .args(["--daemon", b.control.to_str().unwrap()])
        .args(["serve", "--port", "94"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = BufReader::new(server.stdout.take().unwrap());
    let mut first = String::new();
    said.read_line(&mut first).unwrap();
    assert!(first.contains("listening on port 94"), "{first}");
    let mut v = Visor::open(&a.control).unwrap();
    let c = v.connect("127.0.0.2:94").unwrap();
    let body = b"checked";
    let mut good = crc32fast::hash(body).to_le_bytes().to_vec();
    good.extend_from_slice(body);
    for m in [&b""[..], b"abc", &good] {
        v.send(c, m, Flags::Send).unwrap();
    }
    v.flush().unwrap();
    // The echo of the checked message, or the connection's end if the
    // server is gone (its session closed by its daemon).
    assert_eq!(v.recv_zero_copy(c).unwrap(), Some(good));
    let mut errors = BufReader::new(server.stderr.take().unwrap());
    for len in [0, 3] {
        let mut line = String::new();
        errors.read_line(&mut line).unwrap();
        assert!(
            line.contains(&format!("a message of {len} bytes on fd"))
                && line.contains("not echoed"),
            "{line}"
        );
    }
    assert!(server.try_wait().unwrap().is_none(), "the server exited");
    server.kill().unwrap();
    server.wait().unwrap();
}
