//! The UET engine's [`Packet`] (`crate::engine::uet`) as an Ultra
//! Ethernet frame and back: the PDS and SES headers of `wire::uet` over
//! UDP, as `crate::frame` maps the RoCEv2 engines' packets onto IBA's
//! headers. The one mapping of packet fields onto UET's; the real
//! datapath uses it (`net run --transport uet`).
//!
//! Both ends know the connection's [`UetWire`] (its MTU and delivery
//! mode), as they know its QPs: the MTU turns an SES message offset into
//! the packet's index in its message, and a packet of the other mode is
//! refused (the spec's PDC mode mismatch).
//!
//! Where each field goes (data: WRITE, READ and SEND requests; READ
//! responses):
//! - `sport`: the UDP source port, the entropy value switches hash.
//!   `priority`: DSCP `8 * priority`; `ce`: ECN CE, else ECT(0).
//! - `src_qp`, `dst_qp`: the PDS source and destination PDC ids (16 bits).
//! - `psn`: the PDS PSN (32 bits on the wire; ours are 24).
//! - Requests: a RUD (or, ROD mode, ROD) request with an SES standard
//!   request: `verb` the opcode (WRITE, READ, SEND), `first` SOM, `last`
//!   EOM, `wqe_sn` the 16-bit message id, `msg_len` the request length,
//!   `ipsn` times the MTU the message offset (a first packet's is 0 and
//!   carries header data 0 instead), and `addr` less that offset the
//!   buffer offset (a SEND's `addr` is its offset in the message: buffer
//!   offset 0). A non-first packet's payload length is said twice (SES
//!   and UDP); both must agree.
//! - READ responses: a request with an SES response with data: `wqe_sn`
//!   the read request's message id, `msg_len` the modified length, `ipsn`
//!   the message offset over the MTU; `first` and `last` follow from the
//!   offset and length. Return code OK.
//! - ACKs: a PDS ACK whose cumulative PSN is `psn - 1` (everything up to
//!   it arrived; ours names the next PSN expected), whose ACK PSN offset
//!   makes `sack_psn` (the PSN that triggered it), with an SES default
//!   response (return code OK); with a SACK bitmap (`addr`: bit `i` is
//!   `psn + 1 + i`) it is an ACK_CC with SACK offset 2 and NSCC state of
//!   zeros. `ecn_echo`: the M flag. `vp`, the entropy value echoed: the
//!   UDP destination port (an ACK goes to the port its packet came from;
//!   decoding reads it there, so the caller chooses it).
//! - NACKs: `sack_psn` the NACK PSN (the one not taken), `psn` the
//!   payload (the cumulative PSN); the code `TRIMMED` (01) when the
//!   engine's `TRIMMED` bit is set, else `ROD_OOO` (0d) in ROD mode and
//!   `PSN_OOR_WINDOW` (0b) in RUD. `vp` as on ACKs.
//! - READ response acknowledgements (IRN's, which UET's engine keeps for
//!   its READ responses): a read ACK is a PDS ACK without an SES header
//!   (a request's ACK has one), a read NACK a NACK `PKT_NOT_RCVD` (12)
//!   naming `psn` (the PSN missing) with `sack_psn` as payload.
//!
//! Not carried, and zero after decoding: `sent_at` (UET has no timestamp;
//! NSCC keeps send times at the sender), an ACK's `verb` (a read ACK's is
//! READ), a READ response's `addr` (the requester places it by its own
//! work request). Refused when encoding: WRITE with immediate and the
//! atomics (their SES headers are not spoken), a nonzero `imm` or
//! `compare`, CNPs (UET has none), message ids over 16 bits, lengths and
//! offsets over 32 bits, QPs over 16 bits. Refused when decoding, with
//! the reason: control packets, other SES opcodes, NACK codes the engine
//! does not act on, header data, a response that is not OK.
//!
//! Uses `crate::packet`, `crate::frame::Decoded`, the UET engine's
//! `TRIMMED` bit, and `wire`.

