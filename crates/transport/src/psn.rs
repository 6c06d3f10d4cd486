//! Packet sequence numbers: 32-bit serial numbers inside the NIC, 24 bits
//! on the wire, as the RoCEv2 BTH carries them.
//!
//! [`Psn`] is a QP's own sequence number of a packet, in serial-number
//! arithmetic modulo 2^32: `+` and `-` wrap, [`Psn::diff`] is the signed
//! serial difference, [`Psn::since`] the forward distance from a base, and
//! [`Psn::lt`] and its siblings the serial order. `Psn` has no `Ord`: every
//! comparison goes through the serial order, which is defined between PSNs
//! fewer than 2^31 apart. A QP keeps all the PSNs it uses within
//! [`MAX_PSN_SPAN`] of each other (the PSNs posted and not completed, in
//! each PSN space; `crate::rc::reserve_psns` refuses a message that would
//! go beyond). 24 bits could not do: a serial order of 24-bit numbers
//! covers 2^23 PSNs, and a single message of the simulator's long-lived
//! flows (2^40 bytes, 1.1 G packets of 1000 bytes) takes more.
//!
//! On the wire a PSN is its low 24 bits ([`Psn::wire`]). A receiver
//! recovers the whole PSN from them and a PSN of its own that lies within
//! 2^23 of it ([`Psn::from_wire`]: the 24-bit serial difference, which is
//! how IB tells a new PSN, less than 2^23 ahead of the expected one, from a
//! duplicate). The engines keep what they receive within that reach: IRN
//! and MP-RDMA have at most 2^20 PSNs in flight; go-back-N has as many as
//! its retransmission timeout lets out (see `engine::gbn::requester`).
//!
//! A QP's own PSNs start at its initial wire PSN with the top 8 bits set
//! ([`Psn::initial`]): the 32-bit wrap then comes with the first 24-bit
//! one, so a run across the wire's wrap also crosses the NIC's. Nothing
//! outside a QP sees its PSNs' top bits.
//!
//! [`Msn`]: the other sequence numbers that travel in 24 bits (IB's MSN;
//! IRN's receive WQE sequence numbers; MP-RDMA's SEND message sequence
//! number) use the same type and arithmetic, and start at 0 on the wire.
//!
//! The packet struct (`crate::packet`) carries the 24-bit wire values in
//! `u32` fields. Uses nothing of the crate: every other module may use it.

use std::ops::{Add, AddAssign, Sub};

/// Bits of a PSN on the wire.
pub const WIRE_BITS: u32 = 24;

/// Wire PSNs are `0..=WIRE_MASK`.
pub const WIRE_MASK: u32 = (1 << WIRE_BITS) - 1;

/// The largest distance between two PSNs that their serial order tells
/// apart (2^31 - 1): the most PSNs a QP may have posted and not completed
/// in one PSN space.
pub const MAX_PSN_SPAN: u32 = (1 << 31) - 1;

/// A QP's own sequence number of a packet: 32 bits, in serial arithmetic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Psn(u32);

/// A message or WQE sequence number: the same arithmetic as [`Psn`].
pub type Msn = Psn;

/// The signed serial difference `a - b` of two 24-bit wire values (only
/// their low 24 bits count), in `-2^23..2^23`.
#[inline(always)]
pub const fn wire_diff(a: u32, b: u32) -> i32 {
    // The difference's low 24 bits, sign-extended from bit 23.
    ((a.wrapping_sub(b) << (32 - WIRE_BITS)) as i32) >> (32 - WIRE_BITS)
}

/// `v` fits the 24 bits of a wire sequence number (a packet whose PSN
/// field does not was not made by a RoCEv2 parser: malformed).
#[inline(always)]
pub const fn fits_wire(v: u32) -> bool {
    v <= WIRE_MASK
}

impl Psn {
    /// The PSN of this 32-bit value (tests; a QP makes its PSNs with
    /// [`Psn::initial`] and [`Psn::from_wire`]).
    #[cfg(test)]
    pub(crate) const fn new(v: u32) -> Psn {
        Psn(v)
    }

    /// The first PSN of a QP whose first wire PSN is `wire` (its low 24
    /// bits), with the top 8 bits set.
    #[inline(always)]
    pub const fn initial(wire: u32) -> Psn {
        Psn((wire & WIRE_MASK) | !WIRE_MASK)
    }

    /// The 32-bit serial value (compare two with wrapping differences).
    #[inline(always)]
    pub const fn serial(self) -> u32 {
        self.0
    }

    /// The 24 bits that go on the wire.
    #[inline(always)]
    pub const fn wire(self) -> u32 {
        self.0 & WIRE_MASK
    }

    /// The PSN whose wire value is `wire` (its low 24 bits) and that lies
    /// nearest `near`: within 2^23 of it.
    #[inline(always)]
    pub const fn from_wire(wire: u32, near: Psn) -> Psn {
        Psn(near.0.wrapping_add(wire_diff(wire, near.0) as u32))
    }

    /// The signed serial difference `self - other`: how far `self` is ahead
    /// of `other` (negative: behind).
    #[inline(always)]
    pub const fn diff(self, other: Psn) -> i32 {
        self.0.wrapping_sub(other.0) as i32
    }

    /// The forward distance from `base` to `self`: the offset of `self` in
    /// a window that starts at `base`.
    #[inline(always)]
    pub const fn since(self, base: Psn) -> u32 {
        self.0.wrapping_sub(base.0)
    }

    /// `self` comes before `other` in serial order.
    #[inline(always)]
    pub const fn lt(self, other: Psn) -> bool {
        self.diff(other) < 0
    }

