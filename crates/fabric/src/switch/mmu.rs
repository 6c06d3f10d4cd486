//! The shared-buffer memory management unit of one switch: ingress
//! accounting per (port, class) with a guaranteed reserve, a dynamic
//! threshold over the free shared pool, per-port PFC headroom, and the
//! PAUSE/RESUME decisions; the lossy-mode drop rule. Egress bytes per
//! (port, class) are the port's own count (`ClassQueue::bytes`), passed in
//! where a rule reads them.
//!
//! The lossless rules follow the HPCC ns-3 switch MMU (see
//! `data/params/pfc_buffer.toml` `[hpcc_mmu]`) with alpha configurable: a
//! (port, class) pauses its upstream when its shared use reaches
//! alpha * (buffer - headroom - reserve - shared in use), or as soon as it
//! spills into headroom; it resumes when it has left headroom and sits
//! `resume_offset` below the threshold. Headroom is sized so a PFC fabric
//! never drops (see `headroom_for`).

pub const CLASSES: usize = 8;

#[derive(Clone, Debug)]
pub struct MmuConfig {
    pub buffer: u64,
    pub pfc: bool,
    /// Dynamic-threshold alpha of the ingress (PFC) admission.
    pub alpha: f64,
    /// Guaranteed bytes per (ingress port, class) before the shared pool.
    pub reserve: u64,
    /// Hysteresis between PAUSE and RESUME.
    pub resume_offset: u64,
    /// Lossy mode: egress dynamic-threshold alpha (drop when a queue exceeds
    /// alpha times the free buffer).
    pub egress_alpha: f64,
}

/// Why a switch refused a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Lossless mode: the packet found the threshold crossed and the
    /// headroom full (a sizing error; should never happen).
    HeadroomOverflow,
    /// Lossy mode: the whole buffer is in use.
    BufferFull,
    /// Lossy mode: the egress queue exceeded its dynamic threshold.
    EgressThreshold,
}

/// A non-negative factor in 32.32 fixed point: `of(x)` is `floor(x * f)`
/// for any byte count without a float conversion (each of which costs tens
/// of instructions, on the path of every packet).
#[derive(Clone, Copy, Debug)]
struct Factor(u64);

impl Factor {
    fn new(f: f64) -> Factor {
        Factor((f * (1u64 << 32) as f64).round() as u64)
    }

    #[inline]
    fn of(self, x: u64) -> u64 {
        ((x as u128 * self.0 as u128) >> 32) as u64
    }
}

/// Hot fields first, on one cache line (`repr(C)`): PFC-mode admission
/// and release read nothing else of the switch's MMU.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Mmu {
    /// By class, then port (see [`Mmu::account`]).
    accounts: Box<[Account]>,
    /// The buffer less every port's headroom and every reserve: the pool
    /// the dynamic threshold shares.
    pool: u64,
    shared_used: u64,
    total_used: u64,
    reserve: u64,
    alpha: Factor,
    pfc: bool,
    egress_alpha: Factor,
    buffer: u64,
    resume_offset: u64,
    /// (port, class) records with a PAUSE outstanding (a record that uses
    /// headroom has one too).
    paused_records: u32,
    /// At least the largest `ingress` of any record (raised by admissions,
    /// recomputed by [`Mmu::calm`] when it is in the way).
    max_ingress: u64,
}

/// What the MMU accounts for one ingress (port, class), in one 32-byte
/// record: a packet touches the one record of its ingress port. (Per-port
/// arrays of each counter put a class's counters on three cache lines; the
/// MMU was a fifth of the event loop's L1 misses. Egress bytes lived here
/// too, until the port's queue, which a hop reads anyway, took them.)
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(32))]
struct Account {
    /// Bytes that entered on this port and are still in the switch, outside
    /// headroom (reserve first, then shared).
    ingress: u64,
    hdrm_used: u32,
    /// The port's headroom, in every class's record so admission reads one.
    headroom: u32,
    /// A PAUSE is outstanding upstream.
    paused: bool,
}

