//! One endpoint of the real datapath: a transport [`Nic`], its registered
//! [`Region`] and its UDP sockets, driven by the transport's one drive
//! loop (`transport::driver`) on the wall clock (picoseconds since the
//! endpoint started), as the simulator's hosts drive it on simulated
//! time. Its peers are numbered: the NIC knows peer `i` as host
//! `PEER_HOST + i` (the client and server have one; a daemon one per
//! remote daemon).
//!
//! The port: a packet goes out when the NIC's port is free, which it is
//! again after the frame's serialisation at `rate_bps` (with a burst of
//! [`BURST_BYTES`] allowed, so the loop need not wake for every frame);
//! the drive loop's wake-ups (rate limiter, timers) wait in a heap and
//! run when the clock passes them. Equal-sized datagrams to the peer
//! leave in one GSO call. The loop blocks in epoll (mio) until a packet
//! comes or a timer is due, and spins on non-blocking receives while the
//! port has something to send within [`SPIN`] (epoll's timeouts are
//! whole milliseconds; pacing needs microseconds).
//!
//! Receiving, every datagram is hostile: it must come from the peer's
//! address and ports, pass the impairment layer, parse as a frame of the
//! NIC's framing (RoCEv2 with every checksum right, or UET: `codec`),
//! and then the NIC checks QP, PSN
//! and addresses (its own counters: unknown QPs, duplicates, accesses
//! outside the region). An endpoint given memory windows
//! ([`Endpoint::windows`], `window`) also drops a request that reads or
//! writes outside the windows open to its sender, before the NIC; and
//! every endpoint drops a WRITE or SEND packet that disagrees with its
//! message's announced length (`length`), answering it with IBA's NAK
//! "invalid request" (UET: not answered). Each drop is counted by its
//! reason ([`Drops`]).
//!
//! Uses `codec`, `impair`, `region`, `socket`, `pcap`, `port`,
//! `window`, `length` and the transport's public API.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, IoSliceMut};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::{Duration, Instant};

use engine::Time;
use quinn_udp::RecvMeta;
use transport::driver::{self, Io, Wake, Wakeups};
use transport::{Completion, Nic, Packet, Transmit};
use wire::roce::BTH_AT;

use crate::codec::{self, Framing};
use crate::impair::{Datagram, Impair, ImpairCounts, ImpairSpec};
use crate::length::{self, Lengths};
use crate::pcap::Pcap;
pub use crate::port::{PortOptions, PortSettings};
use crate::region::Region;
use crate::socket::Socket;
use crate::window::Windows;

/// The NIC's own host id, and its first peer's: the datapath knows hosts
/// by address, the NIC by these (peer `i` is `PEER_HOST + i`).
pub const SELF_HOST: u32 = 0;
pub const PEER_HOST: u32 = 1;

/// Bytes the port may run ahead of its rate.
pub const BURST_BYTES: u64 = 64 * 1024;
/// Waits shorter than this spin instead of blocking in epoll, whose
/// timeouts are whole milliseconds (a paced port waits microseconds).
pub const SPIN: Time = 2 * engine::time::MS;
/// The longest a turn blocks with nothing due.
const IDLE: Duration = Duration::from_millis(20);
/// Largest UDP payload read: IPv4's largest datagram.
const MAX_DATAGRAM: usize = 65_535 - codec::IP_UDP_HEADERS;
/// Tokens from here up name the sources the endpoint's owner registers
/// ([`Endpoint::register`]); below are its sockets.
pub const EXTERNAL: usize = 1 << 20;

/// The peer: its IPv4 address, and the consecutive ports from
/// `addr.port()` it sends from (`ports` of them); packets go to `addr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peer {
    pub addr: SocketAddrV4,
    pub ports: u16,
}

impl Peer {
    /// Whether a datagram from `from` comes from this peer.
    pub fn sent(&self, from: SocketAddrV4) -> bool {
        from.ip() == self.addr.ip() && from.port().wrapping_sub(self.addr.port()) < self.ports
    }
}

/// Received datagrams dropped before the NIC, by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Drops {
    /// Not from a peer's address and ports (or no peer yet).
    pub unknown_peer: u64,
    /// Shorter than the headers they declare.
    pub truncated: u64,
    /// A field the format forbids or this implementation does not speak.
    pub malformed: u64,
    /// The ICRC (or the rebuilt IPv4 checksum) disagrees.
    pub checksum: u64,
    /// A READ, WRITE or atomic outside the windows open to its sender.
    pub outside_window: u64,
    /// A WRITE or SEND packet with more or fewer bytes than its message
    /// announced (answered with a NAK "invalid request").
    pub length_mismatch: u64,
}

