//! What the two ends of a transfer agree on before any RoCEv2 packet
//! moves, and how: the job ([`Job`]: transport, verb, bytes, QPs, MTU),
//! the control messages ([`Msg`], one JSON object a line over a TCP
//! connection to the server's address, as RDMA's connection managers
//! exchange QP numbers and PSNs out of band), the job's split into
//! messages, and the NIC both ends build from it.
//!
//! The control connection is hostile input too: a line longer than
//! [`MAX_LINE`], bytes that are not a message, or a job outside the
//! server's limits end that session with an error naming what was wrong.
//!
//! Uses `transport`'s public API and `endpoint` (host ids; a control
//! connection watched in an endpoint's poll).

use std::io::{self, BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use transport::{
    check_work_request, CcConfig, DcqcnParams, Engine, EngineKind, InitialPsns, IrnConfig,
    MpRdmaConfig, Nic, NicConfig, QpConfig, UetCc, UetConfig, Verb, WorkRequest,
};

use crate::endpoint::{Endpoint, PEER_HOST};

/// The control protocol's version: both ends must speak the same.
pub const VERSION: u32 = 1;
/// The longest control line read.
pub const MAX_LINE: usize = 64 * 1024;
/// Most QPs, virtual paths and messages a job may have.
pub const MAX_QPS: u32 = 1024;
pub const MAX_PATHS: u16 = 256;
pub const MAX_MESSAGES: u64 = 1 << 22;
/// Most messages per QP with UET, whose SES message id has 16 bits.
pub const MAX_UET_MESSAGES: u64 = 1 << 16;
/// The largest payload per packet (`--mtu`): RoCE's path MTUs are 256 to
/// 4096 bytes, whatever the Ethernet MTU.
pub const MAX_MTU: u32 = 4096;
/// Where the regions sit in each end's address space (any base works;
/// distinct ones make a wrong address visible).
pub const CLIENT_BASE: u64 = 0x1000_0000_0000;
pub const SERVER_BASE: u64 = 0x2000_0000_0000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VerbName {
    Write,
    Read,
    Send,
}

/// A job's transport in control messages: its name in the transport's
/// table of engines ([`EngineKind::from_name`], aliases accepted).
mod engine_name {
    use serde::{Deserialize, Deserializer, Serializer};
    use transport::EngineKind;

    pub fn serialize<S: Serializer>(k: &EngineKind, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(k.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<EngineKind, D::Error> {
        let s = String::deserialize(d)?;
        EngineKind::from_name(&s).map_err(serde::de::Error::custom)
    }
}

impl VerbName {
    pub fn name(self) -> &'static str {
        match self {
            VerbName::Write => "write",
            VerbName::Read => "read",
            VerbName::Send => "send",
        }
    }

    pub fn verb(self) -> Verb {
        match self {
            VerbName::Write => Verb::Write,
            VerbName::Read => Verb::Read,
            VerbName::Send => Verb::Send,
        }
    }
}

/// The congestion control both ends run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CcName {
    /// Every QP sends at the port's rate.
    None,
    /// DCQCN (the transport's, with its default parameters): the
    /// receiver's CE marks (`endpoint::PortOptions::ecn_backlog`) come
    /// back as CNPs and cut the sender's rate.
    Dcqcn,
}

impl CcName {
    pub fn name(self) -> &'static str {
        match self {
            CcName::None => "none",
            CcName::Dcqcn => "dcqcn",
        }
    }
}

/// IRN's RTOs (100 and 320 us in the paper) are an RNIC's; a user-space
/// endpoint on a shared core is descheduled for longer, so they scale with
/// `rto_us` (RTO_high), keeping the paper's ratio (RTO_low 10/32 of it).
pub fn irn_rtos(c: IrnConfig, rto_us: u64) -> IrnConfig {
    IrnConfig {
        rto_high: rto_us * engine::time::US,
        rto_low: (rto_us * engine::time::US * 10 / 32).max(1),
        ..c
    }
}

/// A transfer: the client moves `bytes` (split evenly over `qps` QPs, in
/// messages of at most `msg_bytes`) to the server (write, send) or from
/// it (read).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Job {
    #[serde(with = "engine_name")]
    pub transport: EngineKind,
    pub verb: VerbName,
    pub cc: CcName,
    pub bytes: u64,
    pub msg_bytes: u64,
    pub qps: u32,
    /// Payload bytes per packet.
    pub mtu: u32,
    /// Sockets (UDP source ports) the client sends from: MP-RDMA's
    /// virtual paths, UET's entropy values; 1 for the others.
    pub paths: u16,
    pub rto_us: u64,
    /// The pattern of the source region (and, with `seeded_psns`, the
    /// initial PSNs).
    pub seed: u64,
    /// The initial PSNs come from `seed`, for runs that must repeat
    /// exactly; otherwise each end draws its own from the operating
    /// system's randomness every session, so an outsider cannot compute
    /// them. Absent in a hello: false.
    #[serde(default)]
    pub seeded_psns: bool,
}

