//! `rdmalab visor bench` and `rdmalab visor sink`: RDMAvisor's throughput
//! on the real datapath, against the paper's baselines. The bench opens
//! `--connections` logical connections from one daemon to a sink behind
//! another and sends `--msg-bytes` messages over them for `--seconds`;
//! `--mode` picks the connections' QPs: shared (RDMAvisor: the link's),
//! naive (one per connection) or locked (one per `--q` connections, whose
//! sender threads share one session, and so one QP, under a lock: FaRM's
//! design). Without `--peer` it starts two daemons on loopback
//! (127.0.0.1 and 127.0.0.2) and a sink, and counts what the sink
//! received; with `--peer IP:PORT` it uses the daemon at `--daemon` and a
//! sink already running there (`rdmalab visor sink`), and counts what
//! that sink received, asking it on a connection of its own before and
//! after (`REPORT`). Prints one parseable line.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::{Args, Subcommand, ValueEnum};
use visor::process::DaemonProcess;
use visor::{Event, Flags, Sharing, Visor};

#[derive(Subcommand)]
pub enum VisorCmd {
    /// Throughput of logical connections through a pair of daemons.
    Bench(Bench),
    /// Accepts every connection on `--port` and discards what arrives,
    /// counting it for the benches that ask (the far end of `bench
    /// --peer`; one bench at a time).
    Sink {
        #[arg(long, default_value = "/tmp/rdmavisor.sock")]
        daemon: PathBuf,
        #[arg(long, default_value_t = 7)]
        port: u16,
    },
}

/// `rdmalab visor bench`'s options.
#[derive(Args)]
pub struct Bench {
    /// A sink's address (`rdmalab visor sink` behind the daemon on
    /// that ip); without it, daemons and a sink on loopback.
    #[arg(long)]
    peer: Option<String>,
    /// With --peer: the local daemon's control socket.
    #[arg(long, default_value = "/tmp/rdmavisor.sock")]
    daemon: PathBuf,
    #[arg(long, default_value_t = 16)]
    connections: u32,
    #[arg(long, value_enum, default_value = "send")]
    verb: BenchVerb,
    #[arg(long, default_value_t = 4096)]
    msg_bytes: usize,
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    #[arg(long, value_enum, default_value = "shared")]
    mode: Mode,
    /// --mode locked: connections (and threads) per QP.
    #[arg(long, default_value_t = 3)]
    q: u32,
    /// The daemons' pacing rate, Gb/s (without --peer).
    #[arg(long, default_value_t = 25.0)]
    rate_gbps: f64,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum BenchVerb {
    /// The daemon chooses by size and load.
    Auto,
    Send,
    Write,
    Read,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
pub enum Mode {
    /// RDMAvisor: all connections between two hosts share the link's QPs.
    Shared,
    /// One QP per connection, as applications do today.
    Naive,
    /// Lock-based sharing: `--q` connections and threads per QP.
    Locked,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Shared => "shared",
            Mode::Naive => "naive",
            Mode::Locked => "locked",
        }
    }
}

/// Receive buffers per QP the bench's daemons post: the link's QPs keep
/// the default 128, the baselines' own QPs 32 each (a connection of its
/// own needs fewer, and 128 x 64 KB per connection would not fit).
const OWN_RECV: usize = 32;

fn start(
    bin: &Path,
    ip: &str,
    port: u16,
    rate: f64,
    own_qps: usize,
) -> Result<DaemonProcess, String> {
    let control =
        std::env::temp_dir().join(format!("rdmalab-visor-{}-{ip}.sock", std::process::id()));
    let rate = rate.to_string();
    let mut extra = vec!["--rate-gbps".to_string(), rate];
    if own_qps > 0 {
        let slots = 1024 + 128 + own_qps * OWN_RECV;
        extra.extend([
            "--own-recv-per-qp".into(),
            OWN_RECV.to_string(),
            "--slots".into(),
            slots.to_string(),
        ]);
    }
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    DaemonProcess::start(bin, control, &format!("{ip}:{port}"), &extra)
}

