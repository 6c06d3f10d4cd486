//! The packet arena and the packet's fabric header.
//!
//! Packets in flight live in one slab addressed by `u32`; steady state
//! allocates nothing. Queues and wires carry a [`Hdr`]: the arena handle
//! plus the few fields a switch reads, so a hop never touches the packet
//! itself (which is cold by then: it was written a whole hop ago).

use transport::Packet;

/// What links and switches need of a packet (20 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

#[derive(Default)]
pub struct Arena {
    slots: Vec<Packet>,
    free: Vec<u32>,
}

impl Arena {
    #[inline]
    pub fn alloc(&mut self, slot: Packet) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = slot;
                i
            }
            None => {
                self.slots.push(slot);
                self.slots.len() as u32 - 1
            }
        }
    }

    #[inline]
    pub fn free(&mut self, i: u32) {
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
    pub fn get(&self, i: u32) -> &Packet {
        &self.slots[i as usize]
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
