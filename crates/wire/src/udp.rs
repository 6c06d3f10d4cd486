//! UDP: ports, length and the optional checksum. RoCEv2 goes to port
//! 4791; its source port is the flow's entropy for ECMP (and MP-RDMA's
//! virtual path). We send a zero checksum, as Linux's rxe and RNICs do
//! (the ICRC covers the datagram); a nonzero one received is checked.
//!
//! Uses `crate::error` and `crate::ipv4`'s checksum arithmetic.

use std::net::Ipv4Addr;

use crate::error::{be16, need, Error};
use crate::ipv4::{fold, sum, PROTO_UDP};

pub const HEADER_LEN: usize = 8;
/// The IANA port of RoCEv2.
pub const ROCE_PORT: u16 = 4791;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpRepr {
    pub src_port: u16,
    pub dst_port: u16,
}

impl UdpRepr {
    /// The header and its payload. `datagram` is the whole IP payload,
    /// whose length the UDP length must equal.
    pub fn parse(datagram: &[u8], src: Ipv4Addr, dst: Ipv4Addr) -> Result<(UdpRepr, &[u8]), Error> {
        const L: &str = "udp";
        need(datagram, HEADER_LEN, L)?;
        let len = usize::from(be16(datagram, 4));
        if len != datagram.len() {
            return Err(Error::Malformed {
                layer: L,
                reason: "length disagrees with the IPv4 total length",
            });
        }
        let carried = be16(datagram, 6);
        if carried != 0 {
            let computed = checksum(src, dst, datagram);
            if computed != 0 {
                let mut header = [0u8; HEADER_LEN];
                header.copy_from_slice(&datagram[..HEADER_LEN]);
                header[6] = 0;
                header[7] = 0;
                let acc = sum(pseudo(src, dst, datagram.len()), &header);
                let want = !fold(sum(acc, &datagram[HEADER_LEN..]));
                return Err(Error::Checksum {
                    layer: L,
                    carried: carried.into(),
                    computed: want.into(),
                });
            }
        }
        let repr = UdpRepr {
            src_port: be16(datagram, 0),
            dst_port: be16(datagram, 2),
        };
        Ok((repr, &datagram[HEADER_LEN..]))
    }

    /// Appends the header for `payload_len` bytes after it, checksum 0.
    pub fn emit(&self, payload_len: u16, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.src_port.to_be_bytes());
        out.extend_from_slice(&self.dst_port.to_be_bytes());
        out.extend_from_slice(&(payload_len + HEADER_LEN as u16).to_be_bytes());
        out.extend_from_slice(&[0, 0]);
    }
}

/// The UDP checksum over the IPv4 pseudo-header and `datagram` (header
/// included): 0 when the checksum field is right. Transmitted as 0xffff
/// when it computes to 0 (RFC 768).
pub fn checksum(src: Ipv4Addr, dst: Ipv4Addr, datagram: &[u8]) -> u16 {
    !fold(sum(pseudo(src, dst, datagram.len()), datagram))
}

fn pseudo(src: Ipv4Addr, dst: Ipv4Addr, len: usize) -> u32 {
    let acc = sum(sum(0, &src.octets()), &dst.octets());
    acc + u32::from(PROTO_UDP) + len as u32
}
