//! A whole RoCEv2 frame: Ethernet II, IPv4, UDP to port 4791, the IBA
//! headers, the bytes after them (for our packets: the extension header
//! and the payload), the pad and the ICRC. Parsing checks every length,
//! the IPv4 and (nonzero) UDP checksums and the ICRC; emitting fills them
//! in.
//!
//! Uses `crate::{error, datagram, ethernet, ipv4, udp, iba, icrc}`.

use crate::datagram::{emit_headers, Datagram};
use crate::error::Error;
use crate::ethernet::EthernetRepr;
use crate::iba::IbaHeaders;
use crate::icrc::{icrc, ICRC_LEN};
use crate::ipv4::Ipv4Repr;
use crate::udp::{UdpRepr, ROCE_PORT};

/// Where the BTH starts in a frame.
pub const BTH_AT: usize = crate::datagram::BODY_AT;

/// Bytes of a frame around its IBA headers and data: Ethernet, IPv4, UDP
/// and ICRC.
pub const OVERHEAD: usize = BTH_AT + ICRC_LEN;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoceFrame<'a> {
    pub eth: EthernetRepr,
    pub ip: Ipv4Repr,
    pub udp: UdpRepr,
    pub iba: IbaHeaders,
    /// The bytes between the IBA headers and the pad.
    pub data: &'a [u8],
    /// Bytes of the frame up to the end of the IPv4 datagram (Ethernet
    /// padding after it excluded).
    pub len: usize,
}

impl<'a> RoceFrame<'a> {
    /// Parses a frame to RoCEv2's UDP port, 4791.
    pub fn parse(frame: &'a [u8]) -> Result<RoceFrame<'a>, Error> {
        RoceFrame::parse_on(frame, ROCE_PORT)
    }

    /// Parses a frame to UDP port `port` (a datapath's socket may listen
    /// on another port than 4791; the ICRC covers the port either way).
    pub fn parse_on(frame: &'a [u8], port: u16) -> Result<RoceFrame<'a>, Error> {
        let Datagram {
            eth,
            ip,
            udp,
            ip_header,
            datagram,
            body,
            len,
            ..
        } = Datagram::parse(
            frame,
            port,
            (ROCE_PORT, "destination port is not RoCEv2's 4791"),
        )?;
        crate::error::need(body, crate::bth::HEADER_LEN + ICRC_LEN, "bth")?;
        let covered = body.len() - ICRC_LEN;
        let (iba, after) = IbaHeaders::parse(&body[..covered])?;
        let pad = usize::from(iba.bth.pad);
        if pad > after.len() {
            return Err(Error::Malformed {
                layer: "bth",
                reason: "pad count exceeds the bytes after the headers",
            });
        }
        let computed = icrc(ip_header, &datagram[..datagram.len() - ICRC_LEN]);
        let carried = &body[covered..];
        if carried != computed {
            let word = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            return Err(Error::Checksum {
                layer: "icrc",
                carried: word(carried),
                computed: word(&computed),
            });
        }
        Ok(RoceFrame {
            eth,
            ip,
            udp,
            iba,
            data: &after[..after.len() - pad],
            len,
        })
    }
}

/// Appends a frame: `eth` (its EtherType replaced by IPv4's), `ip` (its
/// payload length computed), `udp`, `iba` (its pad count computed), then
/// `parts` one after the other as the data, zero pad bytes up to a
/// multiple of 4 and the ICRC. Fails when the frame would exceed IPv4's
/// 65535 bytes or the IBA headers do not match their opcode.
pub fn emit(
    out: &mut Vec<u8>,
    eth: &EthernetRepr,
    ip: &Ipv4Repr,
    udp: &UdpRepr,
    iba: &IbaHeaders,
    parts: &[&[u8]],
) -> Result<(), Error> {
    iba.check()?;
    let data: usize = parts.iter().map(|p| p.len()).sum();
    let pad = (4 - data % 4) % 4;
    let body = iba.wire_len() + data + pad + ICRC_LEN;
    let (ip_start, udp_start) = emit_headers(out, eth, ip, udp, body)?;
    let mut iba = *iba;
    iba.bth.pad = pad as u8;
    iba.emit(out)?;
    for p in parts {
        out.extend_from_slice(p);
    }
    out.resize(out.len() + pad, 0);
    let crc = icrc(&out[ip_start..udp_start], &out[udp_start..]);
    out.extend_from_slice(&crc);
    Ok(())
}
