//! A whole UET frame: Ethernet II, IPv4, UDP to port 4793 (the source port
//! is the packet's entropy value), the PDS and SES headers, the payload.
//! UET has no ICRC: the UDP checksum is the frame's end-to-end check, so
//! [`emit`] always fills it in and parsing verifies it when nonzero and
//! reports whether there was one ([`UetFrame::checksummed`]), so that a
//! receiver that treats every byte as hostile can insist on it.
//!
//! Uses `crate::{error, datagram, ethernet, ipv4, udp}` and `super` (the
//! headers).

use super::{UetHeaders, UET_PORT};
use crate::datagram::{emit_headers, Datagram};
use crate::error::Error;
use crate::ethernet::EthernetRepr;
use crate::ipv4::Ipv4Repr;
use crate::udp::{self, UdpRepr};

/// Bytes of a frame before its PDS header.
pub const PDS_AT: usize = crate::datagram::BODY_AT;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UetFrame<'a> {
    pub eth: EthernetRepr,
    pub ip: Ipv4Repr,
    pub udp: UdpRepr,
    pub headers: UetHeaders,
    pub payload: &'a [u8],
    /// The UDP checksum was nonzero (and so was verified).
    pub checksummed: bool,
    /// Bytes up to the end of the IPv4 datagram (Ethernet padding excluded).
    pub len: usize,
}

impl<'a> UetFrame<'a> {
    /// Parses a frame to UDP port 4793.
    pub fn parse(frame: &'a [u8]) -> Result<UetFrame<'a>, Error> {
        UetFrame::parse_on(frame, UET_PORT)
    }

    /// Parses a frame to UDP port `port` (a datapath socket's).
    pub fn parse_on(frame: &'a [u8], port: u16) -> Result<UetFrame<'a>, Error> {
        let d = Datagram::parse(
            frame,
            port,
            (UET_PORT, "destination port is not UET's 4793"),
        )?;
        let (headers, payload) = UetHeaders::parse(d.body)?;
        Ok(UetFrame {
            eth: d.eth,
            ip: d.ip,
            udp: d.udp,
            headers,
            payload,
            checksummed: d.checksummed,
            len: d.len,
        })
    }
}

/// Appends a frame: `eth` (its EtherType replaced by IPv4's), `ip` (its
/// payload length computed), `udp` (length and checksum computed), the
/// headers and `parts` one after the other as the payload. Fails when the
/// frame would exceed IPv4's 65535 bytes or a header field does not fit.
pub fn emit(
    out: &mut Vec<u8>,
    eth: &EthernetRepr,
    ip: &Ipv4Repr,
    udp: &UdpRepr,
    headers: &UetHeaders,
    parts: &[&[u8]],
) -> Result<(), Error> {
    let body = headers.wire_len() + parts.iter().map(|p| p.len()).sum::<usize>();
    let start = out.len();
    let (_, udp_start) = emit_headers(out, eth, ip, udp, body)?;
    if let Err(e) = headers.emit(out) {
        out.truncate(start);
        return Err(e);
    }
    for p in parts {
        out.extend_from_slice(p);
    }
    let sum = match udp::checksum(ip.src, ip.dst, &out[udp_start..]) {
        0 => 0xffff,
        s => s,
    };
    out[udp_start + 6..udp_start + 8].copy_from_slice(&sum.to_be_bytes());
    Ok(())
}
