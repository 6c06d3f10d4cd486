//! What crosses a link: a packet's header, or a control frame. Control
//! frames are PFC's PAUSE and RESUME and RCM's congestion notifications
//! (a PFC frame's class beyond the eight); another kind is one more
//! variant here, sized in
//! [`Frame::wire_bytes`] and handled where `link/arrive.rs` dispatches on
//! the kind. A frame with its arrival time is 24 bytes on a wire: the
//! control variants live in the values a header's class cannot take (a
//! test below keeps it so). Plain data: touches nothing.

use crate::net::arena::Hdr;

/// What crosses a link: a packet, or a PFC frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    Packet(Hdr),
    /// PAUSE (true) or RESUME (false) of one class; a `class` of
    /// [`Frame::RCM_NOTE`] or more is an RCM congestion notification
    /// (`switch/rcm/`) naming `class - RCM_NOTE` harmful flows, whose
    /// content waits in RCM's queue of the sending port (a wire is a
    /// FIFO). (A third variant made every packet's `match` on a frame
    /// dearer: +2.3% instructions per hop.)
    Pfc {
        class: u8,
        pause: bool,
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
    /// The first `class` value of an RCM notification.
    pub const RCM_NOTE: u8 = 8;
    /// Bytes of each harmful flow's 5-tuple in an RCM notification.
    pub const RCM_ID_BYTES: u32 = 13;

    /// Bytes on the wire: the packet's own, `pfc_bytes` for a PFC frame,
    /// and for an RCM notification `pfc_bytes` (a minimum frame with the
    /// degree) and 13 bytes per harmful flow.
    #[inline(always)]
    pub fn wire_bytes(&self, pfc_bytes: u32) -> u32 {
        match *self {
            Frame::Packet(hdr) => hdr.wire(),
            Frame::Pfc { class, .. } => {
                pfc_bytes + Frame::RCM_ID_BYTES * class.saturating_sub(Frame::RCM_NOTE) as u32
            }
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
