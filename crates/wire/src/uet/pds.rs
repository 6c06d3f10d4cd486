//! The Ultra Ethernet packet delivery sublayer's headers (PDS, UE 1.0):
//! the 2-byte prologue every PDS header starts with, and the headers of the
//! four packet kinds rdmalab speaks: a request (RUD or ROD, with or
//! without the congestion-control state of RUD_CC/ROD_CC), an ACK (plain,
//! or ACK_CC with the SACK extension and NSCC or credit state), a NACK and
//! a control packet.
//!
//! Prologue, 16 bits: type(5) next header or control type(4) flags(7).
//! Flags by kind (bit values within the low byte):
//! - request and control: RETX 0x10, AR (ack request) 0x08, SYN 0x04;
//! - ACK: M (ECN-marked) 0x20, RETX 0x10, P (probe) 0x08, REQ(2) 0x06;
//! - NACK: M 0x20, RETX 0x10, NT (NACK type) 0x08.
//!
//! Reserved bits are sent as 0 and ignored on receipt. Types this crate
//! does not speak (TSS encryption, RUDI, UUD, the CCX variants) are
//! refused with a reason, as IPv4 options are. Field layout: the UE 1.0
//! specification's PDS header figures, cross-checked against the field
//! masks of Wireshark's UET dissector.
//!
//! Uses `crate::error`.

use crate::error::{be16, be24, be32, be64, need, put24, Error};

const L: &str = "uet pds";

/// The PDS type field (5 bits) of the kinds spoken here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum PdsType {
    RudRequest = 2,
    RodRequest = 3,
    Ack = 7,
    AckCc = 8,
    Nack = 10,
    Control = 11,
    RudCcRequest = 13,
    RodCcRequest = 14,
}

impl PdsType {
    fn from_bits(v: u8) -> Result<PdsType, Error> {
        use PdsType::*;
        Ok(match v {
            2 => RudRequest,
            3 => RodRequest,
            7 => Ack,
            8 => AckCc,
            10 => Nack,
            11 => Control,
            13 => RudCcRequest,
            14 => RodCcRequest,
            1 | 4 | 5 | 6 | 9 | 12 => {
                return Err(Error::Malformed {
                    layer: L,
                    reason:
                        "a PDS type this crate does not speak (TSS, RUDI, UUD, ACK_CCX or NACK_CCX)",
                })
            }
            _ => {
                return Err(Error::Malformed {
                    layer: L,
                    reason: "reserved PDS type",
                })
            }
        })
    }
}

const RETX: u8 = 0x10;
const AR: u8 = 0x08;
const SYN: u8 = 0x04;
const M: u8 = 0x20;
const PROBE: u8 = 0x08;
const NT: u8 = 0x08;

/// The first two bytes of every PDS header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Prologue {
    pub kind: PdsType,
    /// The next header (SES) code, or a control packet's type: 4 bits.
    pub next: u8,
    /// 7 bits.
    pub flags: u8,
}

impl Prologue {
    pub(crate) fn parse(buf: &[u8]) -> Result<Prologue, Error> {
        need(buf, 2, L)?;
        let word = be16(buf, 0);
        Ok(Prologue {
            kind: PdsType::from_bits((word >> 11) as u8)?,
            next: ((word >> 7) & 0xf) as u8,
            flags: (word & 0x7f) as u8,
        })
    }

    fn emit(self, out: &mut Vec<u8>) {
        let word = (u16::from(self.kind as u8) << 11)
            | (u16::from(self.next & 0xf) << 7)
            | u16::from(self.flags & 0x7f);
        out.extend_from_slice(&word.to_be_bytes());
    }
}

/// Where a request goes: an established connection's destination PDC, or,
/// on a packet that opens one (SYN), the PDC mode and how far this PSN is
/// from the connection's first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestTarget {
    Established {
        dpdcid: u16,
    },
    Syn {
        /// Ask for one of the target's reserved PDCs.
        use_reserved: bool,
        /// 12 bits: this PSN less the connection's start PSN.
        psn_offset: u16,
    },
}

