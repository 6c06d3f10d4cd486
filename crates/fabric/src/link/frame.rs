//! What crosses a link: a packet's header, or a control frame. Control
//! frames are PFC's PAUSE and RESUME and RCM's congestion notifications;
//! another kind is one more variant here, sized in
//! [`Frame::wire_bytes`] and handled where `link/arrive.rs` dispatches on
//! the kind. A frame with its arrival time is 24 bytes on a wire: the
//! control variants live in the values a header's class cannot take (a
//! test below keeps it so). Plain data: touches nothing.

use crate::net::arena::Hdr;

/// What crosses a link: a packet, a PFC frame or an RCM notification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    Packet(Hdr),
    /// PAUSE (true) or RESUME (false) of one class.
    Pfc {
        class: u8,
        pause: bool,
    },
    /// An RCM congestion notification (`switch/rcm/`): its content waits
    /// in RCM's slot `note`; `bytes` on the wire.
    Rcm {
        note: u32,
        bytes: u16,
    },
}

/// The filler of a ring's unused slots.
impl Default for Frame {
    fn default() -> Self {
        Frame::Pfc {
            class: 0,
            pause: false,
        }
    }
}

impl Frame {
    /// Bytes on the wire: the packet's own, or `pfc_bytes` for a PFC frame.
    #[inline(always)]
    pub fn wire_bytes(&self, pfc_bytes: u32) -> u32 {
        match *self {
            Frame::Packet(hdr) => hdr.wire(),
            Frame::Pfc { .. } => pfc_bytes,
            Frame::Rcm { bytes, .. } => bytes as u32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wire_slot_is_24_bytes() {
        // A PFC frame fits in the values a header's class cannot take.
        assert_eq!(std::mem::size_of::<(engine::Time, Frame)>(), 24);
    }
}
