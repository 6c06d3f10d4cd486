//! SAR, switch-level adaptive routing (RCM, section 3.4): at a switch
//! with equal-cost next hops, a flow whose port (the load balancer's
//! pick) is congested locally, or has received `sar_notifications`
//! notifications in the current episode, moves to the next hop with the
//! least regional congestion degree, if that is lower, unless the flow is
//! harmful at its port (in the CAM, or named by a notification): harmful
//! flows are never detoured. A moved flow stays pinned to its new port at
//! that switch, so it is reordered at most once there. Touches RCM's
//! state and reads the routes.

use crate::net::arena::Hdr;
use crate::net::Network;
use crate::switch::rcm::flow_id;
use engine::Time;

impl Network {
    /// The output of `hdr` at switch `s` (entered by `in_port`) after SAR,
    /// `out` being the load balancer's pick.
    #[inline(never)]
    pub(crate) fn sar(&mut self, now: Time, s: u32, in_port: u32, hdr: Hdr, out: u32) -> u32 {
        let id = flow_id(&hdr);
        let hops = self.routes.hops(s, hdr.flow, hdr.dst, hdr.idx, in_port);
        if hops.len() < 2 {
            return out;
        }
        if let Some(&p) = self.rcm.pinned.get(&(s, id)) {
            if hops.contains(&p) {
                self.rcm.stats.detoured_packets += 1;
                return p;
            }
        }
        let w = self.rcm.p.w;
        let pc = &self.rcm.ports[out as usize];
        let pressed =
            pc.out.congested || (pc.remote(now) && pc.notes >= self.rcm.p.sar_notifications);
        if !pressed || pc.is_harmful(now, id) {
            return out;
        }
        let here = pc.regional(now, w);
        let mut best = (here, out);
        for &h in hops {
            let d = self.rcm.ports[h as usize].regional(now, w);
            if d < best.0 {
                best = (d, h);
            }
        }
        if best.1 == out {
            return out;
        }
        if self.rcm.ports[out as usize].is_harmful(now, id) {
            self.rcm.harmful_detours += 1;
        }
        self.rcm.pinned.insert((s, id), best.1);
        self.rcm.detoured.insert(id);
        self.rcm.stats.detoured_flows += 1;
        self.rcm.stats.detoured_packets += 1;
        best.1
    }
}