use wire::bth::MASK24;
use wire::uet::frame::{self as uframe, UetFrame};
use wire::uet::pds::{
    Ack, AckExt, AckRequest, CcState, Nack, Pds, Request, RequestTarget, NACK_PKT_NOT_RCVD,
    NACK_PSN_OOR_WINDOW, NACK_ROD_OOO, NACK_TRIMMED, NACK_TRIMMED_LAST_HOP,
};
use wire::uet::ses::{
    Continuation, Response, ResponseData, ResponseOpcode, Ses, SesOpcode, StandardRequest, RC_OK,
};
use wire::uet::UetHeaders;
use wire::{Endpoint, Error};

use crate::engine::uet::TRIMMED;
use crate::frame::{datagram_reprs, Decoded};
use crate::packet::{Packet, PacketKind, Verb};

/// What both ends of a UET connection know of its frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UetWire {
    /// Payload bytes of every packet of a message but its last.
    pub mtu: u32,
    /// ROD (reliable ordered) rather than RUD.
    pub ordered: bool,
}

/// The bitmap of an ACK_CC starts this far after its cumulative PSN: bit
/// `i` is PSN `cack + 2 + i`, the engine's `psn + 1 + i`.
const SACK_OFFSET: u16 = 2;

/// Appends the frame of `p` from `src` to `dst`, UDP port `dst_port`,
/// carrying `payload` (`p.payload` bytes). Fails, appending nothing, on a
/// packet UET's headers cannot carry (the module's list).
pub fn encode(
    p: &Packet,
    w: UetWire,
    src: &Endpoint,
    dst: &Endpoint,
    dst_port: u16,
    payload: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), Error> {
    let headers = headers_of(p, w, payload)?;
    let (eth, ip, udp) = datagram_reprs(p, src, dst, dst_port);
    uframe::emit(out, &eth, &ip, &udp, &headers, &[payload])
}

/// Parses a frame to UDP port `port` into the packet [`encode`] made.
/// Fails with the reason, never panics, on anything else.
pub fn decode(frame: &[u8], w: UetWire, port: u16) -> Result<Decoded<'_>, Error> {
    let f = UetFrame::parse_on(frame, port)?;
    let p = packet_of(&f.headers, w, f.payload.len(), f.udp.dst_port)?;
    Ok(Decoded::of_datagram(
        p,
        (&f.eth, &f.ip, &f.udp),
        f.len,
        f.payload,
    ))
}

fn unrepresentable<T>(field: &'static str, reason: &'static str) -> Result<T, Error> {
    Err(Error::Unrepresentable { field, reason })
}

fn malformed<T>(reason: &'static str) -> Result<T, Error> {
    Err(Error::Malformed {
        layer: "uet packet",
        reason,
    })
}

fn pdc(qp: u32, field: &'static str) -> Result<u16, Error> {
    u16::try_from(qp).or_else(|_| unrepresentable(field, "a PDC id has 16 bits"))
}

/// `ipsn` packets of `mtu` bytes: the message offset.
fn offset(ipsn: u32, w: UetWire) -> Result<u32, Error> {
    u32::try_from(u64::from(ipsn) * u64::from(w.mtu))
        .or_else(|_| unrepresentable("ipsn", "the message offset exceeds 32 bits"))
}

fn len32(v: u64, field: &'static str) -> Result<u32, Error> {
    u32::try_from(v).or_else(|_| unrepresentable(field, "UET's lengths have 32 bits"))
}

fn message_id(p: &Packet) -> Result<u16, Error> {
    u16::try_from(p.wqe_sn).or_else(|_| unrepresentable("wqe_sn", "SES message ids have 16 bits"))
}

