//! The packet as the transport emits and consumes it: a small plain struct of
//! header fields, no bytes. The simulator carries it as is; its RoCEv2
//! bytes are `crate::frame`'s (the simulator's pcap, the UDP datapath).
//! Callers that move payload bytes pass them beside the packet (see
//! `crate::memory`).
//!
//! Sequence numbers are 24 bits on the wire: `psn`, `sack_psn` and
//! `wqe_sn` carry values below 2^24 in `u32` fields, which the engines
//! make and read with `crate::psn`. `ipsn` is an index, not a sequence
//! number.
//!
//! Each field has one meaning whatever the engine; a field only some
//! packets use says which (`sack_psn` on acknowledgements, `ipsn` on
//! data). Engine-specific fields are grouped by their engine's view
//! ([`MpHeader`] for MP-RDMA; Eunomia's bits in `mp_flags`, named in
//! `order::eunomia`).
//!
//! Uses nothing of the crate: every other module may use it. HPCC's
//! telemetry travels beside it (`Nic::int_received`, `Nic::int_sent`),
//! not in it: every
//! packet would carry 48 more bytes.

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
    /// A switch's own control packet, made and consumed by switches (a
    /// load balancer's: ConWeave's NOTIFY and REPLY, addressed to the host
    /// whose ToR consumes it); never reaches a NIC.
    SwitchControl,
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
    /// Data: this packet's PSN. Ack/Nack: see [`PacketKind`]. 24 bits.
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
    /// READ and atomics: the read WQE sequence number (IRN, 5.3.2). 24
    /// bits, as IB's MSN.
    pub wqe_sn: u32,
    /// Control packets only (0 on data). IRN Nack/ReadNack: the PSN whose
    /// arrival triggered it (selectively acknowledged) when above `psn`;
    /// equal to `psn` when nothing was. MP-RDMA: the SACK on Ack/Nack.
    /// Eunomia: the PSN its SACK or NACK names.
    pub sack_psn: u32,
    /// Data packets only (0 on control), of every engine: the iPSN, the
    /// packet's index among the packets of the bytes `msg_len` counts (0
    /// on a READ request), from which a switch finds the message's
    /// remaining bytes ([`Packet::remaining`], SRPT's key) and MP-RDMA's
    /// receiver the message's first PSN ([`MpHeader::ipsn`]). An index,
    /// not a sequence number: not limited to 24 bits.
    pub ipsn: u32,
    /// MP-RDMA Ack/Nack: the virtual path (UDP source port) of the data
    /// packet answered.
    pub vp: u16,
    /// MP-RDMA flags ([`MpHeader::RETX`], [`MpHeader::SYNC`],
    /// [`MpHeader::DUP`]).
    pub mp_flags: u8,
}

/// MP-RDMA's header fields (paper Fig. 3) as one value. They travel in
/// [`Packet`]'s fields:
/// - `wqe_sn`: the message sequence number of a SEND (which receive WQE
///   it lands in); WRITE packets carry 0, since the receiver places them
///   at their address (paper §3.1: only SEND packets carry an MSN).
/// - `ipsn` on data packets (the packet's index in its message, from
///   which the receiver finds the message's first PSN for the
///   synchronise check); `sack_psn` on Ack/Nack, the selective ack
///   (Nack: the PSN to resend from).
/// - `vp`: the echoed virtual path; `mp_flags`: the bits.
///
/// `psn` keeps its meaning (data: the packet's PSN; Ack/Nack: the
/// cumulative AACK), and so does `addr`, which is not part of this view:
/// as with go-back-N and IRN, a WRITE packet carries the remote address of
/// its first byte and a SEND packet its byte offset in the message (the
/// iPSN x MTU the paper carries for SENDs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MpHeader {
    pub msn: u32,
    /// Data: index of the packet within its message (iPSN).
    pub ipsn: u32,
    /// Ack/Nack: the selective ack.
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

    /// Reads the fields from `p`.
    #[inline]
    pub fn of(p: &Packet) -> MpHeader {
        MpHeader {
            msn: p.wqe_sn,
            ipsn: p.ipsn,
            sack: p.sack_psn,
            vp: p.vp,
            retx: p.mp_flags & Self::RETX != 0,
            sync: p.mp_flags & Self::SYNC != 0,
            dup: p.mp_flags & Self::DUP != 0,
        }
    }

    /// Writes the fields into `p`.
    #[inline]
    pub fn apply(&self, p: &mut Packet) {
        p.wqe_sn = self.msn;
        p.ipsn = self.ipsn;
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

    /// Bytes of the packet's message from its first byte to the end, for a
    /// NIC of `mtu`-byte packets: what an SRPT switch ranks it by. A READ
    /// request counts every byte it asks for (the response still to come:
    /// the responder's bytes are the message's), a READ response the bytes
    /// from its own on; control packets 0.
    #[inline]
    pub fn remaining(&self, mtu: u32) -> u64 {
        if !self.is_data() {
            return 0;
        }
        self.msg_len.saturating_sub(self.ipsn as u64 * mtu as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mp_rdma_fields_have_their_own_places() {
        // The simulator's arena keeps a packet in one cache line without
        // `dst`, `wire`, `imm`, `compare` and with one word for `ipsn` and
        // `sack_psn` (`fabric::net::arena`); the transport's copy is 96.
        assert_eq!(std::mem::size_of::<Packet>(), 96);
        let h = MpHeader {
            msn: 3,
            ipsn: 7,
            vp: 9,
            retx: true,
            sync: true,
            ..MpHeader::default()
        };
        let mut data = Packet::default();
        h.apply(&mut data);
        assert_eq!((data.ipsn, data.sack_psn), (7, 0), "data: the iPSN");
        assert_eq!(MpHeader::of(&data), h);
        let a = MpHeader {
            sack: 11,
            dup: true,
            ..MpHeader::default()
        };
        let mut ack = Packet {
            kind: PacketKind::Ack,
            ..Packet::default()
        };
        a.apply(&mut ack);
        assert_eq!((ack.ipsn, ack.sack_psn), (0, 11), "Ack: the SACK");
        assert_eq!(MpHeader::of(&ack), a);
    }

    /// SRPT's key reads the iPSN and nothing else: a SACK never changes it.
    #[test]
    fn remaining_bytes_come_from_the_ipsn() {
        let data = Packet {
            msg_len: 10_000,
            ipsn: 3,
            ..Packet::default()
        };
        assert_eq!(data.remaining(1000), 7000);
        assert_eq!(Packet { ipsn: 20, ..data }.remaining(1000), 0);
        let ack = Packet {
            kind: PacketKind::Ack,
            sack_psn: 3,
            ..data
        };
        assert_eq!(ack.remaining(1000), 0, "control packets have no message");
    }
}
