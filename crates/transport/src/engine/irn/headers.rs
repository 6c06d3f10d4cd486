//! The header bytes IRN's request packets carry beyond RoCE's (paper §5,
//! `papers/irn-implementation.txt`), counted in each packet's wire size
//! so that IRN pays for its out-of-order placement on every link:
//!
//! - "the RETH header (containing the remote memory location) is carried
//!   only by the first packet of a Write message. IRN requires adding it
//!   to every packet": 16 bytes (IBA's RETH) on every WRITE and WRITE
//!   with immediate packet but the first;
//! - the recv_WQE_SN "is carried in all Send packets and in the last
//!   Write-with-Immediate packet", and "Send packets [carry] the relative
//!   offset";
//! - the read_WQE_SN "is carried by all Read/Atomic request packets".
//!
//! The paper gives no width for the sequence numbers and the offset: we
//! count each as one 4-byte word (a 24-bit field, as IBA's BTH carries
//! its 24-bit PSN in a 32-bit word). READ responses carry nothing new;
//! read (N)ACKs are control packets of the NIC's `ctrl_bytes`. The
//! ideal FCT (`fabric`) counts RoCE's headers, so the overhead shows as
//! slowdown. Plain functions of the packet's verb and position: touches
//! nothing else.

use crate::packet::Verb;

/// IBA's RDMA extended transport header (remote address, key, length).
const RETH: u32 = 16;
/// One 24-bit sequence number (recv_WQE_SN, read_WQE_SN) or SEND's
/// relative offset, in a 4-byte word.
const WORD: u32 = 4;

/// The most bytes [`request_bytes`] adds to a packet (WRITE with
/// immediate's last packet: the RETH and the recv_WQE_SN), for the
/// fabric's largest frame.
pub const MAX_EXTRA_HEADER_BYTES: u32 = RETH + WORD;

/// Bytes an IRN request packet of `verb` carries beyond RoCE's.
#[inline]
pub(crate) fn request_bytes(verb: Verb, first: bool, last: bool) -> u32 {
    let reth = if first { 0 } else { RETH };
    match verb {
        Verb::Write => reth,
        Verb::WriteImm => reth + if last { WORD } else { 0 },
        Verb::Send => 2 * WORD,
        Verb::Read | Verb::FetchAdd | Verb::CmpSwap => WORD,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_packet_exceeds_the_maximum() {
        let verbs = [
            Verb::Write,
            Verb::WriteImm,
            Verb::Send,
            Verb::Read,
            Verb::FetchAdd,
            Verb::CmpSwap,
        ];
        let most = verbs
            .iter()
            .flat_map(|&v| [(v, false, false), (v, false, true), (v, true, true)])
            .map(|(v, f, l)| request_bytes(v, f, l))
            .max();
        assert_eq!(most, Some(MAX_EXTRA_HEADER_BYTES));
    }
}
