//! `rdmalab net`: bad input gets a clear error, a peer that vanishes
//! mid-transfer ends the run with an error, never a hang, and
//! `--transport uet` moves verified bytes between two processes in UET
//! frames from sprayed source ports.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn rdmalab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rdmalab"))
        .args(args)
        .output()
        .unwrap()
}

/// `net run --to TO --verb VERB --bytes BYTES --transport TRANSPORT`
/// and `extra`.
pub(crate) fn net_run(
    to: &str,
    verb: &str,
    bytes: &str,
    transport: &str,
    extra: &[&str],
) -> Output {
    let mut args = vec!["net", "run", "--to", to, "--verb", verb, "--bytes", bytes];
    args.extend_from_slice(&["--transport", transport]);
    args.extend_from_slice(extra);
    rdmalab(&args)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `net serve` on an ephemeral loopback port: the child and its address.
pub(crate) fn serve(extra: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rdmalab"))
        .args(["net", "serve", "--bind", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .split_whitespace()
        .find(|w| w.starts_with("127.0.0.1:"))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    (child, addr)
}

#[test]
fn bad_input_is_named() {
    let run = |to: &str, extra: &[&str]| net_run(to, "write", "1M", "irn", extra);
    let cases: Vec<(Output, &str)> = vec![
        (run("nowhere", &[]), "invalid socket address"),
        (run("[::1]:4791", &[]), "only IPv4"),
        (
            run("127.0.0.1:9", &["--mtu", "70000"]),
            "--mtu 70000: RoCE MTUs stop at 4096",
        ),
        (
            run("127.0.0.1:9", &["--mtu", "9000"]),
            "--mtu 9000: RoCE MTUs stop at 4096",
        ),
        (
            net_run("127.0.0.1:9", "write", "12Q", "irn", &[]),
            "unknown unit",
        ),
        (
            run("127.0.0.1:9", &["--impair", "loss=3"]),
            "loss: must be in",
        ),
        (run("127.0.0.1:9", &["--rate-gbps", "0"]), "--rate-gbps"),
        (
            net_run("127.0.0.1:9", "read", "1M", "mprdma", &[]),
            "--transport mprdma with --verb read",
        ),
        (
            net_run("127.0.0.1:9", "write", "1M", "uet", &["--cc", "dcqcn"]),
            "--cc dcqcn with --transport uet: UET has no CNP",
        ),
        (
            run("127.0.0.1:9", &[]),
            "cannot reach the server's control port",
        ),
    ];
    for (o, says) in cases {
        assert!(!o.status.success());
        let e = stderr(&o);
        assert!(e.contains(says), "expected {says:?} in {e:?}");
        assert!(!e.contains("panicked"), "{e}");
    }
}

#[test]
fn a_port_in_use_is_named() {
    let held = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = held.local_addr().unwrap().to_string();
    let o = rdmalab(&["net", "serve", "--bind", &addr]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("the port is in use"), "{}", stderr(&o));
}

#[test]
fn a_server_refuses_a_job_above_its_limit() {
    let (mut server, addr) = serve(&["--once", "--max-bytes", "1Mi"]);
    let o = net_run(&addr, "write", "2Mi", "roce", &[]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("the server refused the job: --bytes must be in 1..=1048576"),
        "{}",
        stderr(&o)
    );
    assert!(!server.wait().unwrap().success());
}

#[test]
fn a_vanished_server_ends_the_run_with_an_error() {
    // Killed: the control connection closes.
    let (mut server, addr) = serve(&["--once", "--rate-gbps", "0.5"]);
    let pid = server.id();
    // The server's address space, in kB.
    let vm = || -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let line = status
            .lines()
            .find_map(|l| l.strip_prefix("VmSize:"))
            .unwrap();
        line.trim().trim_end_matches(" kB").parse().unwrap()
    };
    let idle = vm();
    let client = Command::new(env!("CARGO_BIN_EXE_rdmalab"))
        .args([
            "net", "run", "--to", &addr, "--verb", "write", "--bytes", "1Gi",
        ])
        .args(["--transport", "irn", "--rate-gbps", "0.5"])
        .stderr(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Killed once it has taken the job: it read the client's hello (so
    // nothing unread makes the kernel reset the connection instead of
    // closing it) and mapped the job's 1 GiB region (its address space
    // grows by that from what it was in accept, before the client
    // started).
    let t = Instant::now();
    while vm() < idle + (1 << 20) {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the server did not take the job within 10 s"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    server.kill().unwrap();
    server.wait().unwrap();
    let t = Instant::now();
    let o = client.wait_with_output().unwrap();
    assert!(!o.status.success());
    assert!(t.elapsed() < Duration::from_secs(20));
    assert!(
        stderr(&o).contains("control connection closed by the peer"),
        "{}",
        stderr(&o)
    );

    // Silent (every datagram it receives is dropped): the retransmission
    // timeouts run out.
    let (mut server, addr) = serve(&["--once", "--impair", "loss=1"]);
    let t = Instant::now();
    let o = net_run(&addr, "write", "1Mi", "roce", &["--peer-timeout-ms", "300"]);
    assert!(!o.status.success());
    assert!(t.elapsed() < Duration::from_secs(20));
    assert!(stderr(&o).contains("went silent"), "{}", stderr(&o));
    server.kill().ok();
    server.wait().unwrap();
}

#[test]
fn a_transfer_completes_while_another_process_sprays_garbage() {
    let (mut server, addr) = serve(&["--once"]);
    let (host, port) = addr.split_once(':').unwrap();
    let spray = format!(
        "import os, socket, time\n\
         s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
         end = time.time() + 20\n\
         n = 0\n\
         while time.time() < end:\n    \
             s.sendto(os.urandom(1 + n % 1500), ('{host}', {port}))\n    \
             if n == 0: print('spraying', flush=True)\n    \
             n += 1\n"
    );
    let mut sprayer = Command::new("python3")
        .args(["-c", &spray])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // The transfer starts once garbage is arriving (the sprayer's word
    // after its first datagram; its end of output if it failed).
    let mut said = String::new();
    BufReader::new(sprayer.stdout.as_mut().unwrap())
        .read_line(&mut said)
        .unwrap();
    assert_eq!(said, "spraying\n", "the sprayer did not start");
    let o = net_run(&addr, "write", "64Mi", "irn", &["--rate-gbps", "5"]);
    sprayer.kill().ok();
    sprayer.wait().unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{}{}", out, stderr(&o));
    assert!(out.contains("verified"), "{out}");
    let at_server = out
        .lines()
        .find(|l| l.contains("dropped at the server"))
        .unwrap();
    assert!(at_server.contains("unknown_peer"), "{at_server}");
    assert!(server.wait().unwrap().success());
}

/// Both ends' `--pcap` of a UET run, every frame parsed by our parser
/// (tshark has no UET dissector): the requests' source ports and the
/// ACKs' destination ports.
fn uet_capture(path: &std::path::Path) -> (Vec<u16>, Vec<u16>) {
    use transport::uet_frame::{decode, UetWire};
    use transport::PacketKind;
    let file = std::fs::read(path).unwrap();
    std::fs::remove_file(path).unwrap();
    let w = UetWire {
        mtu: 4096,
        ordered: false,
    };
    let (mut sports, mut acked) = (Vec::new(), Vec::new());
    for (_, f) in wire::pcap::frames(&file).unwrap() {
        let dport = u16::from_be_bytes([f[36], f[37]]);
        let d = decode(f, w, dport).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        match d.packet.kind {
            PacketKind::Request => sports.push(d.packet.sport),
            PacketKind::Ack => acked.push(dport),
            _ => {}
        }
    }
    (sports, acked)
}

#[test]
fn uet_moves_verified_bytes_between_processes_from_sprayed_ports() {
    let dir = std::env::temp_dir();
    let id = std::process::id();
    let (cpath, spath) = (
        dir.join(format!("rdmalab-net-uet-{id}-client.pcap")),
        dir.join(format!("rdmalab-net-uet-{id}-server.pcap")),
    );
    let (mut server, addr) = serve(&["--once", "--pcap", spath.to_str().unwrap()]);
    let mut client = Command::new(env!("CARGO_BIN_EXE_rdmalab"))
        .args([
            "net", "run", "--to", &addr, "--verb", "write", "--bytes", "8Mi",
        ])
        .args(["--transport", "uet", "--pcap", cpath.to_str().unwrap()])
        .args(["--impair", "loss=0.01,reorder=0.01,seed=5"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while client.try_wait().unwrap().is_none() {
        if t.elapsed() > Duration::from_secs(30) {
            client.kill().ok();
            server.kill().ok();
            panic!("net run --transport uet still running after 30 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let o = client.wait_with_output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(server.wait().unwrap().success());
    assert!(
        out.contains("net uet write: 8388608 bytes") && out.contains("verified"),
        "{out}"
    );
    assert!(out.contains("net transport=uet"), "{out}");
    let (sports, acked) = uet_capture(&cpath);
    let (arrived, _) = uet_capture(&spath);
    let spread = |v: &[u16]| v.iter().collect::<std::collections::BTreeSet<_>>().len();
    assert_eq!(
        spread(&sports),
        8,
        "the client's requests left from 8 ports"
    );
    assert_eq!(spread(&arrived), 8, "and arrived from 8");
    assert!(
        spread(&acked) > 1,
        "the ACKs came back to the ports they echo"
    );
}