/// Two daemons on loopback (127.0.0.1 and .2) on one free port. The
/// port is free when chosen, but another program may take it before the
/// daemons bind it: then a new one is tried, three times at most.
fn start_pair(
    bin: &Path,
    rate: f64,
    own_qps: usize,
) -> Result<(DaemonProcess, DaemonProcess), String> {
    let mut last = String::new();
    for _ in 0..3 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        match start(bin, "127.0.0.1", port, rate, own_qps)
            .and_then(|a| Ok((a, start(bin, "127.0.0.2", port, rate, own_qps)?)))
        {
            Ok(pair) => return Ok(pair),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// User plus system CPU seconds, and resident MB, of a process.
pub fn usage(pid: u32) -> (f64, f64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(vec![], |(_, r)| r.split_whitespace().collect());
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let cpu = (ticks(11) + ticks(12)) / hz.max(1.0);
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let rss_kb = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.0);
    (cpu, rss_kb / 1024.0)
}

/// What a sink counted: messages, bytes, and the seconds from the first
/// message to the last.
type Counted = (u64, u64, f64);

/// A message asking a sink for what it has counted since it started
/// ("MESSAGES BYTES"), which it answers on the same connection and does
/// not count. A bench's messages are all of one byte repeated, so never
/// this.
const REPORT: &[u8] = b"rdmalab visor sink: report";

/// Receives on `listener` until `connections` connections closed (or
/// forever, if None).
fn sink(v: &mut Visor, connections: Option<u32>) -> Result<Counted, String> {
    let (mut msgs, mut bytes, mut closed) = (0u64, 0u64, 0u32);
    let mut first: Option<Instant> = None;
    let mut last = Instant::now();
    while connections.is_none_or(|n| closed < n) {
        match v.recv_any().map_err(|e| e.to_string())? {
            Event::Message { fd, data } if data == REPORT => {
                let answer = format!("{msgs} {bytes}");
                v.send(fd, answer.as_bytes(), Flags::Send)
                    .and_then(|_| v.flush())
                    .map_err(|e| e.to_string())?;
            }
            Event::Message { data, .. } => {
                first.get_or_insert_with(Instant::now);
                last = Instant::now();
                msgs += 1;
                bytes += data.len() as u64;
            }
            Event::Closed { .. } => closed += 1,
            Event::Incoming { .. } => {}
        }
    }
    Ok((msgs, bytes, first.map_or(0.0, |f| (last - f).as_secs_f64())))
}

/// What the sink at `fd`'s other end has counted: messages and bytes.
fn report(v: &mut Visor, fd: u32) -> Result<(u64, u64), String> {
    let e = |e: visor::Error| e.to_string();
    v.send(fd, REPORT, Flags::Send).map_err(e)?;
    v.flush().map_err(e)?;
    let answer = v.recv_zero_copy(fd).map_err(e)?.ok_or("the sink closed")?;
    let text = String::from_utf8_lossy(&answer);
    let mut n = text.split(' ').map(str::parse::<u64>);
    match (n.next(), n.next(), n.next()) {
        (Some(Ok(m)), Some(Ok(b)), None) => Ok((m, b)),
        _ => Err(format!(
            "the sink answered `{text}`, not a report (an older sink?)"
        )),
    }
}

/// Asks the sink until it has counted `sent` messages more than `since`,
/// or its count stopped growing for 2 s: messages and bytes it received
/// of this bench's.
fn delivered(v: &mut Visor, fd: u32, since: (u64, u64), sent: u64) -> Result<(u64, u64), String> {
    let mut last = report(v, fd)?;
    let mut still = Instant::now();
    while last.0 - since.0 < sent && still.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(20));
        let now = report(v, fd)?;
        if now != last {
            still = Instant::now();
        }
        last = now;
    }
    Ok((last.0 - since.0, last.1 - since.1))
}

struct Load {
    control: PathBuf,
    to: String,
    mode: Mode,
    q: u32,
    connections: u32,
    msg_bytes: usize,
    flags: Flags,
    window: Duration,
}

