//! The RoCEv2 invariant CRC, computed as Linux's soft-RoCE driver computes
//! it (drivers/infiniband/sw/rxe/rxe_icrc.c): CRC-32 (the Ethernet
//! polynomial, reflected) over 8 bytes of 0xff standing for the LRH that
//! RoCEv2 has not, then the IPv4 header with TOS, TTL and header checksum
//! set to all ones, the UDP header with its checksum set to all ones, the
//! BTH with its byte 4 (FECN, BECN and reserved bits) set to all ones, and
//! every byte after the BTH up to the ICRC (extended headers, payload,
//! pad). rxe starts its raw CRC from 0xdebb20e3, the state after those 8
//! bytes of 0xff, and stores the complement little-endian; that equals
//! the standard CRC-32 (as zlib's) of the masked bytes with the 8 bytes
//! of 0xff in front, stored little-endian.
//!
//! Uses `crate::ipv4` and `crate::udp` for header lengths.

use crate::bth;
use crate::ipv4;
use crate::udp;

pub const ICRC_LEN: usize = 4;

/// The ICRC of a RoCEv2 packet over IPv4: `ip_header` is its 20-byte IPv4
/// header, `datagram` the UDP datagram without the trailing ICRC (UDP
/// header, BTH, everything up to the ICRC). Returns the 4 bytes as they
/// go on the wire. `datagram` must hold at least the UDP header and the
/// BTH (callers parse them first).
pub fn icrc(ip_header: &[u8], datagram: &[u8]) -> [u8; ICRC_LEN] {
    let mut ip = [0u8; ipv4::HEADER_LEN];
    ip.copy_from_slice(&ip_header[..ipv4::HEADER_LEN]);
    ip[1] = 0xff; // TOS: DSCP and ECN change on the way
    ip[8] = 0xff; // TTL
    ip[10] = 0xff; // header checksum
    ip[11] = 0xff;
    let mut head = [0u8; udp::HEADER_LEN + bth::HEADER_LEN];
    head.copy_from_slice(&datagram[..udp::HEADER_LEN + bth::HEADER_LEN]);
    head[6] = 0xff; // UDP checksum
    head[7] = 0xff;
    head[udp::HEADER_LEN + 4] = 0xff; // BTH FECN, BECN, reserved
    let mut h = crc32fast::Hasher::new();
    h.update(&[0xff; 8]);
    h.update(&ip);
    h.update(&head);
    h.update(&datagram[head.len()..]);
    h.finalize().to_le_bytes()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_masked_lrh_gives_rxe_seed() {
        // rxe seeds its raw CRC with 0xdebb20e3: the state of CRC-32
        // (initial value all ones) after 8 bytes of 0xff. The finalised
        // value is the state's complement.
        let mut h = crc32fast::Hasher::new();
        h.update(&[0xff; 8]);
        assert_eq!(!h.finalize(), 0xdebb_20e3);
    }
}