/// Headroom that absorbs what is still coming after a PAUSE: one frame
/// in serialisation on each side, the PAUSE itself, and a round trip of the
/// link's bandwidth-delay product.
pub fn headroom_for(rate_bps: u64, delay: engine::Time, max_frame: u64) -> u64 {
    let bdp = (rate_bps as u128 * delay as u128 / engine::time::SEC as u128 / 8) as u64;
    2 * bdp + 3 * max_frame
}

/// The result of accounting one admitted packet.
pub struct Admitted {
    /// The ingress (port, class) must PAUSE its upstream now.
    pub send_pause: bool,
}

impl Mmu {
    pub fn new(cfg: MmuConfig, headroom: Vec<u64>) -> Mmu {
        let ports = headroom.len();
        let total_headroom: u64 = if cfg.pfc { headroom.iter().sum() } else { 0 };
        let total_reserve = cfg.reserve * (ports * CLASSES) as u64;
        Mmu {
            accounts: (0..CLASSES)
                .flat_map(|_| {
                    headroom.iter().map(|&h| Account {
                        // Beyond 4 GB a headroom is never reached anyway.
                        headroom: u32::try_from(h).unwrap_or(u32::MAX),
                        ..Account::default()
                    })
                })
                .collect(),
            pool: cfg.buffer.saturating_sub(total_headroom + total_reserve),
            shared_used: 0,
            total_used: 0,
            reserve: cfg.reserve,
            alpha: Factor::new(cfg.alpha),
            pfc: cfg.pfc,
            egress_alpha: Factor::new(cfg.egress_alpha),
            buffer: cfg.buffer,
            resume_offset: cfg.resume_offset,
            paused_records: 0,
            max_ingress: 0,
        }
    }

    /// Index of a (port, class) record. Class-major: a fabric uses one or
    /// two classes, so the records a switch's arrivals touch are side by
    /// side, two to a line, not one line per port.
    #[inline]
    fn account(&self, port: usize, class: usize) -> usize {
        (class % CLASSES) * (self.accounts.len() / CLASSES) + port
    }

    /// Bytes of the shared pool a (port, class) may still grow into.
    #[inline]
    fn threshold(&self) -> u64 {
        self.alpha.of(self.pool.saturating_sub(self.shared_used))
    }

    /// Admits (and accounts) a packet of `size` bytes arriving on `in_port`
    /// for an egress (port, class) that holds `queued()` bytes, or refuses
    /// it. Only the lossy rule asks for `queued()`: it reads the egress
    /// port's queue, a cache line a PFC-mode hop need not touch. Inlined
    /// wherever called: the hop's copy must not depend on how many other
    /// callers there are (a load balancer's own admissions).
    #[inline(always)]
    pub fn admit(
        &mut self,
        in_port: usize,
        class: usize,
        size: u64,
        queued: impl FnOnce() -> u64,
    ) -> Result<Admitted, Refusal> {
        let i = self.account(in_port, class);
        if !self.pfc {
            if self.total_used + size > self.buffer {
                return Err(Refusal::BufferFull);
            }
            let free = self.buffer - self.total_used;
            let queued = queued();
            if queued + size > self.egress_alpha.of(free) && queued > 0 {
                return Err(Refusal::EgressThreshold);
            }
            self.accounts[i].ingress += size;
            self.total_used += size;
            return Ok(Admitted { send_pause: false });
        }
        let reserve = self.reserve;
        let mut thresh = self.threshold();
        let ia = &mut self.accounts[i];
        let new_bytes = ia.ingress + size;
        // Bytes beyond the reserve: none while the record is within it.
        // One path for the reserve and the shared pool, so that no branch
        // asks which (7 M mispredictions on A2A128 as a branch).
        let shared = new_bytes.saturating_sub(reserve);
        if shared > thresh {
            if ia.hdrm_used as u64 + size > ia.headroom as u64 {
                return Err(Refusal::HeadroomOverflow);
            }
            // Within headroom, so within u32.
            ia.hdrm_used += size as u32;
        } else {
            ia.ingress = new_bytes;
            self.shared_used += size.min(shared);
            thresh = self.threshold();
        }
        let ia = &mut self.accounts[i];
        let send_pause =
            !ia.paused && (ia.hdrm_used > 0 || ia.ingress.saturating_sub(reserve) >= thresh);
        ia.paused |= send_pause;
        self.max_ingress = self.max_ingress.max(ia.ingress);
        self.paused_records += send_pause as u32;
        self.total_used += size;
        Ok(Admitted { send_pause })
    }

