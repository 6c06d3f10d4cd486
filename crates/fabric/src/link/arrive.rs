//! A frame reaching the end of its wire: `Links::take` pops it and asks
//! for the wire's next arrival; the receiving node applies it (a switch:
//! `AtSwitch::arrive`, `switch/ingress.rs`; a host: `AtHost::arrive`,
//! `host/driver.rs`). Touches the wire and the event core.

use crate::link::frame::Frame;
use crate::link::port::End;
use crate::link::Links;
use crate::net::core::Core;
use crate::net::event::Ev;

/// A frame taken off a wire, with what its receiver needs of the link.
pub(crate) struct Arrival {
    pub frame: Frame,
    /// The link was up when the frame arrived (a packet on a link that
    /// went down meanwhile is lost).
    pub up: bool,
    /// The receiving end.
    pub peer: End,
}

impl Links {
    /// Takes the frame arriving now off port `p`'s wire and asks for the
    /// next one's arrival.
    #[inline(always)]
    pub(crate) fn take(&mut self, core: &mut Core, p: u32) -> Arrival {
        let port = &mut self.ports[p as usize];
        let (_, frame) = port.wire.pop_front().expect("arrival without a frame");
        if let Some(&(t, _)) = port.wire.front() {
            core.schedule(t, Ev::Arrive(p));
        }
        Arrival {
            frame,
            up: port.up,
            peer: port.peer,
        }
    }

    /// The frame after the one just taken off port `p`'s wire, if any.
    #[inline(always)]
    pub(crate) fn next_frame(&self, p: u32) -> Option<Frame> {
        self.ports[p as usize].wire.front().map(|&(_, f)| f)
    }
}
