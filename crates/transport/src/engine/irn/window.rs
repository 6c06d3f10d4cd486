//! The two halves of IRN's selective repeat over one PSN space, shared by
//! the request direction (requester sends, responder receives) and the
//! READ-response direction (responder sends, requester receives).
//!
//! [`SendWindow`]: cumulative ack `una`, next new PSN `nxt`, the SACK
//! bitmap, loss recovery and the RTO. A NACK carries the cumulative ack and
//! the PSN whose arrival triggered it; the first one enters recovery, whose
//! end (the recovery point) is everything sent so far. In recovery a PSN is
//! lost if it is not SACKed and lies below the highest SACKed PSN; each is
//! retransmitted once, in order, before new data. A timeout marks every
//! unSACKed PSN lost. Recovery ends when the cumulative ack passes the
//! recovery point. BDP flow control: a new PSN may go only while fewer than
//! `cap` PSNs are in flight (above `una`, SACKed ones included, as in the
//! ConWeave/TLT implementation's `CanIrnTransmit`).
//!
//! [`RecvWindow`]: expected PSN `epsn` and the "arrived" bitmap of the
//! `cap` PSNs from it; anything beyond is dropped.
//!
//! PSNs are the QP's 32-bit serial numbers (`crate::psn`), compared in
//! serial order; the window spans at most `cap` (at most 2^20) PSNs. `rtx_next`, `lost_below` and
//! the recovery point mean something only in recovery, which sets them
//! afresh when it starts.

use super::bitmap::RingBitmap;
use super::config::IrnConfig;
use crate::psn::Psn;
use engine::Time;

#[derive(Clone, Debug)]
pub(crate) struct SendWindow {
    /// Everything below is acknowledged.
    pub una: Psn,
    /// The next new PSN; everything below has been sent at least once.
    pub nxt: Psn,
    sacked: RingBitmap,
    /// In recovery: leave when `una` reaches this.
    recovery: Option<Psn>,
    /// In recovery, unSACKed PSNs in `rtx_next..lost_below` are lost and
    /// not yet retransmitted; `rtx_next` is kept on such a PSN (or equal to
    /// `lost_below`).
    rtx_next: Psn,
    lost_below: Psn,
    /// Retransmission deadline; Some iff something is unacknowledged.
    pub deadline: Option<Time>,
    cap: u32,
}

/// Why an acknowledgement was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Malformed;

impl SendWindow {
    /// A window of `cap` PSNs whose first PSN is `first`.
    pub fn new(cap: u32, first: Psn) -> SendWindow {
        SendWindow {
            una: first,
            nxt: first,
            sacked: RingBitmap::new(cap),
            recovery: None,
            rtx_next: first,
            lost_below: first,
            deadline: None,
            cap,
        }
    }

    /// A lost PSN waits for retransmission.
    #[inline]
    pub fn rtx_pending(&self) -> bool {
        self.recovery.is_some() && self.rtx_next.lt(self.lost_below)
    }

    /// A new PSN below `limit` (one past the last posted) may be sent.
    #[inline]
    pub fn can_send_new(&self, limit: Psn) -> bool {
        self.nxt.lt(limit) && self.nxt.since(self.una) < self.cap
    }

    #[inline]
    pub fn outstanding(&self) -> bool {
        self.una.lt(self.nxt)
    }

    /// The PSN to send next: a lost one first, else `nxt` (the caller checks
    /// [`Self::can_send_new`]). True if it is a retransmission.
    pub fn next_psn(&self) -> (Psn, bool) {
        if self.rtx_pending() {
            (self.rtx_next, true)
        } else {
            (self.nxt, false)
        }
    }

    /// `psn` (from [`Self::next_psn`]) went on the wire at `now`.
    pub fn on_sent(&mut self, psn: Psn, now: Time, cfg: &IrnConfig) {
        if psn == self.nxt {
            self.nxt += 1;
        } else {
            self.rtx_next = psn + 1;
            self.skip_sacked();
        }
        if self.deadline.is_none() {
            self.deadline = Some(now + self.rto(cfg));
        }
    }

    /// RTO_low while fewer than N packets are in flight (a short tail, where
    /// waiting for RTO_high would dominate), RTO_high otherwise.
    fn rto(&self, cfg: &IrnConfig) -> Time {
        if self.nxt.since(self.una) < cfg.n_packets {
            cfg.rto_low
        } else {
            cfg.rto_high
        }
    }