impl Job {
    /// The engine both ends run: its defaults, with the job's values for
    /// the parameters it has.
    pub fn engine(&self) -> Engine {
        match self.transport.engine() {
            Engine::Irn(c) => Engine::Irn(irn_rtos(c, self.rto_us)),
            Engine::MpRdma(c) => Engine::MpRdma(MpRdmaConfig {
                num_vps: self.paths,
                ..c
            }),
            // NSCC off: the frames carry no NSCC state yet (ACK_CC's is
            // zeros, docs/uet.md), and a window fed nothing stalls.
            Engine::Uet(c) => Engine::Uet(UetConfig {
                evs: self.paths,
                rto: self.rto_us * engine::time::US,
                cc: UetCc::None,
                ..c
            }),
            e => e,
        }
    }

    /// Checks everything either end could be handed: errors say which
    /// option is wrong.
    pub fn check(&self, max_bytes: u64) -> Result<(), String> {
        if self.bytes == 0 || self.bytes > max_bytes {
            return Err(format!(
                "--bytes must be in 1..={max_bytes}, got {}",
                self.bytes
            ));
        }
        if self.msg_bytes == 0 {
            return Err("--msg-bytes must be positive".into());
        }
        if !(1..=MAX_QPS).contains(&self.qps) {
            return Err(format!("--qps must be in 1..={MAX_QPS}, got {}", self.qps));
        }
        if self.mtu > MAX_MTU {
            return Err(format!(
                "--mtu {}: RoCE MTUs stop at {MAX_MTU} (256, 512, 1024, 2048 or 4096 on \
                 RDMA NICs; a 9000-byte Ethernet MTU still carries 4096-byte RoCE payloads)",
                self.mtu
            ));
        }
        if self.mtu < 64 {
            return Err(format!("--mtu must be in 64..={MAX_MTU}, got {}", self.mtu));
        }
        if !(1..=MAX_PATHS).contains(&self.paths) {
            return Err(format!(
                "--paths must be in 1..={MAX_PATHS}, got {}",
                self.paths
            ));
        }
        let engine = self.transport.engine();
        if self.cc != CcName::None && engine.keeps_own_window() {
            return Err(format!(
                "--cc {} cannot drive {}, which keeps its own window",
                self.cc.name(),
                self.transport
            ));
        }
        if self.paths > 1 && !engine.multipath() {
            return Err(format!(
                "--paths above 1 needs --transport {} (its virtual paths)",
                EngineKind::names_where(Engine::multipath).join(" or ")
            ));
        }
        if !(1..=10_000_000).contains(&self.rto_us) {
            return Err(format!(
                "--rto-us must be in 1..=10000000, got {}",
                self.rto_us
            ));
        }
        let messages: u64 = (0..self.qps)
            .map(|q| self.messages_of(q).count() as u64)
            .sum();
        if messages > MAX_MESSAGES {
            return Err(format!(
                "{messages} messages: at most {MAX_MESSAGES} (raise --msg-bytes)"
            ));
        }
        if let Engine::Uet(_) = engine {
            self.check_uet()?;
        }
        let wr = WorkRequest {
            verb: self.verb.verb(),
            len: self.msg_bytes.min(self.bytes),
            ..WorkRequest::default()
        };
        check_work_request(&self.engine(), &wr, self.mtu).map_err(|e| {
            format!(
                "--transport {} with --verb {}: {e}",
                self.transport.name(),
                self.verb.name()
            )
        })?;
        self.nic(0).map(|_| ())
    }

    /// What UET's headers (`transport::uet_frame`) and the datapath's
    /// UET leave out.
    fn check_uet(&self) -> Result<(), String> {
        if self.cc != CcName::None {
            return Err(format!(
                "--cc {} with --transport uet: UET has no CNP (its control, NSCC, is not on the datapath)",
                self.cc.name()
            ));
        }
        if self.msg_bytes.min(self.bytes) > u64::from(u32::MAX) {
            return Err(format!(
                "--msg-bytes {} with --transport uet: UET's request length has 32 bits",
                self.msg_bytes
            ));
        }
        let most = self.messages_of(0).count() as u64;
        if most > MAX_UET_MESSAGES {
            return Err(format!(
                "{most} messages per QP with --transport uet: at most {MAX_UET_MESSAGES} (SES message ids have 16 bits; raise --msg-bytes or --qps)"
            ));
        }
        Ok(())
    }

