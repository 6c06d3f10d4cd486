//! Ethernet II: destination and source MAC and the EtherType (no VLAN tag,
//! no FCS: frames here are what a capture or a raw socket sees).
//!
//! Uses `crate::error`.

use crate::error::{be16, need, Error};

pub const HEADER_LEN: usize = 14;
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// MAC control (IEEE 802.3 Annex 31B): PAUSE and PFC frames.
pub const ETHERTYPE_MAC_CONTROL: u16 = 0x8808;
/// The shortest frame without FCS (64 bytes on the wire less the 4-byte
/// FCS); shorter frames are padded with zeros.
pub const MIN_FRAME: usize = 60;

pub type Mac = [u8; 6];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EthernetRepr {
    pub dst: Mac,
    pub src: Mac,
    pub ethertype: u16,
}

impl EthernetRepr {
    /// The header and the bytes after it.
    pub fn parse(buf: &[u8]) -> Result<(EthernetRepr, &[u8]), Error> {
        need(buf, HEADER_LEN, "ethernet")?;
        let mut dst = [0; 6];
        let mut src = [0; 6];
        dst.copy_from_slice(&buf[0..6]);
        src.copy_from_slice(&buf[6..12]);
        let repr = EthernetRepr {
            dst,
            src,
            ethertype: be16(buf, 12),
        };
        Ok((repr, &buf[HEADER_LEN..]))
    }

    pub fn emit(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.dst);
        out.extend_from_slice(&self.src);
        out.extend_from_slice(&self.ethertype.to_be_bytes());
    }
}