/// Datagrams and system calls, both ways.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IoCounts {
    pub datagrams_sent: u64,
    pub bytes_sent: u64,
    pub send_calls: u64,
    pub datagrams_received: u64,
    pub bytes_received: u64,
    pub recv_calls: u64,
    /// Packets the NIC made that could not be encoded (a field out of its
    /// wire range, or addressed to no peer); none is expected.
    pub unencodable: u64,
    /// Datagrams marked CE at the receive queue (`PortOptions::ecn_backlog`).
    pub ce_marked: u64,
    /// Datagrams the socket refused (an error other than a full buffer,
    /// or a buffer that stayed full for a second): lost, as on a wire.
    pub send_errors: u64,
}

/// Datagrams waiting to leave in one GSO call: to one peer from one
/// socket, all `seg` bytes but the last.
struct Batch {
    sock: usize,
    to: SocketAddrV4,
    ce: bool,
    seg: usize,
    count: usize,
    /// A shorter datagram ended the batch.
    closed: bool,
    bytes: Vec<u8>,
}

pub struct Endpoint {
    pub nic: Nic,
    framing: Framing,
    wakeups: Wakeups,
    pub mem: Region,
    socks: Vec<Socket>,
    local_ip: Ipv4Addr,
    peers: Vec<Peer>,
    poll: mio::Poll,
    events: mio::Events,
    start: Instant,
    rate_bps: u64,
    burst: Time,
    port_free_at: Time,
    want_tx: bool,
    /// The time the NIC is told when it may send: the wall clock, or the
    /// time of a rate-limiter wake-up taken early within the burst.
    tx_clock: Time,
    /// The drive loop's wake-ups: the NIC's timers, and its rate
    /// limiter's (which the loop spins for: they are microseconds away).
    timer_wakes: BinaryHeap<Reverse<Time>>,
    tx_wakes: BinaryHeap<Reverse<Time>>,
    payload: Vec<u8>,
    frame: Vec<u8>,
    batch: Batch,
    max_segments: usize,
    rx_bufs: Vec<Vec<u8>>,
    rx_meta: Vec<RecvMeta>,
    rx_frame: Vec<u8>,
    /// Where the rebuilt headers are made (kept: no allocation a packet).
    rx_head: Vec<u8>,
    /// A receive stopped before the sockets were drained.
    rx_more: bool,
    ecn_backlog: usize,
    impair: Option<Impair>,
    pcap: Option<Pcap>,
    /// Tokens of the owner's sources that were readable.
    ready: Vec<usize>,
    /// The NIC's timeouts when a valid packet last came, and when.
    timeouts_heard: u64,
    heard_at: Time,
    pub completions: Vec<Completion>,
    pub drops: Drops,
    pub io: IoCounts,
    /// Memory windows: when set, what each peer may READ and WRITE.
    pub windows: Option<Windows>,
    lengths: Lengths,
}

