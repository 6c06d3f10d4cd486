//! What a command asks of its endpoint's port ([`PortSettings`]: the
//! flags `--rate-gbps`, `--no-gso`, `--ecn-backlog`, `--impair`,
//! `--pcap`), and the options an endpoint is made with ([`PortOptions`]:
//! the same, checked, the capture file created).
//!
//! Uses `impair` and `pcap`.

use crate::impair::ImpairSpec;
use crate::pcap::Pcap;

/// How an endpoint's port behaves.
pub struct PortOptions {
    /// Pacing rate.
    pub rate_bps: u64,
    /// Equal-sized datagrams to the peer leave in one call (UDP GSO). A
    /// capture on the sending host then shows each such call as one
    /// frame, as it shows TCP's segmentation offload.
    pub gso: bool,
    pub impair: Option<ImpairSpec>,
    pub pcap: Option<Pcap>,
    /// ECN at the receive queue (0: off): of the datagrams one turn
    /// drains from the sockets, those beyond this many found the queue
    /// that long, and ECN-capable ones are marked CE before the NIC sees
    /// them, as a switch marks above its queue threshold. The socket's
    /// queue is where a receiver slower than its sender backs up; with
    /// DCQCN the marks slow the sender before the queue overflows.
    pub ecn_backlog: usize,
}

/// What a command asks of its endpoint's port (`--rate-gbps`,
/// `--no-gso`, `--ecn-backlog`, `--impair`, `--pcap`): the same for
/// either end.
#[derive(Clone, Debug)]
pub struct PortSettings {
    pub rate_gbps: f64,
    pub gso: bool,
    pub ecn_backlog: usize,
    pub impair: Option<ImpairSpec>,
    pub pcap: Option<std::path::PathBuf>,
}

impl PortSettings {
    /// The pacing rate in bits per second, checked.
    pub fn rate_bps(&self) -> Result<u64, String> {
        let g = self.rate_gbps;
        if !(g.is_finite() && g > 0.0 && g <= 10_000.0) {
            return Err(format!("--rate-gbps must be in (0, 10000], got {g}"));
        }
        Ok((g * 1e9) as u64)
    }

    /// The port's options: the rate checked, the pcap file created.
    pub fn options(&self) -> Result<PortOptions, String> {
        Ok(PortOptions {
            rate_bps: self.rate_bps()?,
            gso: self.gso,
            impair: self.impair,
            pcap: self.pcap.as_deref().map(Pcap::create).transpose()?,
            ecn_backlog: self.ecn_backlog,
        })
    }
}
