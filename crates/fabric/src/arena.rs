//! The packet arena: packets in flight live in one slab addressed by `u32`,
//! so queues and links move 4-byte handles and steady state allocates
//! nothing.

use transport::Packet;

/// A packet plus what the fabric needs to know about it while it is inside
/// a switch.
#[derive(Clone, Copy, Debug)]
pub struct Slot {
    pub pkt: Packet,
    /// Local index of the ingress port at the switch that holds it (for
    /// buffer release).
    pub in_port: u16,
}

#[derive(Default)]
pub struct Arena {
    slots: Vec<Slot>,
    free: Vec<u32>,
}

impl Arena {
    #[inline]
    pub fn alloc(&mut self, pkt: Packet) -> u32 {
        let slot = Slot { pkt, in_port: 0 };
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

    #[inline]
    pub fn get(&self, i: u32) -> &Slot {
        &self.slots[i as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut Slot {
        &mut self.slots[i as usize]
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