impl Endpoint {
    /// An endpoint sending from `socks` (the first also receives; the
    /// others send a virtual path's packets each) as `local_ip`.
    pub fn new(
        nic: Nic,
        mem: Region,
        socks: Vec<Socket>,
        local_ip: Ipv4Addr,
        port: PortOptions,
    ) -> io::Result<Endpoint> {
        let PortOptions {
            rate_bps,
            gso,
            impair,
            pcap,
            ecn_backlog,
        } = port;
        let poll = mio::Poll::new()?;
        let mut socks = socks;
        for (i, s) in socks.iter_mut().enumerate() {
            poll.registry()
                .register(&mut s.io, mio::Token(i), mio::Interest::READABLE)?;
        }
        let max_segments = match gso {
            true => socks.iter().map(Socket::max_segments).min().unwrap_or(1),
            false => 1,
        };
        let batch = quinn_udp::BATCH_SIZE;
        Ok(Endpoint {
            framing: Framing::of(nic.config()),
            nic,
            wakeups: Wakeups::default(),
            mem,
            socks,
            local_ip,
            peers: Vec::new(),
            poll,
            events: mio::Events::with_capacity(64),
            start: Instant::now(),
            rate_bps,
            burst: engine::time::serialization(BURST_BYTES, rate_bps),
            port_free_at: 0,
            want_tx: false,
            tx_clock: 0,
            timer_wakes: BinaryHeap::new(),
            tx_wakes: BinaryHeap::new(),
            payload: Vec::new(),
            frame: Vec::new(),
            batch: Batch {
                sock: 0,
                to: SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0),
                ce: false,
                seg: 0,
                count: 0,
                closed: false,
                bytes: Vec::new(),
            },
            max_segments,
            rx_bufs: vec![vec![0; 1 << 16]; batch],
            rx_meta: vec![RecvMeta::default(); batch],
            rx_frame: vec![0; BTH_AT + MAX_DATAGRAM],
            rx_head: Vec::with_capacity(BTH_AT),
            rx_more: false,
            ecn_backlog,
            impair: impair
                .filter(ImpairSpec::is_active)
                .map(|s| Impair::new(s, 0)),
            pcap,
            ready: Vec::new(),
            timeouts_heard: 0,
            heard_at: 0,
            completions: Vec::new(),
            drops: Drops::default(),
            io: IoCounts::default(),
            windows: None,
            lengths: Lengths::default(),
        })
    }

    /// The first socket's address: where the peer sends.
    pub fn local_addr(&self) -> SocketAddrV4 {
        SocketAddrV4::new(self.local_ip, self.socks[0].local.port())
    }

    /// Gives the sockets back (the endpoint is done).
    pub fn into_sockets(self) -> Vec<Socket> {
        self.socks
    }

    /// Ends the pcap capture: its first error, if any.
    pub fn finish_pcap(&mut self) -> Result<(), String> {
        self.pcap.as_mut().map_or(Ok(()), Pcap::finish)
    }

    /// Adds a peer: the NIC's QPs to it name it by the host id returned.
    /// A peer added again keeps its id (a received datagram is named by
    /// the first peer that sent it: a second entry would never be).
    pub fn add_peer(&mut self, peer: Peer) -> u32 {
        let i = match self.peers.iter().position(|p| *p == peer) {
            Some(i) => i,
            None => {
                self.peers.push(peer);
                self.peers.len() - 1
            }
        };
        PEER_HOST + i as u32
    }

    /// Replaces a peer's address (its daemon came back elsewhere).
    pub fn peer_mut(&mut self, host: u32) -> Option<&mut Peer> {
        self.peers.get_mut(host.checked_sub(PEER_HOST)? as usize)
    }

    /// Watches `src` (a control connection, a listener, ...) in the
    /// endpoint's poll under `token` (at least [`EXTERNAL`]): a turn
    /// that finds it readable (or writable, if asked) lists it in
    /// [`Endpoint::take_ready`].
    pub fn register(
        &mut self,
        src: &mut impl mio::event::Source,
        token: usize,
        interest: mio::Interest,
    ) -> io::Result<()> {
        debug_assert!(token >= EXTERNAL);
        self.poll
            .registry()
            .register(src, mio::Token(token), interest)
    }

    pub fn deregister(&mut self, src: &mut impl mio::event::Source) -> io::Result<()> {
        self.poll.registry().deregister(src)
    }

    /// The owner's tokens found ready since the last call.
    pub fn take_ready(&mut self) -> Vec<usize> {
        std::mem::take(&mut self.ready)
    }

    /// The clock: picoseconds since the endpoint was made.
    pub fn now(&self) -> Time {
        self.start.elapsed().as_nanos() as Time * engine::time::NS
    }

    pub fn impaired(&self) -> ImpairCounts {
        self.impair.as_ref().map(|i| i.counts).unwrap_or_default()
    }

    /// Retransmission timeouts since the peer was last heard (a valid
    /// packet from it), and when that was.
    pub fn silence(&self) -> (u64, Time) {
        (
            self.nic.stats().timeouts - self.timeouts_heard,
            self.heard_at,
        )
    }

    /// After a post (or any input the caller gave the NIC directly).
    pub fn after_input(&mut self) {
        let now = self.now();
        driver::after_input(self, now, ());
    }

    /// One turn: receive what the sockets hold, run what is due, send
    /// what the port allows, then wait until something is due (at most
    /// `max_wait`).
    pub fn turn(&mut self, max_wait: Duration) -> io::Result<()> {
        let now = self.now();
        self.receive(now)?;
        self.release_held(now);
        loop {
            let timer = self.timer_wakes.peek().map_or(Time::MAX, |r| r.0);
            let tx = self.tx_wakes.peek().map_or(Time::MAX, |r| r.0);
            if timer.min(tx) > now {
                break;
            }
            if timer <= tx {
                self.timer_wakes.pop();
                driver::timer(self, timer, ());
            } else {
                self.tx_wakes.pop();
                driver::wake(self, tx, ());
            }
        }
        self.pump(now);
        self.wait(now, max_wait)
    }

    /// Sends while the port is free. The NIC's rate limiter wakes for
    /// every packet; a wake-up due within the burst is taken at once
    /// (the NIC is told its time), so a run of packets leaves in one turn
    /// and one GSO call.
    fn pump(&mut self, now: Time) {
        self.tx_clock = self.tx_clock.max(now);
        loop {
            if self.port_free_at > now + self.burst {
                break;
            }
            if self.want_tx {
                self.want_tx = false;
                driver::transmit(self, self.tx_clock, (), 0);
                continue;
            }
            match self.tx_wakes.peek() {
                Some(&Reverse(at)) if at <= now + self.burst => {
                    self.tx_wakes.pop();
                    self.tx_clock = self.tx_clock.max(at);
                    driver::wake(self, at, ());
                }
                _ => break,
            }
        }
        self.flush();
    }

    /// Sends the batch. A full socket buffer is waited out (the kernel
    /// is draining it); any other error loses the batch, as a wire loses
    /// frames, and the transport recovers.
    fn flush(&mut self) {
        if self.batch.count == 0 {
            return;
        }
        let b = &self.batch;
        let to = b.to;
        let sock = &self.socks[b.sock];
        let mut waits = 0;
        loop {
            self.io.send_calls += 1;
            match sock.send(to, self.local_ip, b.ce, &b.bytes, b.seg) {
                Ok(()) => {
                    self.io.datagrams_sent += b.count as u64;
                    self.io.bytes_sent += b.bytes.len() as u64;
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && waits < 100 => {
                    waits += 1;
                    sock.wait_writable(Duration::from_millis(10));
                }
                Err(_) if b.count > 1 => {
                    // The kernel refused the GSO call (no GSO on this
                    // path): send one datagram a call from now on.
                    self.max_segments = 1;
                    for seg in b.bytes.chunks(b.seg) {
                        self.io.send_calls += 1;
                        match sock.send(to, self.local_ip, b.ce, seg, seg.len()) {
                            Ok(()) => {
                                self.io.datagrams_sent += 1;
                                self.io.bytes_sent += seg.len() as u64;
                            }
                            Err(_) => self.io.send_errors += 1,
                        }
                    }
                    break;
                }
                Err(_) => {
                    self.io.send_errors += 1;
                    break;
                }
            }
        }
        self.batch.count = 0;
        self.batch.closed = false;
        self.batch.bytes.clear();
    }

    /// Appends a datagram to the batch, sending the batch first when the
    /// datagram cannot join it.
    fn push(&mut self, sock: usize, to: SocketAddrV4, ce: bool, dgram_at: usize) {
        let len = self.frame.len() - dgram_at;
        let b = &self.batch;
        let joins = b.count > 0
            && b.sock == sock
            && b.to == to
            && b.ce == ce
            && !b.closed
            && len <= b.seg
            && b.count < self.max_segments
            && b.bytes.len() + len <= MAX_DATAGRAM;
        if !joins {
            self.flush();
            self.batch.sock = sock;
            self.batch.to = to;
            self.batch.ce = ce;
            self.batch.seg = len;
        }
        let b = &mut self.batch;
        b.closed = len < b.seg;
        b.count += 1;
        b.bytes.extend_from_slice(&self.frame[dgram_at..]);
    }

    fn receive(&mut self, now: Time) -> io::Result<()> {
        self.rx_more = false;
        let mut bufs = std::mem::take(&mut self.rx_bufs);
        let mut meta = std::mem::take(&mut self.rx_meta);
        let mut result = Ok(());
        let mut seen = 0;
        'socks: for si in 0..self.socks.len() {
            for round in 0..8 {
                let n = {
                    // On the stack: a receive allocates nothing.
                    let mut it = bufs.iter_mut();
                    let mut slices: [IoSliceMut; quinn_udp::BATCH_SIZE] =
                        std::array::from_fn(|_| {
                            IoSliceMut::new(it.next().map_or(&mut [][..], |b| &mut b[..]))
                        });
                    self.io.recv_calls += 1;
                    match self.socks[si].recv(&mut slices, &mut meta) {
                        Ok(n) => n,
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(e) => {
                            result = Err(e);
                            break 'socks;
                        }
                    }
                };
                for (buf, m) in bufs.iter().zip(&meta).take(n) {
                    let stride = m.stride.max(1);
                    // An empty datagram has no chunk, but is one datagram
                    // received (and dropped) like any other.
                    let empty = (m.len == 0).then_some(&buf[..0]);
                    for seg in buf[..m.len].chunks(stride).chain(empty) {
                        seen += 1;
                        let mark = self.ecn_backlog > 0 && seen > self.ecn_backlog;
                        self.arrive(now, si, seg, m, mark);
                    }
                }
                if round == 7 {
                    self.rx_more = true;
                }
            }
        }
        self.rx_bufs = bufs;
        self.rx_meta = meta;
        result
    }

    /// A datagram came on socket `si`; `mark`: it found the receive
    /// queue beyond the ECN threshold.
    fn arrive(&mut self, now: Time, si: usize, bytes: &[u8], m: &RecvMeta, mark: bool) {
        self.io.datagrams_received += 1;
        self.io.bytes_received += bytes.len() as u64;
        let SocketAddr::V4(from) = m.addr else {
            self.drops.unknown_peer += 1;
            return;
        };
        let to_ip = match m.dst_ip {
            Some(IpAddr::V4(ip)) => ip,
            _ => self.local_ip,
        };
        let mut tos = m.ecn.map_or(0, |e| e as u8);
        if mark && tos != 0 {
            tos = wire::ipv4::ECN_CE;
            self.io.ce_marked += 1;
        }
        let d = Datagram {
            from,
            to: SocketAddrV4::new(to_ip, self.socks[si].local.port()),
            tos,
            bytes,
        };
        let Some(mut imp) = self.impair.take() else {
            self.accept(now, &d);
            return;
        };
        for _ in 0..imp.arrive(now, &d) {
            self.accept(now, &d);
        }
        self.impair = Some(imp);
    }

    fn release_held(&mut self, now: Time) {
        let Some(mut imp) = self.impair.take() else {
            return;
        };
        imp.release(now, |d| self.accept(now, d));
        self.impair = Some(imp);
    }

    /// A datagram through the impairment layer: to the NIC, or dropped.
    fn accept(&mut self, now: Time, d: &Datagram) {
        let Some(i) = self.peers.iter().position(|p| p.sent(d.from)) else {
            self.drops.unknown_peer += 1;
            return;
        };
        let len = d.bytes.len();
        self.rx_frame[BTH_AT..BTH_AT + len].copy_from_slice(d.bytes);
        let decoded = codec::rebuild(
            &mut self.rx_head,
            &mut self.rx_frame,
            len,
            d.from,
            d.to,
            d.tos,
        )
        .and_then(|n| self.framing.decode(&self.rx_frame[..n], d.to.port()));
        let dec = match decoded {
            Ok(dec) => dec,
            Err(e) => {
                match e {
                    wire::Error::Truncated { .. } => self.drops.truncated += 1,
                    wire::Error::Checksum { .. } => self.drops.checksum += 1,
                    wire::Error::Malformed { .. } | wire::Error::Unrepresentable { .. } => {
                        self.drops.malformed += 1
                    }
                }
                return;
            }
        };
        if let Some(p) = self.pcap.as_mut() {
            p.record(now, &self.rx_frame[..BTH_AT + len]);
        }
        let mut pkt = dec.packet;
        pkt.src = PEER_HOST + i as u32;
        pkt.dst = SELF_HOST;
        if self.windows.as_ref().is_some_and(|w| !w.admits(&pkt)) {
            self.drops.outside_window += 1;
            return;
        }
        if !self.lengths.admits(&pkt, self.nic.config().mtu) {
            self.drops.length_mismatch += 1;
            if self.framing == Framing::Roce {
                self.nak_length(&pkt, d);
            }
            return;
        }
        self.nic
            .on_packet_with(now, &pkt, dec.payload, &mut self.mem);
        self.timeouts_heard = self.nic.stats().timeouts;
        self.heard_at = now;
        driver::after_input(self, now, ());
    }

    /// Answers `pkt` (from datagram `d`) with a NAK "invalid request" at
    /// once, from the socket it came to; a NAK the socket refuses is lost.
    fn nak_length(&mut self, pkt: &Packet, d: &Datagram) {
        let mut out = std::mem::take(&mut self.frame);
        let si = self
            .socks
            .iter()
            .position(|s| s.local.port() == d.to.port())
            .unwrap_or(0);
        let sent = length::nak(pkt, d.to, d.from, &mut out).is_ok()
            && self.socks[si]
                .send(
                    d.from,
                    self.local_ip,
                    false,
                    &out[BTH_AT..],
                    out.len() - BTH_AT,
                )
                .is_ok();
        if sent {
            self.io.datagrams_sent += 1;
        } else {
            self.io.send_errors += 1;
        }
        self.frame = out;
    }

    /// Blocks until something is due, a socket is readable or `max_wait`
    /// passed. Spins (returns at once) when the port or the impairment
    /// layer has something due within [`SPIN`]; a timer (milliseconds:
    /// retransmission timeouts) is waited for in epoll.
    fn wait(&mut self, now: Time, max_wait: Duration) -> io::Result<()> {
        if self.rx_more {
            return Ok(());
        }
        let mut spin = self.tx_wakes.peek().map_or(Time::MAX, |r| r.0);
        if self.want_tx {
            spin = spin.min(self.port_free_at.saturating_sub(self.burst));
        }
        if let Some(t) = self.impair.as_ref().and_then(Impair::next_release) {
            spin = spin.min(t);
        }
        if spin <= now + SPIN {
            return Ok(());
        }
        let until = (spin - SPIN / 2).min(self.timer_wakes.peek().map_or(Time::MAX, |r| r.0));
        let wait = Duration::from_nanos(until.saturating_sub(now) / engine::time::NS)
            .min(IDLE)
            .min(max_wait);
        match self.poll.poll(&mut self.events, Some(wait)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(()),
            Err(e) => return Err(e),
        }
        for ev in self.events.iter() {
            if ev.token().0 >= EXTERNAL {
                self.ready.push(ev.token().0);
            }
        }
        Ok(())
    }
}

