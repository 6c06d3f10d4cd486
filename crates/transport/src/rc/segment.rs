//! Segmentation shared by every reliable-connection engine: how many
//! packets a message takes, each packet's payload and byte offset, the
//! response payloads of READs and atomics, and the PSNs a message is given
//! ([`reserve_psns`]). Pure functions; uses only `crate::packet` and
//! `crate::psn`.

use crate::packet::{Verb, ATOMIC_BYTES};
use crate::psn::{Psn, MAX_PSN_SPAN};

/// Number of packets of a message of `len` bytes (a 0-byte message is one
/// packet); None if the count does not fit 32 bits.
#[inline]
pub(crate) fn npkts(len: u64, mtu: u32) -> Option<u32> {
    u32::try_from(len.div_ceil(mtu as u64).max(1)).ok()
}

/// Payload of the packet with index `idx` of a message of `len` bytes.
#[inline]
pub(crate) fn payload_of(len: u64, mtu: u32, idx: u32) -> u32 {
    let off = idx as u64 * mtu as u64;
    len.saturating_sub(off).min(mtu as u64) as u32
}

/// Byte offset of the packet with index `idx` in its message.
#[inline]
pub(crate) fn offset_of(mtu: u32, idx: u32) -> u64 {
    idx as u64 * mtu as u64
}

/// Packets of a message of `verb` and `len` bytes (atomics: one, whatever
/// the MTU); None if the count does not fit 32 bits.
#[inline]
pub(crate) fn wqe_npkts(verb: Verb, len: u64, mtu: u32) -> Option<u32> {
    if verb.is_atomic() {
        Some(1)
    } else {
        npkts(len, mtu)
    }
}

/// Response payload of the packet with index `idx` of a READ of `len`
/// bytes or of an atomic.
#[inline]
pub(crate) fn response_payload(verb: Verb, len: u64, mtu: u32, idx: u32) -> u32 {
    if verb.is_atomic() {
        ATOMIC_BYTES
    } else {
        payload_of(len, mtu, idx)
    }
}

/// How many more PSNs a space whose next PSN is `next` and whose oldest
/// in use is `oldest` can give before it spans [`MAX_PSN_SPAN`].
#[inline]
pub(crate) fn psn_room(next: Psn, oldest: Psn) -> u32 {
    MAX_PSN_SPAN.saturating_sub(next.since(oldest))
}

/// Gives a new message of `n` packets (None: too many to count) the PSNs
/// from `*next` on, and moves `*next` past them; `oldest` is the oldest PSN
/// of the space the QP still uses (its oldest message not completed, or
/// `*next` if none). Returns the message's first PSN and its packets.
///
/// Panics if the PSNs in use would then span more than [`MAX_PSN_SPAN`],
/// beyond which their serial order is not defined: the NIC refuses such
/// a work request before it reaches here (`Qp::check`, with
/// [`psn_room`]).
#[inline]
pub(crate) fn reserve_psns(next: &mut Psn, oldest: Psn, n: Option<u32>) -> (Psn, u32) {
    let room = psn_room(*next, oldest);
    let Some(n) = n.filter(|&n| n <= room) else {
        panic!(
            "message too long: a QP's PSNs posted and not completed may span at most \
             {MAX_PSN_SPAN} packets, {room} are left"
        );
    };
    let first = *next;
    *next += n;
    (first, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn psns_are_reserved_across_the_wrap_up_to_the_span() {
        let oldest = Psn::new(u32::MAX - 0xF);
        let mut next = oldest;
        assert_eq!(reserve_psns(&mut next, oldest, Some(0x20)), (oldest, 0x20));
        assert_eq!(next, Psn::new(0x10));
        let rest = MAX_PSN_SPAN - 0x20;
        assert_eq!(
            reserve_psns(&mut next, oldest, Some(rest)),
            (Psn::new(0x10), rest)
        );
        assert_eq!(next.since(oldest), MAX_PSN_SPAN);
    }

    #[test]
    #[should_panic(expected = "message too long")]
    fn psns_beyond_the_span_are_refused() {
        let mut next = Psn::new(5);
        reserve_psns(&mut next, Psn::new(5), Some(MAX_PSN_SPAN + 1));
    }

    #[test]
    #[should_panic(expected = "message too long")]
    fn uncountable_messages_are_refused() {
        let mut next = Psn::new(5);
        reserve_psns(&mut next, Psn::new(5), npkts(u64::MAX, 1000));
    }
}
