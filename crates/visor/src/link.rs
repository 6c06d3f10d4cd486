//! A link: what two daemons share. One TCP control connection (JSON
//! lines, `datapath::session::Control`) carries the link's setup and the
//! logical connections' life (connect, accepted, refused, close); the
//! data, and the one-sided verbs' notices (`notice`), go over the link's
//! QPs (`qps_per_peer` of them, shared by every logical connection
//! between the two hosts), each with its own receive slots posted.
//!
//! Uses `datapath::session::Control`, `notice` and the transport's API.

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
    /// `port`; with `qp`, over a QP of its own (the baselines) rather than
    /// the link's.
    Connect {
        from: u32,
        port: u16,
        #[serde(default)]
        qp: Option<QpOffer>,
    },
    /// Connection `from` is `to` at the other end; `qpn`: the QP made
    /// there for the offer.
    Accepted {
        from: u32,
        to: u32,
        #[serde(default)]
        qpn: Option<u32>,
    },
    Refused {
        from: u32,
        reason: String,
    },
    /// The client of the connection that is `vqpn` here has fallen
    /// behind at the sender of this message: stop sending on it until
    /// `Resume` (per-connection back-pressure, `daemon/backlog.rs`).
    Pause {
        vqpn: u32,
    },
    Resume {
        vqpn: u32,
    },
    /// The daemon that sent it refuses the link (a bad hello).
    Error {
        message: String,
    },
}

/// A QP the connecting daemon made for a connection (or a session's
/// connections) before it knew the other end's number: the other end
/// makes its own, connected to `qpn`, with these PSNs swapped, and
/// answers with its number in `Accepted` (reserve then connect).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QpOffer {
    pub qpn: u32,
    /// The PSN the offering QP sends from.
    pub sq_psn: u32,
    /// The PSN it expects the other end's QP to send from.
    pub rq_psn: u32,
}

impl QpOffer {
    /// A hostile offer (numbers over 24 bits) is refused.
    pub fn check(&self) -> Result<(), String> {
        if self.qpn >= 1 << 24 || self.sq_psn >= 1 << 24 || self.rq_psn >= 1 << 24 {
            return Err("a QP offer with a number over 24 bits".into());
        }
        Ok(())
    }
}

/// One link, as a daemon holds it.
pub struct Link {
    /// Non-blocking once the link is up; what it could not take yet
    /// waits in `out` (`daemon/link_out.rs`).
    pub ctl: datapath::session::Control,
    pub(crate) out: crate::fifo::Fifo,
    /// The other daemon's UDP address, and its host number in the
    /// endpoint.
    pub peer: SocketAddrV4,
    pub host: u32,
    /// The link's QPs here; logical connection `v` sends on
    /// `qps[v % len]`.
    pub qps: Vec<QpId>,
    /// Receive slots posted on the link's QPs (returned to the pool when
    /// the link goes).
    pub recv_slots: Vec<u32>,
    /// QPs made here for the other end's offers, by its QP number.
    pub accepted: std::collections::HashMap<u32, usize>,
    /// Buffers here lent to the other daemon for its WRITEs (slots).
    pub lent: std::collections::HashSet<u32>,
    /// Buffers the other daemon lent this one, free to WRITE into.
    pub borrowed: Vec<u64>,
    /// Notices for the other daemon, sent at the end of the loop's turn.
    pub notices: Vec<crate::notice::Notice>,
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
