//! The packet arena and the packet's fabric header.
//!
//! Packets in flight live in one slab addressed by `u32`; steady state
//! allocates nothing. Queues and wires carry a [`Hdr`]: the arena handle
//! plus the few fields a switch reads, so a hop never touches the packet
//! itself (which is cold by then: it was written a whole hop ago). A slot
//! holds the packet without the operands of WRITE with immediate and
//! atomics; the few packets that carry them keep them in a side table.

use std::collections::HashMap;

use transport::{Packet, PacketKind, Verb};

/// What links and switches need of a packet (20 bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hdr {
    /// The packet in the arena.
    pub idx: u32,
    pub dst: u32,
    /// `src ^ sport << 16`: with `dst`, the ECMP key of the 5-tuple.
    pub flow: u32,
    /// Bytes on the wire.
    pub wire: u32,
    /// Local index of the ingress port at the switch that holds it (for
    /// buffer release).
    pub in_port: u16,
    pub class: u8,
    /// [`Hdr::DATA`] and [`Hdr::CE`].
    pub flags: u8,
}

impl Hdr {
    pub const DATA: u8 = 1;
    /// Congestion experienced, set by a switch; copied into the packet on
    /// delivery.
    pub const CE: u8 = 2;

    #[inline]
    pub fn new(idx: u32, pkt: &Packet) -> Hdr {
        Hdr {
            idx,
            dst: pkt.dst,
            flow: pkt.src ^ (pkt.sport as u32) << 16,
            wire: pkt.wire,
            in_port: 0,
            class: pkt.priority & 7,
            flags: if pkt.is_data() { Hdr::DATA } else { 0 } | if pkt.ce { Hdr::CE } else { 0 },
        }
    }
}

/// A packet as the slab keeps it: all of [`Packet`] but the operands only
/// WRITE-with-immediate and atomic packets carry (`imm`, `compare`), which
/// would make every slot 16 bytes larger. At a few million packets in
/// flight (a 1024-host permutation peaks at 1.27 M) that is 20 MB.
#[derive(Clone, Copy)]
struct Slot {
    msg_len: u64,
    sent_at: engine::Time,
    addr: u64,
    src: u32,
    dst: u32,
    src_qp: u32,
    dst_qp: u32,
    psn: u32,
    payload: u32,
    wire: u32,
    wqe_sn: u32,
    sack_psn: u32,
    sport: u16,
    vp: u16,
    kind: PacketKind,
    verb: Verb,
    priority: u8,
    ce: bool,
    ecn_echo: bool,
    first: bool,
    last: bool,
    mp_flags: u8,
}

/// Splits a packet into its slot and its rare operands.
#[inline]
fn split(p: Packet) -> (Slot, (u64, u64)) {
    // Destructured whole: a new `Packet` field must be placed here.
    let Packet {
        src,
        dst,
        src_qp,
        dst_qp,
        sport,
        kind,
        verb,
        psn,
        payload,
        wire,
        priority,
        ce,
        ecn_echo,
        first,
        last,
        msg_len,
        sent_at,
        addr,
        imm,
        compare,
        wqe_sn,
        sack_psn,
        vp,
        mp_flags,
    } = p;
    let slot = Slot {
        msg_len,
        sent_at,
        addr,
        src,
        dst,
        src_qp,
        dst_qp,
        psn,
        payload,
        wire,
        wqe_sn,
        sack_psn,
        sport,
        vp,
        kind,
        verb,
        priority,
        ce,
        ecn_echo,
        first,
        last,
        mp_flags,
    };
    (slot, (imm, compare))
}

#[inline]
fn join(s: Slot, (imm, compare): (u64, u64)) -> Packet {
    Packet {
        src: s.src,
        dst: s.dst,
        src_qp: s.src_qp,
        dst_qp: s.dst_qp,
        sport: s.sport,
        kind: s.kind,
        verb: s.verb,
        psn: s.psn,
        payload: s.payload,
        wire: s.wire,
        priority: s.priority,
        ce: s.ce,
        ecn_echo: s.ecn_echo,
        first: s.first,
        last: s.last,
        msg_len: s.msg_len,
        sent_at: s.sent_at,
        addr: s.addr,
        imm,
        compare,
        wqe_sn: s.wqe_sn,
        sack_psn: s.sack_psn,
        vp: s.vp,
        mp_flags: s.mp_flags,
    }
}

#[derive(Default)]
pub struct Arena {
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// The nonzero (`imm`, `compare`) of live packets, by slot. Looked up by
    /// key only, never iterated, so it cannot affect the order of anything.
    operands: HashMap<u32, (u64, u64)>,
}

impl Arena {
    /// Bytes the slab holds per packet.
    pub const SLOT_BYTES: usize = std::mem::size_of::<Slot>();

    #[inline]
    pub fn alloc(&mut self, pkt: Packet) -> u32 {
        let (slot, operands) = split(pkt);
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = slot;
                i
            }
            None => {
                self.slots.push(slot);
                self.slots.len() as u32 - 1
            }
        };
        if operands != (0, 0) {
            self.operands.insert(i, operands);
        }
        i
    }

    #[inline]
    pub fn free(&mut self, i: u32) {
        if !self.operands.is_empty() {
            self.operands.remove(&i);
        }
        self.free.push(i);
    }

    /// Hints the CPU to bring packet `i` into cache.
    #[inline]
    pub fn prefetch(&self, i: u32) {
        if let Some(p) = self.slots.get(i as usize) {
            engine::prefetch::prefetch(p);
        }
    }

    #[inline]
    pub fn get(&self, i: u32) -> Packet {
        let operands = if self.operands.is_empty() {
            (0, 0)
        } else {
            self.operands.get(&i).copied().unwrap_or_default()
        };
        join(self.slots[i as usize], operands)
    }

    /// Packets currently allocated.
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Peak number of packets alive at once (the slab never shrinks).
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_come_back_whole_and_slots_are_smaller() {
        assert_eq!(Arena::SLOT_BYTES + 16, std::mem::size_of::<Packet>());
        let mut a = Arena::default();
        let plain = Packet {
            src: 3,
            dst: 9,
            psn: 77,
            addr: 1 << 40,
            msg_len: 5000,
            sent_at: 123,
            verb: Verb::Write,
            ..Packet::default()
        };
        let atomic = Packet {
            verb: Verb::CmpSwap,
            imm: 5,
            compare: 6,
            ..plain
        };
        let (i, j) = (a.alloc(atomic), a.alloc(plain));
        assert_eq!((a.get(i), a.get(j)), (atomic, plain));
        // A freed slot's operands do not leak into the next packet there.
        a.free(i);
        let k = a.alloc(plain);
        assert_eq!((k, a.get(k)), (i, plain));
        assert_eq!(a.live(), 2);
    }
}
