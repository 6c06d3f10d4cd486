//! The transport's [`Packet`] as RoCEv2 bytes and back: [`encode`] builds
//! the frame (opcode from kind, verb and first/last; the IBA headers;
//! rdmalab's extension with whatever those headers leave unsaid; the
//! payload), [`decode`] parses one and rebuilds the packet. The header
//! formats are the `wire` crate's; this module is the one mapping of
//! packet fields onto them (for the simulator's pcap and the datapath).
//!
//! Where each field goes:
//! - `src`, `dst`: the IPv4 addresses; the simulator's host `h` is
//!   10.0.0.0/8 + `h` (`wire::Endpoint::sim`); decoding takes the low 24
//!   bits of each address.
//! - `sport`: the UDP source port. `priority`: DSCP `8 * priority` (class
//!   selector CS`priority`); decoding reads DSCP / 8. `ce`: ECN CE, else
//!   ECT(0).
//! - QP numbers: the NIC's QP `n` is QP `n + QPN_BASE` on the wire, in
//!   the BTH and in the extension alike ([`QPN_BASE`]).
//! - `dst_qp`, `psn`: the BTH. An ACK's BTH PSN is the last PSN it
//!   acknowledges, as IBA has it (`psn - 1`: our `psn` is the next one
//!   expected); a NAK's is the expected PSN; a CNP's is 0 (Annex A17), the
//!   packet's own in the extension. `ecn_echo`: the BTH's BECN (a CNP has
//!   BECN set by its format, so its echo goes in the extension).
//!   `mp_flags`' `ACK_REQ` bit: the BTH's AckReq.
//! - `addr`, `msg_len`: the RETH (WRITE first/only, READ request) or the
//!   AtomicETH (`imm` the swap/add operand, `compare`); `imm` of a WRITE
//!   with immediate's last packet: the ImmDt; `wqe_sn` on ACK, NAK and
//!   READ response first/last/only: the AETH's MSN. An atomic response's
//!   8-byte payload: the AtomicAckETH.
//! - `kind` and `verb` in the extension's OP field: their codes are their
//!   places in [`KINDS`] and [`VERBS`].
//! - Everything else, and any of the above the headers cannot hold (a
//!   64-bit immediate, a message over 4 GiB, an address on a middle
//!   packet): the extension (`wire::extension`). Its SACK/iPSN field
//!   holds `ipsn` on data packets and `sack_psn` on control packets (the
//!   opcode says which), so a data packet with a `sack_psn` or a control
//!   packet with an `ipsn` has no encoding.
//! - `wire`: not carried; decoding sets it to the frame's length.
//!
//! Not carried: Eunomia's Head (the connection's first PSN), which RC
//! connection setup gives the receiver and no `Packet` field holds (see
//! `order::eunomia`); R_Key (the transport has no keys: 0).
//!
//! Uses `crate::packet`, `crate::order::eunomia`'s `ACK_REQ` and `wire`.

use wire::bth::{Bth, Opcode, DEFAULT_PKEY, MASK24};
use wire::ethernet::ETHERTYPE_IPV4;
use wire::extension::{Extension, Op};
use wire::iba::{Aeth, AtomicEth, IbaHeaders, NakCode, Reth, Syndrome, CREDITS_UNLIMITED};
use wire::ipv4::{Ipv4Repr, DEFAULT_TTL, ECN_CE, ECN_ECT0};
use wire::roce::{self, RoceFrame};
use wire::udp::{UdpRepr, ROCE_PORT};
use wire::{ethernet::EthernetRepr, Endpoint, Error};

use crate::order::eunomia::ACK_REQ;
use crate::packet::{Packet, PacketKind, Verb, ATOMIC_BYTES};

/// The wire's number of the NIC's QP 0: IBA reserves QP 0 and 1 for
/// subnet management and general services (Wireshark dissects packets to
/// them as MADs), so the NIC's QP `n` is QP `n + 2` in every frame. An
/// offset, not random numbers as the PSNs are: a QP number is the index
/// of its QP's entry on every packet, in the NIC's table as in an RNIC's
/// QP context table (mlx5 hands QPNs out of a bitmap, in order), and a
/// random one would cost a lookup in a map per packet in the simulator
/// (PSNs are random so that a stale packet does not land in a new
/// connection; QP numbers have no such role).
pub const QPN_BASE: u32 = 2;

