//! ECN marking at a switch's egress port: RED on the queue of the packet's
//! class (no mark below `kmin` bytes, always above `kmax`, a probability
//! rising linearly to `pmax` between; see [`EcnSetting`]). Only data
//! packets of a class other than 0 not already marked are eligible.
//! Touches the egress port's marker (its counts and random stream) and the
//! fabric's ECN counter.

use crate::config::EcnSetting;
use crate::net::arena::Hdr;
use crate::net::Network;
use engine::Rng;

/// RED's decision for a packet leaving with `qlen` bytes queued after it.
#[inline(always)]
fn red(e: &EcnSetting, qlen: u64, rng: &mut Rng) -> bool {
    if qlen > e.kmax {
        true
    } else if qlen > e.kmin {
        let prob = e.pmax * (qlen - e.kmin) as f64 / (e.kmax - e.kmin) as f64;
        rng.bernoulli(prob)
    } else {
        false
    }
}

impl Network {
    /// Marks `hdr` congestion-experienced if port `p`'s marker says so;
    /// its class's queue holds `qlen` bytes after it.
    #[inline(always)]
    pub(crate) fn mark(&mut self, p: u32, hdr: &mut Hdr, qlen: u64) {
        if let Some(e) = self.ports[p as usize].ecn {
            if hdr.is_data() && !hdr.ce() && hdr.class() != 0 {
                let port = &mut self.ports[p as usize];
                port.ecn_eligible += 1;
                if red(&e, qlen, &mut port.ecn_rng) {
                    hdr.set_ce();
                    port.ecn_marked += 1;
                    self.counters.ecn_marked += 1;
                }
            }
        }
    }
}