impl Io for Endpoint {
    type Id = ();

    #[inline]
    fn nic(&mut self, _: ()) -> (&mut Nic, &mut Wakeups) {
        (&mut self.nic, &mut self.wakeups)
    }

    fn poll_transmit(&mut self, now: Time, _: (), paused: u8) -> Transmit {
        self.nic
            .poll_transmit_with(now, paused, &mut self.mem, &mut self.payload)
    }

    fn send(&mut self, now: Time, _: (), mut pkt: Packet) {
        let Some(&peer) = pkt
            .dst
            .checked_sub(PEER_HOST)
            .and_then(|i| self.peers.get(i as usize))
        else {
            self.io.unencodable += 1;
            self.want_tx = true;
            return;
        };
        // A virtual path's packets leave from its own socket; anything
        // else (an ACK echoing the peer's path) from the first.
        let base = self.socks[0].local.port();
        let si = usize::from(pkt.sport.wrapping_sub(base));
        let si = if si < self.socks.len() { si } else { 0 };
        let from = SocketAddrV4::new(self.local_ip, self.socks[si].local.port());
        pkt.sport = from.port();
        // A UET ACK goes to the port its packet came from, if the peer's.
        let to = match self.framing.reply_port(&pkt) {
            Some(port) if peer.sent(SocketAddrV4::new(*peer.addr.ip(), port)) => {
                SocketAddrV4::new(*peer.addr.ip(), port)
            }
            _ => peer.addr,
        };
        let framed = self
            .framing
            .encode(&pkt, from, to, &self.payload, &mut self.frame);
        if framed.is_err() {
            self.io.unencodable += 1;
            self.want_tx = true;
            return;
        }
        if let Some(p) = self.pcap.as_mut() {
            p.record(now, &self.frame);
        }
        let wire_bytes = self.frame.len() as u64;
        self.push(si, to, pkt.ce, BTH_AT);
        self.port_free_at =
            self.port_free_at.max(now) + engine::time::serialization(wire_bytes, self.rate_bps);
        self.want_tx = true;
    }

    fn ready(&mut self, _: Time, _: ()) {
        self.want_tx = true;
    }

    fn call_at(&mut self, at: Time, _: (), why: Wake) {
        match why {
            Wake::Timer => self.timer_wakes.push(Reverse(at)),
            Wake::Transmit => self.tx_wakes.push(Reverse(at)),
        }
    }

    fn completion(&mut self, _: Time, _: (), c: Completion) {
        self.completions.push(c);
    }
}
