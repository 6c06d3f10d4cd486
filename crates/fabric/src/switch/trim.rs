//! Packet trimming (Ultra Ethernet's, after NDP's): at a switch that trims
//! (`FabricConfig::trimming`, lossy switches only), a data packet that
//! would take its egress queue's data bytes past the threshold, or that
//! the MMU would refuse, is cut to its headers and forwarded in the
//! trimmed class, ahead of data, instead of being dropped; its receiver
//! (UET, `transport::uet::TRIMMED`) answers it with a NACK and its sender
//! resends it without waiting for a timeout.
//!
//! In the loop's hooked instance only (`Network::hooks`): the default's
//! hop has no trace of it. The setting is `Trimming` (`mod.rs`, plain
//! data for the configuration); [`Trimmer`] is the state (the setting, a
//! counter per port, the bytes cut, which the conservation check adds to
//! what was delivered and dropped), with its decision
//! ([`Trimmer::wants`]) and its cut ([`Trimmer::trim`]); the pipeline's
//! step is `AtSwitch::trim_if_full` in `ingress.rs`, which reads the
//! egress queue and the MMU and flags the packet's arena slot. This file
//! touches only its own state.

use crate::net::arena::Hdr;
use crate::switch::Trimming;

/// Trimming's state for the whole fabric.
#[derive(Default)]
pub(crate) struct Trimmer {
    pub on: bool,
    threshold: u64,
    /// A trimmed packet's wire bytes (the NICs' data headers) and class.
    header_bytes: u32,
    class: u8,
    /// Packets trimmed, by the port they were queued for.
    pub per_port: Vec<u64>,
    /// Wire bytes cut off.
    pub cut_bytes: u64,
}

impl Trimmer {
    /// Trimming as `t` sets it (off if None) for `ports` ports; trimmed
    /// packets are `header_bytes` long and go in `class`.
    pub fn new(t: Option<Trimming>, ports: usize, header_bytes: u32, class: u8) -> Trimmer {
        match t {
            None => Trimmer::default(),
            Some(t) => Trimmer {
                on: true,
                threshold: t.threshold_bytes,
                header_bytes,
                class,
                per_port: vec![0; ports],
                cut_bytes: 0,
            },
        }
    }

    /// Whether a data packet of `hdr` for a queue holding `queued` bytes of
    /// its class, which the MMU would (`room`) or would not take, is to be
    /// trimmed. A trimmed packet is not trimmed again.
    pub fn wants(&self, hdr: &Hdr, queued: u64, room: bool) -> bool {
        hdr.class() != self.class as usize
            && hdr.wire() > self.header_bytes
            && (!room || queued + hdr.wire() as u64 > self.threshold)
    }

    /// Counts `hdr` trimmed for port `out`; its trimmed header.
    pub fn trim(&mut self, out: u32, hdr: Hdr) -> Hdr {
        self.per_port[out as usize] += 1;
        self.cut_bytes += (hdr.wire() - self.header_bytes) as u64;
        hdr.trimmed(self.header_bytes, self.class)
    }

    /// Packets trimmed in all.
    pub fn trimmed(&self) -> u64 {
        self.per_port.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Past the threshold, or refused by the MMU, a data packet is cut to
    /// its headers in the trimmed class; a trimmed one is not cut again.
    #[test]
    fn trims_past_the_threshold_or_when_refused() {
        let t = Some(Trimming {
            threshold_bytes: 10_000,
        });
        let mut tr = Trimmer::new(t, 4, 64, 0);
        let data = Hdr::of(3, 1064, true);
        assert!(!tr.wants(&data, 8_000, true));
        assert!(tr.wants(&data, 9_000, true));
        assert!(tr.wants(&data, 0, false));
        let cut = tr.trim(2, data);
        assert_eq!((cut.wire(), cut.class(), cut.is_data()), (64, 0, true));
        assert!(!tr.wants(&cut, 1 << 20, false));
        assert_eq!((tr.per_port[2], tr.trimmed(), tr.cut_bytes), (1, 1, 1000));
    }
}