/// The packet kinds by their extension code (the OP field's low 3 bits).
pub const KINDS: [PacketKind; wire::extension::KIND_CODES as usize] = [
    PacketKind::Request,
    PacketKind::ReadResponse,
    PacketKind::Ack,
    PacketKind::Nack,
    PacketKind::ReadAck,
    PacketKind::ReadNack,
    PacketKind::Cnp,
];

/// The verbs by their extension code (the OP field's bits 3-5).
pub const VERBS: [Verb; wire::extension::VERB_CODES as usize] = [
    Verb::Write,
    Verb::Read,
    Verb::Send,
    Verb::WriteImm,
    Verb::FetchAdd,
    Verb::CmpSwap,
];

/// A decoded frame: the packet, its two ends, and its payload (borrowed
/// from the frame).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decoded<'a> {
    pub packet: Packet,
    pub src: Endpoint,
    pub dst: Endpoint,
    pub payload: &'a [u8],
}

/// Appends the frame of `p` from `src` to `dst` carrying `payload`
/// (`p.payload` bytes) to `out`. Fails, appending nothing, when a field
/// is out of its wire range (24-bit QPs and sequence numbers, priority
/// above 7), `payload` has not `p.payload` bytes, an atomic response's
/// payload is not 8 bytes, or the frame would exceed IPv4's 65535 bytes.
pub fn encode(
    p: &Packet,
    src: &Endpoint,
    dst: &Endpoint,
    payload: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), Error> {
    encode_to(p, src, dst, ROCE_PORT, payload, out)
}

/// As [`encode`], to UDP port `dst_port` instead of 4791 (a datapath
/// whose peer listens elsewhere; the source port is still `p.sport`).
pub fn encode_to(
    p: &Packet,
    src: &Endpoint,
    dst: &Endpoint,
    dst_port: u16,
    payload: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), Error> {
    check(p, payload)?;
    let p = &Packet {
        dst_qp: p.dst_qp + QPN_BASE,
        src_qp: p.src_qp + QPN_BASE,
        ..*p
    };
    let iba = iba_of(p, payload);
    let ext = extension_of(&said_by(&iba)?, p);
    let data = if iba.atomic_ack.is_some() {
        &[][..]
    } else {
        payload
    };
    // No data at all: the extension is left out when empty (a plain
    // RoCEv2 ACK or CNP); with a payload it is always there, so its magic
    // is never read from payload bytes.
    let mut ext_bytes = Vec::with_capacity(ext.wire_len());
    if ext != Extension::default() || !data.is_empty() {
        ext.emit(&mut ext_bytes);
    }
    let (eth, ip, udp) = datagram_reprs(p, src, dst, dst_port);
    roce::emit(out, &eth, &ip, &udp, &iba, &[&ext_bytes, data])
}

/// The Ethernet, IPv4 and UDP headers of `p`'s datagram from `src` to
/// `dst`, UDP port `dst_port` (its priority as the DSCP, its CE mark as
/// the ECN field, its source port as the UDP one): RoCEv2's and UET's
/// frames alike (`uet_frame.rs`).
pub(crate) fn datagram_reprs(
    p: &Packet,
    src: &Endpoint,
    dst: &Endpoint,
    dst_port: u16,
) -> (EthernetRepr, Ipv4Repr, UdpRepr) {
    let eth = EthernetRepr {
        dst: dst.mac,
        src: src.mac,
        ethertype: ETHERTYPE_IPV4,
    };
    let ip = Ipv4Repr {
        src: src.ip,
        dst: dst.ip,
        dscp: p.priority << 3,
        ecn: if p.ce { ECN_CE } else { ECN_ECT0 },
        ident: 0,
        ttl: DEFAULT_TTL,
        payload_len: 0,
    };
    let udp = UdpRepr {
        src_port: p.sport,
        dst_port,
    };
    (eth, ip, udp)
}

