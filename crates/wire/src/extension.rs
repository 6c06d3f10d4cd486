//! rdmalab's extension header: the fields of a transport packet that the
//! IBA headers of its opcode do not carry (IRN's WQE sequence numbers and
//! read (N)ACKs; MP-RDMA's virtual path, flags and echoed PSN; Eunomia's
//! last-packet, SACK and NACK bits; the source QP, send time, and the
//! per-packet address and message length IRN puts on every packet).
//!
//! It sits right after the IBA extended headers, where IBA puts the
//! payload, and before the payload: a dissector sees a valid RoCEv2
//! packet whose first payload bytes are ours (see the crate's top doc for
//! why there). Layout, big-endian, a multiple of 4 bytes:
//!
//! ```text
//! 0  'R' 'X'       magic
//! 2  version       1
//! 3  length        bytes of the whole extension, padding included
//! 4  present       u16: bit i set = field i follows, in bit order
//! 6  reserved      u16, zero
//! 8  fields        (below), then zeros up to a multiple of 4
//! ```
//!
//! | bit | field | bytes | meaning |
//! |----|----|----|----|
//! | 0 | OP | 1 | kind (bits 0-2), verb (3-5), first (6), last (7) |
//! | 1 | FLAGS | 1 | `Packet::mp_flags` (MP-RDMA RETX/SYNC/DUP, Eunomia LAST/SACK/NACK/ACK_REQ) |
//! | 2 | ECN_ECHO | 1 | 0 or 1 |
//! | 3 | VP | 2 | MP-RDMA: the echoed virtual path |
//! | 4 | SRC_QP | 3 | the sender's QP |
//! | 5 | PSN | 3 | the PSN where the BTH cannot say it (a CNP's is 0) |
//! | 6 | WQE_SN | 3 | IRN's receive/read WQE SN, MP-RDMA's MSN |
//! | 7 | SACK_PSN | 4 | IRN/MP-RDMA/Eunomia SACK; the iPSN on data |
//! | 8 | MSG_LEN | 8 | bytes of the message |
//! | 9 | ADDR | 8 | remote address (or SEND offset) of this packet |
//! | 10 | IMM | 8 | immediate or atomic operand |
//! | 11 | COMPARE | 8 | compare-and-swap operand |
//! | 12 | SENT_AT | 8 | sender's transmit time, echoed on ACKs |
//!
//! A field is present only where the IBA headers leave its value unsaid
//! (`crate::packet` decides): so each packet has one encoding.
//!
//! The kind and verb codes are plain numbers here; what each means (the
//! transport's `PacketKind` and `Verb`, in their declaration order) is the
//! transport's mapping (`transport::frame`).
//!
//! Uses `crate::error`.

use crate::error::{be16, be24, be32, be64, need, put24, Error};

pub const MAGIC: [u8; 2] = *b"RX";
pub const VERSION: u8 = 1;
pub const HEADER_LEN: usize = 8;
/// The longest extension: every field present, padded.
pub const MAX_LEN: usize = 68;
const FIELDS: u32 = 13;
const SIZES: [usize; FIELDS as usize] = [1, 1, 1, 2, 3, 3, 3, 4, 8, 8, 8, 8, 8];
const L: &str = "extension";

/// A packet's kind, verb and first/last bits: what an opcode says.
/// `kind` is below [`KIND_CODES`], `verb` below [`VERB_CODES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    pub kind: u8,
    pub verb: u8,
    pub first: bool,
    pub last: bool,
}

/// How many packet kinds the OP field can name (codes 0..7).
pub const KIND_CODES: u8 = 7;
/// How many verbs the OP field can name (codes 0..6).
pub const VERB_CODES: u8 = 6;

impl Op {
    fn to_u8(self) -> u8 {
        (self.kind & 7)
            | ((self.verb & 7) << 3)
            | (u8::from(self.first) << 6)
            | (u8::from(self.last) << 7)
    }

    fn from_u8(b: u8) -> Result<Op, Error> {
        let bad = |reason| Err(Error::Malformed { layer: L, reason });
        let (kind, verb) = (b & 7, (b >> 3) & 7);
        if kind >= KIND_CODES {
            return bad("unknown packet kind");
        }
        if verb >= VERB_CODES {
            return bad("unknown verb");
        }
        Ok(Op {
            kind,
            verb,
            first: b & 0x40 != 0,
            last: b & 0x80 != 0,
        })
    }
}

/// The fields; `None` is absent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Extension {
    pub op: Option<Op>,
    pub flags: Option<u8>,
    pub ecn_echo: Option<bool>,
    pub vp: Option<u16>,
    pub src_qp: Option<u32>,
    pub psn: Option<u32>,
    pub wqe_sn: Option<u32>,
    pub sack_psn: Option<u32>,
    pub msg_len: Option<u64>,
    pub addr: Option<u64>,
    pub imm: Option<u64>,
    pub compare: Option<u64>,
    pub sent_at: Option<u64>,
}

impl Extension {
    fn present(&self) -> u16 {
        let bits = [
            self.op.is_some(),
            self.flags.is_some(),
            self.ecn_echo.is_some(),
            self.vp.is_some(),
            self.src_qp.is_some(),
            self.psn.is_some(),
            self.wqe_sn.is_some(),
            self.sack_psn.is_some(),
            self.msg_len.is_some(),
            self.addr.is_some(),
            self.imm.is_some(),
            self.compare.is_some(),
            self.sent_at.is_some(),
        ];
        bits.iter()
            .enumerate()
            .fold(0, |acc, (i, &b)| acc | (u16::from(b) << i))
    }

