//! The Ultra Ethernet semantic sublayer's headers (SES, UE 1.0) that
//! rdmalab's verbs map onto: the standard request (44 bytes: WRITE, READ,
//! SEND, tagged SEND and no-op), the response (12 bytes) and the response
//! with data (20 bytes, READ's answer). The PDS header's next-header code
//! says which follows it ([`Ses::code`]).
//!
//! Standard request: rsvd(2) opcode(6); version(2) DC IE REL HD EOM SOM;
//! message ID(16); index generation(8) job ID(24); rsvd(4) PIDonFEP(12);
//! rsvd(4) resource index(12); buffer offset(64); initiator(32); memory
//! key or match bits(64); then, on a message's first packet (SOM), header
//! data(64), else rsvd(18) payload length(14) and message offset(32);
//! request length(32).
//!
//! Reserved bits are sent as 0 and ignored; a version other than 0 and
//! the opcodes that need extension headers (atomics, rendezvous) or give
//! fields another meaning (deferrable sends) are refused with a reason,
//! as are the small and medium request formats. Layout: the UE 1.0
//! specification's SES header figures, cross-checked against the field
//! masks of Wireshark's UET dissector.
//!
//! Uses `crate::error` and `super::pds::fits`.

use super::pds::fits;
use crate::error::{be16, be24, be32, be64, need, put24, Error};

const L: &str = "uet ses";

/// The request opcodes spoken here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum SesOpcode {
    NoOp = 0x00,
    Write = 0x01,
    Read = 0x02,
    Send = 0x05,
    TaggedSend = 0x09,
}

impl SesOpcode {
    fn from_bits(v: u8) -> Result<SesOpcode, Error> {
        Ok(match v {
            0x00 => SesOpcode::NoOp,
            0x01 => SesOpcode::Write,
            0x02 => SesOpcode::Read,
            0x05 => SesOpcode::Send,
            0x09 => SesOpcode::TaggedSend,
            0x03 | 0x04 | 0x06..=0x08 | 0x0a..=0x0f => {
                return Err(Error::Malformed {
                    layer: L,
                    reason: "an SES opcode this crate does not speak (atomics, rendezvous, datagram or deferrable sends, errors)",
                })
            }
            _ => {
                return Err(Error::Malformed {
                    layer: L,
                    reason: "reserved SES opcode",
                })
            }
        })
    }
}

/// The 8 bytes before the request length: header data on a message's
/// first packet, where the rest of the message is on the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Continuation {
    Start {
        header_data: u64,
    },
    Rest {
        /// 14 bits: the payload bytes of this packet.
        payload_length: u16,
        message_offset: u32,
    },
}

/// A standard request header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StandardRequest {
    pub opcode: SesOpcode,
    pub delivery_complete: bool,
    pub initiator_error: bool,
    pub relative: bool,
    pub header_data_present: bool,
    /// The message's last packet.
    pub end_of_message: bool,
    pub message_id: u16,
    pub index_generation: u8,
    /// 24 bits.
    pub job_id: u32,
    /// 12 bits.
    pub pid_on_fep: u16,
    /// 12 bits.
    pub resource_index: u16,
    pub buffer_offset: u64,
    pub initiator: u32,
    pub memory_key: u64,
    /// Whether this is the message's first packet (SOM) and what follows.
    pub continuation: Continuation,
    pub request_length: u32,
}

/// A response's opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ResponseOpcode {
    Default = 0,
    Response = 1,
    NoResponse = 3,
}

/// A response without data: 12 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Response {
    /// 2 bits: which completion list.
    pub list: u8,
    pub opcode: ResponseOpcode,
    /// 6 bits; 1 is success.
    pub return_code: u8,
    pub message_id: u16,
    pub resource_index_generation: u8,
    /// 24 bits.
    pub job_id: u32,
    pub modified_length: u32,
}

/// A response with data (READ's answer): 20 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResponseData {
    pub list: u8,
    pub return_code: u8,
    pub message_id: u16,
    /// 24 bits.
    pub job_id: u32,
    pub read_request_message_id: u16,
    /// 14 bits.
    pub payload_length: u16,
    pub modified_length: u32,
    pub message_offset: u32,
}

/// What follows a PDS header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ses {
    None,
    Standard(StandardRequest),
    Response(Response),
    ResponseData(ResponseData),
}