/// The headers of `p`, checked.
fn headers_of(p: &Packet, w: UetWire, payload: &[u8]) -> Result<UetHeaders, Error> {
    if payload.len() != p.payload as usize {
        return unrepresentable("payload", "the bytes given are not `payload` bytes long");
    }
    if p.priority > 7 {
        return unrepresentable("priority", "above 7 (DSCP class selectors CS0-CS7)");
    }
    if (p.psn | p.sack_psn) > MASK24 {
        return unrepresentable("psn", "does not fit 24 bits");
    }
    if p.imm != 0 || p.compare != 0 {
        return unrepresentable("imm", "no SES header spoken here carries an immediate");
    }
    let (spdcid, dpdcid) = (pdc(p.src_qp, "src_qp")?, pdc(p.dst_qp, "dst_qp")?);
    let request = |ses| UetHeaders {
        pds: Pds::Request(Request {
            ordered: w.ordered,
            retransmit: false,
            ack_request: false,
            psn: p.psn,
            clear_psn_offset: 0,
            spdcid,
            target: RequestTarget::Established { dpdcid },
            cc: None,
        }),
        ses,
    };
    let control = p.payload != 0 || p.msg_len != 0 || p.ipsn != 0 || p.first || p.last;
    match p.kind {
        PacketKind::Request => {
            let opcode = match p.verb {
                Verb::Write => SesOpcode::Write,
                Verb::Read => SesOpcode::Read,
                Verb::Send => SesOpcode::Send,
                _ => {
                    return unrepresentable(
                        "verb",
                        "UET's standard request carries WRITE, READ and SEND only",
                    )
                }
            };
            if p.mp_flags != 0 || p.sack_psn != 0 {
                return unrepresentable("mp_flags", "a request carries no flags or SACK");
            }
            let off = offset(p.ipsn, w)?;
            let continuation = match p.first {
                true if p.ipsn != 0 => {
                    return unrepresentable("ipsn", "a message's first packet has index 0")
                }
                true => Continuation::Start { header_data: 0 },
                false => Continuation::Rest {
                    payload_length: u16::try_from(p.payload)
                        .ok()
                        .filter(|&l| l <= 0x3fff)
                        .map_or_else(|| unrepresentable("payload", "over 14 bits"), Ok)?,
                    message_offset: off,
                },
            };
            let Some(buffer_offset) = p.addr.checked_sub(u64::from(off)) else {
                return unrepresentable("addr", "below the packet's offset in its message");
            };
            Ok(request(Ses::Standard(StandardRequest {
                opcode,
                delivery_complete: false,
                initiator_error: false,
                relative: false,
                header_data_present: false,
                end_of_message: p.last,
                message_id: message_id(p)?,
                index_generation: 0,
                job_id: 0,
                pid_on_fep: 0,
                resource_index: 0,
                buffer_offset,
                initiator: 0,
                memory_key: 0,
                continuation,
                request_length: len32(p.msg_len, "msg_len")?,
            })))
        }
        PacketKind::ReadResponse => {
            if p.verb != Verb::Read || p.mp_flags != 0 || p.sack_psn != 0 {
                return unrepresentable("verb", "a response with data answers a READ");
            }
            let off = offset(p.ipsn, w)?;
            let len = len32(p.msg_len, "msg_len")?;
            if p.first != (p.ipsn == 0)
                || p.last != (u64::from(off) + u64::from(p.payload) >= u64::from(len))
            {
                return unrepresentable("first", "first and last follow from the offset");
            }
            let id = message_id(p)?;
            Ok(request(Ses::ResponseData(ResponseData {
                list: 0,
                return_code: RC_OK,
                message_id: id,
                job_id: 0,
                read_request_message_id: id,
                payload_length: u16::try_from(p.payload)
                    .ok()
                    .filter(|&l| l <= 0x3fff)
                    .map_or_else(|| unrepresentable("payload", "over 14 bits"), Ok)?,
                modified_length: len,
                message_offset: off,
            })))
        }
        PacketKind::Ack | PacketKind::ReadAck => {
            if control || p.wqe_sn != 0 || p.mp_flags != 0 {
                return unrepresentable("kind", "an ACK carries no data, flags or message id");
            }
            let read = p.kind == PacketKind::ReadAck;
            if read && p.addr != 0 {
                return unrepresentable("addr", "a read ACK carries no SACK bitmap");
            }
            let cack = p.psn.wrapping_sub(1) & MASK24;
            let Ok(ack_psn_offset) = i16::try_from(signed24(p.sack_psn.wrapping_sub(cack))) else {
                return unrepresentable("sack_psn", "more than 2^15 PSNs from the cumulative one");
            };
            let ext = (p.addr != 0).then_some(AckExt {
                mpr: 0,
                sack_offset: SACK_OFFSET,
                sack_bitmap: p.addr,
                cc: CcState::Nscc {
                    service_time: 0,
                    restore_cwnd: false,
                    cwnd_penalty: 0,
                    received_bytes: 0,
                    ooo_count: 0,
                },
            });
            let pds = Pds::Ack(Ack {
                ecn_marked: p.ecn_echo,
                retransmit: false,
                probe: false,
                request: AckRequest::None,
                cack_psn: cack,
                ack_psn_offset,
                spdcid,
                dpdcid,
                ext,
            });
            let ses = match read {
                true => Ses::None,
                false => Ses::Response(Response {
                    list: 0,
                    opcode: ResponseOpcode::Default,
                    return_code: RC_OK,
                    message_id: 0,
                    resource_index_generation: 0,
                    job_id: 0,
                    modified_length: 0,
                }),
            };
            Ok(UetHeaders { pds, ses })
        }
        PacketKind::Nack | PacketKind::ReadNack => {
            if control || p.wqe_sn != 0 || p.addr != 0 || p.mp_flags & !TRIMMED != 0 {
                return unrepresentable("kind", "a NACK carries no data, address or message id");
            }
            let (code, psn, payload) = match p.kind {
                PacketKind::ReadNack if p.mp_flags != 0 => {
                    return unrepresentable("mp_flags", "a read NACK is never for a trimmed packet")
                }
                PacketKind::ReadNack => (NACK_PKT_NOT_RCVD, p.psn, p.sack_psn),
                _ if p.mp_flags & TRIMMED != 0 => (NACK_TRIMMED, p.sack_psn, p.psn),
                _ if w.ordered => (NACK_ROD_OOO, p.sack_psn, p.psn),
                _ => (NACK_PSN_OOR_WINDOW, p.sack_psn, p.psn),
            };
            Ok(UetHeaders {
                pds: Pds::Nack(Nack {
                    ecn_marked: p.ecn_echo,
                    retransmit: false,
                    nack_type: false,
                    code,
                    vendor_code: 0,
                    psn,
                    spdcid,
                    dpdcid,
                    payload,
                }),
                ses: Ses::None,
            })
        }
        PacketKind::Cnp | PacketKind::SwitchControl => {
            unrepresentable("kind", "UET has no CNP, and a switch's packet no frame")
        }
    }
}

