//! The InfiniBand Base Transport Header (IBA vol. 1, 9.2) and the opcodes
//! of the Reliable Connection service, plus RoCEv2's CNP (Annex A17.9.3).
//!
//! Layout, 12 bytes: opcode; SE(1) M(1) PadCnt(2) TVer(4); P_Key(16);
//! FECN(1) BECN(1) reserved(6); DestQP(24); AckReq(1) reserved(7);
//! PSN(24). Reserved bits are sent as 0 and ignored on receipt, as IBA
//! says; a TVer other than 0 is rejected.
//!
//! Uses `crate::error`.

use crate::error::{be16, be24, need, put24, Error};

pub const HEADER_LEN: usize = 12;
/// QP numbers and PSNs are 24 bits.
pub const MASK24: u32 = 0x00ff_ffff;
/// The default partition (full membership).
pub const DEFAULT_PKEY: u16 = 0xffff;

/// The RC opcodes (transport bits 000) and the CNP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Opcode {
    SendFirst = 0x00,
    SendMiddle = 0x01,
    SendLast = 0x02,
    SendLastImm = 0x03,
    SendOnly = 0x04,
    SendOnlyImm = 0x05,
    WriteFirst = 0x06,
    WriteMiddle = 0x07,
    WriteLast = 0x08,
    WriteLastImm = 0x09,
    WriteOnly = 0x0a,
    WriteOnlyImm = 0x0b,
    ReadRequest = 0x0c,
    ReadResponseFirst = 0x0d,
    ReadResponseMiddle = 0x0e,
    ReadResponseLast = 0x0f,
    ReadResponseOnly = 0x10,
    Acknowledge = 0x11,
    AtomicAcknowledge = 0x12,
    CompareSwap = 0x13,
    FetchAdd = 0x14,
    /// RoCEv2 congestion notification packet.
    Cnp = 0x81,
}

impl Opcode {
    pub fn from_u8(v: u8) -> Option<Opcode> {
        use Opcode::*;
        const ALL: [Opcode; 21] = [
            SendFirst,
            SendMiddle,
            SendLast,
            SendLastImm,
            SendOnly,
            SendOnlyImm,
            WriteFirst,
            WriteMiddle,
            WriteLast,
            WriteLastImm,
            WriteOnly,
            WriteOnlyImm,
            ReadRequest,
            ReadResponseFirst,
            ReadResponseMiddle,
            ReadResponseLast,
            ReadResponseOnly,
            Acknowledge,
            AtomicAcknowledge,
            CompareSwap,
            FetchAdd,
        ];
        match v {
            0x81 => Some(Cnp),
            _ => ALL.get(usize::from(v)).copied(),
        }
    }

    /// The extended transport headers that follow the BTH, in IBA's order.
    pub fn layout(self) -> Layout {
        use Opcode::*;
        let mut l = Layout::default();
        match self {
            WriteFirst | WriteOnly | ReadRequest => l.reth = true,
            WriteOnlyImm => {
                l.reth = true;
                l.immdt = true;
            }
            SendLastImm | SendOnlyImm | WriteLastImm => l.immdt = true,
            ReadResponseFirst | ReadResponseLast | ReadResponseOnly | Acknowledge => l.aeth = true,
            AtomicAcknowledge => {
                l.aeth = true;
                l.atomic_ack = true;
            }
            CompareSwap | FetchAdd => l.atomic_eth = true,
            Cnp => l.cnp_reserved = true,
            SendFirst | SendMiddle | SendLast | SendOnly | WriteMiddle | WriteLast
            | ReadResponseMiddle => {}
        }
        l
    }
}

/// Which headers an opcode carries after the BTH (IBA order: RETH,
/// AtomicETH, AETH, AtomicAckETH, ImmDt).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    pub reth: bool,
    pub atomic_eth: bool,
    pub aeth: bool,
    pub atomic_ack: bool,
    pub immdt: bool,
    /// A CNP's 16 reserved bytes.
    pub cnp_reserved: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bth {
    pub opcode: Opcode,
    pub solicited: bool,
    pub migreq: bool,
    /// Pad bytes (0..4) after the payload that make it a multiple of 4.
    pub pad: u8,
    pub pkey: u16,
    pub fecn: bool,
    pub becn: bool,
    /// 24 bits.
    pub dest_qp: u32,
    pub ack_req: bool,
    /// 24 bits.
    pub psn: u32,
}

impl Bth {
    pub fn parse(buf: &[u8]) -> Result<(Bth, &[u8]), Error> {
        const L: &str = "bth";
        need(buf, HEADER_LEN, L)?;
        let Some(opcode) = Opcode::from_u8(buf[0]) else {
            return Err(Error::Malformed {
                layer: L,
                reason: "opcode is neither a Reliable Connection opcode nor CNP",
            });
        };
        if buf[1] & 0x0f != 0 {
            return Err(Error::Malformed {
                layer: L,
                reason: "transport header version (TVer) is not 0",
            });
        }
        let bth = Bth {
            opcode,
            solicited: buf[1] & 0x80 != 0,
            migreq: buf[1] & 0x40 != 0,
            pad: (buf[1] >> 4) & 0b11,
            pkey: be16(buf, 2),
            fecn: buf[4] & 0x80 != 0,
            becn: buf[4] & 0x40 != 0,
            dest_qp: be24(buf, 5),
            ack_req: buf[8] & 0x80 != 0,
            psn: be24(buf, 9),
        };
        Ok((bth, &buf[HEADER_LEN..]))
    }

    /// Appends the header; `dest_qp` and `psn` keep their low 24 bits.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.push(self.opcode as u8);
        out.push(
            (u8::from(self.solicited) << 7) | (u8::from(self.migreq) << 6) | ((self.pad & 3) << 4),
        );
        out.extend_from_slice(&self.pkey.to_be_bytes());
        out.push((u8::from(self.fecn) << 7) | (u8::from(self.becn) << 6));
        put24(out, self.dest_qp);
        out.push(u8::from(self.ack_req) << 7);
        put24(out, self.psn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcodes_round_trip_and_nothing_else_parses() {
        for v in 0..=255u8 {
            match Opcode::from_u8(v) {
                Some(op) => assert_eq!(op as u8, v),
                None => assert!(v > 0x14 && v != 0x81, "{v:#x}"),
            }
        }
    }
}
