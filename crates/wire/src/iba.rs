//! The IBA extended transport headers RC uses (IBA vol. 1, 9.3): RETH,
//! AETH (ACK, RNR NAK and NAK syndromes, MSN), AtomicETH, AtomicAckETH and
//! ImmDt, and [`IbaHeaders`]: a BTH with the headers its opcode carries,
//! parsed and emitted in IBA's order.
//!
//! Uses `crate::error` and `crate::bth`.

use crate::bth::{Bth, Layout};
use crate::error::{be24, be32, be64, need, put24, Error};

pub const RETH_LEN: usize = 16;
pub const AETH_LEN: usize = 4;
pub const ATOMIC_ETH_LEN: usize = 28;
pub const ATOMIC_ACK_ETH_LEN: usize = 8;
pub const IMMDT_LEN: usize = 4;
/// A CNP's reserved bytes after its BTH (Annex A17.9.3).
pub const CNP_RESERVED_LEN: usize = 16;

/// RDMA extended transport header: where a WRITE or READ goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reth {
    pub va: u64,
    pub rkey: u32,
    /// DMA length: bytes of the whole message.
    pub len: u32,
}

/// Atomic extended transport header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AtomicEth {
    pub va: u64,
    pub rkey: u32,
    /// The add operand (FetchAdd) or the swap value (CompareSwap).
    pub swap_add: u64,
    pub compare: u64,
}

/// NAK codes (AETH syndrome 011xxxxx).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum NakCode {
    PsnSequenceError = 0,
    InvalidRequest = 1,
    RemoteAccessError = 2,
    RemoteOperationalError = 3,
    InvalidRdRequest = 4,
}

/// The AETH syndrome: bit 7 reserved, bits 6-5 the kind (00 ACK, 01 RNR
/// NAK, 11 NAK; 10 is reserved), bits 4-0 its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syndrome {
    /// `credits`: the end-to-end credit count (0x1f: none advertised).
    Ack {
        credits: u8,
    },
    /// `timer`: the encoded minimum RNR NAK timer.
    RnrNak {
        timer: u8,
    },
    Nak(NakCode),
}

/// What rxe advertises on its ACKs when it does not count credits.
pub const CREDITS_UNLIMITED: u8 = 0x1f;

impl Syndrome {
    pub fn from_u8(v: u8) -> Result<Syndrome, Error> {
        let bad = |reason| {
            Err(Error::Malformed {
                layer: "aeth",
                reason,
            })
        };
        if v & 0x80 != 0 {
            return bad("syndrome's reserved bit is set");
        }
        let low = v & 0x1f;
        match v >> 5 {
            0b00 => Ok(Syndrome::Ack { credits: low }),
            0b01 => Ok(Syndrome::RnrNak { timer: low }),
            0b11 => Ok(Syndrome::Nak(match low {
                0 => NakCode::PsnSequenceError,
                1 => NakCode::InvalidRequest,
                2 => NakCode::RemoteAccessError,
                3 => NakCode::RemoteOperationalError,
                4 => NakCode::InvalidRdRequest,
                _ => return bad("reserved NAK code"),
            })),
            _ => bad("reserved syndrome (10xxxxx)"),
        }
    }

    pub fn to_u8(self) -> u8 {
        match self {
            Syndrome::Ack { credits } => credits & 0x1f,
            Syndrome::RnrNak { timer } => 0x20 | (timer & 0x1f),
            Syndrome::Nak(code) => 0x60 | code as u8,
        }
    }
}

/// ACK extended transport header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Aeth {
    pub syndrome: Syndrome,
    /// Message sequence number, 24 bits.
    pub msn: u32,
}

/// A BTH and the extended headers its opcode carries (each `Some` exactly
/// when [`Bth::opcode`]'s [`Layout`] says so; [`IbaHeaders::emit`]
/// checks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IbaHeaders {
    pub bth: Bth,
    pub reth: Option<Reth>,
    pub atomic_eth: Option<AtomicEth>,
    pub aeth: Option<Aeth>,
    /// AtomicAckETH: the original value at the remote address.
    pub atomic_ack: Option<u64>,
    pub immdt: Option<u32>,
}

impl IbaHeaders {
    /// A BTH with no extended header filled in yet.
    pub fn new(bth: Bth) -> IbaHeaders {
        IbaHeaders {
            bth,
            reth: None,
            atomic_eth: None,
            aeth: None,
            atomic_ack: None,
            immdt: None,
        }
    }

    /// Bytes of the BTH and its extended headers.
    pub fn wire_len(&self) -> usize {
        let l = self.bth.opcode.layout();
        crate::bth::HEADER_LEN
            + usize::from(l.reth) * RETH_LEN
            + usize::from(l.atomic_eth) * ATOMIC_ETH_LEN
            + usize::from(l.aeth) * AETH_LEN
            + usize::from(l.atomic_ack) * ATOMIC_ACK_ETH_LEN
            + usize::from(l.immdt) * IMMDT_LEN
            + usize::from(l.cnp_reserved) * CNP_RESERVED_LEN
    }