    #[inline(always)]
    pub const fn le(self, other: Psn) -> bool {
        !other.lt(self)
    }

    #[inline(always)]
    pub const fn gt(self, other: Psn) -> bool {
        other.lt(self)
    }

    #[inline(always)]
    pub const fn ge(self, other: Psn) -> bool {
        !self.lt(other)
    }

    /// The later of the two in serial order.
    #[inline(always)]
    pub const fn max(self, other: Psn) -> Psn {
        if self.lt(other) {
            other
        } else {
            self
        }
    }

    /// The earlier of the two in serial order.
    #[inline(always)]
    pub const fn min(self, other: Psn) -> Psn {
        if other.lt(self) {
            other
        } else {
            self
        }
    }
}

/// `psn + n`, wrapping at 2^32.
impl Add<u32> for Psn {
    type Output = Psn;
    #[inline(always)]
    fn add(self, n: u32) -> Psn {
        Psn(self.0.wrapping_add(n))
    }
}

impl AddAssign<u32> for Psn {
    #[inline(always)]
    fn add_assign(&mut self, n: u32) {
        *self = *self + n;
    }
}

/// `psn - n`, wrapping at 2^32.
impl Sub<u32> for Psn {
    type Output = Psn;
    #[inline(always)]
    fn sub(self, n: u32) -> Psn {
        Psn(self.0.wrapping_sub(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The last PSN before both wraps: wire 0xFF_FFFF, 32-bit 0xFFFF_FFFF.
    const TOP: Psn = Psn::initial(WIRE_MASK);

    #[test]
    fn increments_wrap_on_the_wire_at_2_pow_24() {
        assert_eq!(TOP.wire(), 0xFF_FFFF);
        assert_eq!((TOP + 1).wire(), 0, "0xFFFFFF + 1 = 0 on the wire");
        assert_eq!((TOP + 3).wire(), 2);
        assert_eq!((Psn::new(0x00FF_FFFF) + 1).wire(), 0);
        let mut p = Psn::initial(5);
        p += WIRE_MASK;
        assert_eq!(p.wire(), 4);
        assert_eq!((Psn::initial(0) - 1).wire(), WIRE_MASK);
        assert_eq!(Psn::initial(1 << 24), Psn::initial(0), "24 bits only");
        assert!(fits_wire(TOP.wire()) && fits_wire(0) && !fits_wire(1 << 24));
    }

    #[test]
    fn increments_wrap_in_the_nic_at_2_pow_32() {
        assert_eq!(TOP, Psn::new(u32::MAX));
        assert_eq!(TOP + 1, Psn::new(0));
        assert_eq!(Psn::new(0) - 1, TOP);
        assert_eq!(Psn::initial(0), Psn::new(0xFF00_0000));
    }

    #[test]
    fn serial_order_across_the_wrap() {
        let (a, b) = (TOP - 1, TOP + 2);
        assert!(a.lt(b) && a.le(b) && !a.gt(b) && !a.ge(b));
        assert!(b.gt(a) && b.ge(a) && !b.lt(a) && !b.le(a));
        assert!(TOP.lt(TOP + 1));
        assert!(a.le(a) && a.ge(a) && !a.lt(a) && !a.gt(a));
        assert_eq!(a.max(b), b);
        assert_eq!(b.max(a), b);
        assert_eq!(a.min(b), a);
        assert_eq!(b.min(a), a);
    }

    #[test]
    fn differences_across_the_wrap() {
        let (a, b) = (TOP - 1, TOP + 3);
        assert_eq!(b.diff(a), 4);
        assert_eq!(a.diff(b), -4);
        assert_eq!(b.since(a), 4);
        assert_eq!(a.since(b), u32::MAX - 3, "forward distance wraps");
        assert_eq!(a.diff(a), 0);
        // On the wire.
        assert_eq!(wire_diff(2, 0xFF_FFFE), 4);
        assert_eq!(wire_diff(0xFF_FFFE, 2), -4);
        assert_eq!(wire_diff(0x0100_0002, 0xFF_FFFE), 4, "high bits ignored");
    }

    #[test]
    fn order_holds_up_to_the_span_limit() {
        let base = TOP - 5;
        let far = base + MAX_PSN_SPAN;
        assert!(base.lt(far) && far.gt(base));
        assert_eq!(far.diff(base), MAX_PSN_SPAN as i32);
        // One step farther (2^31 apart) the order is no longer defined.
        assert!((far + 1).lt(base));
    }

    #[test]
    fn wire_values_decode_near_a_reference_across_the_wrap() {
        // The wire wrapped (0xFF_FFFE -> 2), and the NIC's PSNs with it.
        let near = TOP - 1;
        assert_eq!(Psn::from_wire(2, near), TOP + 3);
        assert_eq!(Psn::from_wire(0xFF_FFFA, TOP + 3), TOP - 5);
        assert_eq!(Psn::from_wire(near.wire(), near), near);
        // Up to 2^23 - 1 ahead and 2^23 behind.
        let ahead = near + ((1 << 23) - 1);
        assert_eq!(Psn::from_wire(ahead.wire(), near), ahead);
        let behind = near - (1 << 23);
        assert_eq!(Psn::from_wire(behind.wire(), near), behind);
        // A wire value with stray high bits: only 24 of them count.
        assert_eq!(Psn::from_wire(0xAB00_0002, near), TOP + 3);
        // Away from the wrap: the identity on small PSNs.
        assert_eq!(Psn::from_wire(7, Psn::new(3)), Psn::new(7));
    }
}