/// What a bench's senders did: messages sent, the seconds until every
/// send was answered, and with locks, the share (%) of the sending window
/// a lock was held by none of its threads: its session's time lost to
/// the lock's handovers (its threads all want it all the time).
struct Driven {
    sent: u64,
    secs: f64,
    lock_idle_pct: Option<f64>,
}

/// Opens the connections and sends for the window: one thread over all
/// of them (shared, naive), or one thread per connection with `q`
/// threads taking turns on a session under its lock (locked).
fn drive(l: &Load) -> Result<Driven, String> {
    let e = |e: visor::Error| e.to_string();
    let msg = vec![0x5au8; l.msg_bytes];
    if l.mode != Mode::Locked {
        let sharing = match l.mode {
            Mode::Naive => Sharing::Connection,
            _ => Sharing::Peer,
        };
        let mut v = Visor::open(&l.control).map_err(e)?;
        let mut fds = Vec::new();
        for _ in 0..l.connections {
            fds.push(v.connect_with(&l.to, sharing).map_err(e)?);
        }
        let t = Instant::now();
        let mut k = 0u64;
        while t.elapsed() < l.window {
            for _ in 0..64 {
                v.send(fds[k as usize % fds.len()], &msg, l.flags)
                    .map_err(e)?;
                k += 1;
            }
        }
        v.flush().map_err(e)?;
        let secs = t.elapsed().as_secs_f64();
        for fd in fds {
            v.close(fd).map_err(e)?;
        }
        return Ok(Driven {
            sent: k,
            secs,
            lock_idle_pct: None,
        });
    }
    let groups = l.connections.div_ceil(l.q);
    let mut sessions = Vec::new();
    let mut fds = Vec::new();
    for g in 0..groups {
        let mut v = Visor::open(&l.control).map_err(e)?;
        for _ in 0..l.q.min(l.connections - g * l.q) {
            fds.push((
                g as usize,
                v.connect_with(&l.to, Sharing::Session).map_err(e)?,
            ));
        }
        sessions.push(Arc::new(Mutex::new(v)));
    }
    let t = Instant::now();
    let threads: Vec<_> = fds
        .iter()
        .map(|&(g, fd)| {
            let (s, msg, window, flags) = (sessions[g].clone(), msg.clone(), l.window, l.flags);
            std::thread::spawn(move || -> Result<(u64, Duration), String> {
                let (mut k, mut held) = (0u64, Duration::ZERO);
                while t.elapsed() < window {
                    let mut v = s.lock().map_err(|_| "a sender thread panicked")?;
                    let got = Instant::now();
                    v.send(fd, &msg, flags).map_err(|e| e.to_string())?;
                    held += got.elapsed();
                    drop(v);
                    k += 1;
                }
                Ok((k, held))
            })
        })
        .collect();
    let (mut sent, mut held) = (0, Duration::ZERO);
    for th in threads {
        let (k, h) = th.join().map_err(|_| "a sender thread panicked")??;
        sent += k;
        held += h;
    }
    let windows = l.window.as_secs_f64() * sessions.len() as f64;
    let lock_idle_pct = Some(100.0 * (1.0 - held.as_secs_f64() / windows).max(0.0));
    for s in &sessions {
        s.lock().map_err(|_| "poisoned")?.flush().map_err(e)?;
    }
    let secs = t.elapsed().as_secs_f64();
    for (g, fd) in fds {
        sessions[g]
            .lock()
            .map_err(|_| "poisoned")?
            .close(fd)
            .map_err(e)?;
    }
    Ok(Driven {
        sent,
        secs,
        lock_idle_pct,
    })
}