/// [`encode`] between the simulator's hosts `p.src` and `p.dst`.
pub fn encode_sim(p: &Packet, payload: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
    encode(
        p,
        &Endpoint::sim(p.src)?,
        &Endpoint::sim(p.dst)?,
        payload,
        out,
    )
}

/// Parses a frame [`encode`] made, or any RoCEv2 RC frame or CNP whose
/// data is empty or starts with rdmalab's extension (a plain ACK or CNP
/// from an RNIC decodes too). Fails with the reason on anything else,
/// never panics.
pub fn decode(frame: &[u8]) -> Result<Decoded<'_>, Error> {
    decode_on(frame, ROCE_PORT)
}

/// As [`decode`], for a frame to UDP port `port` instead of 4791.
pub fn decode_on(frame: &[u8], port: u16) -> Result<Decoded<'_>, Error> {
    let f = RoceFrame::parse_on(frame, port)?;
    let (ext, rest) = if f.data.is_empty() {
        (Extension::default(), f.data)
    } else {
        Extension::parse(f.data)?
    };
    let mut p = said_by(&f.iba)?;
    let payload = match f.iba.atomic_ack {
        Some(_) if !rest.is_empty() => {
            return Err(Error::Malformed {
                layer: "atomic_ack_eth",
                reason: "an atomic acknowledge carries no payload",
            })
        }
        // The original value, as the frame holds it.
        Some(_) => {
            let at = roce::BTH_AT + wire::bth::HEADER_LEN + wire::iba::AETH_LEN;
            &frame[at..at + wire::iba::ATOMIC_ACK_ETH_LEN]
        }
        None => rest,
    };
    apply(&ext, &mut p);
    // The extension may not contradict the opcode: a packet has one
    // encoding, and only what `encode` can make decodes.
    let nak = matches!(p.kind, PacketKind::Nack | PacketKind::ReadNack);
    let said_nak = matches!(f.iba.aeth.map(|a| a.syndrome), Some(Syndrome::Nak(_)));
    if opcode_of(&p) != f.iba.bth.opcode || nak != said_nak {
        return Err(Error::Malformed {
            layer: "extension",
            reason: "its kind, verb or first/last bits contradict the opcode",
        });
    }
    if f.iba.bth.dest_qp < QPN_BASE || p.src_qp < QPN_BASE {
        return Err(Error::Malformed {
            layer: "bth",
            reason: "QP 0 and 1 are IBA's management QPs, not RC QPs",
        });
    }
    p.dst_qp = f.iba.bth.dest_qp - QPN_BASE;
    p.src_qp -= QPN_BASE;
    Ok(Decoded::of_datagram(
        p,
        (&f.eth, &f.ip, &f.udp),
        f.len,
        payload,
    ))
}

impl<'a> Decoded<'a> {
    /// `p` as its datagram carried it: its hosts, source port, priority,
    /// CE mark and sizes from the Ethernet, IPv4 and UDP headers
    /// (`datagram_reprs` in reverse; RoCEv2's and UET's frames alike).
    pub(crate) fn of_datagram(
        mut p: Packet,
        (eth, ip, udp): (&EthernetRepr, &Ipv4Repr, &UdpRepr),
        len: usize,
        payload: &'a [u8],
    ) -> Decoded<'a> {
        p.src = Endpoint::sim_host(ip.src);
        p.dst = Endpoint::sim_host(ip.dst);
        p.sport = udp.src_port;
        p.priority = ip.dscp >> 3;
        p.ce = ip.ecn == ECN_CE;
        p.payload = payload.len() as u32;
        p.wire = len as u32;
        Decoded {
            packet: p,
            src: Endpoint {
                mac: eth.src,
                ip: ip.src,
            },
            dst: Endpoint {
                mac: eth.dst,
                ip: ip.dst,
            },
            payload,
        }
    }
}

