//! IPv4 without options or fragments, as RoCEv2 uses it: the header
//! checksum, and the traffic class in the TOS byte (DSCP in the top six
//! bits, ECN in the low two: ECT(0) on every packet we send, CE once a
//! switch marked it).
//!
//! Uses `crate::error`.

use std::net::Ipv4Addr;

use crate::error::{be16, need, Error};

pub const HEADER_LEN: usize = 20;
pub const PROTO_UDP: u8 = 17;

/// ECN codepoints (RFC 3168).
pub const ECN_NOT_ECT: u8 = 0b00;
pub const ECN_ECT1: u8 = 0b01;
pub const ECN_ECT0: u8 = 0b10;
pub const ECN_CE: u8 = 0b11;

/// TTL of the packets we emit (masked out of the ICRC, so any value does).
pub const DEFAULT_TTL: u8 = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Repr {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    /// Differentiated services codepoint, 0..64.
    pub dscp: u8,
    /// ECN codepoint, 0..4.
    pub ecn: u8,
    pub ident: u16,
    pub ttl: u8,
    /// Bytes after the header.
    pub payload_len: u16,
}

impl Ipv4Repr {
    /// The header and its payload (the bytes the total length covers: a
    /// frame's Ethernet padding is left out). Rejects options, fragments,
    /// protocols other than UDP and a wrong header checksum.
    pub fn parse(buf: &[u8]) -> Result<(Ipv4Repr, &[u8]), Error> {
        const L: &str = "ipv4";
        need(buf, HEADER_LEN, L)?;
        let bad = |reason| Err(Error::Malformed { layer: L, reason });
        if buf[0] >> 4 != 4 {
            return bad("version is not 4");
        }
        if buf[0] & 0x0f != 5 {
            return bad("header length is not 20 bytes (options are not supported)");
        }
        let total = usize::from(be16(buf, 2));
        if total < HEADER_LEN {
            return bad("total length below the header's");
        }
        need(buf, total, L)?;
        let frag = be16(buf, 6);
        if frag & 0x3fff != 0 {
            return bad("fragmented (MF set or nonzero offset)");
        }
        if buf[9] != PROTO_UDP {
            return bad("protocol is not UDP");
        }
        let carried = be16(buf, 10);
        let computed = checksum(&buf[..HEADER_LEN]);
        if computed != 0 {
            // The sum over a header with a correct checksum is 0xffff,
            // whose complement is 0.
            let mut zeroed = [0u8; HEADER_LEN];
            zeroed.copy_from_slice(&buf[..HEADER_LEN]);
            zeroed[10] = 0;
            zeroed[11] = 0;
            return Err(Error::Checksum {
                layer: L,
                carried: carried.into(),
                computed: checksum(&zeroed).into(),
            });
        }
        let repr = Ipv4Repr {
            src: Ipv4Addr::new(buf[12], buf[13], buf[14], buf[15]),
            dst: Ipv4Addr::new(buf[16], buf[17], buf[18], buf[19]),
            dscp: buf[1] >> 2,
            ecn: buf[1] & 0b11,
            ident: be16(buf, 4),
            ttl: buf[8],
            payload_len: (total - HEADER_LEN) as u16,
        };
        Ok((repr, &buf[HEADER_LEN..total]))
    }

    /// Appends the header (don't fragment set, checksum filled in).
    /// `payload_len` must leave the total length within 65535 bytes
    /// (callers check: see `crate::roce`).
    pub fn emit(&self, out: &mut Vec<u8>) {
        let start = out.len();
        let total = self.payload_len.saturating_add(HEADER_LEN as u16);
        out.push(0x45);
        out.push((self.dscp << 2) | (self.ecn & 0b11));
        out.extend_from_slice(&total.to_be_bytes());
        out.extend_from_slice(&self.ident.to_be_bytes());
        out.extend_from_slice(&0x4000u16.to_be_bytes());
        out.push(self.ttl);
        out.push(PROTO_UDP);
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(&self.src.octets());
        out.extend_from_slice(&self.dst.octets());
        let sum = checksum(&out[start..]);
        out[start + 10..start + 12].copy_from_slice(&sum.to_be_bytes());
    }
}

/// The Internet checksum (RFC 1071) of `bytes`: the complement of their
/// one's-complement sum in 16-bit words. Over a header whose checksum
/// field holds the right value it is 0.
pub fn checksum(bytes: &[u8]) -> u16 {
    !fold(sum(0, bytes))
}

/// Adds `bytes` as big-endian 16-bit words (an odd last byte padded with
/// zero) to `acc`, without folding.
pub(crate) fn sum(mut acc: u32, bytes: &[u8]) -> u32 {
    let mut words = bytes.chunks_exact(2);
    for w in &mut words {
        acc += u32::from(u16::from_be_bytes([w[0], w[1]]));
    }
    if let [last] = words.remainder() {
        acc += u32::from(*last) << 8;
    }
    acc
}

/// Folds the carries of a 32-bit sum into 16 bits.
pub(crate) fn fold(mut acc: u32) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}