/// RUD_CC/ROD_CC's congestion-control state on a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestCc {
    pub ccc_id: u8,
    /// 24 bits.
    pub credit_target: u32,
}

/// A RUD or ROD request: 12 bytes, 16 with congestion-control state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// ROD (reliable ordered) rather than RUD (reliable unordered).
    pub ordered: bool,
    pub retransmit: bool,
    pub ack_request: bool,
    pub psn: u32,
    /// The clear PSN less this PSN: everything before it the receiver may
    /// forget.
    pub clear_psn_offset: i16,
    pub spdcid: u16,
    pub target: RequestTarget,
    pub cc: Option<RequestCc>,
}

/// What an ACK asks of the source (its REQ field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum AckRequest {
    None = 0,
    ClearPsn = 1,
    ClosePdc = 2,
}

/// The receiver's congestion state an ACK_CC carries (8 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcState {
    /// For NSCC, the sender's window control.
    Nscc {
        /// Time the packet spent in the receiver, in the spec's units.
        service_time: u16,
        restore_cwnd: bool,
        /// 7 bits.
        cwnd_penalty: u8,
        /// 24 bits.
        received_bytes: u32,
        ooo_count: u16,
    },
    /// For receiver credit (RCCC).
    Credit {
        /// 24 bits.
        credit: u32,
        ooo_count: u16,
    },
}

/// ACK_CC's extension: the selective-ack bitmap and congestion state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckExt {
    /// The maximum PSN range the receiver tracks.
    pub mpr: u8,
    /// Where the bitmap starts, relative to the cumulative ACK PSN.
    pub sack_offset: u16,
    /// Bit i set: PSN (cack + sack_offset + i) has arrived.
    pub sack_bitmap: u64,
    pub cc: CcState,
}

/// An ACK: 12 bytes, 32 as ACK_CC with its extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ack {
    pub ecn_marked: bool,
    pub retransmit: bool,
    pub probe: bool,
    pub request: AckRequest,
    /// Every PSN before and at it has arrived.
    pub cack_psn: u32,
    /// The PSN this ACK answers, less the cumulative one.
    pub ack_psn_offset: i16,
    pub spdcid: u16,
    pub dpdcid: u16,
    pub ext: Option<AckExt>,
}

/// A NACK: 16 bytes. Code 1 is "trimmed", 2 "trimmed at the last hop".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nack {
    pub ecn_marked: bool,
    pub retransmit: bool,
    pub nack_type: bool,
    pub code: u8,
    pub vendor_code: u8,
    pub psn: u32,
    pub spdcid: u16,
    pub dpdcid: u16,
    /// Code-specific; for most codes the highest PSN received plus one.
    pub payload: u32,
}

/// The NACK code of a packet a switch trimmed.
pub const NACK_TRIMMED: u8 = 0x01;
/// Trimmed at the last-hop switch.
pub const NACK_TRIMMED_LAST_HOP: u8 = 0x02;
/// The PSN is outside the receiver's tracking window.
pub const NACK_PSN_OOR_WINDOW: u8 = 0x0b;
/// ROD: the packet is not the next in order.
pub const NACK_ROD_OOO: u8 = 0x0d;
/// A packet the receiver expected has not arrived.
pub const NACK_PKT_NOT_RCVD: u8 = 0x12;

/// A control packet: 16 bytes. `ctl_type` (4 bits): 0 no-op, 1 request
/// for ACK, 2 clear, 3 request for clear, 4 close, 5 request for close,
/// 6 probe, 7 credit, 8 credit request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Control {
    pub ctl_type: u8,
    pub retransmit: bool,
    pub ack_request: bool,
    pub syn: bool,
    pub probe_opaque: u16,
    pub psn: u32,
    pub spdcid: u16,
    pub dpdcid: u16,
    pub payload: u32,
}

