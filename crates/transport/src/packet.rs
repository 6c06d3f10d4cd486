//! The packet as the transport emits and consumes it: a small plain struct of
//! header fields, no bytes. The simulator carries it as is; `wire` encodes it.

use engine::Time;

/// The RDMA operation a work request performs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verb {
    #[default]
    Write,
    Read,
    Send,
    /// WRITE with immediate: a WRITE whose last packet also consumes a
    /// receive WQE at the responder and completes it with the immediate.
    WriteImm,
    /// 8-byte fetch-and-add at the remote address; the original value
    /// comes back (a single-packet READ in everything but its effect).
    FetchAdd,
    /// 8-byte compare-and-swap at the remote address; the original value
    /// comes back.
    CmpSwap,
}

impl Verb {
    /// The requester receives data back (READ and atomics): the responder
    /// answers with response packets instead of ACKs.
    #[inline]
    pub fn reads(self) -> bool {
        matches!(self, Verb::Read | Verb::FetchAdd | Verb::CmpSwap)
    }

    #[inline]
    pub fn is_atomic(self) -> bool {
        matches!(self, Verb::FetchAdd | Verb::CmpSwap)
    }

    /// The message consumes a receive WQE at the responder.
    #[inline]
    pub fn consumes_recv(self) -> bool {
        matches!(self, Verb::Send | Verb::WriteImm)
    }
}

/// Bytes an atomic operates on and returns.
pub const ATOMIC_BYTES: u32 = 8;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PacketKind {
    #[default]
    /// Requester to responder: WRITE or SEND payload, or a READ request
    /// (no payload; `msg_len` is the number of bytes asked for).
    Request,
    /// Responder to requester: READ response payload.
    ReadResponse,
    /// Cumulative acknowledgement: everything below `psn` has arrived.
    Ack,
    /// Sequence error: `psn` is the next PSN the receiver expects. With IRN
    /// it is also a selective ack: `sack_psn` (if above `psn`) arrived.
    Nack,
    /// IRN: requester to read responder, cumulative acknowledgement of READ
    /// and atomic responses (response PSN space).
    ReadAck,
    /// IRN: as `Nack`, for READ and atomic responses.
    ReadNack,
    /// Congestion notification packet (DCQCN notification point to reaction point).
    Cnp,
}

/// One packet. Addresses are host ids; QPs are the NIC-local QP numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Packet {
    pub src: u32,
    pub dst: u32,
    pub src_qp: u32,
    pub dst_qp: u32,
    /// UDP source port: the ECMP entropy (and MP-RDMA's virtual path).
    pub sport: u16,
    pub kind: PacketKind,
    pub verb: Verb,
    /// Data: this packet's PSN. Ack/Nack: see [`PacketKind`].
    pub psn: u32,
    /// Payload bytes.
    pub payload: u32,
    /// Bytes on the wire (payload plus headers); what links serialise and
    /// buffers account.
    pub wire: u32,
    /// Traffic class 0..8; 0 is the highest.
    pub priority: u8,
    /// Set by a switch: congestion experienced.
    pub ce: bool,
    /// On Ack/Nack: the acknowledged data packet carried CE, i.e. the
    /// notification point asks the reaction point to slow down (the
    /// HPCC/ConWeave way of delivering DCQCN's CNP).
    pub ecn_echo: bool,
    /// First/last packet of its message.
    pub first: bool,
    pub last: bool,
    /// Length of the whole message (RETH length on WRITE/READ requests).
    pub msg_len: u64,
    /// When the sender put the packet on the wire; echoed on Ack/Nack.
    pub sent_at: Time,
    /// Where the payload goes or comes from, so a packet can be placed on
    /// its own: WRITE, READ request, atomic: the remote address of this
    /// packet's first byte (a RETH on every packet, as IRN requires); SEND:
    /// the byte offset of this packet in its message.
    pub addr: u64,
    /// WRITE with immediate: the immediate; atomics: the add or swap
    /// operand.
    pub imm: u64,
    /// Compare-and-swap: the compare operand.
    pub compare: u64,
    /// SEND and WRITE with immediate: the receive WQE sequence number;
    /// READ and atomics: the read WQE sequence number (IRN, 5.3.2).
    pub wqe_sn: u32,
    /// IRN Nack/ReadNack: the PSN whose arrival triggered it (selectively
    /// acknowledged) when above `psn`; equal to `psn` when nothing was.
    pub sack_psn: u32,
    /// MP-RDMA Ack/Nack: the virtual path (UDP source port) of the data
    /// packet answered.
    pub vp: u16,
    /// MP-RDMA flags ([`MpHeader::RETX`], [`MpHeader::SYNC`],
    /// [`MpHeader::DUP`]).
    pub mp_flags: u8,
}

/// MP-RDMA's header fields (paper Fig. 3) as one value. They travel in
/// [`Packet`]'s fields, so the packet does not grow: `wqe_sn` carries the
/// message sequence number (SEND: which receive WQE; WRITE: which WRITE,
/// standing for the address), `addr` the byte offset of the packet in its
/// message (iPSN x MTU), `sack_psn` the selective ack (Nack: the PSN to
/// resend from), `vp` the echoed virtual path and `mp_flags` the bits.
/// `psn` keeps its meaning (data: the packet's PSN; Ack/Nack: the
/// cumulative AACK).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MpHeader {
    pub msn: u32,
    /// Index of the packet within its message (iPSN).
    pub ipsn: u32,
    pub sack: u32,
    pub vp: u16,
    /// Data: a retransmission; echoed on its ACK.
    pub retx: bool,
    /// Data: the message carries the synchronise flag. Nack: the drop was a
    /// synchronise message that arrived before earlier messages completed.
    pub sync: bool,
    /// Ack: the data packet had already been received (no new SACK). Nack:
    /// a drop report for a hole already NACKed.
    pub dup: bool,
}

impl MpHeader {
    pub const RETX: u8 = 1;
    pub const SYNC: u8 = 2;
    pub const DUP: u8 = 4;

    /// Reads the fields from `p` (`mtu`: payload bytes per full packet).
    #[inline]
    pub fn of(p: &Packet, mtu: u32) -> MpHeader {
        MpHeader {
            msn: p.wqe_sn,
            ipsn: u32::try_from(p.addr / mtu.max(1) as u64).unwrap_or(u32::MAX),
            sack: p.sack_psn,
            vp: p.vp,
            retx: p.mp_flags & Self::RETX != 0,
            sync: p.mp_flags & Self::SYNC != 0,
            dup: p.mp_flags & Self::DUP != 0,
        }
    }

    /// Writes the fields into `p`.
    #[inline]
    pub fn apply(&self, p: &mut Packet, mtu: u32) {
        p.wqe_sn = self.msn;
        p.addr = self.ipsn as u64 * mtu as u64;
        p.sack_psn = self.sack;
        p.vp = self.vp;
        p.mp_flags = (self.retx as u8 * Self::RETX)
            | (self.sync as u8 * Self::SYNC)
            | (self.dup as u8 * Self::DUP);
    }
}

impl Packet {
    /// True for packets that carry data (as opposed to control).
    #[inline]
    pub fn is_data(&self) -> bool {
        matches!(self.kind, PacketKind::Request | PacketKind::ReadResponse)
    }
}