fn check(p: &Packet, payload: &[u8]) -> Result<(), Error> {
    let bad = |field, reason| Err(Error::Unrepresentable { field, reason });
    for (field, v) in [
        ("psn", p.psn),
        ("dst_qp", p.dst_qp),
        ("src_qp", p.src_qp),
        ("wqe_sn", p.wqe_sn),
    ] {
        let max = if field.ends_with("qp") {
            MASK24 - QPN_BASE
        } else {
            MASK24
        };
        if v > max {
            return bad(field, "does not fit 24 bits (QPs: after QPN_BASE)");
        }
    }
    if p.priority > 7 {
        return bad("priority", "above 7 (DSCP class selectors CS0-CS7)");
    }
    if p.is_data() && p.sack_psn != 0 {
        return bad("sack_psn", "a data packet carries no selective ack");
    }
    if !p.is_data() && p.ipsn != 0 {
        return bad("ipsn", "a control packet has no index in a message");
    }
    if payload.len() != p.payload as usize {
        return bad("payload", "the bytes given are not `payload` bytes long");
    }
    if p.kind == PacketKind::SwitchControl {
        return bad("kind", "a switch's own control packet has no RoCEv2 frame");
    }
    if p.kind == PacketKind::ReadResponse
        && p.verb.is_atomic()
        && payload.len() != ATOMIC_BYTES as usize
    {
        return bad("payload", "an atomic response returns exactly 8 bytes");
    }
    Ok(())
}

/// The opcode of a packet: its kind, verb and place in its message.
fn opcode_of(p: &Packet) -> Opcode {
    use Opcode::*;
    let pick = |only, first, middle, last| match (p.first, p.last) {
        (true, true) => only,
        (true, false) => first,
        (false, false) => middle,
        (false, true) => last,
    };
    match (p.kind, p.verb) {
        (PacketKind::Request, Verb::Write) => pick(WriteOnly, WriteFirst, WriteMiddle, WriteLast),
        (PacketKind::Request, Verb::WriteImm) => {
            pick(WriteOnlyImm, WriteFirst, WriteMiddle, WriteLastImm)
        }
        (PacketKind::Request, Verb::Send) => pick(SendOnly, SendFirst, SendMiddle, SendLast),
        (PacketKind::Request, Verb::Read) => ReadRequest,
        (PacketKind::Request, Verb::FetchAdd) => FetchAdd,
        (PacketKind::Request, Verb::CmpSwap) => CompareSwap,
        (PacketKind::ReadResponse, v) if v.is_atomic() => AtomicAcknowledge,
        (PacketKind::ReadResponse, _) => pick(
            ReadResponseOnly,
            ReadResponseFirst,
            ReadResponseMiddle,
            ReadResponseLast,
        ),
        (PacketKind::Ack | PacketKind::Nack | PacketKind::ReadAck | PacketKind::ReadNack, _) => {
            Acknowledge
        }
        (PacketKind::Cnp, _) => Cnp,
        (PacketKind::SwitchControl, _) => unreachable!("refused by `check`"),
    }
}

/// The IBA headers of a (checked) packet.
fn iba_of(p: &Packet, payload: &[u8]) -> IbaHeaders {
    let opcode = opcode_of(p);
    let acks = matches!(p.kind, PacketKind::Ack | PacketKind::ReadAck);
    let psn = match p.kind {
        PacketKind::Cnp => 0,
        _ if acks => p.psn.wrapping_sub(1) & MASK24,
        _ => p.psn,
    };
    let cnp = opcode == Opcode::Cnp;
    let mut h = IbaHeaders::new(Bth {
        opcode,
        solicited: false,
        migreq: false,
        pad: 0,
        pkey: DEFAULT_PKEY,
        fecn: false,
        becn: if cnp { true } else { p.ecn_echo },
        dest_qp: p.dst_qp,
        ack_req: p.mp_flags & ACK_REQ != 0,
        psn,
    });
    let l = opcode.layout();
    if l.reth {
        h.reth = Some(Reth {
            va: p.addr,
            rkey: 0,
            len: p.msg_len.min(u64::from(u32::MAX)) as u32,
        });
    }
    if l.atomic_eth {
        h.atomic_eth = Some(AtomicEth {
            va: p.addr,
            rkey: 0,
            swap_add: p.imm,
            compare: p.compare,
        });
    }
    if l.aeth {
        let syndrome = match p.kind {
            PacketKind::Nack | PacketKind::ReadNack => Syndrome::Nak(NakCode::PsnSequenceError),
            _ => Syndrome::Ack {
                credits: CREDITS_UNLIMITED,
            },
        };
        h.aeth = Some(Aeth {
            syndrome,
            msn: p.wqe_sn,
        });
    }
    if l.atomic_ack {
        let mut orig = [0u8; 8];
        orig.copy_from_slice(payload);
        h.atomic_ack = Some(u64::from_be_bytes(orig));
    }
    if l.immdt {
        h.immdt = Some(p.imm as u32);
    }
    h
}