/// One PDS header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pds {
    Request(Request),
    Ack(Ack),
    Nack(Nack),
    Control(Control),
}

pub const REQUEST_LEN: usize = 12;
pub const REQUEST_CC_LEN: usize = 16;
pub const ACK_LEN: usize = 12;
pub const ACK_EXT_LEN: usize = 20;
pub const NACK_LEN: usize = 16;
pub const CONTROL_LEN: usize = 16;

const CC_TYPE_NSCC: u8 = 0;
const CC_TYPE_CREDIT: u8 = 1;

impl Pds {
    /// The header, its next-header code (the SES header that follows; 0 for
    /// none, always 0 after a control packet) and the bytes after it.
    pub fn parse(buf: &[u8]) -> Result<(Pds, u8, &[u8]), Error> {
        let pro = Prologue::parse(buf)?;
        let f = pro.flags;
        let (pds, len) = match pro.kind {
            PdsType::RudRequest
            | PdsType::RodRequest
            | PdsType::RudCcRequest
            | PdsType::RodCcRequest => {
                let with_cc = matches!(pro.kind, PdsType::RudCcRequest | PdsType::RodCcRequest);
                let len = if with_cc { REQUEST_CC_LEN } else { REQUEST_LEN };
                need(buf, len, L)?;
                let target = if f & SYN != 0 {
                    RequestTarget::Syn {
                        use_reserved: buf[10] & 0x80 != 0,
                        psn_offset: be16(buf, 10) & 0x0fff,
                    }
                } else {
                    RequestTarget::Established {
                        dpdcid: be16(buf, 10),
                    }
                };
                let cc = with_cc.then(|| RequestCc {
                    ccc_id: buf[12],
                    credit_target: be24(buf, 13),
                });
                let req = Request {
                    ordered: matches!(pro.kind, PdsType::RodRequest | PdsType::RodCcRequest),
                    retransmit: f & RETX != 0,
                    ack_request: f & AR != 0,
                    clear_psn_offset: be16(buf, 2) as i16,
                    psn: be32(buf, 4),
                    spdcid: be16(buf, 8),
                    target,
                    cc,
                };
                (Pds::Request(req), len)
            }
            PdsType::Ack | PdsType::AckCc => {
                let ext = pro.kind == PdsType::AckCc;
                let len = ACK_LEN + if ext { ACK_EXT_LEN } else { 0 };
                need(buf, len, L)?;
                let request = match (f >> 1) & 0b11 {
                    0 => AckRequest::None,
                    1 => AckRequest::ClearPsn,
                    2 => AckRequest::ClosePdc,
                    _ => {
                        return Err(Error::Malformed {
                            layer: L,
                            reason: "reserved ACK request value 3",
                        })
                    }
                };
                let ext = if ext {
                    let e = &buf[ACK_LEN..];
                    let cc = match e[0] >> 4 {
                        CC_TYPE_NSCC => CcState::Nscc {
                            service_time: be16(e, 12),
                            restore_cwnd: e[14] & 0x80 != 0,
                            cwnd_penalty: e[14] & 0x7f,
                            received_bytes: be24(e, 15),
                            ooo_count: be16(e, 18),
                        },
                        CC_TYPE_CREDIT => CcState::Credit {
                            credit: be24(e, 12),
                            ooo_count: be16(e, 18),
                        },
                        _ => {
                            return Err(Error::Malformed {
                                layer: L,
                                reason: "ACK_CC names a congestion-control type other than NSCC (0) or credit (1)",
                            })
                        }
                    };
                    Some(AckExt {
                        mpr: e[1],
                        sack_offset: be16(e, 2),
                        sack_bitmap: be64(e, 4),
                        cc,
                    })
                } else {
                    None
                };
                let ack = Ack {
                    ecn_marked: f & M != 0,
                    retransmit: f & RETX != 0,
                    probe: f & PROBE != 0,
                    request,
                    ack_psn_offset: be16(buf, 2) as i16,
                    cack_psn: be32(buf, 4),
                    spdcid: be16(buf, 8),
                    dpdcid: be16(buf, 10),
                    ext,
                };
                (Pds::Ack(ack), len)
            }
            PdsType::Nack => {
                need(buf, NACK_LEN, L)?;
                let nack = Nack {
                    ecn_marked: f & M != 0,
                    retransmit: f & RETX != 0,
                    nack_type: f & NT != 0,
                    code: buf[2],
                    vendor_code: buf[3],
                    psn: be32(buf, 4),
                    spdcid: be16(buf, 8),
                    dpdcid: be16(buf, 10),
                    payload: be32(buf, 12),
                };
                (Pds::Nack(nack), NACK_LEN)
            }
            PdsType::Control => {
                need(buf, CONTROL_LEN, L)?;
                if pro.next > 8 {
                    return Err(Error::Malformed {
                        layer: L,
                        reason: "reserved control type (above 8)",
                    });
                }
                let ctl = Control {
                    ctl_type: pro.next,
                    retransmit: f & RETX != 0,
                    ack_request: f & AR != 0,
                    syn: f & SYN != 0,
                    probe_opaque: be16(buf, 2),
                    psn: be32(buf, 4),
                    spdcid: be16(buf, 8),
                    dpdcid: be16(buf, 10),
                    payload: be32(buf, 12),
                };
                return Ok((Pds::Control(ctl), 0, &buf[CONTROL_LEN..]));
            }
        };
        Ok((pds, pro.next, &buf[len..]))
    }

