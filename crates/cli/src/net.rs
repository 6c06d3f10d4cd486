//! `rdmalab net serve` and `rdmalab net run`: the options of the real
//! datapath's two ends, checked, handed to the `datapath` crate.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use datapath::endpoint::PortSettings;
use datapath::impair::ImpairSpec;
use datapath::{CcName, EngineKind, Job, RunOptions, ServeOptions, Server, VerbName};

#[derive(Subcommand)]
pub enum NetCmd {
    /// Serve transfers: UDP for RoCEv2 packets and a TCP control port,
    /// both on ADDR; one transfer at a time (others are answered busy).
    Serve {
        /// Address to bind (IPv4; port 4791 is RoCEv2's).
        #[arg(long, default_value = "127.0.0.1:4791")]
        bind: SocketAddr,
        #[command(flatten)]
        port: PortArgs,
        /// The largest transfer a client may ask for (bytes; K, M, G
        /// multiply by 1000s, Ki, Mi, Gi by 1024s).
        #[arg(long, default_value = "4Gi", value_parser = bytes)]
        max_bytes: u64,
        /// Serve one session, then exit with its result.
        #[arg(long)]
        once: bool,
        /// The longest a whole control message may take to arrive
        /// (ms): a client trickling its hello is cut off after it.
        #[arg(long, default_value_t = 10_000)]
        control_timeout_ms: u64,
        /// A session whose client sends no valid packet for this long
        /// (ms) is over; datagrams from others do not count.
        #[arg(long, default_value_t = 60_000)]
        idle_timeout_ms: u64,
    },
    /// Move bytes to (write, send) or from (read) a server, verify them
    /// by checksum, and print goodput, retransmissions and latencies.
    Run {
        /// The server's address (as given to net serve --bind).
        #[arg(long)]
        to: SocketAddr,
        #[arg(long, value_enum)]
        verb: Verb,
        /// Bytes to move (K, M, G: 1000s; Ki, Mi, Gi: 1024s).
        #[arg(long, value_parser = bytes)]
        bytes: u64,
        /// The engine: a name of the transport's table ("roce", "irn",
        /// "mprdma", "uet", or an alias; an unknown name's error lists
        /// them). "uet" travels in Ultra Ethernet's PDS and SES headers,
        /// the others as RoCEv2.
        #[arg(long, value_parser = EngineKind::from_name)]
        transport: EngineKind,
        /// QPs the bytes are split over.
        #[arg(long, default_value_t = 1)]
        qps: u32,
        /// Payload bytes per packet (64 to 4096: RoCE MTUs stop at 4096).
        #[arg(long, default_value_t = 4096)]
        mtu: u32,
        /// Bytes per message (work request).
        #[arg(long, default_value = "1Mi", value_parser = bytes)]
        msg_bytes: u64,
        /// Messages outstanding per QP.
        #[arg(long, default_value_t = 4)]
        depth: u32,
        /// MP-RDMA's virtual paths, UET's entropy values: UDP source
        /// ports, one socket each (default 8 for mprdma and uet, 1
        /// otherwise).
        #[arg(long)]
        paths: Option<u16>,
        #[command(flatten)]
        port: PortArgs,
        /// Congestion control: none, or DCQCN reacting to the receivers'
        /// CE marks (--ecn-backlog).
        #[arg(long, value_enum, default_value = "none")]
        cc: Cc,
        /// Retransmission timeout (go-back-N, MP-RDMA, UET; IRN's
        /// RTO_high, its RTO_low in the paper's ratio, 10/32 of it).
        #[arg(long, default_value_t = 4000)]
        rto_us: u64,
        /// Seed of the data pattern (1 when not given) and, when given,
        /// of the initial PSNs of both ends (otherwise each end draws
        /// its own from the operating system's randomness).
        #[arg(long)]
        seed: Option<u64>,
        /// Give up when the server has sent nothing valid for
        /// --peer-timeout-ms and this many retransmission timeouts
        /// passed in a row.
        #[arg(long, default_value_t = 8)]
        max_silent_timeouts: u64,
        #[arg(long, default_value_t = 2000)]
        peer_timeout_ms: u64,
    },
}