    /// Bytes of the extension with `present` fields, padded to 4.
    fn len_of(present: u16) -> usize {
        let fields: usize = (0..FIELDS)
            .filter(|i| present & (1 << i) != 0)
            .map(|i| SIZES[i as usize])
            .sum();
        (HEADER_LEN + fields).next_multiple_of(4)
    }

    /// Bytes it takes on the wire.
    pub fn wire_len(&self) -> usize {
        Self::len_of(self.present())
    }

    /// Appends the extension. 24-bit fields keep their low 24 bits
    /// (callers check the range: see `crate::packet`).
    pub fn emit(&self, out: &mut Vec<u8>) {
        let start = out.len();
        let present = self.present();
        out.extend_from_slice(&MAGIC);
        out.push(VERSION);
        out.push(Self::len_of(present) as u8);
        out.extend_from_slice(&present.to_be_bytes());
        out.extend_from_slice(&[0, 0]);
        if let Some(op) = self.op {
            out.push(op.to_u8());
        }
        if let Some(f) = self.flags {
            out.push(f);
        }
        if let Some(e) = self.ecn_echo {
            out.push(u8::from(e));
        }
        if let Some(vp) = self.vp {
            out.extend_from_slice(&vp.to_be_bytes());
        }
        for v in [self.src_qp, self.psn, self.wqe_sn].into_iter().flatten() {
            put24(out, v);
        }
        if let Some(s) = self.sack_psn {
            out.extend_from_slice(&s.to_be_bytes());
        }
        let wide = [
            self.msg_len,
            self.addr,
            self.imm,
            self.compare,
            self.sent_at,
        ];
        for v in wide.into_iter().flatten() {
            out.extend_from_slice(&v.to_be_bytes());
        }
        let end = start + Self::len_of(present);
        out.resize(end, 0);
    }

    /// Parses an extension at the start of `buf`; returns the bytes after
    /// it. Rejects a wrong magic or version, unknown fields, a length that
    /// disagrees with the fields, and nonzero reserved or padding bytes.
    pub fn parse(buf: &[u8]) -> Result<(Extension, &[u8]), Error> {
        let bad = |reason| Err(Error::Malformed { layer: L, reason });
        need(buf, HEADER_LEN, L)?;
        if buf[..2] != MAGIC {
            return bad("no rdmalab extension (magic is not \"RX\")");
        }
        if buf[2] != VERSION {
            return bad("unknown version");
        }
        let present = be16(buf, 4);
        if present >> FIELDS != 0 {
            return bad("unknown field bits set");
        }
        let len = Self::len_of(present);
        if usize::from(buf[3]) != len {
            return bad("length disagrees with the fields present");
        }
        if be16(buf, 6) != 0 {
            return bad("reserved bytes are not zero");
        }
        need(buf, len, L)?;
        let mut at = HEADER_LEN;
        let mut next = |i: u32| {
            (present & (1 << i) != 0).then(|| {
                let here = at;
                at += SIZES[i as usize];
                here
            })
        };
        let op = next(0).map(|i| Op::from_u8(buf[i])).transpose()?;
        let flags = next(1).map(|i| buf[i]);
        let ecn_echo = match next(2).map(|i| buf[i]) {
            None => None,
            Some(0) => Some(false),
            Some(1) => Some(true),
            Some(_) => return bad("ECN echo is neither 0 nor 1"),
        };
        let ext = Extension {
            op,
            flags,
            ecn_echo,
            vp: next(3).map(|i| be16(buf, i)),
            src_qp: next(4).map(|i| be24(buf, i)),
            psn: next(5).map(|i| be24(buf, i)),
            wqe_sn: next(6).map(|i| be24(buf, i)),
            sack_psn: next(7).map(|i| be32(buf, i)),
            msg_len: next(8).map(|i| be64(buf, i)),
            addr: next(9).map(|i| be64(buf, i)),
            imm: next(10).map(|i| be64(buf, i)),
            compare: next(11).map(|i| be64(buf, i)),
            sent_at: next(12).map(|i| be64(buf, i)),
        };
        if buf[at..len].iter().any(|&b| b != 0) {
            return bad("padding is not zero");
        }
        Ok((ext, &buf[len..]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_fits_the_longest_extension() {
        assert_eq!(Extension::len_of((1 << FIELDS) - 1), MAX_LEN);
        assert_eq!(Extension::default().wire_len(), HEADER_LEN);
    }

    #[test]
    fn ops_round_trip_through_their_byte() {
        for kind in 0..KIND_CODES {
            for verb in 0..VERB_CODES {
                for (first, last) in [(false, false), (true, false), (false, true), (true, true)] {
                    let op = Op {
                        kind,
                        verb,
                        first,
                        last,
                    };
                    assert_eq!(Op::from_u8(op.to_u8()), Ok(op));
                }
            }
        }
        assert!(Op::from_u8(7).is_err(), "kind 7 is unused");
        assert!(Op::from_u8(6 << 3).is_err(), "verb 6 is unused");
    }
}