    /// An ACK (`sack` None) or NACK: everything below `cum` arrived, and
    /// `sack` too. Returns true if `una` advanced.
    pub fn on_ack(
        &mut self,
        now: Time,
        cum: Psn,
        sack: Option<Psn>,
        cfg: &IrnConfig,
    ) -> Result<bool, Malformed> {
        if cum.gt(self.nxt) || sack.is_some_and(|s| s.ge(self.nxt) || s.lt(cum)) {
            return Err(Malformed);
        }
        let before = self.una;
        if cum.gt(self.una) {
            self.sacked.clear_range(self.una, cum);
            self.una = cum;
        }
        // A SACK below `una` (a late NACK) says nothing new, and its bit
        // would alias a future PSN's.
        if let Some(s) = sack.filter(|&s| s.ge(self.una)) {
            self.sacked.set(s);
            if self.recovery.is_none() {
                self.recovery = Some(self.nxt);
                self.rtx_next = self.una;
                self.lost_below = self.una;
            }
            self.lost_below = self.lost_below.max(s);
        }
        // SACKed PSNs right at `una` have arrived with everything before
        // them. The responder's own cumulative ack says so too, but it may
        // be lost while an ack that stops short of them (a READ response
        // acknowledges only up to its request) gets through; left
        // unacknowledged, they would be "outstanding" with nothing to
        // resend, and the RTO would never be armed again.
        while self.una.lt(self.nxt) && self.sacked.get(self.una) {
            self.sacked.clear(self.una);
            self.una += 1;
        }
        let progressed = self.una.gt(before);
        if self.recovery.is_some_and(|p| self.una.ge(p)) {
            self.recovery = None;
        }
        if self.recovery.is_some() {
            self.rtx_next = self.rtx_next.max(self.una);
            self.skip_sacked();
        }
        if !self.outstanding() {
            self.deadline = None;
        } else if progressed {
            self.deadline = Some(now + self.rto(cfg));
        }
        Ok(progressed)
    }

    /// Whether `psn` (at or above `una`) is SACKed.
    pub fn is_sacked(&self, psn: Psn) -> bool {
        self.sacked.get(psn)
    }

    /// SACKed PSNs (all above `una`: a bit is cleared as `una` passes it).
    /// Counts the ring's words; for UET's window control, not on IRN's
    /// path.
    pub fn sacked_count(&self) -> u32 {
        self.sacked.count_ones()
    }

    /// PSNs recovery holds lost and has not resent yet (unSACKed, in
    /// `rtx_next..lost_below`); for UET's window control.
    pub fn lost_pending(&self) -> u32 {
        if !self.rtx_pending() {
            return 0;
        }
        let span = self.lost_below.since(self.rtx_next);
        span - self.sacked.count_range(self.rtx_next, self.lost_below)
    }

    /// Eunomia's SACK (`crate::order::eunomia`): `s` arrived and is
    /// tracked, so neither recovery nor a timeout resends it; recovery is
    /// not entered.
    pub fn mark_sacked(&mut self, s: Psn) -> Result<(), Malformed> {
        if s.ge(self.nxt) {
            return Err(Malformed);
        }
        if s.ge(self.una) {
            self.sacked.set(s);
            if self.recovery.is_some() {
                self.skip_sacked();
            }
        }
        Ok(())
    }

    /// Eunomia's NACK: everything below `cum` arrived, and `dropped` could
    /// not be tracked: recovery, with every unSACKed PSN through `dropped`
    /// lost. Returns true if `una` advanced.
    pub fn on_drop_nack(
        &mut self,
        now: Time,
        cum: Psn,
        dropped: Psn,
        cfg: &IrnConfig,
    ) -> Result<bool, Malformed> {
        if dropped.ge(self.nxt) || dropped.lt(cum) {
            return Err(Malformed);
        }
        let progressed = self.on_ack(now, cum, None, cfg)?;
        if self.recovery.is_none() {
            self.recovery = Some(self.nxt);
            self.rtx_next = self.una;
            self.lost_below = self.una;
        }
        self.lost_below = self.lost_below.max(dropped + 1);
        self.skip_sacked();
        Ok(progressed)
    }

    /// The timer fired at `now`: if it expired with data outstanding,
    /// every unSACKed PSN is lost. True if it expired.
    pub fn on_timer(&mut self, now: Time) -> bool {
        match self.deadline {
            Some(d) if d <= now => {
                self.deadline = None;
                if !self.outstanding() {
                    return false;
                }
                self.recovery = Some(self.nxt);
                self.rtx_next = self.una;
                self.lost_below = self.nxt;
                self.skip_sacked();
                true
            }
            _ => false,
        }
    }

