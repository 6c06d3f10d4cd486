//! A frame reaching the end of its wire: a control frame
//! (`Ctrl`, of a `CtrlKind`) is applied to the receiving port (PFC) or handed to RCM
//! (`switch/rcm/`), a packet lands (`land`, also for a reordered
//! direction's late packets): dropped if the link went down, else handed
//! to the host's driver (`host/driver.rs`) or the switch's ingress
//! pipeline (`switch/ingress.rs`); a PFC frame reaching a host is handed
//! to the pcap capture when one is on. Touches the wire and the receiving
//! port.

use crate::link::frame::{CtrlKind, Frame};
use crate::link::port::End;
use crate::net::arena::Hdr;
use crate::net::event::Ev;
use crate::net::Network;
use crate::observe::counters::DropReason;
use engine::Time;

impl Network {
    /// `HOOKS`: see `Network::forward`.
    pub(crate) fn arrive<const HOOKS: bool>(&mut self, now: Time, p: u32) {
        let port = &mut self.links.ports[p as usize];
        let (_, frame) = port.wire.pop_front().expect("arrival without a frame");
        let (up, peer) = (port.up, port.peer);
        if let Some(&(t, next)) = port.wire.front() {
            self.core.schedule(t, Ev::Arrive(p));
            // A host reads the packet and then its QP, last touched long
            // ago. The packets arriving in the window were asked for a
            // group ago (`prefetch_packets`); through the next one, ask for
            // its QP.
            if let (Frame::Packet(h1), End::Host(host)) = (next, peer) {
                if let Some(qp) = self.core.arena.dst_qp(h1.idx) {
                    self.hosts.nodes[host as usize].nic.prefetch_qp(qp);
                }
            }
        }
        let rx = p ^ 1;
        match frame {
            Frame::Control(ctrl) => match ctrl.kind() {
                CtrlKind::RcmNote { .. } => self.rcm_receive(now, rx, p),
                CtrlKind::Pause { class } => self.arrive_pfc(now, p, peer, class, true),
                CtrlKind::Resume { class } => self.arrive_pfc(now, p, peer, class, false),
            },
            Frame::Packet(hdr) => self.land::<HOOKS>(now, p, up, peer, hdr),
        }
    }

    /// A PFC frame off port `p`'s wire reaches `peer`'s port `p ^ 1`.
    /// Inline in `arrive`, as PFC's arm was before control frames had
    /// kinds: out of line (`#[inline(never)]`, cold or not, or left to
    /// the compiler, which did not inline it) measured +0.8-1.3%
    /// instructions per hop, the compiler laying out the window loop
    /// around it differently.
    #[inline(always)]
    fn arrive_pfc(&mut self, now: Time, p: u32, peer: End, class: u8, pause: bool) {
        let rx = p ^ 1;
        if self.core.calm {
            self.catch_up(rx, (now, Ev::Arrive(p)));
        }
        if let (true, End::Host(h)) = (self.observe.capturing, peer) {
            self.capture_pfc(now, h, p, class, pause);
        }
        if self.links.ports[rx as usize].apply_pfc(now, class, pause) {
            self.kick(now, rx);
        }
    }

    /// A packet off port `p`'s wire (or out of its late heap, `impair.rs`)
    /// reaches `peer`: dropped if the link (`up`) went down, else handed on.
    #[inline(always)]
    pub(crate) fn land<const HOOKS: bool>(
        &mut self,
        now: Time,
        p: u32,
        up: bool,
        peer: End,
        hdr: Hdr,
    ) {
        if !up {
            self.core.counters.drop(DropReason::LinkDown, hdr.wire());
            self.core.arena.free(hdr.idx);
            return;
        }
        match peer {
            End::Host(h) => self.deliver(now, h, hdr),
            End::Switch(s, in_local) => self.forward::<HOOKS>(now, s, p ^ 1, in_local, hdr),
        }
    }
}
