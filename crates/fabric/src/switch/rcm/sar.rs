//! SAR, switch-level adaptive routing (RCM, section 3.4): at a switch
//! with equal-cost next hops, a flow whose port (the load balancer's
//! pick) is congested locally, or has received `sar_notifications`
//! notifications in the current episode, moves to the next hop with the
//! least regional congestion degree, if that is lower, unless the flow
//! hits at its port (in the CAM, or named by a notification): harmful
//! flows are never detoured. A moved flow stays pinned to its new port at
//! that switch, so it is reordered at most once there. A method of RCM's
//! state, given the packet's next hops; touches RCM's state only.

use crate::net::arena::Hdr;
use crate::switch::rcm::{flow_id, Rcm};
use engine::Time;

impl Rcm {
    /// The output of `hdr` at switch `s`, whose equal-cost next hops are
    /// `hops`, after SAR, `out` being the load balancer's pick.
    #[inline(never)]
    pub(crate) fn sar(&mut self, now: Time, s: u32, hops: &[u32], hdr: Hdr, out: u32) -> u32 {
        let id = flow_id(&hdr);
        if hops.len() < 2 {
            return out;
        }
        if let Some(&p) = self.pinned.get(&(s, id)) {
            if hops.contains(&p) {
                self.stats.detoured_packets += 1;
                return p;
            }
        }
        let w = self.p.w;
        let pc = &self.ports[out as usize];
        let pressed = pc.out.congested || (pc.remote(now) && pc.notes >= self.p.sar_notifications);
        if !pressed || pc.hits(now, id) {
            return out;
        }
        let here = pc.regional(now, w);
        let mut best = (here, out);
        for &h in hops {
            let d = self.ports[h as usize].regional(now, w);
            if d < best.0 {
                best = (d, h);
            }
        }
        if best.1 == out {
            return out;
        }
        if self.ports[out as usize].is_harmful(now, id) {
            self.harmful_detours += 1;
        }
        self.pinned.insert((s, id), best.1);
        self.detoured.insert(id);
        self.stats.detoured_flows += 1;
        self.stats.detoured_packets += 1;
        best.1
    }
}