    fn skip_sacked(&mut self) {
        self.rtx_next = self
            .sacked
            .first_clear(self.rtx_next, self.lost_below)
            .unwrap_or(self.lost_below.max(self.rtx_next));
    }
}

#[derive(Clone, Debug)]
pub(crate) struct RecvWindow {
    /// Everything below has arrived.
    pub epsn: Psn,
    arrived: RingBitmap,
    cap: u32,
}

/// Where an arriving PSN falls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arrival {
    /// Below `epsn`: a duplicate of something delivered.
    Old,
    /// In the window, already arrived.
    Again,
    /// In the window, new.
    New,
    /// At or beyond `epsn + cap`: no room in the bitmap.
    Beyond,
}

impl RecvWindow {
    /// A window of `cap` PSNs that expects `first` first.
    pub fn new(cap: u32, first: Psn) -> RecvWindow {
        RecvWindow {
            epsn: first,
            arrived: RingBitmap::new(cap),
            cap,
        }
    }

    pub fn classify(&self, psn: Psn) -> Arrival {
        let ahead = psn.diff(self.epsn);
        if ahead < 0 {
            Arrival::Old
        } else if ahead as u32 >= self.cap {
            Arrival::Beyond
        } else if self.arrived.get(psn) {
            Arrival::Again
        } else {
            Arrival::New
        }
    }

    /// Whether `psn` has arrived (below `epsn`, or marked in the window).
    pub fn received(&self, psn: Psn) -> bool {
        matches!(self.classify(psn), Arrival::Old | Arrival::Again)
    }

    pub fn mark(&mut self, psn: Psn) {
        self.arrived.set(psn);
    }

    /// The 64 PSNs after `epsn` as a SACK bitmap: bit `i` set if PSN
    /// `epsn + 1 + i` has arrived (UET's ACKs; bits past the window stay
    /// clear, their places would alias).
    pub fn sack_bits(&self) -> u64 {
        (0..64u32.min(self.cap.saturating_sub(1)))
            .filter(|&i| self.arrived.get(self.epsn + 1 + i))
            .fold(0, |bits, i| bits | 1 << i)
    }

