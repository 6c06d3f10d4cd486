//! A transport packet as the UDP datagram a socket sends, and back: the
//! frame of `transport::frame` (RoCEv2) or, for the UET engine,
//! `transport::uet_frame` (Ultra Ethernet's PDS and SES headers; see
//! [`Framing`]), with the addresses and ports of the real sockets, of
//! which the socket carries the part after the UDP header and the kernel
//! writes the rest.
//!
//! RoCEv2's ICRC covers the IPv4 and UDP headers, so both ends must know
//! them as the kernel wrote them. They do: the addresses and ports are the
//! sockets', the length is the datagram's, TOS, TTL and the checksums
//! are masked out of the ICRC, and the identification is 0 because the
//! sockets are unconnected and set don't-fragment (Linux's
//! `ip_select_ident` writes 0 then; quinn-udp sets `IP_PMTUDISC_PROBE`).
//! The receiver rebuilds those headers in front of the datagram and
//! parses the whole frame, checksums included, as any frame. UET has no
//! ICRC: its check is the UDP checksum, which the kernel verifies and
//! strips (the rebuilt header says 0, "none"); the frame a UET sender
//! records in its `--pcap` carries the one it computed.
//!
//! The MAC addresses are not on a UDP socket's path: a frame shows
//! 02:00 followed by the IPv4 address (locally administered).
//!
//! Uses `transport::{frame, uet_frame}` and `wire`.

use std::net::{Ipv4Addr, SocketAddrV4};

use transport::frame::{self, Decoded};
use transport::uet_frame::{self, UetWire};
use transport::{Engine, NicConfig, Packet, PacketKind, UetMode};
use wire::ethernet::{EthernetRepr, ETHERTYPE_IPV4};
use wire::ipv4::{Ipv4Repr, DEFAULT_TTL};
use wire::roce::BTH_AT;
use wire::udp::UdpRepr;
use wire::{Endpoint, Error};

/// Bytes a datagram adds to a packet's payload at most: the BTH, the
/// largest extended headers (an AtomicETH), rdmalab's extension, the pad
/// and the ICRC.
pub const MAX_DATAGRAM_OVERHEAD: usize = wire::bth::HEADER_LEN
    + wire::iba::ATOMIC_ETH_LEN
    + wire::extension::MAX_LEN
    + 3
    + wire::icrc::ICRC_LEN;

/// Bytes of the IPv4 and UDP headers the kernel adds to a datagram.
pub const IP_UDP_HEADERS: usize = wire::ipv4::HEADER_LEN + wire::udp::HEADER_LEN;

/// The frame's view of an IPv4 address.
pub fn endpoint(ip: Ipv4Addr) -> Endpoint {
    let [a, b, c, d] = ip.octets();
    Endpoint {
        mac: [0x02, 0x00, a, b, c, d],
        ip,
    }
}

/// The frames a NIC's packets travel in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// RoCEv2 (`transport::frame`): go-back-N, IRN, MP-RDMA.
    Roce,
    /// Ultra Ethernet (`transport::uet_frame`): the UET engine.
    Uet(UetWire),
}

impl Framing {
    /// The framing of a NIC's engine.
    pub fn of(cfg: &NicConfig) -> Framing {
        match cfg.engine {
            Engine::Uet(c) => Framing::Uet(UetWire {
                mtu: cfg.mtu,
                ordered: c.mode == UetMode::Rod,
            }),
            _ => Framing::Roce,
        }
    }

    /// Replaces `frame` with the frame of `p` from socket `from` to socket
    /// `to` (`p.sport` must be `from`'s port); the datagram to send is
    /// `&frame[BTH_AT..]`.
    pub fn encode(
        self,
        p: &Packet,
        from: SocketAddrV4,
        to: SocketAddrV4,
        payload: &[u8],
        frame: &mut Vec<u8>,
    ) -> Result<(), Error> {
        debug_assert_eq!(p.sport, from.port());
        frame.clear();
        let (src, dst) = (endpoint(*from.ip()), endpoint(*to.ip()));
        match self {
            Framing::Roce => frame::encode_to(p, &src, &dst, to.port(), payload, frame),
            Framing::Uet(w) => uet_frame::encode(p, w, &src, &dst, to.port(), payload, frame),
        }
    }

    /// Parses a frame [`rebuild`] made for socket port `port`. Fails with
    /// the reason, never panics, on anything but a valid frame.
    pub fn decode(self, frame: &[u8], port: u16) -> Result<Decoded<'_>, Error> {
        match self {
            Framing::Roce => frame::decode_on(frame, port),
            Framing::Uet(w) => uet_frame::decode(frame, w, port),
        }
    }

    /// The UDP port `p` goes to on its peer, when it is not the peer's
    /// first: a UET ACK or NACK goes back to the port of the packet it
    /// answers, the entropy value it echoes (`vp`), which is how the
    /// sender learns it.
    pub fn reply_port(self, p: &Packet) -> Option<u16> {
        match (self, p.kind) {
            (Framing::Uet(_), PacketKind::Ack | PacketKind::Nack) => Some(p.vp),
            _ => None,
        }
    }
}

/// Makes a received datagram a frame again: `buf[BTH_AT..BTH_AT + len]`
/// holds it, and its first [`BTH_AT`] bytes are overwritten with the
/// headers the kernel stripped (from socket `from` to socket `to`, TOS
/// `tos`), made in `head` (a buffer the caller keeps). Returns the
/// frame's length; [`Framing::decode`] parses it.
pub fn rebuild(
    head: &mut Vec<u8>,
    buf: &mut [u8],
    len: usize,
    from: SocketAddrV4,
    to: SocketAddrV4,
    tos: u8,
) -> Result<usize, Error> {
    let ip_payload = wire::udp::HEADER_LEN + len;
    if ip_payload + wire::ipv4::HEADER_LEN > usize::from(u16::MAX) {
        return Err(Error::Malformed {
            layer: "udp",
            reason: "datagram longer than an IPv4 packet carries",
        });
    }
    head.clear();
    EthernetRepr {
        dst: endpoint(*to.ip()).mac,
        src: endpoint(*from.ip()).mac,
        ethertype: ETHERTYPE_IPV4,
    }
    .emit(head);
    Ipv4Repr {
        src: *from.ip(),
        dst: *to.ip(),
        dscp: tos >> 2,
        ecn: tos & 0b11,
        ident: 0,
        ttl: DEFAULT_TTL,
        payload_len: ip_payload as u16,
    }
    .emit(head);
    UdpRepr {
        src_port: from.port(),
        dst_port: to.port(),
    }
    .emit(len as u16, head);
    buf[..BTH_AT].copy_from_slice(head);
    Ok(BTH_AT + len)
}