/// The packet fields the IBA headers say (every other field default).
/// Fails on AETH syndromes no transport packet has (RNR NAK, NAK codes
/// other than PSN sequence error, a NAK on a READ or atomic response).
fn said_by(h: &IbaHeaders) -> Result<Packet, Error> {
    use Opcode::*;
    let op = h.bth.opcode;
    let (kind, verb) = match op {
        SendFirst | SendMiddle | SendLast | SendLastImm | SendOnly | SendOnlyImm => {
            (PacketKind::Request, Verb::Send)
        }
        WriteFirst | WriteMiddle | WriteLast | WriteOnly => (PacketKind::Request, Verb::Write),
        WriteLastImm | WriteOnlyImm => (PacketKind::Request, Verb::WriteImm),
        ReadRequest => (PacketKind::Request, Verb::Read),
        FetchAdd => (PacketKind::Request, Verb::FetchAdd),
        CompareSwap => (PacketKind::Request, Verb::CmpSwap),
        ReadResponseFirst | ReadResponseMiddle | ReadResponseLast | ReadResponseOnly => {
            (PacketKind::ReadResponse, Verb::Read)
        }
        AtomicAcknowledge => (PacketKind::ReadResponse, Verb::FetchAdd),
        Acknowledge => match h.aeth.map(|a| a.syndrome) {
            Some(Syndrome::Nak(NakCode::PsnSequenceError)) => (PacketKind::Nack, Verb::Write),
            _ => (PacketKind::Ack, Verb::Write),
        },
        Cnp => (PacketKind::Cnp, Verb::Write),
    };
    let nak_ok = op == Acknowledge;
    match h.aeth.map(|a| a.syndrome) {
        None | Some(Syndrome::Ack { .. }) => {}
        Some(Syndrome::Nak(NakCode::PsnSequenceError)) if nak_ok => {}
        Some(_) => {
            return Err(Error::Malformed {
                layer: "aeth",
                reason: "no transport packet has this syndrome (RNR NAK, a NAK code other than PSN sequence error, or a NAK on a response)",
            })
        }
    }
    let first = matches!(
        op,
        SendFirst
            | SendOnly
            | SendOnlyImm
            | WriteFirst
            | WriteOnly
            | WriteOnlyImm
            | ReadRequest
            | FetchAdd
            | CompareSwap
            | ReadResponseFirst
            | ReadResponseOnly
            | AtomicAcknowledge
    );
    let last = matches!(
        op,
        SendLast
            | SendLastImm
            | SendOnly
            | SendOnlyImm
            | WriteLast
            | WriteLastImm
            | WriteOnly
            | WriteOnlyImm
            | ReadRequest
            | FetchAdd
            | CompareSwap
            | ReadResponseLast
            | ReadResponseOnly
            | AtomicAcknowledge
    );
    let psn = match kind {
        PacketKind::Ack => (h.bth.psn + 1) & MASK24,
        _ => h.bth.psn,
    };
    let mut p = Packet {
        kind,
        verb,
        first,
        last,
        psn,
        ecn_echo: h.bth.becn && op != Cnp,
        mp_flags: if h.bth.ack_req { ACK_REQ } else { 0 },
        // The extension names another source QP (the wire's numbers).
        src_qp: QPN_BASE,
        ..Packet::default()
    };
    if let Some(r) = h.reth {
        p.addr = r.va;
        p.msg_len = r.len.into();
    }
    if let Some(a) = h.atomic_eth {
        p.addr = a.va;
        p.imm = a.swap_add;
        p.compare = a.compare;
        p.msg_len = ATOMIC_BYTES.into();
    }
    if let Some(a) = h.aeth {
        p.wqe_sn = a.msn;
    }
    if h.atomic_ack.is_some() {
        p.msg_len = ATOMIC_BYTES.into();
    }
    if let Some(imm) = h.immdt {
        p.imm = imm.into();
    }
    Ok(p)
}