    /// QP `q`'s share of the bytes: offsets `start..end`.
    pub fn share(&self, q: u32) -> (u64, u64) {
        let per = self.bytes.div_ceil(u64::from(self.qps));
        let start = (per * u64::from(q)).min(self.bytes);
        (start, (start + per).min(self.bytes))
    }

    /// QP `q`'s messages, in post order: (offset, length).
    pub fn messages_of(&self, q: u32) -> impl Iterator<Item = (u64, u64)> {
        let (start, end) = self.share(q);
        let step = self.msg_bytes.max(1);
        (start..end)
            .step_by(step as usize)
            .map(move |o| (o, step.min(end - o)))
    }

    /// The NIC of either end, paced at `rate_bps`.
    pub fn nic(&self, rate_bps: u64) -> Result<Nic, String> {
        let cfg = NicConfig {
            mtu: self.mtu,
            rto: self.rto_us * engine::time::US,
            line_rate_bps: rate_bps.max(1),
            engine: self.engine(),
            cc: match self.cc {
                CcName::None => CcConfig::None,
                CcName::Dcqcn => CcConfig::Dcqcn(DcqcnParams::default()),
            },
            ..NicConfig::default()
        };
        Nic::new(cfg).map_err(|e| format!("transport configuration: {e}"))
    }

    /// Creates the job's QPs on `nic`: QP `i` talks to the peer's QP `i`,
    /// sends from UDP port `sport` (the first of its paths) and starts its
    /// PSNs at `own[i]`, expecting the peer's at `peer[i]`.
    pub fn create_qps(
        &self,
        nic: &mut Nic,
        sport: u16,
        own: &[u32],
        peer: &[u32],
    ) -> Result<(), String> {
        for q in 0..self.qps {
            let i = q as usize;
            let cfg = QpConfig {
                peer_host: PEER_HOST,
                peer_qp: q,
                sport,
            };
            let psns = InitialPsns {
                sq_psn: own[i],
                rq_psn: peer[i],
            };
            let id = nic
                .create_qp_with_psns(cfg, psns)
                .map_err(|e| format!("QP {q}: {e}"))?;
            if id != q {
                return Err(format!("QP {q} was numbered {id}"));
            }
        }
        Ok(())
    }

    /// One end's initial PSNs: from `seed ^ salt` (each end its own
    /// salt) when the job asks for reproducible PSNs, else from the
    /// operating system's randomness.
    pub fn initial_psns(&self, salt: u64) -> Result<Vec<u32>, String> {
        if self.seeded_psns {
            return Ok(psns(self.seed ^ salt, self.qps));
        }
        use std::io::Read;
        let mut bytes = vec![0u8; 4 * self.qps as usize];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut bytes))
            .map_err(|e| format!("initial PSNs from /dev/urandom: {e}"))?;
        Ok(bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) & 0xff_ffff)
            .collect())
    }
}

/// Initial PSNs, 24 bits each, from a seed.
pub fn psns(seed: u64, qps: u32) -> Vec<u32> {
    let mut rng = engine::Rng::new(seed, engine::StreamKind::Host, 0x5e55);
    (0..qps).map(|_| rng.below(1 << 24) as u32).collect()
}

/// One control message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "msg", rename_all = "lowercase")]
pub enum Msg {
    /// Client: the job, the first of its UDP ports, its QPs' first PSNs.
    Hello {
        version: u32,
        job: Job,
        udp_port: u16,
        psns: Vec<u32>,
    },
    /// Server: its UDP port, its QPs' first PSNs, where its region is,
    /// and (read) the checksum of what the client will read.
    Ready {
        udp_port: u16,
        psns: Vec<u32>,
        region_base: u64,
        checksum: u32,
    },
    /// Client: every message completed.
    Done,
    /// Server: the checksum of its region, what it dropped, and the
    /// data packets it sent again (READ responses).
    Outcome {
        checksum: u32,
        drops: Vec<(String, u64)>,
        retransmitted: u64,
    },
    /// Either end: the session is over, and why.
    Error { message: String },
}

