//! What crosses a link: a packet's header, or a control frame ([`Ctrl`],
//! of a [`CtrlKind`]: PFC's PAUSE and RESUME, RCM's congestion
//! notifications). Another control frame is one more [`CtrlKind`]
//! variant and code here, sized in
//! [`Frame::wire_bytes`] and handled where `net/run.rs` dispatches
//! on `Ctrl::kind` (`Network::arrive`); a packet's path never sees it. A frame
//! with its arrival time is 24 bytes on a wire: `Frame::Control` lives in
//! the values a header's class cannot take (a test below keeps it so).
//! Plain data: touches nothing.

use crate::net::arena::Hdr;

/// What crosses a link: a packet, or a control frame. Two variants, so
/// that a packet's `match` on a frame stays one test of the header's
/// class byte (a third variant made it dearer: +2.3% instructions per
/// hop); the kinds of control frame are [`Ctrl`]'s, decoded only on the
/// control path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    Packet(Hdr),
    Control(Ctrl),
}

/// A control frame: link-local, sent ahead of a port's queued packets
/// (a port's `ctrl_out`), consumed by the receiving port. Two bytes, a
/// code and its argument, made from and read as a [`CtrlKind`] on the
/// control path only. (Measured: a nested enum instead costs the same;
/// what cost +1.6% instructions per hop was an out-of-line control arm
/// in `arrive`, see `Network::arrive` in `net/run.rs`.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ctrl {
    code: Code,
    arg: u8,
}

/// A control frame's code: [`CtrlKind`]'s variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Code {
    Pause,
    Resume,
    RcmNote,
}

/// What a control frame is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CtrlKind {
    /// PFC PAUSE of one class (0..8).
    Pause { class: u8 },
    /// PFC RESUME of one class (0..8).
    Resume { class: u8 },
    /// An RCM congestion notification (`switch/rcm/`) naming `flows`
    /// harmful flows, whose content waits in RCM's queue of the sending
    /// port (a wire is a FIFO, so the frames and contents stay paired).
    RcmNote { flows: u8 },
}

/// The filler of a ring's unused slots.
impl Default for Ctrl {
    fn default() -> Self {
        Ctrl::new(CtrlKind::Resume { class: 0 })
    }
}

/// The filler of a ring's unused slots.
impl Default for Frame {
    fn default() -> Self {
        Frame::Control(Ctrl::default())
    }
}

impl Ctrl {
    /// Bytes of each harmful flow's 5-tuple in an RCM notification.
    pub const RCM_ID_BYTES: u32 = 13;

    #[inline]
    pub fn new(kind: CtrlKind) -> Ctrl {
        let (code, arg) = match kind {
            CtrlKind::Pause { class } => (Code::Pause, class),
            CtrlKind::Resume { class } => (Code::Resume, class),
            CtrlKind::RcmNote { flows } => (Code::RcmNote, flows),
        };
        Ctrl { code, arg }
    }

    /// PFC's PAUSE (`pause`) or RESUME of `class`.
    #[inline]
    pub fn pfc(class: u8, pause: bool) -> Ctrl {
        debug_assert!(class < 8, "PFC has eight classes");
        Ctrl::new(if pause {
            CtrlKind::Pause { class }
        } else {
            CtrlKind::Resume { class }
        })
    }

    #[inline]
    pub fn kind(self) -> CtrlKind {
        match self.code {
            Code::Pause => CtrlKind::Pause { class: self.arg },
            Code::Resume => CtrlKind::Resume { class: self.arg },
            Code::RcmNote => CtrlKind::RcmNote { flows: self.arg },
        }
    }

    /// Bytes on the wire: `pfc_bytes` for a PFC frame; for an RCM
    /// notification `pfc_bytes` (a minimum frame with the degree) and 13
    /// bytes per harmful flow.
    #[inline]
    pub fn wire_bytes(self, pfc_bytes: u32) -> u32 {
        match self.kind() {
            CtrlKind::Pause { .. } | CtrlKind::Resume { .. } => pfc_bytes,
            CtrlKind::RcmNote { flows } => pfc_bytes + Ctrl::RCM_ID_BYTES * flows as u32,
        }
    }
}

impl Frame {
    /// Bytes on the wire: the packet's own, or the control frame's
    /// ([`Ctrl::wire_bytes`]).
    #[inline(always)]
    pub fn wire_bytes(&self, pfc_bytes: u32) -> u32 {
        match *self {
            Frame::Packet(hdr) => hdr.wire(),
            Frame::Control(c) => c.wire_bytes(pfc_bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wire_slot_is_24_bytes() {
        // A control frame fits in the values a header's class cannot take.
        assert_eq!(std::mem::size_of::<Ctrl>(), 2);
        assert_eq!(std::mem::size_of::<(engine::Time, Frame)>(), 24);
    }

    #[test]
    fn control_frames_keep_their_kind_and_size_on_a_wire() {
        let hdr = Hdr::of(7, 1048, true);
        let kinds = [
            CtrlKind::Pause { class: 3 },
            CtrlKind::Resume { class: 7 },
            CtrlKind::Pause { class: 0 },
            CtrlKind::RcmNote { flows: 0 },
            CtrlKind::RcmNote { flows: 247 },
            CtrlKind::RcmNote { flows: u8::MAX },
        ];
        assert_eq!(Ctrl::pfc(3, true), Ctrl::new(kinds[0]));
        assert_eq!(Ctrl::pfc(7, false), Ctrl::new(kinds[1]));
        for k in kinds {
            let c = Ctrl::new(k);
            assert_eq!(c.kind(), k, "decodes to what it was made from");
            // Stored as a wire stores it, beside packets: each comes back
            // as itself, never as a packet (nor a packet as one).
            let wire = [(1, Frame::Control(c)), (2, Frame::Packet(hdr))];
            assert_eq!(wire[0].1, Frame::Control(c));
            assert_eq!(wire[1].1, Frame::Packet(hdr));
        }
        let bytes: Vec<u32> = kinds
            .iter()
            .map(|&k| Frame::Control(Ctrl::new(k)).wire_bytes(64))
            .collect();
        assert_eq!(bytes, [64, 64, 64, 64, 64 + 13 * 247, 64 + 13 * 255]);
        assert_eq!(Frame::Packet(hdr).wire_bytes(64), 1048);
        assert_eq!(Frame::default(), Frame::Control(Ctrl::pfc(0, false)));
    }
}