/// The extension that makes `said` (what the IBA headers say) into `p`.
fn extension_of(said: &Packet, p: &Packet) -> Extension {
    fn differs<T: PartialEq + Copy>(said: T, want: T) -> Option<T> {
        (said != want).then_some(want)
    }
    let code = |q: &Packet| {
        let kind = KINDS.iter().position(|&k| k == q.kind);
        let verb = VERBS.iter().position(|&v| v == q.verb);
        // Every kind and verb has its place in the tables above.
        (kind.unwrap_or(0) as u8, verb.unwrap_or(0) as u8)
    };
    let op = |q: &Packet| {
        let (kind, verb) = code(q);
        Op {
            kind,
            verb,
            first: q.first,
            last: q.last,
        }
    };
    Extension {
        op: differs(op(said), op(p)),
        flags: differs(said.mp_flags, p.mp_flags),
        ecn_echo: differs(said.ecn_echo, p.ecn_echo),
        vp: differs(said.vp, p.vp),
        src_qp: differs(said.src_qp, p.src_qp),
        psn: differs(said.psn, p.psn),
        wqe_sn: differs(said.wqe_sn, p.wqe_sn),
        sack_psn: differs(sack_or_ipsn(said), sack_or_ipsn(p)),
        msg_len: differs(said.msg_len, p.msg_len),
        addr: differs(said.addr, p.addr),
        imm: differs(said.imm, p.imm),
        compare: differs(said.compare, p.compare),
        sent_at: differs(said.sent_at, p.sent_at),
    }
}

/// What the extension's SACK/iPSN field holds for `p`.
fn sack_or_ipsn(p: &Packet) -> u32 {
    if p.is_data() {
        p.ipsn
    } else {
        p.sack_psn
    }
}

/// Overrides the fields of `p` the extension carries.
fn apply(e: &Extension, p: &mut Packet) {
    if let Some(op) = e.op {
        // `wire` checked the codes are below the tables' lengths.
        p.kind = KINDS[usize::from(op.kind)];
        p.verb = VERBS[usize::from(op.verb)];
        p.first = op.first;
        p.last = op.last;
    }
    let set = |dst: &mut u32, v: Option<u32>| *dst = v.unwrap_or(*dst);
    let set64 = |dst: &mut u64, v: Option<u64>| *dst = v.unwrap_or(*dst);
    p.mp_flags = e.flags.unwrap_or(p.mp_flags);
    p.ecn_echo = e.ecn_echo.unwrap_or(p.ecn_echo);
    p.vp = e.vp.unwrap_or(p.vp);
    set(&mut p.src_qp, e.src_qp);
    set(&mut p.psn, e.psn);
    set(&mut p.wqe_sn, e.wqe_sn);
    // `kind` is final here: the opcode or the extension's OP set it.
    if p.is_data() {
        set(&mut p.ipsn, e.sack_psn);
    } else {
        set(&mut p.sack_psn, e.sack_psn);
    }
    set64(&mut p.msg_len, e.msg_len);
    set64(&mut p.addr, e.addr);
    set64(&mut p.imm, e.imm);
    set64(&mut p.compare, e.compare);
    set64(&mut p.sent_at, e.sent_at);
}
