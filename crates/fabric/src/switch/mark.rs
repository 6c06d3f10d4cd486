//! What a switch's egress port writes on a departing packet, as the
//! port's [`Marker`]: the ECN mark by RED on the queue of the packet's
//! class (no mark below `kmin` bytes, always above `kmax`, a probability
//! rising linearly to `pmax` between; see [`EcnSetting`]; only data
//! packets of a class other than 0 not already marked are eligible), and
//! whether it stamps HPCC's telemetry (`int.rs` stamps). Touches the
//! marker and the packet's header.

use crate::config::EcnSetting;
use crate::net::arena::Hdr;
use engine::{Rng, StreamKind};

/// One egress port's marking state (a host's port has none on).
#[derive(Clone, Debug)]
pub(crate) struct Marker {
    /// RED marking at this port, if on.
    pub ecn: Option<EcnSetting>,
    pub ecn_marked: u64,
    /// Data packets this port's RED decided on (not control class, not
    /// already CE): the denominator of its marking ratio.
    pub ecn_eligible: u64,
    rng: Rng,
    /// Stamps HPCC's telemetry on data packets (`int.rs`; read by the
    /// egress pipeline after marking, `egress.rs`).
    pub stamps_int: bool,
}

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

impl Marker {
    /// Port `id`'s marker (its random stream is the run's `seed` stream of
    /// ECN of that index).
    pub fn new(ecn: Option<EcnSetting>, seed: u64, id: u32) -> Marker {
        Marker {
            ecn,
            ecn_marked: 0,
            ecn_eligible: 0,
            rng: Rng::new(seed, StreamKind::Ecn, id as u64),
            stamps_int: false,
        }
    }

    /// Marks `hdr` congestion-experienced if RED says so, its class's
    /// queue holding `qlen` bytes after it; true if it marked.
    #[inline(always)]
    pub fn mark(&mut self, hdr: &mut Hdr, qlen: u64) -> bool {
        if let Some(e) = self.ecn {
            if hdr.is_data() && !hdr.ce() && hdr.class() != 0 {
                self.ecn_eligible += 1;
                if red(&e, qlen, &mut self.rng) {
                    hdr.set_ce();
                    self.ecn_marked += 1;
                    return true;
                }
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(class: u8) -> Hdr {
        Hdr::of(class, 1000, true)
    }

    /// RED marks nothing below kmin, everything above kmax, and counts
    /// only data packets of a class other than 0 not yet marked.
    #[test]
    fn red_marks_by_queue_and_counts_the_eligible() {
        let e = EcnSetting {
            rate_bps: 0,
            kmin: 1000,
            kmax: 2000,
            pmax: 0.5,
        };
        let mut m = Marker::new(Some(e), 1, 0);
        let mut h = data(3);
        assert!(!m.mark(&mut h, 500));
        assert!(!h.ce());
        assert!(m.mark(&mut h, 2001));
        assert!(h.ce());
        // Already marked, and class 0: not eligible.
        assert!(!m.mark(&mut h, 5000));
        assert!(!m.mark(&mut data(0), 5000));
        assert_eq!((m.ecn_marked, m.ecn_eligible), (1, 2));
        let mut off = Marker::new(None, 1, 0);
        assert!(!off.mark(&mut data(3), 5000));
        assert_eq!(off.ecn_eligible, 0);
    }

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
