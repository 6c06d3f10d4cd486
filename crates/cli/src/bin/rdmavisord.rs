//! `rdmavisord`: the RDMAvisor daemon of this host (`--help`; the
//! daemon is `visor::daemon`, docs/visor.md).

use std::net::SocketAddrV4;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use clap::Parser;
use datapath::impair::ImpairSpec;
use datapath::EngineKind;
use visor::daemon::{Config, Daemon};

/// RDMA as a service: serves local applications over a Unix socket and
/// shares one set of QPs per remote daemon among all their connections.
#[derive(Parser)]
#[command(name = "rdmavisord", version)]
struct Args {
    /// The Unix socket applications connect to.
    #[arg(long, default_value = "/tmp/rdmavisor.sock")]
    control: PathBuf,
    /// The control socket's permission bits, octal: who may open a
    /// session. Every local user by default (the daemon serves the
    /// host; each session reaches only its own connections); 660 and a
    /// group, or 600, to restrict it.
    #[arg(long, default_value = "666", value_parser = octal)]
    socket_mode: u32,
    /// This host's address for RoCEv2 (UDP) and the daemons' links (TCP);
    /// every daemon of a cluster uses the same port.
    #[arg(long, default_value = "127.0.0.1:4791")]
    bind: SocketAddrV4,
    /// The engine of the daemon's QPs: a name of the transport's table
    /// that carries every verb the daemon posts ("roce", "irn"; an
    /// unknown name's error lists them).
    #[arg(long, default_value = "irn", value_parser = EngineKind::from_name)]
    transport: EngineKind,
    /// QPs shared by all connections to one remote daemon.
    #[arg(long, default_value_t = 1)]
    qps_per_peer: u32,
    #[arg(long, default_value_t = 4096)]
    mtu: u32,
    /// The largest message, and the size of each registered buffer slot.
    #[arg(long, default_value_t = 65536)]
    slot_bytes: usize,
    /// Buffer slots in the registered region (sends and posted receives;
    /// the region, slots x slot bytes, is most of the daemon's memory).
    #[arg(long, default_value_t = 1024)]
    slots: usize,
    /// Receives posted on each shared QP.
    #[arg(long, default_value_t = 128)]
    recv_per_qp: usize,
    /// Receives posted on each QP of a connection that asked for its own
    /// (naive) or its session's (lock-based sharing).
    #[arg(long, default_value_t = 32)]
    own_recv_per_qp: usize,
    /// FLAGS auto: messages from this size go by WRITE, smaller ones by
    /// SEND (the daemon lowers it while its CPU is busy).
    #[arg(long, default_value_t = 16384)]
    one_sided_bytes: usize,
    #[arg(long, default_value_t = 25.0)]
    rate_gbps: f64,
    #[arg(long, default_value_t = 4000)]
    rto_us: u64,
    /// Bytes of each of a client session's two shared-memory rings
    /// (sends in; replies and messages out), a power of two. 256 KB
    /// moved 64 KB messages at a third of 1 MB's rate here.
    #[arg(long, default_value_t = 1 << 20)]
    ring_bytes: usize,
    /// Bytes the daemon queues for a client beyond its ring before the
    /// senders of the connections delivering to it are asked to pause
    /// (they resume once the client has read half of it).
    #[arg(long, default_value_t = 8 << 20)]
    backlog_bytes: usize,
    /// Sessions open at once: a client's session past this is refused,
    /// saying so (each takes three file descriptors and up to twice
    /// --ring-bytes of memory).
    #[arg(long, default_value_t = 1024)]
    max_sessions: usize,
    /// Sessions one user (the client's uid) may have open at once, so
    /// that one user cannot take them all from the others.
    #[arg(long, default_value_t = 256)]
    max_sessions_per_user: usize,
    /// Impair the datagrams this daemon receives, e.g.
    /// loss=0.01,reorder=0.05,reorder_us=100 (also dup, delay_us, seed),
    /// as `rdmalab net run --impair`: the transport's recovery under
    /// loss on a network that has none.
    #[arg(long, value_parser = ImpairSpec::parse)]
    impair: Option<ImpairSpec>,
}

fn octal(s: &str) -> Result<u32, String> {
    u32::from_str_radix(s, 8).map_err(|_| format!("`{s}` is not an octal mode such as 660"))
}

fn main() -> ExitCode {
    let a = Args::parse();
    let cfg = Config {
        control: a.control,
        socket_mode: a.socket_mode,
        bind: a.bind,
        transport: a.transport,
        qps_per_peer: a.qps_per_peer,
        mtu: a.mtu,
        slot_bytes: a.slot_bytes,
        slots: a.slots,
        recv_per_qp: a.recv_per_qp,
        own_recv_per_qp: a.own_recv_per_qp,
        one_sided_bytes: a.one_sided_bytes,
        rate_gbps: a.rate_gbps,
        rto_us: a.rto_us,
        ring_bytes: a.ring_bytes,
        backlog_bytes: a.backlog_bytes,
        max_sessions: a.max_sessions,
        max_sessions_per_user: a.max_sessions_per_user,
        impair: a.impair,
    };
    let control = cfg.control.clone();
    let result = Daemon::bind(cfg).and_then(|mut d| {
        println!(
            "rdmavisord: serving {} (links and RoCEv2 on {}; huge pages: {})",
            control.display(),
            d.local_addr(),
            if d.huge_pages() {
                "advised"
            } else {
                "unavailable, 4 KB pages"
            }
        );
        d.run(&AtomicBool::new(false))
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rdmavisord: error: {e}");
            ExitCode::FAILURE
        }
    }
}
