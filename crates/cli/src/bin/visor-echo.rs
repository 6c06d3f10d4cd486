//! `visor-echo`: the example program of the client library, and the load
//! the tests drive. `visor-echo serve --port P` echoes every message back
//! on its connection after checking it (each message's first 4 bytes are
//! the CRC-32 of the rest); `visor-echo client --to IP:P` opens
//! connections, sends messages of random bytes on each, and checks that
//! every echo equals what it sent. Exits 1 on any mismatch (the server
//! once `--expect` is reached: a message that fails its checksum, empty
//! or of any bytes, is reported and not echoed, and serving goes on).
//! `--verb`
//! chooses the FLAGS of both ends' sends, `client --sharing` the
//! connections' QPs (the daemon's link's, a session's, or their own).

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use visor::{Event, Flags, Sharing, Visor};

#[derive(Parser)]
#[command(name = "visor-echo")]
struct Args {
    /// The local daemon's socket.
    #[arg(long, default_value = "/tmp/rdmavisor.sock")]
    daemon: PathBuf,
    /// The FLAGS every send carries.
    #[arg(long, value_enum, default_value = "auto")]
    verb: Verb,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
enum Verb {
    Auto,
    Send,
    Write,
    Read,
}

#[derive(Clone, Copy, ValueEnum)]
enum Share {
    /// The link's QPs (RDMAvisor).
    Peer,
    /// One QP for this process's connections (lock-based sharing).
    Session,
    /// One QP per connection (naive).
    Connection,
}

#[derive(Subcommand)]
enum Cmd {
    /// Echo every message back; exit after `--expect` connections closed.
    Serve {
        #[arg(long)]
        port: u16,
        #[arg(long)]
        expect: Option<u64>,
    },
    /// Send `--messages` messages of `--bytes` on each of `--connections`
    /// connections to `--to`, checking every echo.
    Client {
        #[arg(long)]
        to: String,
        #[arg(long, default_value_t = 1)]
        connections: u32,
        #[arg(long, default_value_t = 10)]
        messages: u32,
        #[arg(long, default_value_t = 4096)]
        bytes: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, value_enum, default_value = "peer")]
        sharing: Share,
        /// Microseconds to sleep after each round (a steady offered load,
        /// for measuring memory and CPU rather than speed).
        #[arg(long, default_value_t = 0)]
        gap_us: u64,
    },
}

/// A message: the CRC-32 of its body, then the body.
fn message(seed: u64, len: usize) -> Vec<u8> {
    let mut body = vec![0u8; len.max(4) - 4];
    datapath::region::pattern(seed, &mut body);
    let mut m = crc32fast::hash(&body).to_le_bytes().to_vec();
    m.extend_from_slice(&body);
    m
}

fn intact(m: &[u8]) -> bool {
    m.len() >= 4 && m[..4] == crc32fast::hash(&m[4..]).to_le_bytes()
}

fn serve(v: &mut Visor, port: u16, expect: Option<u64>, flags: Flags) -> Result<String, String> {
    let l = v.listen(port).map_err(|e| e.to_string())?;
    // Scripts (and the tests) start clients once this line is out.
    println!("visor-echo serve: listening on port {port}");
    std::io::Write::flush(&mut std::io::stdout()).map_err(|e| e.to_string())?;
    let (mut accepted, mut closed, mut messages, mut bytes) = (0u64, 0u64, 0u64, 0u64);
    let mut failed = 0u64;
    while expect.is_none_or(|n| closed < n) {
        match v.recv_any().map_err(|e| e.to_string())? {
            Event::Incoming { listener, .. } if listener == l => accepted += 1,
            Event::Incoming { .. } => {}
            Event::Message { fd, data } => {
                // Any client may send anything: one message that is not
                // ours is no reason to stop serving the others.
                if !intact(&data) {
                    eprintln!(
                        "visor-echo serve: a message of {} bytes on fd {fd} failed its checksum: not echoed",
                        data.len()
                    );
                    failed += 1;
                    continue;
                }
                messages += 1;
                bytes += data.len() as u64;
                // A client that closed right after sending has nothing
                // to be answered on.
                if let Err(e) = v.send(fd, &data, flags) {
                    if !v.peer_closed(fd) {
                        return Err(e.to_string());
                    }
                }
            }
            Event::Closed { fd } => {
                closed += 1;
                let _ = v.close(fd);
            }
        }
    }
    let done = format!(
        "visor-echo serve: {accepted} connections, {messages} messages, {bytes} bytes echoed"
    );
    if failed > 0 {
        return Err(format!("{done}; {failed} failed their checksum"));
    }
    Ok(format!("{done}, all intact"))
}

struct Load {
    connections: u32,
    messages: u32,
    bytes: usize,
    seed: u64,
    sharing: Sharing,
    flags: Flags,
    gap: std::time::Duration,
}

fn client(v: &mut Visor, to: &str, l: Load) -> Result<String, String> {
    let Load {
        connections,
        messages,
        bytes,
        seed,
        sharing,
        flags,
        gap,
    } = l;
    let mut fds = Vec::new();
    for _ in 0..connections {
        fds.push(v.connect_with(to, sharing).map_err(|e| e.to_string())?);
    }
    let start = std::time::Instant::now();
    let mut sent: HashMap<u32, Vec<u8>> = HashMap::new();
    for round in 0..messages {
        for (k, &fd) in fds.iter().enumerate() {
            let m = message(seed ^ (u64::from(round) << 20) ^ k as u64, bytes);
            v.send(fd, &m, flags).map_err(|e| e.to_string())?;
            sent.insert(fd, m);
        }
        for &fd in &fds {
            let echo = v
                .recv_zero_copy(fd)
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("fd {fd} closed before its echo"))?;
            if Some(&echo) != sent.get(&fd) {
                return Err(format!(
                    "round {round}: the echo on fd {fd} differs from what was sent"
                ));
            }
        }
        std::thread::sleep(gap);
    }
    let secs = start.elapsed().as_secs_f64();
    for fd in fds {
        v.close(fd).map_err(|e| e.to_string())?;
    }
    let total = u64::from(connections) * u64::from(messages);
    Ok(format!(
        "visor-echo client: {connections} connections x {messages} messages of {bytes} bytes echoed and verified in {secs:.3} s ({:.0} round trips/s)",
        total as f64 / secs.max(1e-9)
    ))
}

fn main() -> ExitCode {
    let a = Args::parse();
    let flags = match a.verb {
        Verb::Auto => Flags::Auto,
        Verb::Send => Flags::Send,
        Verb::Write => Flags::Write,
        Verb::Read => Flags::Read,
    };
    let result = Visor::open(&a.daemon)
        .map_err(|e| e.to_string())
        .and_then(|mut v| match a.cmd {
            Cmd::Serve { port, expect } => serve(&mut v, port, expect, flags),
            Cmd::Client {
                to,
                connections,
                messages,
                bytes,
                seed,
                sharing,
                gap_us,
            } => {
                let sharing = match sharing {
                    Share::Peer => Sharing::Peer,
                    Share::Session => Sharing::Session,
                    Share::Connection => Sharing::Connection,
                };
                let load = Load {
                    connections,
                    messages,
                    bytes,
                    seed,
                    sharing,
                    flags,
                    gap: std::time::Duration::from_micros(gap_us),
                };
                client(&mut v, &to, load)
            }
        });
    match result {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("visor-echo: error: {e}");
            ExitCode::FAILURE
        }
    }
}