/// The return code of success.
pub const RC_OK: u8 = 0x01;

pub const STANDARD_LEN: usize = 44;
pub const RESPONSE_LEN: usize = 12;
pub const RESPONSE_DATA_LEN: usize = 20;

const CODE_NONE: u8 = 0;
const CODE_STANDARD: u8 = 3;
const CODE_RESPONSE: u8 = 4;
const CODE_RESPONSE_DATA: u8 = 5;
const RESPONSE_WITH_DATA: u8 = 2;

const DC: u8 = 0x20;
const IE: u8 = 0x10;
const REL: u8 = 0x08;
const HD: u8 = 0x04;
const EOM: u8 = 0x02;
const SOM: u8 = 0x01;

impl Ses {
    /// The PDS next-header code of this header.
    pub fn code(&self) -> u8 {
        match self {
            Ses::None => CODE_NONE,
            Ses::Standard(_) => CODE_STANDARD,
            Ses::Response(_) => CODE_RESPONSE,
            Ses::ResponseData(_) => CODE_RESPONSE_DATA,
        }
    }

    pub fn wire_len(&self) -> usize {
        match self {
            Ses::None => 0,
            Ses::Standard(_) => STANDARD_LEN,
            Ses::Response(_) => RESPONSE_LEN,
            Ses::ResponseData(_) => RESPONSE_DATA_LEN,
        }
    }

    /// The header a PDS next-header `code` announces, and the bytes after it.
    pub fn parse(code: u8, buf: &[u8]) -> Result<(Ses, &[u8]), Error> {
        let version = |b: u8| {
            if b >> 6 != 0 {
                Err(Error::Malformed {
                    layer: L,
                    reason: "SES version is not 0",
                })
            } else {
                Ok(())
            }
        };
        match code {
            CODE_NONE => Ok((Ses::None, buf)),
            CODE_STANDARD => {
                need(buf, STANDARD_LEN, L)?;
                let opcode = SesOpcode::from_bits(buf[0] & 0x3f)?;
                let f = buf[1];
                version(f)?;
                let continuation = if f & SOM != 0 {
                    Continuation::Start {
                        header_data: be64(buf, 32),
                    }
                } else {
                    Continuation::Rest {
                        payload_length: be16(buf, 34) & 0x3fff,
                        message_offset: be32(buf, 36),
                    }
                };
                let req = StandardRequest {
                    opcode,
                    delivery_complete: f & DC != 0,
                    initiator_error: f & IE != 0,
                    relative: f & REL != 0,
                    header_data_present: f & HD != 0,
                    end_of_message: f & EOM != 0,
                    message_id: be16(buf, 2),
                    index_generation: buf[4],
                    job_id: be24(buf, 5),
                    pid_on_fep: be16(buf, 8) & 0x0fff,
                    resource_index: be16(buf, 10) & 0x0fff,
                    buffer_offset: be64(buf, 12),
                    initiator: be32(buf, 20),
                    memory_key: be64(buf, 24),
                    continuation,
                    request_length: be32(buf, 40),
                };
                Ok((Ses::Standard(req), &buf[STANDARD_LEN..]))
            }
            CODE_RESPONSE => {
                need(buf, RESPONSE_LEN, L)?;
                let opcode = match buf[0] & 0x3f {
                    0 => ResponseOpcode::Default,
                    1 => ResponseOpcode::Response,
                    3 => ResponseOpcode::NoResponse,
                    _ => return Err(Error::Malformed {
                        layer: L,
                        reason:
                            "response opcode is not default (0), response (1) or no response (3)",
                    }),
                };
                version(buf[1])?;
                let rsp = Response {
                    list: buf[0] >> 6,
                    opcode,
                    return_code: buf[1] & 0x3f,
                    message_id: be16(buf, 2),
                    resource_index_generation: buf[4],
                    job_id: be24(buf, 5),
                    modified_length: be32(buf, 8),
                };
                Ok((Ses::Response(rsp), &buf[RESPONSE_LEN..]))
            }
            CODE_RESPONSE_DATA => {
                need(buf, RESPONSE_DATA_LEN, L)?;
                if buf[0] & 0x3f != RESPONSE_WITH_DATA {
                    return Err(Error::Malformed {
                        layer: L,
                        reason: "response-with-data header whose opcode is not 2",
                    });
                }
                version(buf[1])?;
                let rsp = ResponseData {
                    list: buf[0] >> 6,
                    return_code: buf[1] & 0x3f,
                    message_id: be16(buf, 2),
                    job_id: be24(buf, 5),
                    read_request_message_id: be16(buf, 8),
                    payload_length: be16(buf, 10) & 0x3fff,
                    modified_length: be32(buf, 12),
                    message_offset: be32(buf, 16),
                };
                Ok((Ses::ResponseData(rsp), &buf[RESPONSE_DATA_LEN..]))
            }
            1 | 2 | 6 => Err(Error::Malformed {
                layer: L,
                reason: "a small or medium SES format this crate does not speak",
            }),
            _ => Err(Error::Malformed {
                layer: L,
                reason: "reserved PDS next-header code",
            }),
        }
    }