    /// Bytes on the wire.
    pub fn wire_len(&self) -> usize {
        match self {
            Pds::Request(r) if r.cc.is_some() => REQUEST_CC_LEN,
            Pds::Request(_) => REQUEST_LEN,
            Pds::Ack(a) if a.ext.is_some() => ACK_LEN + ACK_EXT_LEN,
            Pds::Ack(_) => ACK_LEN,
            Pds::Nack(_) => NACK_LEN,
            Pds::Control(_) => CONTROL_LEN,
        }
    }

    /// Appends the header with `next` (4 bits) as its next-header code;
    /// a control packet carries its type there instead and refuses a next
    /// header. Fields wider than their place fail rather than wrap.
    pub fn emit(&self, next: u8, out: &mut Vec<u8>) -> Result<(), Error> {
        let flag = |on: bool, bit: u8| if on { bit } else { 0 };
        match self {
            Pds::Request(r) => {
                let kind = match (r.ordered, r.cc.is_some()) {
                    (false, false) => PdsType::RudRequest,
                    (true, false) => PdsType::RodRequest,
                    (false, true) => PdsType::RudCcRequest,
                    (true, true) => PdsType::RodCcRequest,
                };
                let syn = matches!(r.target, RequestTarget::Syn { .. });
                let flags = flag(r.retransmit, RETX) | flag(r.ack_request, AR) | flag(syn, SYN);
                Prologue { kind, next, flags }.emit(out);
                out.extend_from_slice(&r.clear_psn_offset.to_be_bytes());
                out.extend_from_slice(&r.psn.to_be_bytes());
                out.extend_from_slice(&r.spdcid.to_be_bytes());
                match r.target {
                    RequestTarget::Established { dpdcid } => {
                        out.extend_from_slice(&dpdcid.to_be_bytes())
                    }
                    RequestTarget::Syn {
                        use_reserved,
                        psn_offset,
                    } => {
                        fits(u32::from(psn_offset), 12, "pds.psn_offset")?;
                        let word = (u16::from(use_reserved) << 15) | psn_offset;
                        out.extend_from_slice(&word.to_be_bytes());
                    }
                }
                if let Some(cc) = r.cc {
                    fits(cc.credit_target, 24, "pds.credit_target")?;
                    out.push(cc.ccc_id);
                    put24(out, cc.credit_target);
                }
            }
            Pds::Ack(a) => {
                let kind = if a.ext.is_some() {
                    PdsType::AckCc
                } else {
                    PdsType::Ack
                };
                let flags = flag(a.ecn_marked, M)
                    | flag(a.retransmit, RETX)
                    | flag(a.probe, PROBE)
                    | ((a.request as u8) << 1);
                Prologue { kind, next, flags }.emit(out);
                out.extend_from_slice(&a.ack_psn_offset.to_be_bytes());
                out.extend_from_slice(&a.cack_psn.to_be_bytes());
                out.extend_from_slice(&a.spdcid.to_be_bytes());
                out.extend_from_slice(&a.dpdcid.to_be_bytes());
                if let Some(e) = a.ext {
                    let cc_type = match e.cc {
                        CcState::Nscc { .. } => CC_TYPE_NSCC,
                        CcState::Credit { .. } => CC_TYPE_CREDIT,
                    };
                    out.push(cc_type << 4);
                    out.push(e.mpr);
                    out.extend_from_slice(&e.sack_offset.to_be_bytes());
                    out.extend_from_slice(&e.sack_bitmap.to_be_bytes());
                    match e.cc {
                        CcState::Nscc {
                            service_time,
                            restore_cwnd,
                            cwnd_penalty,
                            received_bytes,
                            ooo_count,
                        } => {
                            fits(u32::from(cwnd_penalty), 7, "pds.cwnd_penalty")?;
                            fits(received_bytes, 24, "pds.received_bytes")?;
                            out.extend_from_slice(&service_time.to_be_bytes());
                            out.push((u8::from(restore_cwnd) << 7) | cwnd_penalty);
                            put24(out, received_bytes);
                            out.extend_from_slice(&ooo_count.to_be_bytes());
                        }
                        CcState::Credit { credit, ooo_count } => {
                            fits(credit, 24, "pds.credit")?;
                            put24(out, credit);
                            out.extend_from_slice(&[0, 0, 0]);
                            out.extend_from_slice(&ooo_count.to_be_bytes());
                        }
                    }
                }
            }
            Pds::Nack(n) => {
                let flags =
                    flag(n.ecn_marked, M) | flag(n.retransmit, RETX) | flag(n.nack_type, NT);
                Prologue {
                    kind: PdsType::Nack,
                    next,
                    flags,
                }
                .emit(out);
                out.push(n.code);
                out.push(n.vendor_code);
                out.extend_from_slice(&n.psn.to_be_bytes());
                out.extend_from_slice(&n.spdcid.to_be_bytes());
                out.extend_from_slice(&n.dpdcid.to_be_bytes());
                out.extend_from_slice(&n.payload.to_be_bytes());
            }
            Pds::Control(c) => {
                if next != 0 {
                    return Err(Error::Unrepresentable {
                        field: "ses",
                        reason: "a control packet carries no SES header",
                    });
                }
                if c.ctl_type > 8 {
                    return Err(Error::Unrepresentable {
                        field: "pds.ctl_type",
                        reason: "control types are 0 to 8",
                    });
                }
                let flags = flag(c.retransmit, RETX) | flag(c.ack_request, AR) | flag(c.syn, SYN);
                Prologue {
                    kind: PdsType::Control,
                    next: c.ctl_type,
                    flags,
                }
                .emit(out);
                out.extend_from_slice(&c.probe_opaque.to_be_bytes());
                out.extend_from_slice(&c.psn.to_be_bytes());
                out.extend_from_slice(&c.spdcid.to_be_bytes());
                out.extend_from_slice(&c.dpdcid.to_be_bytes());
                out.extend_from_slice(&c.payload.to_be_bytes());
            }
        }
        Ok(())
    }
}

/// Fails unless `v` fits in `bits` bits.
pub(crate) fn fits(v: u32, bits: u32, field: &'static str) -> Result<(), Error> {
    if v >> bits != 0 {
        return Err(Error::Unrepresentable {
            field,
            reason: "the value is wider than its field",
        });
    }
    Ok(())
}