/// The port options of both ends.
#[derive(Args)]
pub struct PortArgs {
    /// Pacing rate of the port, Gb/s.
    #[arg(long, default_value_t = 25.0)]
    rate_gbps: f64,
    /// One datagram per send call (no UDP GSO): a capture on this host
    /// then shows every packet as its own frame.
    #[arg(long)]
    no_gso: bool,
    /// Mark CE on ECN-capable datagrams found beyond this many in the
    /// receive queue (0: never), for --cc dcqcn.
    #[arg(long, default_value_t = 64)]
    ecn_backlog: usize,
    /// Impair received datagrams, e.g. loss=0.01,reorder=0.01,dup=0.001
    /// (also reorder_us, delay_us, seed).
    #[arg(long, value_parser = impairment)]
    impair: Option<ImpairSpec>,
    /// Write the frames sent and received to this pcap file.
    #[arg(long)]
    pcap: Option<PathBuf>,
}

impl PortArgs {
    fn settings(self) -> PortSettings {
        PortSettings {
            rate_gbps: self.rate_gbps,
            gso: !self.no_gso,
            ecn_backlog: self.ecn_backlog,
            impair: self.impair,
            pcap: self.pcap,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Verb {
    Write,
    Read,
    Send,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Cc {
    None,
    Dcqcn,
}

/// A byte count with an optional K/M/G (1000s) or Ki/Mi/Gi (1024s).
fn bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("`{s}`: expected a number of bytes, e.g. 4096, 64Mi or 1G"))?;
    let mult: u64 = match unit {
        "" => 1,
        "K" | "k" => 1000,
        "M" => 1_000_000,
        "G" => 1_000_000_000,
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        _ => {
            return Err(format!(
                "`{s}`: unknown unit `{unit}` (K, M, G, Ki, Mi, Gi)"
            ))
        }
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("`{s}`: too many bytes"))
}

fn impairment(s: &str) -> Result<ImpairSpec, String> {
    ImpairSpec::parse(s)
}

pub fn main(cmd: NetCmd) -> Result<(), String> {
    match cmd {
        NetCmd::Serve {
            bind,
            port,
            max_bytes,
            once,
            control_timeout_ms,
            idle_timeout_ms,
        } => {
            let mut server = Server::bind(&ServeOptions {
                bind,
                port: port.settings(),
                max_bytes,
                once,
                control_ms: control_timeout_ms,
                idle_ms: idle_timeout_ms,
            })?;
            println!(
                "rdmalab net serve: listening on {} (UDP: RoCEv2 or UET; TCP: control)",
                server.local_addr()
            );
            server.serve()
        }
        NetCmd::Run {
            to,
            verb,
            bytes,
            transport,
            qps,
            mtu,
            msg_bytes,
            depth,
            paths,
            port,
            cc,
            rto_us,
            seed,
            max_silent_timeouts,
            peer_timeout_ms,
        } => {
            let verb = match verb {
                Verb::Write => VerbName::Write,
                Verb::Read => VerbName::Read,
                Verb::Send => VerbName::Send,
            };
            let paths = paths.unwrap_or(if transport.engine().multipath() { 8 } else { 1 });
            let opts = RunOptions {
                to,
                job: Job {
                    transport,
                    verb,
                    cc: match cc {
                        Cc::None => CcName::None,
                        Cc::Dcqcn => CcName::Dcqcn,
                    },
                    bytes,
                    msg_bytes,
                    qps,
                    mtu,
                    paths,
                    rto_us,
                    seed: seed.unwrap_or(1),
                    seeded_psns: seed.is_some(),
                },
                port: port.settings(),
                depth,
                max_silent_timeouts,
                peer_timeout_ms,
            };
            let report = datapath::run(&opts)?;
            print!("{}", report.render());
            Ok(())
        }
    }
}
