//! In-band network telemetry as HPCC's INT header carries it: up to
//! [`IntStack::MAX_HOPS`] hop records, each what a switch's egress port
//! knew when the packet left it (the time, the bytes the port had sent
//! before it, the bytes queued behind it, the port's rate), packed into 8
//! bytes as HPCC's ns-3 `IntHop` packs them (24-bit nanoseconds, 20-bit
//! byte count in units of 128 B x multiplier, 17-bit queue in units of
//! 80 B x multiplier, a 3-bit rate code). The packing is behaviour, not
//! only size: the units quantise what the sender sees, and the wrapping
//! fields are read as differences ([`IntHop::bytes_since`]).
//!
//! Switches push records on data packets (`fabric`'s egress), the
//! receiving NIC keeps each data packet's stack ([`IntEcho`]) until the ACK
//! or NACK that answers it leaves, which carries it back, and the sender's
//! HPCC reads it (`crate::hpcc`). Plain data; uses nothing of the crate.

use std::collections::VecDeque;

use engine::Time;

const TIME_BITS: u32 = 24;
const BYTES_BITS: u32 = 20;
const QLEN_BITS: u32 = 17;
const BYTE_UNIT: u64 = 128;
const QLEN_UNIT: u64 = 80;
/// The rates a hop record can name (ns-3's `lineRateValues`).
const RATES: [u64; 5] = [
    25_000_000_000,
    50_000_000_000,
    100_000_000_000,
    200_000_000_000,
    400_000_000_000,
];

/// One hop's record, packed as ns-3's (`rate | time | bytes | qlen`, low
/// bits first).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntHop(u64);

impl IntHop {
    /// The record of a port of `rate_bps` at `now` that had sent
    /// `tx_bytes` and holds `qlen` bytes; `multi` is the INT multiplier
    /// (ns-3's `INT_MULTI`), which coarsens both byte units. A rate the
    /// header cannot name is recorded as the nearest one it can.
    pub fn new(now: Time, tx_bytes: u64, qlen: u64, rate_bps: u64, multi: u32) -> IntHop {
        let m = multi.max(1) as u64;
        let code = RATES
            .iter()
            .position(|&r| r >= rate_bps)
            .unwrap_or(RATES.len() - 1) as u64;
        let ns = now / engine::time::NS;
        let time = ns & ((1 << TIME_BITS) - 1);
        let bytes = (tx_bytes / (BYTE_UNIT * m)) & ((1 << BYTES_BITS) - 1);
        let q = (qlen / (QLEN_UNIT * m)).min((1 << QLEN_BITS) - 1);
        IntHop(code | time << 3 | bytes << (3 + TIME_BITS) | q << (3 + TIME_BITS + BYTES_BITS))
    }

    fn field(self, shift: u32, bits: u32) -> u64 {
        (self.0 >> shift) & ((1 << bits) - 1)
    }

    /// The port's rate, bits per second.
    pub fn rate_bps(self) -> u64 {
        RATES[(self.0 & 7).min(RATES.len() as u64 - 1) as usize]
    }

    /// The queue behind the packet, bytes (in the record's units).
    pub fn qlen(self, multi: u32) -> u64 {
        self.field(3 + TIME_BITS + BYTES_BITS, QLEN_BITS) * QLEN_UNIT * multi.max(1) as u64
    }

    /// Nanoseconds from `earlier`'s record to this one (the 24-bit field
    /// wraps every 16.7 ms).
    pub fn ns_since(self, earlier: IntHop) -> u64 {
        let (a, b) = (self.field(3, TIME_BITS), earlier.field(3, TIME_BITS));
        a.wrapping_sub(b) & ((1 << TIME_BITS) - 1)
    }

    /// Bytes the port sent from `earlier`'s record to this one.
    pub fn bytes_since(self, earlier: IntHop, multi: u32) -> u64 {
        let (a, b) = (
            self.field(3 + TIME_BITS, BYTES_BITS),
            earlier.field(3 + TIME_BITS, BYTES_BITS),
        );
        (a.wrapping_sub(b) & ((1 << BYTES_BITS) - 1)) * BYTE_UNIT * multi.max(1) as u64
    }
}

/// The hop records of one packet, in path order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntStack {
    pub hops: [IntHop; IntStack::MAX_HOPS],
    /// Records pushed; past [`IntStack::MAX_HOPS`] they overwrite from the
    /// first, as ns-3's `nhop % maxHop` does (the sender then ignores the
    /// stack).
    pub nhop: u8,
}

impl IntStack {
    /// ns-3's `maxHop`.
    pub const MAX_HOPS: usize = 5;
    /// Bytes the header adds to every data packet and ACK (five 8-byte
    /// records and a 2-byte count).
    pub const WIRE_BYTES: u32 = 8 * IntStack::MAX_HOPS as u32 + 2;