    /// Admits a packet the switch already holds outside the MMU (ConWeave's
    /// reordering queue, released): lossy, as [`Mmu::admit`]; under PFC
    /// never refused (a lossless switch drops nothing it took in), but
    /// accounted to its ingress as an arrival, PAUSEing the upstream past
    /// the threshold.
    pub fn admit_held(
        &mut self,
        in_port: usize,
        class: usize,
        size: u64,
        queued: impl FnOnce() -> u64,
    ) -> Result<Admitted, Refusal> {
        if !self.pfc {
            return self.admit(in_port, class, size, queued);
        }
        let i = self.account(in_port, class);
        let reserve = self.reserve;
        let ia = &mut self.accounts[i];
        let before = ia.ingress.saturating_sub(reserve);
        ia.ingress += size;
        let shared = ia.ingress.saturating_sub(reserve);
        self.shared_used += shared - before;
        let thresh = self.threshold();
        let ia = &mut self.accounts[i];
        let send_pause = !ia.paused && (ia.hdrm_used > 0 || shared >= thresh);
        ia.paused |= send_pause;
        self.max_ingress = self.max_ingress.max(ia.ingress);
        self.paused_records += send_pause as u32;
        self.total_used += size;
        Ok(Admitted { send_pause })
    }

    /// Whether lossy admission would take a packet of `size` bytes for an
    /// egress queue holding `queued` bytes (what [`Mmu::admit`] checks,
    /// without accounting).
    pub fn lossy_room(&self, size: u64, queued: u64) -> bool {
        self.total_used + size <= self.buffer
            && (queued == 0 || queued + size <= self.egress_alpha.of(self.buffer - self.total_used))
    }

    /// Releases a packet that leaves the switch; returns true when the
    /// ingress (port, class) should RESUME its upstream now.
    #[inline]
    pub fn release(&mut self, in_port: usize, class: usize, size: u64) -> bool {
        let i = self.account(in_port, class);
        self.total_used -= size;
        let ia = &mut self.accounts[i];
        if !self.pfc {
            ia.ingress -= size;
            return false;
        }
        let reserve = self.reserve;
        let from_hdrm = (ia.hdrm_used as u64).min(size);
        ia.hdrm_used -= from_hdrm as u32;
        let rest = size - from_hdrm;
        let from_shared = rest.min(ia.ingress.saturating_sub(reserve));
        ia.ingress -= rest;
        let (paused, hdrm_used, ingress) = (ia.paused, ia.hdrm_used, ia.ingress);
        self.shared_used -= from_shared;
        if paused && hdrm_used == 0 {
            let shared = ingress.saturating_sub(reserve);
            if shared == 0 || shared + self.resume_offset <= self.threshold() {
                self.accounts[i].paused = false;
                self.paused_records -= 1;
                return true;
            }
        }
        false
    }