    /// If `epsn` has arrived, consumes it and returns it (call in a loop to
    /// deliver everything now in order).
    pub fn pop_in_order(&mut self) -> Option<Psn> {
        let p = self.epsn;
        if self.arrived.get(p) {
            self.arrived.clear(p);
            self.epsn += 1;
            Some(p)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::time::US;

    fn cfg() -> IrnConfig {
        IrnConfig {
            bdp_packets: 8,
            ..IrnConfig::default()
        }
    }

    /// Every test runs from PSN 0 and from 3 below 2^32, across the wrap.
    const BASES: [Psn; 2] = [Psn::new(0), Psn::new(u32::MAX - 2)];

    /// A send window seen in PSN offsets `k` from `base` (PSN `base + k`).
    struct W {
        w: SendWindow,
        base: Psn,
    }

    impl W {
        fn new(cap: u32, base: Psn) -> W {
            W {
                w: SendWindow::new(cap, base),
                base,
            }
        }
        fn can_send_new(&self, limit: u32) -> bool {
            self.w.can_send_new(self.base + limit)
        }
        fn next_psn(&self) -> (u32, bool) {
            let (p, rtx) = self.w.next_psn();
            (p.since(self.base), rtx)
        }
        fn on_sent(&mut self, k: u32, now: Time, cfg: &IrnConfig) {
            self.w.on_sent(self.base + k, now, cfg)
        }
        fn on_ack(
            &mut self,
            now: Time,
            cum: u32,
            sack: Option<u32>,
            cfg: &IrnConfig,
        ) -> Result<bool, Malformed> {
            let sack = sack.map(|s| self.base + s);
            self.w.on_ack(now, self.base + cum, sack, cfg)
        }
        fn una(&self) -> u32 {
            self.w.una.since(self.base)
        }
    }

    #[test]
    fn bdp_cap_limits_new_packets() {
        for base in BASES {
            let c = cfg();
            let mut w = W::new(c.bdp_packets, base);
            for p in 0..8 {
                assert!(w.can_send_new(100));
                assert_eq!(w.next_psn(), (p, false));
                w.on_sent(p, 0, &c);
            }
            assert!(!w.can_send_new(100), "8 in flight");
            // A SACK does not open the window; a cumulative ack does.
            w.on_ack(1, 0, Some(5), &c).unwrap();
            assert!(!w.can_send_new(100));
            w.on_ack(1, 2, Some(5), &c).unwrap();
            assert!(w.can_send_new(100));
            assert!(!w.can_send_new(8), "nothing posted from 8 on");
        }
    }

    #[test]
    fn recovery_retransmits_only_the_holes_once() {
        for base in BASES {
            let c = cfg();
            let mut w = W::new(c.bdp_packets, base);
            for p in 0..8 {
                w.on_sent(p, 0, &c);
            }
            // 1 and 3 lost: NACKs for 2, 4, 5.
            w.on_ack(1, 1, Some(2), &c).unwrap();
            assert_eq!(w.next_psn(), (1, true));
            w.on_ack(1, 1, Some(4), &c).unwrap();
            w.on_ack(1, 1, Some(5), &c).unwrap();
            w.on_sent(1, 2, &c);
            assert_eq!(w.next_psn(), (3, true));
            w.on_sent(3, 2, &c);
            assert!(!w.w.rtx_pending(), "6 and 7 are not known lost");
            // The cumulative ack passes the recovery point (8): recovery ends.
            w.on_ack(3, 8, None, &c).unwrap();
            assert!(w.w.recovery.is_none() && w.w.deadline.is_none());
            assert!(w.on_ack(3, 9, None, &c).is_err());
        }
    }

    #[test]
    fn an_ack_stopping_short_of_sacked_psns_acknowledges_them_too() {
        // 0 lost, 1..4 SACKed; the resent 0's cumulative ack (5) is lost
        // and only an ack up to 1 (a READ response) gets through.
        for base in BASES {
            let c = cfg();
            let mut w = W::new(c.bdp_packets, base);
            for p in 0..5 {
                w.on_sent(p, 0, &c);
            }
            for s in 1..5 {
                w.on_ack(1, 0, Some(s), &c).unwrap();
            }
            assert_eq!(w.next_psn(), (0, true));
            w.on_sent(0, 2, &c);
            assert!(w.on_ack(3, 1, None, &c).unwrap());
            assert_eq!(w.una(), 5, "1..4 arrived with everything before them");
            assert!(w.w.deadline.is_none() && w.w.recovery.is_none());
        }
    }

    #[test]
    fn timeout_resends_every_unsacked_psn_with_low_or_high_rto() {
        for base in BASES {
            let c = cfg();
            let mut w = W::new(c.bdp_packets, base);
            w.on_sent(0, 0, &c);
            assert_eq!(w.w.deadline, Some(c.rto_low), "1 < N in flight");
            for p in 1..6 {
                w.on_sent(p, 0, &c);
            }
            w.on_ack(5 * US, 0, Some(2), &c).unwrap();
            assert!(w.w.on_timer(c.rto_low));
            let mut resent = vec![];
            while w.w.rtx_pending() {
                let (p, rtx) = w.next_psn();
                assert!(rtx);
                resent.push(p);
                w.on_sent(p, c.rto_low, &c);
            }
            assert_eq!(resent, vec![0, 1, 3, 4, 5]);
            w.on_ack(c.rto_low + US, 1, None, &c).unwrap();
            assert_eq!(w.w.deadline, Some(c.rto_low + US + c.rto_high), "5 >= N");
        }
    }

    #[test]
    fn receive_window_classifies_and_delivers_in_order() {
        for base in BASES {
            let p = |k: u32| base + k;
            let mut r = RecvWindow::new(4, base);
            assert_eq!(r.classify(p(0)), Arrival::New);
            assert_eq!(r.classify(p(4)), Arrival::Beyond);
            r.mark(p(2));
            assert_eq!(r.classify(p(2)), Arrival::Again);
            assert_eq!(r.pop_in_order(), None);
            r.mark(p(0));
            assert_eq!(r.pop_in_order(), Some(p(0)));
            assert_eq!(r.pop_in_order(), None);
            r.mark(p(1));
            assert_eq!(
                (r.pop_in_order(), r.pop_in_order()),
                (Some(p(1)), Some(p(2)))
            );
            assert_eq!(r.classify(p(1)), Arrival::Old);
            assert_eq!(r.classify(p(6)), Arrival::New);
            assert_eq!(r.classify(base - 1), Arrival::Old);
        }
    }
}