pub fn main(cmd: VisorCmd) -> Result<(), String> {
    let Bench {
        peer,
        daemon,
        connections,
        verb,
        msg_bytes,
        seconds,
        mode,
        q,
        rate_gbps,
    } = match cmd {
        VisorCmd::Sink { daemon, port } => {
            let mut v = Visor::open(&daemon).map_err(|e| e.to_string())?;
            v.listen(port).map_err(|e| e.to_string())?;
            return sink(&mut v, None).map(|_| ());
        }
        VisorCmd::Bench(b) => b,
    };
    if connections == 0 || q == 0 || !(seconds > 0.0 && seconds <= 3600.0) {
        return Err("--connections and --q must be at least 1 and --seconds in (0, 3600]".into());
    }
    if msg_bytes == 0 || msg_bytes > 65536 {
        return Err(format!(
            "--msg-bytes must be in 1..=65536 (the daemons' slot), got {msg_bytes}"
        ));
    }
    let flags = match verb {
        BenchVerb::Auto => Flags::Auto,
        BenchVerb::Send => Flags::Send,
        BenchVerb::Write => Flags::Write,
        BenchVerb::Read => Flags::Read,
    };
    let load = |control: PathBuf, to: String| Load {
        control,
        to,
        mode,
        q,
        connections,
        msg_bytes,
        flags,
        window: Duration::from_secs_f64(seconds),
    };
    let (msgs, bytes, secs, pids, elapsed, cpu0, daemons, lock_idle) = if let Some(to) = peer {
        let pid = Visor::open(&daemon)
            .and_then(|v| v.daemon_pid())
            .map_err(|e| e.to_string())?;
        let mut asker = Visor::open(&daemon).map_err(|e| e.to_string())?;
        let rfd = asker.connect(&to).map_err(|e| e.to_string())?;
        let before = report(&mut asker, rfd)?;
        // The daemon's CPU over the wall time it is measured in (the
        // sending window and the wait for the sink's count).
        let cpu0 = usage(pid).0;
        let t = Instant::now();
        let d = drive(&load(daemon, to))?;
        let (msgs, bytes) = delivered(&mut asker, rfd, before, d.sent)?;
        let elapsed = t.elapsed().as_secs_f64();
        let pids = vec![pid];
        (
            msgs,
            bytes,
            d.secs,
            pids,
            elapsed,
            cpu0,
            vec![],
            d.lock_idle_pct,
        )
    } else {
        let bin = std::env::current_exe()
            .map_err(|e| e.to_string())?
            .with_file_name("rdmavisord");
        if !bin.exists() {
            return Err(format!(
                "{} is missing: `cargo build --release` builds it beside rdmalab",
                bin.display()
            ));
        }
        let own_qps = match mode {
            Mode::Shared => 0,
            Mode::Naive => connections as usize,
            Mode::Locked => connections.div_ceil(q) as usize,
        };
        let (a, b) = start_pair(&bin, rate_gbps, own_qps)?;
        let mut s = Visor::open(&b.control).map_err(|e| e.to_string())?;
        s.listen(7).map_err(|e| e.to_string())?;
        let receiver = std::thread::spawn(move || sink(&mut s, Some(connections)));
        let pids = vec![a.pid(), b.pid()];
        let cpu0: f64 = pids.iter().map(|&p| usage(p).0).sum();
        let t = Instant::now();
        let d = drive(&load(a.control.clone(), "127.0.0.2:7".into()))?;
        let (msgs, bytes, secs) = receiver.join().map_err(|_| "the sink thread panicked")??;
        let elapsed = t.elapsed().as_secs_f64();
        let idle = d.lock_idle_pct;
        (msgs, bytes, secs, pids, elapsed, cpu0, vec![a, b], idle)
    };
    let (cpu1, rss): (f64, f64) = pids
        .iter()
        .map(|&p| usage(p))
        .fold((0.0, 0.0), |(c, r), (c1, r1)| (c + c1, r.max(r1)));
    // Per daemon: the mean of the two on loopback.
    let cpu_pct = 100.0 * (cpu1 - cpu0) / pids.len() as f64 / elapsed.max(1e-9);
    let secs = secs.max(1e-9);
    // Locked mode only: what the locks cost (`Driven`).
    let lock = lock_idle.map_or(String::new(), |p| format!(" lock_idle_pct={p:.1}"));
    println!(
        "visor mode={} connections={connections} msg_bytes={msg_bytes} goodput_gbps={:.3} msgs_per_s={:.0} daemon_rss_mb={:.1} daemon_cpu_pct={:.1}{lock}",
        mode.name(),
        bytes as f64 * 8.0 / secs / 1e9,
        msgs as f64 / secs,
        rss,
        cpu_pct
    );
    drop(daemons);
    Ok(())
}
