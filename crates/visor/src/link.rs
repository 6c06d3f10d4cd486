//! A link: what two daemons share. One TCP control connection (JSON
//! lines, `datapath::session::Control`) carries the link's setup and the
//! logical connections' life (connect, accepted, refused, close); the
//! data goes over the link's QPs (`qps_per_peer` of them, shared by
//! every logical connection between the two hosts), each with its own
//! receive slots posted.
//!
//! Uses `datapath::session::Control` and the transport's API.

use std::net::SocketAddrV4;

use serde::{Deserialize, Serialize};
use transport::QpId;

/// The links' protocol version.
pub const VERSION: u32 = 1;

/// One message on a link's control connection.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "msg", rename_all = "lowercase")]
pub enum LinkMsg {
    /// The daemon that opens the link: its UDP port, its QPs and their
    /// first PSNs.
    Hello {
        version: u32,
        udp_port: u16,
        qpns: Vec<u32>,
        psns: Vec<u32>,
    },
    /// The other daemon: the same of its own.
    Ready {
        udp_port: u16,
        qpns: Vec<u32>,
        psns: Vec<u32>,
    },
    /// Open a logical connection from vQPN `from` to the listener on
    /// `port`.
    Connect {
        from: u32,
        port: u16,
    },
    /// Connection `from` is `to` at the other end.
    Accepted {
        from: u32,
        to: u32,
    },
    Refused {
        from: u32,
        reason: String,
    },
    /// The other end closed its side of the connection that is `vqpn`
    /// here.
    Close {
        vqpn: u32,
    },
    /// The daemon that sent it refuses the link (a bad hello).
    Error {
        message: String,
    },
}

/// One link, as a daemon holds it.
pub struct Link {
    pub ctl: datapath::session::Control,
    /// The other daemon's UDP address.
    pub peer: SocketAddrV4,
    /// The link's QPs here; logical connection `v` sends on
    /// `qps[v % len]`.
    pub qps: Vec<QpId>,
    /// Receive slots posted on the link's QPs (returned to the pool when
    /// the link goes).
    pub recv_slots: Vec<u32>,
}

impl Link {
    pub fn qp_for(&self, vqpn: u32) -> QpId {
        self.qps[vqpn as usize % self.qps.len()]
    }
}

/// Checks a hello or ready's QP numbers and PSNs: `n` of each, PSNs of 24
/// bits.
pub fn check_qps(qpns: &[u32], psns: &[u32], n: usize) -> Result<(), String> {
    if qpns.len() != n || psns.len() != n {
        return Err(format!(
            "{} QPs and {} PSNs, expected {n} of each",
            qpns.len(),
            psns.len()
        ));
    }
    if psns.iter().any(|&p| p >= 1 << 24) || qpns.iter().any(|&q| q >= 1 << 24) {
        return Err("a PSN or QP number over 24 bits".into());
    }
    Ok(())
}
