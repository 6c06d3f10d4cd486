//! WRITE and SEND packets against the length their message announced
//! (the RETH of a WRITE's first packet; a SEND's length in rdmalab's
//! extension): a packet that carries bytes past it, a last packet that
//! ends before it, a packet of a message that claims another length, or
//! a packet short of the MTU before the last is refused before the NIC,
//! so no message completes (and is acknowledged) with a length other
//! than announced. The endpoint answers each refusal with the NAK IBA
//! gives length errors (AETH syndrome NAK "invalid request", code 1,
//! as Linux's rxe does for its `RESPST_ERR_LENGTH`), built here.
//!
//! A packet's place in its message is its index (`ipsn`) times the MTU:
//! every packet before a message's last carries a whole MTU. The first
//! length seen for a message (by sender, QP and first PSN) is the one
//! every other packet of it must carry; at most [`MAX_CLAIMS`] messages
//! are remembered (the oldest forgotten first), so a flood of forged
//! first packets costs bounded memory.
//!
//! Uses `transport`'s `Packet` and `wire`; touches nothing but its table.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddrV4;

use transport::{Packet, PacketKind, Verb};
use wire::bth::{Bth, Opcode, DEFAULT_PKEY, MASK24};
use wire::ethernet::EthernetRepr;
use wire::iba::{Aeth, IbaHeaders, NakCode, Syndrome};
use wire::ipv4::{Ipv4Repr, DEFAULT_TTL};
use wire::udp::UdpRepr;

/// Messages whose announced length is remembered at once.
pub const MAX_CLAIMS: usize = 4096;

/// A message: its sender's host, its QP at the receiver, its first PSN.
type Key = (u32, u32, u32);

/// The announced lengths of the messages being received.
#[derive(Default)]
pub struct Lengths {
    claims: HashMap<Key, u64>,
    order: VecDeque<Key>,
}

impl Lengths {
    /// Whether `p` agrees with its message's announced length, given the
    /// NIC's `mtu` (anything but a WRITE or SEND data packet does).
    pub fn admits(&mut self, p: &Packet, mtu: u32) -> bool {
        if p.kind != PacketKind::Request
            || !matches!(p.verb, Verb::Write | Verb::WriteImm | Verb::Send)
        {
            return true;
        }
        let key = (p.src, p.dst_qp, p.psn.wrapping_sub(p.ipsn) & MASK24);
        let claimed = match self.claims.get(&key) {
            Some(&len) => len,
            None => {
                if self.order.len() >= MAX_CLAIMS {
                    if let Some(old) = self.order.pop_front() {
                        self.claims.remove(&old);
                    }
                }
                self.claims.insert(key, p.msg_len);
                self.order.push_back(key);
                p.msg_len
            }
        };
        let end = u64::from(p.ipsn) * u64::from(mtu) + u64::from(p.payload);
        p.msg_len == claimed
            && p.first == (p.ipsn == 0)
            && end <= claimed
            && if p.last {
                end == claimed
            } else {
                p.payload == mtu
            }
    }
}

/// The datagram (BTH to ICRC) of the NAK "invalid request" answering
/// `p`, which came from `peer` to `local`, in `out`.
pub fn nak(
    p: &Packet,
    local: SocketAddrV4,
    peer: SocketAddrV4,
    out: &mut Vec<u8>,
) -> Result<(), wire::Error> {
    let mut h = IbaHeaders::new(Bth {
        opcode: Opcode::Acknowledge,
        solicited: false,
        migreq: false,
        pad: 0,
        pkey: DEFAULT_PKEY,
        fecn: false,
        becn: false,
        dest_qp: (p.src_qp + transport::frame::QPN_BASE) & MASK24,
        ack_req: false,
        psn: p.psn & MASK24,
    });
    h.aeth = Some(Aeth {
        syndrome: Syndrome::Nak(NakCode::InvalidRequest),
        msn: 0,
    });
    let (from, to) = (
        crate::codec::endpoint(*local.ip()),
        crate::codec::endpoint(*peer.ip()),
    );
    out.clear();
    wire::roce::emit(
        out,
        &EthernetRepr {
            dst: to.mac,
            src: from.mac,
            ethertype: wire::ethernet::ETHERTYPE_IPV4,
        },
        &Ipv4Repr {
            src: from.ip,
            dst: to.ip,
            dscp: 0,
            ecn: 0,
            ident: 0,
            ttl: DEFAULT_TTL,
            payload_len: 0,
        },
        &UdpRepr {
            src_port: local.port(),
            dst_port: peer.port(),
        },
        &h,
        &[],
    )
}
