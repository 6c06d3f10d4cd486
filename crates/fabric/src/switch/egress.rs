//! A switch's egress pipeline, for a packet its port takes from a queue:
//! release the buffer (which may RESUME the ingress port's upstream), mark
//! (`mark.rs`), send (which stamps HPCC's telemetry, `int.rs`) (`link/transmit.rs`). Touches the switch's MMU and
//! the egress port.

use crate::link::frame::Frame;
use crate::net::arena::Hdr;
use crate::net::Network;
use engine::Time;

impl Network {
    /// A packet leaves switch `s` by its port `p`, whose queue of the
    /// packet's class holds `qlen` bytes after it: the buffer is released
    /// (and the ingress port may RESUME its upstream), the ECN marker
    /// decides, and the packet is serialised.
    #[inline(always)]
    pub(crate) fn depart(&mut self, now: Time, p: u32, s: u32, mut hdr: Hdr, qlen: u64) {
        let (class, wire) = (hdr.class(), hdr.wire());
        let in_local = hdr.in_port as usize;
        let sw = &mut self.switches[s as usize];
        if sw.mmu.release(in_local, class, wire as u64) {
            let in_port = sw.ports[in_local];
            self.send_pfc(now, in_port, class as u8, false);
        }
        self.mark(p, &mut hdr, qlen);
        self.transmit(now, p, Frame::Packet(hdr));
    }
}
