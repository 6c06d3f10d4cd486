//! The endpoint's UDP sockets: one per source port it sends from (one,
//! or one per MP-RDMA virtual path, on consecutive ports), non-blocking,
//! with quinn-udp underneath for what a fast UDP path needs: batched
//! receive (`recvmmsg`) with GRO, GSO for runs of equal-sized datagrams
//! to one peer, and the ECN bits read and written as IP_TOS control
//! messages. Large kernel buffers, so a burst waits in the socket rather
//! than being dropped.
//!
//! Uses only the sockets' crates (mio, socket2, quinn-udp).

use std::io::{self, IoSliceMut};
use std::net::{SocketAddr, SocketAddrV4};

use quinn_udp::{EcnCodepoint, RecvMeta, Transmit, UdpSockRef, UdpSocketState};

/// Bytes of the kernel buffers asked for (the kernel may cap them at
/// `net.core.rmem_max` / `wmem_max`).
const SOCKET_BUFFER: usize = 16 << 20;

/// One bound socket and its quinn-udp state.
pub struct Socket {
    pub io: mio::net::UdpSocket,
    state: UdpSocketState,
    pub local: SocketAddrV4,
}

/// Why binding failed, with the address.
fn bind_error(addr: SocketAddrV4, e: io::Error) -> io::Error {
    let what = match e.kind() {
        io::ErrorKind::AddrInUse => "the port is in use".to_string(),
        io::ErrorKind::AddrNotAvailable => "no interface has that address".to_string(),
        io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    };
    io::Error::new(e.kind(), format!("cannot bind UDP {addr}: {what}"))
}

impl Socket {
    pub fn bind(addr: SocketAddrV4) -> io::Result<Socket> {
        let s = socket2::Socket::new(
            socket2::Domain::IPV4,
            socket2::Type::DGRAM,
            Some(socket2::Protocol::UDP),
        )?;
        s.bind(&SocketAddr::V4(addr).into())
            .map_err(|e| bind_error(addr, e))?;
        let std: std::net::UdpSocket = s.into();
        let state = UdpSocketState::new(UdpSockRef::from(&std))?;
        // quinn-udp asks for receive timestamps, which nothing here reads;
        // with them the control messages of a GRO batch (segment size,
        // destination, TOS) overflow its buffer and the TOS, which holds
        // the ECN bits, is cut (MSG_CTRUNC).
        set_int(&std, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 0)?;
        // Best effort: an unprivileged process gets what rmem_max allows.
        let _ = state.set_recv_buffer_size(UdpSockRef::from(&std), SOCKET_BUFFER);
        let _ = state.set_send_buffer_size(UdpSockRef::from(&std), SOCKET_BUFFER);
        let local = match std.local_addr()? {
            SocketAddr::V4(a) => a,
            SocketAddr::V6(a) => {
                return Err(io::Error::other(format!("bound to IPv6 {a}")));
            }
        };
        Ok(Socket {
            io: mio::net::UdpSocket::from_std(std),
            state,
            local,
        })
    }

    /// Sends `contents` to `to`: one datagram, or several of
    /// `segment` bytes each (the last may be shorter) in one call (GSO).
    /// `WouldBlock` when the socket's buffer is full: nothing was sent.
    pub fn send(
        &self,
        to: SocketAddrV4,
        from_ip: std::net::Ipv4Addr,
        ce: bool,
        contents: &[u8],
        segment: usize,
    ) -> io::Result<()> {
        let t = Transmit {
            destination: SocketAddr::V4(to),
            ecn: Some(if ce {
                EcnCodepoint::Ce
            } else {
                EcnCodepoint::Ect0
            }),
            contents,
            segment_size: (segment < contents.len()).then_some(segment),
            src_ip: Some(from_ip.into()),
        };
        self.state.try_send(UdpSockRef::from(&self.io), &t)
    }

    /// Receives into `bufs` (one datagram, or a GRO run of them, each).
    pub fn recv(&self, bufs: &mut [IoSliceMut<'_>], meta: &mut [RecvMeta]) -> io::Result<usize> {
        self.state.recv(UdpSockRef::from(&self.io), bufs, meta)
    }

    /// Blocks until the socket can take a datagram, at most `limit`.
    pub fn wait_writable(&self, limit: std::time::Duration) {
        use std::os::fd::AsRawFd;
        let mut fd = libc::pollfd {
            fd: self.io.as_raw_fd(),
            events: libc::POLLOUT,
            revents: 0,
        };
        // SAFETY: one valid pollfd; the result only tells whether to retry.
        unsafe { libc::poll(&mut fd, 1, limit.as_millis() as libc::c_int) };
    }

    /// How many datagrams one [`Socket::send`] may carry.
    pub fn max_segments(&self) -> usize {
        self.state.max_gso_segments().max(1)
    }
}

/// Binds `count` sockets on consecutive ports from `addr`'s (port 0: the
/// kernel picks the first, and the run is retried elsewhere if a later
/// port is taken).
pub fn bind_run(addr: SocketAddrV4, count: u16) -> io::Result<Vec<Socket>> {
    let mut last = None;
    for _ in 0..32 {
        let first = Socket::bind(addr)?;
        let base = first.local;
        let mut socks = vec![first];
        for i in 1..count {
            let Some(port) = base.port().checked_add(i) else {
                break;
            };
            match Socket::bind(SocketAddrV4::new(*base.ip(), port)) {
                Ok(s) => socks.push(s),
                Err(e) => {
                    last = Some(e);
                    break;
                }
            }
        }
        if socks.len() == usize::from(count) {
            return Ok(socks);
        }
        if addr.port() != 0 {
            break;
        }
    }
    Err(last.unwrap_or_else(|| {
        io::Error::new(
            io::ErrorKind::AddrInUse,
            format!("cannot bind {count} consecutive UDP ports from {addr}"),
        )
    }))
}

fn set_int(
    s: &impl std::os::fd::AsRawFd,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    // SAFETY: a valid socket and a c_int option value with its length.
    let rc = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            level,
            name,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The largest IPv4 packet the route to `peer` carries (the interface's
/// MTU, or what path MTU discovery learned): `IP_MTU` of a socket
/// connected to it.
pub fn path_mtu(peer: SocketAddrV4) -> io::Result<usize> {
    let s = std::net::UdpSocket::bind("0.0.0.0:0")?;
    s.connect(peer)?;
    let mut mtu: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    use std::os::fd::AsRawFd;
    // SAFETY: a valid socket, and a c_int with its length for the output.
    let rc = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_IP,
            libc::IP_MTU,
            (&mut mtu as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(mtu.max(0) as usize)
}