/// A 24-bit difference as a signed number.
fn signed24(d: u32) -> i32 {
    ((d << 8) as i32) >> 8
}

/// The packet the headers say (addresses, ports, ECN, priority and
/// payload length are the caller's). `dst_port`: where an ACK or NACK
/// was sent, the entropy value it echoes.
fn packet_of(h: &UetHeaders, w: UetWire, payload: usize, dst_port: u16) -> Result<Packet, Error> {
    let psn24 = |v: u32| {
        if v > MASK24 {
            malformed("a PSN above 24 bits (rdmalab's PSNs have 24)")
        } else {
            Ok(v)
        }
    };
    let mut p = Packet::default();
    match (h.pds, h.ses) {
        (Pds::Request(r), ses) => {
            if r.ordered != w.ordered {
                return malformed("a ROD packet on a RUD connection, or the reverse");
            }
            let RequestTarget::Established { dpdcid } = r.target else {
                return malformed("a SYN: connections are set up out of band");
            };
            (p.src_qp, p.dst_qp) = (u32::from(r.spdcid), u32::from(dpdcid));
            p.psn = psn24(r.psn)?;
            let said_len = |l: u16| {
                if usize::from(l) != payload {
                    malformed("the SES payload length disagrees with the datagram's")
                } else {
                    Ok(())
                }
            };
            let index = |off: u32| match off.checked_rem(w.mtu) {
                Some(0) => Ok(off / w.mtu),
                _ => malformed("a message offset that is not a multiple of the MTU"),
            };
            match ses {
                Ses::Standard(s) => {
                    p.kind = PacketKind::Request;
                    p.verb = match s.opcode {
                        SesOpcode::Write => Verb::Write,
                        SesOpcode::Read => Verb::Read,
                        SesOpcode::Send => Verb::Send,
                        _ => {
                            return malformed(
                                "an SES opcode rdmalab does not act on (no-op, tagged send)",
                            )
                        }
                    };
                    let off = match s.continuation {
                        Continuation::Start { header_data } => {
                            if header_data != 0 || s.header_data_present {
                                return malformed("header data (an immediate): not spoken");
                            }
                            p.first = true;
                            0
                        }
                        Continuation::Rest {
                            payload_length,
                            message_offset,
                        } => {
                            said_len(payload_length)?;
                            message_offset
                        }
                    };
                    p.ipsn = index(off)?;
                    let Some(addr) = s.buffer_offset.checked_add(u64::from(off)) else {
                        return malformed("buffer offset plus message offset overflows");
                    };
                    p.addr = addr;
                    p.last = s.end_of_message;
                    p.wqe_sn = u32::from(s.message_id);
                    p.msg_len = u64::from(s.request_length);
                }
                Ses::ResponseData(s) => {
                    if s.return_code != RC_OK {
                        return malformed("a READ response reporting an error");
                    }
                    said_len(s.payload_length)?;
                    p.kind = PacketKind::ReadResponse;
                    p.verb = Verb::Read;
                    p.ipsn = index(s.message_offset)?;
                    p.first = p.ipsn == 0;
                    p.last = u64::from(s.message_offset) + payload as u64
                        >= u64::from(s.modified_length);
                    p.msg_len = u64::from(s.modified_length);
                    p.wqe_sn = u32::from(s.read_request_message_id);
                }
                _ => {
                    return malformed("a request without a standard request or response with data")
                }
            }
        }
        (Pds::Ack(a), ses) => {
            p.kind = match ses {
                Ses::None => PacketKind::ReadAck,
                Ses::Response(r) if r.return_code == RC_OK => PacketKind::Ack,
                Ses::Response(_) => return malformed("a response reporting an error"),
                _ => return malformed("an ACK with an SES header other than a response"),
            };
            if payload != 0 {
                return malformed("an ACK with a payload");
            }
            (p.src_qp, p.dst_qp) = (u32::from(a.spdcid), u32::from(a.dpdcid));
            let cack = psn24(a.cack_psn)?;
            p.psn = (cack + 1) & MASK24;
            p.sack_psn = cack.wrapping_add(a.ack_psn_offset as i32 as u32) & MASK24;
            p.ecn_echo = a.ecn_marked;
            if let Some(e) = a.ext {
                if e.sack_bitmap != 0 && e.sack_offset != SACK_OFFSET {
                    return malformed(
                        "a SACK bitmap that does not start 2 after the cumulative PSN",
                    );
                }
                p.addr = e.sack_bitmap;
            }
            if p.kind == PacketKind::ReadAck {
                if p.addr != 0 {
                    return malformed("a SACK bitmap on an ACK of READ responses");
                }
                p.verb = Verb::Read;
            } else {
                p.vp = dst_port;
            }
        }
        (Pds::Nack(n), _) => {
            if payload != 0 {
                return malformed("a NACK with a payload");
            }
            (p.src_qp, p.dst_qp) = (u32::from(n.spdcid), u32::from(n.dpdcid));
            p.ecn_echo = n.ecn_marked;
            let (psn, other) = (psn24(n.psn)?, psn24(n.payload)?);
            match n.code {
                NACK_PKT_NOT_RCVD => {
                    p.kind = PacketKind::ReadNack;
                    p.verb = Verb::Read;
                    (p.psn, p.sack_psn) = (psn, other);
                }
                NACK_TRIMMED | NACK_TRIMMED_LAST_HOP | NACK_ROD_OOO | NACK_PSN_OOR_WINDOW => {
                    p.kind = PacketKind::Nack;
                    (p.psn, p.sack_psn) = (other, psn);
                    p.vp = dst_port;
                    if matches!(n.code, NACK_TRIMMED | NACK_TRIMMED_LAST_HOP) {
                        p.mp_flags = TRIMMED;
                    }
                }
                _ => return malformed("a NACK code the engine does not act on"),
            }
        }
        (Pds::Control(_), _) => return malformed("a PDS control packet: rdmalab sends none"),
    }
    Ok(p)
}
