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

#[cfg(test)]
mod tests {
    use super::*;

    const E: EcnSetting = EcnSetting {
        rate_bps: 0,
        kmin: 10_000,
        kmax: 50_000,
        pmax: 0.2,
    };

    fn share(e: &EcnSetting, qlen: u64) -> f64 {
        let mut rng = Rng::new(1, engine::StreamKind::Ecn, 0);
        (0..20_000).filter(|_| red(e, qlen, &mut rng)).count() as f64 / 20_000.0
    }

    /// Nothing at or below kmin, everything above kmax, and between a
    /// share rising linearly to pmax (reached at kmax itself).
    #[test]
    fn red_marks_by_kmin_kmax_and_pmax() {
        assert_eq!(share(&E, 0), 0.0);
        assert_eq!(share(&E, E.kmin), 0.0);
        assert_eq!(share(&E, E.kmax + 1), 1.0);
        for (qlen, p) in [(20_000, 0.05), (30_000, 0.1), (E.kmax, 0.2)] {
            let got = share(&E, qlen);
            assert!((got - p).abs() < 0.015, "{qlen} B: {got}, not {p}");
        }
        // pmax 1 and kmin = kmax - 1: a step at kmax.
        let step = EcnSetting {
            kmin: 999,
            kmax: 1_000,
            pmax: 1.0,
            ..E
        };
        assert_eq!(share(&step, 999), 0.0);
        assert_eq!(share(&step, 1_000), 1.0);
    }
}