/// One end of a control connection: JSON messages a line (a transfer's
/// [`Msg`], or another protocol's: the daemons' links use it too).
pub struct Control {
    reader: BufReader<TcpStream>,
    line: Vec<u8>,
    /// When the first byte of the line being read arrived: a message's
    /// deadline runs from there, however its bytes trickle in.
    begun: Option<Instant>,
    /// Whole lines read (messages or not).
    lines: u64,
}

impl Control {
    pub fn new(stream: TcpStream) -> io::Result<Control> {
        stream.set_nodelay(true)?;
        Ok(Control {
            reader: BufReader::new(stream),
            line: Vec::new(),
            begun: None,
            lines: 0,
        })
    }

    pub fn stream(&self) -> &TcpStream {
        self.reader.get_ref()
    }

    /// Watches the connection in `ep`'s poll under `token`, so that a
    /// message wakes the endpoint's turn.
    pub fn watch(&self, ep: &mut Endpoint, token: usize) -> Result<(), String> {
        use std::os::fd::AsRawFd;
        let fd = self.stream().as_raw_fd();
        ep.register(
            &mut mio::unix::SourceFd(&fd),
            token,
            mio::Interest::READABLE,
        )
        .map_err(|e| e.to_string())
    }

    pub fn send<T: Serialize>(&mut self, m: &T) -> Result<(), String> {
        let mut line = serde_json::to_vec(m).map_err(|e| e.to_string())?;
        line.push(b'\n');
        let s = self.reader.get_mut();
        s.set_nonblocking(false).map_err(|e| e.to_string())?;
        s.write_all(&line)
            .map_err(|e| format!("control connection: {e}"))
    }

    /// Sends what the socket takes at once, without waiting: for a
    /// parting message to a client that may never read.
    pub fn send_now<T: Serialize>(&mut self, m: &T) -> Result<(), String> {
        let mut line = serde_json::to_vec(m).map_err(|e| e.to_string())?;
        line.push(b'\n');
        let s = self.reader.get_mut();
        s.set_nonblocking(true).map_err(|e| e.to_string())?;
        s.write(&line)
            .map(|_| ())
            .map_err(|e| format!("control connection: {e}"))
    }

    /// Waits at most `limit` for the whole of the next message: the
    /// limit is the message's, not each read's, so a peer trickling a
    /// byte at a time cannot stretch it.
    pub fn recv<T: DeserializeOwned>(&mut self, limit: Duration) -> Result<T, String> {
        let until = Instant::now() + limit;
        self.reader
            .get_ref()
            .set_nonblocking(false)
            .map_err(|e| e.to_string())?;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!(
                    "control connection: no whole message within {} ms ({} bytes of one)",
                    limit.as_millis(),
                    self.line.len()
                ));
            }
            self.reader
                .get_ref()
                .set_read_timeout(Some(left))
                .map_err(|e| e.to_string())?;
            match self.read_line() {
                Ok(Some(m)) => return Ok(m),
                Ok(None) => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// How long the line being read has been arriving (none: no byte of
    /// the next message yet).
    pub fn partial_for(&self) -> Option<Duration> {
        self.begun.map(|t| t.elapsed())
    }

    /// Whole lines read so far, messages or not.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// Bytes of the next message received so far.
    pub fn partial_len(&self) -> usize {
        self.line.len()
    }

    /// The next message if a whole line has arrived, without waiting.
    pub fn try_recv<T: DeserializeOwned>(&mut self) -> Result<Option<T>, String> {
        self.reader
            .get_ref()
            .set_nonblocking(true)
            .map_err(|e| e.to_string())?;
        self.read_line()
    }

    fn read_line<T: DeserializeOwned>(&mut self) -> Result<Option<T>, String> {
        loop {
            let buf = match self.reader.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                // A read timeout: the caller's deadline decides.
                Err(e) if e.kind() == io::ErrorKind::TimedOut => return Ok(None),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(format!("control connection: {e}")),
            };
            if buf.is_empty() {
                return Err("control connection closed by the peer".into());
            }
            let (take, end) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            self.begun.get_or_insert_with(Instant::now);
            self.line.extend_from_slice(&buf[..take]);
            self.reader.consume(take);
            if self.line.len() > MAX_LINE {
                return Err(format!("control connection: a line over {MAX_LINE} bytes"));
            }
            if end {
                self.begun = None;
                self.lines += 1;
                let line = std::mem::take(&mut self.line);
                return serde_json::from_slice(&line)
                    .map(Some)
                    .map_err(|e| format!("control connection: not a message: {e}"));
            }
        }
    }
}
