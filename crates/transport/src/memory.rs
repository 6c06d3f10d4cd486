//! Host memory as the NIC reaches it by DMA, for callers that move real
//! bytes (tests, the real datapath). The simulator moves lengths only and
//! passes no memory: every access then succeeds and atomics read zero.
//!
//! [`Memory`] is the caller's side (it owns the bytes and the registered
//! regions); [`Dma`] is the NIC's handle for one input or output call:
//! the payload of the packet being received and the buffer of the packet
//! being built travel beside the header-only [`crate::Packet`].
//!
//! Uses only `crate::packet`.

use crate::packet::Verb;

/// Registered memory of one host. Both calls return false, without
/// touching anything, if the range is not inside one registered region.
pub trait Memory {
    fn read(&mut self, addr: u64, buf: &mut [u8]) -> bool;
    fn write(&mut self, addr: u64, data: &[u8]) -> bool;
}

/// The NIC's access to memory and payload bytes during one call. An enum
/// so that the simulator's `None`, built for every packet, is one byte.
pub(crate) enum Dma<'a> {
    /// No memory: lengths only (the simulator).
    None,
    /// Receiving: the payload of the packet being received.
    Rx {
        mem: &'a mut dyn Memory,
        payload: &'a [u8],
    },
    /// Sending: the payload of the packet being built (appended to).
    Tx {
        mem: &'a mut dyn Memory,
        payload: &'a mut Vec<u8>,
    },
}

impl<'a> Dma<'a> {
    pub fn none() -> Dma<'static> {
        Dma::None
    }

    pub fn rx(mem: &'a mut dyn Memory, payload: &'a [u8]) -> Dma<'a> {
        Dma::Rx { mem, payload }
    }

    pub fn tx(mem: &'a mut dyn Memory, payload: &'a mut Vec<u8>) -> Dma<'a> {
        payload.clear();
        Dma::Tx { mem, payload }
    }

    /// The payload of the packet being received (empty otherwise).
    pub fn rx_payload(&self) -> &[u8] {
        match self {
            Dma::Rx { payload, .. } => payload,
            Dma::None | Dma::Tx { .. } => &[],
        }
    }

    /// A receive of `payload` into the same memory (no memory if this is
    /// not a receive): a packet held by an ordering layer, handed on
    /// during the call of a later one.
    pub fn rx_again<'b>(&'b mut self, payload: &'b [u8]) -> Dma<'b> {
        match self {
            Dma::Rx { mem, .. } => Dma::Rx {
                mem: &mut **mem,
                payload,
            },
            Dma::None | Dma::Tx { .. } => Dma::None,
        }
    }

    fn mem(&mut self) -> Option<&mut dyn Memory> {
        match self {
            Dma::None => None,
            Dma::Rx { mem, .. } | Dma::Tx { mem, .. } => Some(&mut **mem),
        }
    }

    /// Writes the received payload to `addr` (nothing while sending).
    #[inline]
    pub fn place(&mut self, addr: u64) -> bool {
        match self {
            Dma::None => true,
            Dma::Rx { mem, payload } => mem.write(addr, payload),
            Dma::Tx { mem, .. } => mem.write(addr, &[]),
        }
    }

    /// Appends `len` bytes read at `addr` to the outgoing payload.
    #[inline]
    pub fn fetch(&mut self, addr: u64, len: u32) -> bool {
        let Dma::Tx { mem, payload } = self else {
            return true;
        };
        let at = payload.len();
        payload.resize(at + len as usize, 0);
        mem.read(addr, &mut payload[at..])
    }

    /// Appends `bytes` to the outgoing payload.
    #[inline]
    pub fn put(&mut self, bytes: &[u8]) {
        if let Dma::Tx { payload, .. } = self {
            payload.extend_from_slice(bytes);
        }
    }

    /// Executes an atomic at `addr` and returns the original value; None on
    /// an access error. Without memory the original value is 0.
    pub fn atomic(&mut self, verb: Verb, addr: u64, imm: u64, compare: u64) -> Option<u64> {
        let Some(m) = self.mem() else {
            return Some(0);
        };
        let mut b = [0u8; 8];
        if !m.read(addr, &mut b) {
            return None;
        }
        let old = u64::from_le_bytes(b);
        let new = match verb {
            Verb::FetchAdd => old.wrapping_add(imm),
            Verb::CmpSwap if old == compare => imm,
            _ => old,
        };
        if new != old && !m.write(addr, &new.to_le_bytes()) {
            return None;
        }
        Some(old)
    }
}