    /// Appends the header. Fields wider than their place fail rather than
    /// wrap.
    pub fn emit(&self, out: &mut Vec<u8>) -> Result<(), Error> {
        match self {
            Ses::None => {}
            Ses::Standard(r) => {
                fits(r.job_id, 24, "ses.job_id")?;
                fits(u32::from(r.pid_on_fep), 12, "ses.pid_on_fep")?;
                fits(u32::from(r.resource_index), 12, "ses.resource_index")?;
                let flag = |on: bool, bit: u8| if on { bit } else { 0 };
                let som = matches!(r.continuation, Continuation::Start { .. });
                out.push(r.opcode as u8);
                out.push(
                    flag(r.delivery_complete, DC)
                        | flag(r.initiator_error, IE)
                        | flag(r.relative, REL)
                        | flag(r.header_data_present, HD)
                        | flag(r.end_of_message, EOM)
                        | flag(som, SOM),
                );
                out.extend_from_slice(&r.message_id.to_be_bytes());
                out.push(r.index_generation);
                put24(out, r.job_id);
                out.extend_from_slice(&r.pid_on_fep.to_be_bytes());
                out.extend_from_slice(&r.resource_index.to_be_bytes());
                out.extend_from_slice(&r.buffer_offset.to_be_bytes());
                out.extend_from_slice(&r.initiator.to_be_bytes());
                out.extend_from_slice(&r.memory_key.to_be_bytes());
                match r.continuation {
                    Continuation::Start { header_data } => {
                        out.extend_from_slice(&header_data.to_be_bytes())
                    }
                    Continuation::Rest {
                        payload_length,
                        message_offset,
                    } => {
                        fits(u32::from(payload_length), 14, "ses.payload_length")?;
                        out.extend_from_slice(&[0, 0]);
                        out.extend_from_slice(&payload_length.to_be_bytes());
                        out.extend_from_slice(&message_offset.to_be_bytes());
                    }
                }
                out.extend_from_slice(&r.request_length.to_be_bytes());
            }
            Ses::Response(r) => {
                fits(u32::from(r.list), 2, "ses.list")?;
                fits(u32::from(r.return_code), 6, "ses.return_code")?;
                fits(r.job_id, 24, "ses.job_id")?;
                out.push((r.list << 6) | r.opcode as u8);
                out.push(r.return_code);
                out.extend_from_slice(&r.message_id.to_be_bytes());
                out.push(r.resource_index_generation);
                put24(out, r.job_id);
                out.extend_from_slice(&r.modified_length.to_be_bytes());
            }
            Ses::ResponseData(r) => {
                fits(u32::from(r.list), 2, "ses.list")?;
                fits(u32::from(r.return_code), 6, "ses.return_code")?;
                fits(r.job_id, 24, "ses.job_id")?;
                fits(u32::from(r.payload_length), 14, "ses.payload_length")?;
                out.push((r.list << 6) | RESPONSE_WITH_DATA);
                out.push(r.return_code);
                out.extend_from_slice(&r.message_id.to_be_bytes());
                out.push(0);
                put24(out, r.job_id);
                out.extend_from_slice(&r.read_request_message_id.to_be_bytes());
                out.extend_from_slice(&r.payload_length.to_be_bytes());
                out.extend_from_slice(&r.modified_length.to_be_bytes());
                out.extend_from_slice(&r.message_offset.to_be_bytes());
            }
        }
        Ok(())
    }
}
