//! MP-RDMA's configuration ([`MpRdmaConfig`], [`SyncMode`],
//! [`SenderMode`]) and the
//! per-connection state it adds ([`state_fields`], [`state_bytes`]).
//! Plain data: it imports nothing from the crate, so that the API types
//! (`crate::api`) can hold it.

/// How a synchronise operation waits for the messages posted before it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SyncMode {
    /// The paper's optimistic scheme: sent `alpha * delta / (cwnd / RTT)`
    /// after the previous packet; the receiver drops and NACKs it if it
    /// still arrives before earlier messages are complete.
    #[default]
    Delayed,
    /// Sent only once every earlier message is acknowledged.
    StopAndWait,
}

/// Which sender a QP runs: the paper's, or ours with guards against the
/// receiver's bitmap overflowing (docs/mprdma.md, "Deviations").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SenderMode {
    /// Never sends at or beyond `snd_una + L` (what the receiver can
    /// track), caps the window at L, resends a hole Delta behind the
    /// highest selective ack before new data, and resends the hole early
    /// once 3 later PSNs were acked when no new data may go.
    #[default]
    Guarded,
    /// The paper's (§3.3-§3.4): new data whenever the window allows, so a
    /// packet beyond the receiver's bitmap is dropped and NACKed, which
    /// starts recovery; the hole is resent early (FUSO's scheme) only when
    /// there is no new data left to send. Fig. 14(b)'s loss without OOO
    /// control exists only with this sender.
    Paper,
}

/// MP-RDMA parameters of a QP.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MpRdmaConfig {
    /// Delta: the target out-of-order degree (packets); an ACK whose
    /// selective PSN is more than `delta` below the highest selectively
    /// acknowledged PSN prunes its path.
    pub delta: u32,
    /// L: slots of the receiver's tracking bitmap; a packet at or beyond
    /// `rcv_nxt + L` is dropped and NACKed.
    pub l_slots: u32,
    /// Initial window (packets), spread over as many random VPs.
    pub initial_window: u32,
    /// Number of virtual paths: VPs are source ports `sport + 0..num_vps`.
    pub num_vps: u16,
    /// Scaling factor of the synchronise delay.
    pub alpha: f64,
    /// Probability, once per RTT, of sending on a new random VP instead of
    /// the ACK's.
    pub probe_p: f64,
    pub sync_mode: SyncMode,
    pub sender: SenderMode,
}

impl Default for MpRdmaConfig {
    /// The paper's testbed values (Δ = 32, L = 64, α = 1, p = 1%); the
    /// initial window is ~1 BDP of its 40G, 12 µs testbed.
    fn default() -> Self {
        MpRdmaConfig {
            delta: 32,
            l_slots: 64,
            initial_window: 64,
            num_vps: 256,
            alpha: 1.0,
            probe_p: 0.01,
            sync_mode: SyncMode::Delayed,
            sender: SenderMode::Guarded,
        }
    }
}

impl MpRdmaConfig {
    pub fn validate(&self) -> Result<(), String> {
        if self.l_slots == 0 || self.l_slots > 1 << 20 {
            return Err(format!(
                "l_slots must be in 1..=1048576, got {}",
                self.l_slots
            ));
        }
        if self.delta == 0 || self.delta > self.l_slots {
            return Err(format!(
                "delta must be in 1..=l_slots ({}), got {}",
                self.l_slots, self.delta
            ));
        }
        if self.initial_window == 0 {
            return Err("initial_window must be at least 1 packet".into());
        }
        if self.num_vps == 0 {
            return Err("num_vps must be at least 1".into());
        }
        if !(self.alpha.is_finite() && self.alpha >= 0.0) {
            return Err(format!("alpha must be finite and >= 0, got {}", self.alpha));
        }
        if !(0.0..=1.0).contains(&self.probe_p) {
            return Err(format!("probe_p must be in [0, 1], got {}", self.probe_p));
        }
        Ok(())
    }
}

/// The per-connection state MP-RDMA adds to a RoCEv2 QP, as a hardware
/// implementation would store it (24-bit PSNs, 32-bit fixed-point window
/// and timestamps), field by field. The paper's Table 1 counts 66 bytes
/// for L = 64. `snd_una`/`snd_nxt`/`rcv_nxt` exist in RoCE already.
pub fn state_fields(cfg: &MpRdmaConfig) -> Vec<(&'static str, u32)> {
    // Bits of a slot index into the bitmap (at least 1).
    let idx_bits = 32 - cfg.l_slots.saturating_sub(1).leading_zeros().min(31);
    vec![
        ("cwnd (32-bit fixed point)", 32),
        ("inflate", 32),
        ("retransmissions in flight", 24),
        ("snd_ooh", 24),
        ("largest reordering seen", 24),
        ("snd_retx", 24),
        ("recovery point", 24),
        ("recovery flag", 1),
        ("early retransmission pointer", 24),
        (
            "recovery hole, its resend time, pending resend",
            24 + 32 + 24,
        ),
        ("synchronise retry (NACKed range, next, end PSN)", 4 * 24),
        ("srtt", 32),
        ("last probe time", 32),
        ("burst timer", 32),
        ("synchronise gate time", 32),
        ("pending clocked VPs (count 8 + current VP 16)", 24),
        // The sender's next SEND MSN and the receiver's MSN of its front
        // receive WQE (WRITEs need none: they carry their address).
        ("SEND message sequence numbers (sender, receiver)", 48),
        ("receiver bitmap (2 bits x L)", 2 * cfg.l_slots),
        ("bitmap head index", idx_bits),
        ("NACK state (last NACKed PSN, sync NACK key)", 24 + 48),
    ]
}

/// Total of [`state_fields`], rounded up to whole bytes.
pub fn state_bytes(cfg: &MpRdmaConfig) -> u32 {
    state_fields(cfg)
        .iter()
        .map(|(_, b)| b)
        .sum::<u32>()
        .div_ceil(8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_names_the_field() {
        assert!(MpRdmaConfig::default().validate().is_ok());
        let bad = MpRdmaConfig {
            delta: 65,
            ..MpRdmaConfig::default()
        };
        assert!(bad.validate().unwrap_err().contains("delta"));
        let bad = MpRdmaConfig {
            probe_p: 2.0,
            ..MpRdmaConfig::default()
        };
        assert!(bad.validate().unwrap_err().contains("probe_p"));
    }

    #[test]
    fn state_is_a_small_constant_independent_of_paths() {
        let c = MpRdmaConfig::default();
        let b = state_bytes(&c);
        assert!((60..=100).contains(&b), "{b} bytes");
        let many = MpRdmaConfig { num_vps: 4096, ..c };
        assert_eq!(state_bytes(&many), b, "no per-path state");
    }
}