    /// Parses the BTH and its headers; returns the bytes after them.
    pub fn parse(buf: &[u8]) -> Result<(IbaHeaders, &[u8]), Error> {
        let (bth, mut rest) = Bth::parse(buf)?;
        let l = bth.opcode.layout();
        let mut h = IbaHeaders::new(bth);
        if l.reth {
            need(rest, RETH_LEN, "reth")?;
            h.reth = Some(Reth {
                va: be64(rest, 0),
                rkey: be32(rest, 8),
                len: be32(rest, 12),
            });
            rest = &rest[RETH_LEN..];
        }
        if l.atomic_eth {
            need(rest, ATOMIC_ETH_LEN, "atomic_eth")?;
            h.atomic_eth = Some(AtomicEth {
                va: be64(rest, 0),
                rkey: be32(rest, 8),
                swap_add: be64(rest, 12),
                compare: be64(rest, 20),
            });
            rest = &rest[ATOMIC_ETH_LEN..];
        }
        if l.aeth {
            need(rest, AETH_LEN, "aeth")?;
            h.aeth = Some(Aeth {
                syndrome: Syndrome::from_u8(rest[0])?,
                msn: be24(rest, 1),
            });
            rest = &rest[AETH_LEN..];
        }
        if l.atomic_ack {
            need(rest, ATOMIC_ACK_ETH_LEN, "atomic_ack_eth")?;
            h.atomic_ack = Some(be64(rest, 0));
            rest = &rest[ATOMIC_ACK_ETH_LEN..];
        }
        if l.immdt {
            need(rest, IMMDT_LEN, "immdt")?;
            h.immdt = Some(be32(rest, 0));
            rest = &rest[IMMDT_LEN..];
        }
        if l.cnp_reserved {
            // Reserved: sent as zeros, ignored on receipt.
            need(rest, CNP_RESERVED_LEN, "cnp")?;
            rest = &rest[CNP_RESERVED_LEN..];
        }
        Ok((h, rest))
    }

    /// Fails if the extended headers present are not the ones the opcode
    /// carries.
    pub fn check(&self) -> Result<(), Error> {
        let l: Layout = self.bth.opcode.layout();
        let fits = l.reth == self.reth.is_some()
            && l.atomic_eth == self.atomic_eth.is_some()
            && l.aeth == self.aeth.is_some()
            && l.atomic_ack == self.atomic_ack.is_some()
            && l.immdt == self.immdt.is_some();
        if !fits {
            return Err(Error::Malformed {
                layer: "bth",
                reason: "extended headers do not match the opcode",
            });
        }
        Ok(())
    }

    /// Appends the headers (after [`IbaHeaders::check`]; nothing is
    /// appended when it fails).
    pub fn emit(&self, out: &mut Vec<u8>) -> Result<(), Error> {
        self.check()?;
        let l = self.bth.opcode.layout();
        self.bth.emit(out);
        if let Some(r) = self.reth {
            out.extend_from_slice(&r.va.to_be_bytes());
            out.extend_from_slice(&r.rkey.to_be_bytes());
            out.extend_from_slice(&r.len.to_be_bytes());
        }
        if let Some(a) = self.atomic_eth {
            out.extend_from_slice(&a.va.to_be_bytes());
            out.extend_from_slice(&a.rkey.to_be_bytes());
            out.extend_from_slice(&a.swap_add.to_be_bytes());
            out.extend_from_slice(&a.compare.to_be_bytes());
        }
        if let Some(a) = self.aeth {
            out.push(a.syndrome.to_u8());
            put24(out, a.msn);
        }
        if let Some(v) = self.atomic_ack {
            out.extend_from_slice(&v.to_be_bytes());
        }
        if let Some(v) = self.immdt {
            out.extend_from_slice(&v.to_be_bytes());
        }
        if l.cnp_reserved {
            out.extend_from_slice(&[0; CNP_RESERVED_LEN]);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syndromes_follow_ibta() {
        // IBA 9.7.5.1 (table 42 of vol. 1): ACK 000ccccc, RNR NAK 001ttttt,
        // NAK 011nnnnn with 0 = PSN sequence error.
        assert_eq!(Syndrome::Ack { credits: 0x1f }.to_u8(), 0x1f);
        assert_eq!(Syndrome::RnrNak { timer: 14 }.to_u8(), 0x2e);
        assert_eq!(Syndrome::Nak(NakCode::PsnSequenceError).to_u8(), 0x60);
        assert_eq!(Syndrome::Nak(NakCode::RemoteAccessError).to_u8(), 0x62);
        for v in 0..=255u8 {
            if let Ok(s) = Syndrome::from_u8(v) {
                assert_eq!(s.to_u8(), v);
            } else {
                assert!(v & 0x80 != 0 || v >> 5 == 0b10 || (v >> 5 == 0b11 && v & 0x1f > 4));
            }
        }
    }
}
