//! SAR, switch-level adaptive routing (RCM, section 3.4): at a switch
//! with equal-cost next hops, a flow whose port (the load balancer's
//! pick) is pressed (congested locally, or has received
//! `sar_notifications` notifications in the current episode) moves to the
//! next hop with the least cost, "based on the local output ports' load
//! and their corresponding regional estimated congestion degree": the
//! regional degree (1 - w) Fb + w Fbr plus the bytes queued toward the
//! port quantised as a degree is (over Fbmax), if that is lower than its
//! own port's. A flow that hits at its port (in the CAM, or named by a
//! notification) is never detoured. A moved flow stays pinned to its new
//! port at that switch while its own port is pressed, and goes back to it
//! once it is not (before, a detour lasted for the flow's life). A method
//! of RCM's state, given the packet's next hops and the ports' loads;
//! touches RCM's state only.

use crate::net::arena::Hdr;
use crate::switch::rcm::{flow_id, Rcm, FB_MAX};
use engine::Time;

impl Rcm {
    /// The output of `hdr` at switch `s`, whose equal-cost next hops are
    /// `hops`, after SAR, `out` being the load balancer's pick; `load`
    /// gives the bytes queued toward a port.
    #[inline(never)]
    pub(crate) fn sar(
        &mut self,
        now: Time,
        s: u32,
        hops: &[u32],
        hdr: Hdr,
        out: u32,
        load: impl Fn(u32) -> u64,
    ) -> u32 {
        if hops.len() < 2 {
            return out;
        }
        let id = flow_id(&hdr);
        let pressed = self.pressed(now, out);
        if let Some(&p) = self.pinned.get(&(s, id)) {
            if pressed && hops.contains(&p) {
                self.stats.detoured_packets += 1;
                return p;
            }
            self.pinned.remove(&(s, id));
            self.stats.released_detours += 1;
        }
        if !pressed || self.ports[out as usize].hits(now, id) {
            return out;
        }
        let unit = self.p.fb_max_bytes() / FB_MAX as f64;
        let cost = |p: u32| self.ports[p as usize].regional(now, self.p.w) + load(p) as f64 / unit;
        let mut best = (cost(out), out);
        for &h in hops {
            let c = cost(h);
            if c < best.0 {
                best = (c, h);
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

    /// SAR acts at output `p`: congested locally, or notified
    /// `sar_notifications` times in this episode of remote congestion.
    fn pressed(&self, now: Time, p: u32) -> bool {
        let pc = &self.ports[p as usize];
        pc.out.congested || (pc.remote(now) && pc.notes >= self.p.sar_notifications)
    }
}

#[cfg(test)]
mod tests {
    use crate::net::arena::Hdr;
    use crate::switch::rcm::{flow_id, Rcm, RcmParams};

    fn hdr() -> Hdr {
        let mut h = Hdr::of(3, 1_048, true);
        h.flow = 7;
        h.dst = 3;
        h
    }

    /// Port 0 is congested; 1 and 2 carry no congestion degree, but 1 has
    /// 50 KB queued: the flow goes to 2 (by degree alone, 1 and 2 tie and
    /// the first was taken).
    #[test]
    fn sar_weighs_port_load() {
        let mut r = Rcm::new(RcmParams::DEFAULT, 3);
        r.ports[0].out.congested = true;
        r.ports[0].out.fb = 10;
        let load = |p: u32| if p == 1 { 50_000 } else { 0 };
        assert_eq!(r.sar(0, 0, &[0, 1, 2], hdr(), 0, load), 2);
        assert_eq!(r.stats.detoured_flows, 1);
        // A port whose load outweighs its lower degree is not taken.
        let mut r = Rcm::new(RcmParams::DEFAULT, 2);
        r.ports[0].out.congested = true;
        r.ports[0].out.fb = 10;
        let heavy = |p: u32| if p == 1 { 90_000 } else { 0 };
        assert_eq!(r.sar(0, 0, &[0, 1], hdr(), 0, heavy), 0);
    }

    /// A detour lasts while the flow's own port is pressed, then the flow
    /// goes back; a flow in the port's CAM is never moved.
    #[test]
    fn sar_lets_a_detour_go_when_its_port_calms() {
        let mut r = Rcm::new(RcmParams::DEFAULT, 2);
        r.ports[0].out.congested = true;
        r.ports[0].out.fb = 10;
        let idle = |_| 0;
        assert_eq!(r.sar(0, 0, &[0, 1], hdr(), 0, idle), 1);
        assert_eq!(r.sar(1, 0, &[0, 1], hdr(), 0, idle), 1);
        r.ports[0].out.congested = false;
        r.ports[0].out.fb = 0;
        assert_eq!(r.sar(2, 0, &[0, 1], hdr(), 0, idle), 0);
        assert!(r.pinned.is_empty());
        assert_eq!(r.stats.released_detours, 1);
        assert_eq!(r.stats.detoured_packets, 2);
        r.ports[0].out.congested = true;
        r.ports[0].cam = vec![flow_id(&hdr())];
        assert_eq!(r.sar(3, 0, &[0, 1], hdr(), 0, idle), 0);
    }
}