    #[inline]
    pub fn push(&mut self, hop: IntHop) {
        self.hops[self.nhop as usize % IntStack::MAX_HOPS] = hop;
        self.nhop = self.nhop.wrapping_add(1);
    }

    /// The records, if the stack did not overflow.
    pub fn hops(&self) -> Option<&[IntHop]> {
        let n = self.nhop as usize;
        (n <= IntStack::MAX_HOPS).then(|| &self.hops[..n])
    }
}

/// The responder's half of HPCC's echo: the records of the data packets a
/// NIC received and has not answered yet, by its QP number, in arrival
/// order with their send times. An ACK or NACK takes the records of the
/// data packet whose send time it echoes; the records of packets answered
/// by none before it (a coalesced ACK's, a dropped packet's) go with it.
/// Grown on first use, so a NIC given no records holds nothing.
#[derive(Debug, Default)]
pub(crate) struct IntEcho {
    waiting: Vec<VecDeque<(Time, IntStack)>>,
}

impl IntEcho {
    /// QP `qp` received a data packet sent at `sent_at` with `int`.
    pub fn arrived(&mut self, qp: u32, sent_at: Time, int: IntStack) {
        let qp = qp as usize;
        if self.waiting.len() <= qp {
            self.waiting.resize_with(qp + 1, VecDeque::new);
        }
        self.waiting[qp].push_back((sent_at, int));
    }

    /// QP `qp` sends an ACK or NACK echoing `sent_at`: the records of the
    /// packet it answers, if they wait (those before them are dropped; with
    /// none, all are).
    pub fn answer(&mut self, qp: u32, sent_at: Time) -> Option<IntStack> {
        let q = self.waiting.get_mut(qp as usize)?;
        while let Some((t, int)) = q.pop_front() {
            if t == sent_at {
                return Some(int);
            }
        }
        None
    }

    /// QP `qp` is gone: it answers nothing more.
    pub fn forget(&mut self, qp: u32) {
        if let Some(q) = self.waiting.get_mut(qp as usize) {
            *q = VecDeque::new();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::time::NS;

    #[test]
    fn records_round_trip_in_their_units() {
        let a = IntHop::new(1_000 * NS, 128 * 10, 800, 100_000_000_000, 1);
        let b = IntHop::new(3_000 * NS, 128 * 30 + 5, 1_650, 100_000_000_000, 1);
        assert_eq!(b.rate_bps(), 100_000_000_000);
        assert_eq!(b.ns_since(a), 2_000);
        assert_eq!(b.bytes_since(a, 1), 128 * 20);
        assert_eq!(b.qlen(1), 1_600, "80-byte units, rounded down");
        // The multiplier coarsens the units.
        let c = IntHop::new(0, 5_000, 1_000, 400_000_000_000, 4);
        assert_eq!(c.qlen(4), 960);
        assert_eq!(c.rate_bps(), 400_000_000_000);
    }

    #[test]
    fn wrapping_fields_read_as_differences() {
        let t = (1u64 << TIME_BITS) - 10;
        let a = IntHop::new(t * NS, (1 << BYTES_BITS) * 128 - 128, 0, 25_000_000_000, 1);
        let b = IntHop::new(
            (t + 30) * NS,
            (1 << BYTES_BITS) * 128 + 256,
            0,
            25_000_000_000,
            1,
        );
        assert_eq!(b.ns_since(a), 30);
        assert_eq!(b.bytes_since(a, 1), 384);
    }

    #[test]
    fn a_stack_that_overflows_is_ignored() {
        let mut s = IntStack::default();
        for i in 0..5 {
            s.push(IntHop::new(i * NS, 0, 0, 100_000_000_000, 1));
        }
        assert_eq!(s.hops().map(<[_]>::len), Some(5));
        s.push(IntHop::default());
        assert!(s.hops().is_none());
    }

    #[test]
    fn an_answer_takes_its_packets_records_and_drops_older_ones() {
        let stack = |n: u64| {
            let mut s = IntStack::default();
            s.push(IntHop::new(n * NS, 0, 0, 100_000_000_000, 1));
            s
        };
        let mut e = IntEcho::default();
        assert_eq!(e.answer(3, 10), None, "nothing arrived");
        for t in [10, 20, 30] {
            e.arrived(3, t, stack(t));
        }
        e.arrived(1, 20, stack(99));
        // A coalesced ACK for the packet sent at 20 drops the one at 10.
        assert_eq!(e.answer(3, 20), Some(stack(20)));
        assert_eq!(e.answer(1, 20), Some(stack(99)), "by QP");
        // An answer to nothing waiting drains the queue.
        assert_eq!(e.answer(3, 15), None);
        assert_eq!(e.answer(3, 30), None);
        e.arrived(3, 40, stack(40));
        e.forget(3);
        assert_eq!(e.answer(3, 40), None);
    }
}
