//! A frame's Ethernet II, IPv4 and UDP layers down to a given UDP port:
//! what RoCEv2 ([`crate::roce`]) and UET ([`crate::uet::frame`]) frames
//! share before their own headers. Checks every length, the IPv4 checksum,
//! a nonzero UDP checksum and the destination port; and the same layers
//! emitted in front of a payload.
//!
//! Uses `crate::{error, ethernet, ipv4, udp}`.

use crate::error::Error;
use crate::ethernet::{self, EthernetRepr, ETHERTYPE_IPV4};
use crate::ipv4::{self, Ipv4Repr};
use crate::udp::{self, UdpRepr};

/// The layers of a frame up to its UDP payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Datagram<'a> {
    pub eth: EthernetRepr,
    pub ip: Ipv4Repr,
    pub udp: UdpRepr,
    /// The IPv4 header's bytes (RoCEv2's ICRC covers them).
    pub ip_header: &'a [u8],
    /// The UDP header and payload.
    pub datagram: &'a [u8],
    /// The UDP payload.
    pub body: &'a [u8],
    /// The UDP checksum was nonzero (and so was verified).
    pub checksummed: bool,
    /// Bytes of the frame up to the end of the IPv4 datagram (Ethernet
    /// padding after it excluded).
    pub len: usize,
}

impl<'a> Datagram<'a> {
    /// Parses `frame` down to UDP port `port`. `standard` is the
    /// protocol's own port and the error's reason when `port` is that one
    /// and the frame's is another (else the reason names the socket's).
    pub fn parse(
        frame: &'a [u8],
        port: u16,
        standard: (u16, &'static str),
    ) -> Result<Datagram<'a>, Error> {
        let (eth, rest) = EthernetRepr::parse(frame)?;
        if eth.ethertype != ETHERTYPE_IPV4 {
            return Err(Error::Malformed {
                layer: "ethernet",
                reason: "EtherType is not IPv4",
            });
        }
        let (ip, datagram) = Ipv4Repr::parse(rest)?;
        let (udp, body) = UdpRepr::parse(datagram, ip.src, ip.dst)?;
        if udp.dst_port != port {
            return Err(Error::Malformed {
                layer: "udp",
                reason: if port == standard.0 {
                    standard.1
                } else {
                    "destination port is not the socket's"
                },
            });
        }
        Ok(Datagram {
            eth,
            ip,
            udp,
            ip_header: &rest[..ipv4::HEADER_LEN],
            datagram,
            body,
            checksummed: datagram[6..8] != [0, 0],
            len: ethernet::HEADER_LEN + ipv4::HEADER_LEN + datagram.len(),
        })
    }
}

/// Bytes of a frame before its UDP payload.
pub const BODY_AT: usize = ethernet::HEADER_LEN + ipv4::HEADER_LEN + udp::HEADER_LEN;

/// Appends a frame's Ethernet (its EtherType replaced by IPv4's), IPv4
/// (its payload length computed) and UDP headers (checksum 0) for a UDP
/// payload of `body` bytes, reserving room for it; returns where the IPv4
/// and UDP headers start in `out`. Fails, writing nothing, when the frame
/// would exceed IPv4's 65535 bytes.
pub fn emit_headers(
    out: &mut Vec<u8>,
    eth: &EthernetRepr,
    ip: &Ipv4Repr,
    udp: &UdpRepr,
    body: usize,
) -> Result<(usize, usize), Error> {
    let ip_payload = udp::HEADER_LEN + body;
    if ip_payload > usize::from(u16::MAX) - ipv4::HEADER_LEN {
        return Err(Error::Unrepresentable {
            field: "payload",
            reason: "the packet exceeds IPv4's 65535 bytes",
        });
    }
    out.reserve(BODY_AT + body);
    EthernetRepr {
        ethertype: ETHERTYPE_IPV4,
        ..*eth
    }
    .emit(out);
    let ip_start = out.len();
    Ipv4Repr {
        payload_len: ip_payload as u16,
        ..*ip
    }
    .emit(out);
    let udp_start = out.len();
    udp.emit(body as u16, out);
    Ok((ip_start, udp_start))
}