    /// Whether, in a window in which each ingress port brings at most
    /// `port_bytes` and all of them `switch_bytes`, no admission or release
    /// can pause or resume a port or refuse a packet, in whatever order
    /// they come: lossless, no PAUSE outstanding, and every record stays
    /// below the dynamic threshold even with no release and the pool
    /// shrunk by everything that may arrive. Then the order of this
    /// switch's admissions and releases decides nothing, and the final
    /// counts are sums. (Lossy admission reads the egress queues and the
    /// whole buffer: never calm.)
    pub fn calm(&mut self, port_bytes: u64, switch_bytes: u64) -> bool {
        if !self.pfc || self.paused_records > 0 {
            return false;
        }
        let shared = self.shared_used.saturating_add(switch_bytes);
        let thresh = self.alpha.of(self.pool.saturating_sub(shared));
        let (reserve, m) = (self.reserve, self.max_ingress);
        let below = |ingress: u64| (ingress + port_bytes).saturating_sub(reserve) < thresh;
        if below(m) {
            return true;
        }
        self.max_ingress = self.accounts.iter().map(|a| a.ingress).max().unwrap_or(0);
        below(self.max_ingress)
    }

    pub fn used(&self) -> u64 {
        self.total_used
    }

    /// Nothing accounted anywhere: every (port, class) record empty and
    /// unpaused, the pools at zero.
    #[cfg(test)]
    pub fn is_idle(&self) -> bool {
        let empty = |a: &Account| a.ingress == 0 && a.hdrm_used == 0 && !a.paused;
        self.accounts.iter().all(empty)
            && self.total_used == 0
            && self.shared_used == 0
            && self.paused_records == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lossless_config() -> MmuConfig {
        MmuConfig {
            buffer: 100_000,
            pfc: true,
            alpha: 0.5,
            reserve: 1_000,
            resume_offset: 500,
            egress_alpha: 1.0,
        }
    }

    fn lossless() -> Mmu {
        Mmu::new(lossless_config(), vec![10_000; 2])
    }

    #[test]
    fn pauses_at_threshold_and_resumes_after_drain() {
        let mut m = lossless();
        // free shared = 100k - 20k headroom - 16k reserve = 64k; threshold
        // starts at 32k and falls as the pool fills.
        let mut sent = 0;
        let mut paused_at = None;
        while paused_at.is_none() {
            let a = m.admit(0, 3, 1_000, || 0).unwrap();
            sent += 1;
            if a.send_pause {
                paused_at = Some(sent);
            }
        }
        let n = paused_at.unwrap();
        // Shared use s pauses when s >= (64k - s) / 2, i.e. s >= 21.33k:
        // 1k reserve + 22 packets of shared.
        assert_eq!(n, 23);
        // No second PAUSE while one is outstanding.
        assert!(!m.admit(0, 3, 1_000, || 0).unwrap().send_pause);
        let mut resumed = false;
        for _ in 0..n + 1 {
            resumed |= m.release(0, 3, 1_000);
        }
        assert!(resumed);
        assert_eq!(m.used(), 0);
    }

    #[test]
    fn headroom_absorbs_then_refuses() {
        let mut m = lossless();
        let mut admitted = 0u64;
        loop {
            match m.admit(0, 3, 1_000, || 0) {
                Ok(_) => admitted += 1_000,
                Err(r) => {
                    assert_eq!(r, Refusal::HeadroomOverflow);
                    break;
                }
            }
        }
        // reserve + shared while s + 1000 <= (64k - s) / 2 (s <= 20.67k:
        // 21 packets) + the full headroom.
        assert_eq!(admitted, 1_000 + 21_000 + 10_000);
    }

    /// A held packet released (ConWeave) is never refused under PFC, even
    /// past the headroom: it pauses the upstream, and its release resumes.
    #[test]
    fn held_packets_are_admitted_past_the_headroom() {
        let mut m = lossless();
        while m.admit(0, 3, 1_000, || 0).is_ok() {}
        let full = m.used();
        let mut paused = false;
        for _ in 0..50 {
            paused |= m.admit_held(0, 3, 1_000, || 0).unwrap().send_pause;
        }
        assert_eq!(m.used(), full + 50_000);
        assert!(!paused, "the upstream was paused before");
        let mut fresh = lossless();
        let pauses = (0..50)
            .filter(|_| fresh.admit_held(0, 3, 1_000, || 0).unwrap().send_pause)
            .count();
        assert_eq!(pauses, 1);
        let mut resumed = false;
        for _ in 0..50 {
            resumed |= fresh.release(0, 3, 1_000);
        }
        assert!(resumed);
        assert_eq!(fresh.used(), 0);
    }

    /// After a PAUSE, nothing resumes while headroom holds bytes, and
    /// RESUME waits until the shared use sits `resume_offset` below the
    /// threshold: a larger offset needs more bytes gone.
    #[test]
    fn resume_waits_for_headroom_and_the_offset() {
        let released_until_resume = |resume_offset: u64| {
            let mut m = Mmu::new(
                MmuConfig {
                    resume_offset,
                    ..lossless_config()
                },
                vec![10_000; 2],
            );
            // Into headroom: 3 packets past the PAUSE.
            let mut n = 0;
            while !m.admit(0, 3, 1_000, || 0).unwrap().send_pause {
                n += 1;
            }
            for _ in 0..3 {
                assert!(!m.admit(0, 3, 1_000, || 0).unwrap().send_pause);
            }
            let mut k = 0;
            while !m.release(0, 3, 1_000) {
                k += 1;
                assert!(k < n + 4, "never resumed");
            }
            // The headroom's packets went first, with no RESUME.
            assert!(k >= 3, "resumed after {k}, with headroom in use");
            // The resumed record is below its threshold again.
            let shared = m.accounts[m.account(0, 3)].ingress - 1_000;
            assert!(shared + resume_offset <= m.threshold());
            // No second RESUME.
            assert!(!m.release(0, 3, 1_000));
            k
        };
        let (near, far) = (released_until_resume(0), released_until_resume(6_000));
        assert!(far > near, "offset 6000: {far} releases, offset 0: {near}");
    }

    /// Records are per (port, class): one paused leaves the others
    /// admitting (a first packet fits in their reserve), and they resume
    /// on their own releases only.
    #[test]
    fn a_pause_is_per_port_and_class() {
        let mut m = lossless();
        while !m.admit(0, 3, 1_000, || 0).unwrap().send_pause {}
        assert!(!m.admit(1, 3, 1_000, || 0).unwrap().send_pause);
        assert!(!m.admit(0, 1, 1_000, || 0).unwrap().send_pause);
        assert!(!m.release(1, 3, 1_000));
        assert!(!m.release(0, 1, 1_000));
    }

    /// Lossy: a packet to an empty egress queue is refused only when the
    /// whole buffer is in use, and `lossy_room` says what `admit` does.
    #[test]
    fn lossy_drops_when_the_buffer_is_full() {
        let cfg = MmuConfig {
            buffer: 10_000,
            pfc: false,
            alpha: 0.5,
            reserve: 0,
            resume_offset: 0,
            egress_alpha: 1.0,
        };
        let mut m = Mmu::new(cfg, vec![0; 2]);
        for k in 0..10 {
            assert!(m.lossy_room(1_000, 0));
            assert!(m.admit(k % 2, 3, 1_000, || 0).is_ok(), "packet {k}");
        }
        assert!(!m.lossy_room(1_000, 0));
        assert_eq!(m.admit(0, 3, 1_000, || 0).err(), Some(Refusal::BufferFull));
        for k in 0..10 {
            assert!(!m.release(k % 2, 3, 1_000), "lossy mode resumes nothing");
        }
        assert!(m.is_idle());
    }

    #[test]
    fn lossy_drops_at_egress_threshold() {
        let cfg = MmuConfig {
            buffer: 10_000,
            pfc: false,
            alpha: 0.5,
            reserve: 0,
            resume_offset: 0,
            egress_alpha: 1.0,
        };
        let mut m = Mmu::new(cfg, vec![0; 2]);
        // The caller keeps the egress queue's bytes.
        let mut ok = 0;
        while m.admit(0, 3, 1_000, || ok * 1_000).is_ok() {
            ok += 1;
        }
        // q + 1000 > buffer - q  ->  refused once q reaches 5000.
        assert_eq!(ok, 5);
    }
}
