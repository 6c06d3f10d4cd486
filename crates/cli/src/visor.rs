//! `rdmalab visor bench`: RDMAvisor's throughput on this machine. Starts
//! two daemons on loopback (127.0.0.1 and 127.0.0.2, a free port), a sink
//! that accepts every connection and receives, and a source that opens
//! `--connections` logical connections and sends `--msg-bytes` messages
//! round-robin over them for `--seconds`; prints one parseable line.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clap::{Subcommand, ValueEnum};
use visor::{Event, Flags, Visor};

#[derive(Subcommand)]
pub enum VisorCmd {
    /// Throughput of logical connections through a pair of daemons on
    /// loopback.
    Bench {
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
        /// The daemons' pacing rate, Gb/s.
        #[arg(long, default_value_t = 25.0)]
        rate_gbps: f64,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub enum BenchVerb {
    Send,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Mode {
    /// All connections between two hosts share the link's QPs.
    Shared,
}

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

fn start(bin: &std::path::Path, ip: &str, port: u16, rate: f64) -> Result<Daemon, String> {
    let control =
        std::env::temp_dir().join(format!("rdmalab-visor-{}-{ip}.sock", std::process::id()));
    let child = Command::new(bin)
        .args(["--control", control.to_str().unwrap_or_default()])
        .args([
            "--bind",
            &format!("{ip}:{port}"),
            "--rate-gbps",
            &rate.to_string(),
        ])
        .stdout(Stdio::null())
        .spawn()
        .map_err(|e| format!("starting {}: {e}", bin.display()))?;
    let d = Daemon { child, control };
    let t = Instant::now();
    while !d.control.exists() {
        if t.elapsed() > Duration::from_secs(10) {
            return Err(format!("{} did not start", bin.display()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(d)
}

/// User plus system CPU seconds, and resident MB, of a process.
fn usage(pid: u32) -> (f64, f64) {
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

pub fn main(cmd: VisorCmd) -> Result<(), String> {
    let VisorCmd::Bench {
        connections,
        verb: _,
        msg_bytes,
        seconds,
        mode: _,
        rate_gbps,
    } = cmd;
    if connections == 0 || !(seconds > 0.0 && seconds <= 3600.0) {
        return Err("--connections must be at least 1 and --seconds in (0, 3600]".into());
    }
    if msg_bytes == 0 || msg_bytes > 65536 {
        return Err(format!(
            "--msg-bytes must be in 1..=65536 (the daemons' slot), got {msg_bytes}"
        ));
    }
    let bin = std::env::current_exe()
        .map_err(|e| e.to_string())?
        .with_file_name("rdmavisord");
    if !bin.exists() {
        return Err(format!(
            "{} is missing: `cargo build --release` builds it beside rdmalab",
            bin.display()
        ));
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| e.to_string())?
        .port();
    let a = start(&bin, "127.0.0.1", port, rate_gbps)?;
    let b = start(&bin, "127.0.0.2", port, rate_gbps)?;
    let mut sink = Visor::open(&b.control).map_err(|e| e.to_string())?;
    sink.listen(7).map_err(|e| e.to_string())?;
    let window = Duration::from_secs_f64(seconds);
    let receiver = std::thread::spawn(move || -> Result<(u64, u64, f64), String> {
        let (mut msgs, mut bytes, mut closed) = (0u64, 0u64, 0u32);
        let mut first: Option<Instant> = None;
        let mut last = Instant::now();
        while closed < connections {
            match sink.recv_any().map_err(|e| e.to_string())? {
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
        let secs = first.map_or(0.0, |f| (last - f).as_secs_f64());
        Ok((msgs, bytes, secs))
    });
    let mut source = Visor::open(&a.control).map_err(|e| e.to_string())?;
    let mut fds = Vec::new();
    for _ in 0..connections {
        fds.push(source.connect("127.0.0.2:7").map_err(|e| e.to_string())?);
    }
    let (cpu0, _) = usage(a.child.id());
    let (cpu0b, _) = usage(b.child.id());
    let msg = vec![0x5au8; msg_bytes];
    let start_at = Instant::now();
    let mut k = 0;
    while start_at.elapsed() < window {
        for _ in 0..64 {
            source
                .send(fds[k % fds.len()], &msg, Flags::Auto)
                .map_err(|e| e.to_string())?;
            k += 1;
        }
    }
    for fd in fds {
        source.close(fd).map_err(|e| e.to_string())?;
    }
    let (msgs, bytes, secs) = receiver.join().map_err(|_| "the sink thread panicked")??;
    let elapsed = start_at.elapsed().as_secs_f64();
    let (cpu1, rss_a) = usage(a.child.id());
    let (cpu1b, rss_b) = usage(b.child.id());
    let cpu_pct = 100.0 * ((cpu1 - cpu0) + (cpu1b - cpu0b)) / 2.0 / elapsed.max(1e-9);
    let secs = secs.max(1e-9);
    println!(
        "visor mode=shared connections={connections} msg_bytes={msg_bytes} goodput_gbps={:.3} msgs_per_s={:.0} daemon_rss_mb={:.1} daemon_cpu_pct={:.1}",
        bytes as f64 * 8.0 / secs / 1e9,
        msgs as f64 / secs,
        rss_a.max(rss_b),
        cpu_pct
    );
    drop(a);
    drop(b);
    Ok(())
}
