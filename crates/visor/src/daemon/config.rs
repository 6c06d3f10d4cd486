//! The daemon's settings (`rdmavisord --help`) and their checks, made
//! before anything is bound.
//!
//! Uses `proto`, `ring` and `notice`'s bounds, and the daemon's slot
//! reserves (`super`).

use std::net::SocketAddrV4;
use std::path::PathBuf;

use datapath::impair::ImpairSpec;
use transport::{Engine, EngineKind, Verb};

use super::{LEND, NOTICE_RESERVE};
use crate::proto;

/// The daemon's settings (`rdmavisord --help`).
#[derive(Clone, Debug)]
pub struct Config {
    /// The Unix socket applications connect to.
    pub control: PathBuf,
    /// Its permission bits: who may open a session (every session sees
    /// only its own connections, whoever its user).
    pub socket_mode: u32,
    /// UDP (RoCEv2) and TCP (links) address; every daemon of a cluster
    /// uses the same port.
    pub bind: SocketAddrV4,
    /// The engine of its QPs, which must carry every verb the daemon
    /// posts ([`DAEMON_VERBS`]).
    pub transport: EngineKind,
    pub qps_per_peer: u32,
    pub mtu: u32,
    /// The largest message, and the size of every buffer slot.
    pub slot_bytes: usize,
    pub slots: usize,
    pub recv_per_qp: usize,
    /// Receive buffers of each baseline QP (naive, locked).
    pub own_recv_per_qp: usize,
    /// `Flags::Auto`: messages from this size go by WRITE (the threshold
    /// falls under load, `one_sided::Chooser`).
    pub one_sided_bytes: usize,
    pub rate_gbps: f64,
    pub rto_us: u64,
    /// Bytes of each of a session's two shared-memory rings (a power of
    /// two): how far a client's sends, and the daemon's output to it, run
    /// ahead of the other side.
    pub ring_bytes: usize,
    /// Bytes a daemon queues for a client beyond its ring before it asks
    /// the senders of the connections delivering to it to pause
    /// (`backlog.rs`); they resume once the client has read half of it.
    pub backlog_bytes: usize,
    /// Sessions open at once, in all and per user (the peer's uid, from
    /// SO_PEERCRED): a new one past either is refused with the reason.
    /// Each takes three file descriptors and up to 2 x `ring_bytes` of
    /// memory, so one user cannot take them all from the others.
    pub max_sessions: usize,
    pub max_sessions_per_user: usize,
    /// Impair the datagrams this daemon receives (loss, duplication,
    /// reordering; `datapath::impair`), to test it on a clean network.
    pub impair: Option<ImpairSpec>,
}

/// The verbs the daemon posts (READ and WRITE for one-sided messages,
/// SEND for the others and for notices).
pub const DAEMON_VERBS: [Verb; 3] = [Verb::Send, Verb::Write, Verb::Read];

/// Whether the daemon can run `engine`: it carries every verb it posts.
fn runs(engine: &Engine) -> bool {
    DAEMON_VERBS.iter().all(|&v| engine.carries(v))
}

impl Config {
    /// Every setting within its bounds, or the first that is not, named
    /// by its flag.
    pub fn check(&self) -> Result<(), String> {
        if !runs(&self.transport.engine()) {
            return Err(format!(
                "--transport {}: the daemon runs {} (it posts SEND, WRITE and READ)",
                self.transport,
                EngineKind::names_where(runs).join(" or ")
            ));
        }
        if self.slot_bytes == 0 || self.slot_bytes > proto::MAX_MESSAGE {
            return Err(format!(
                "--slot-bytes must be in 1..={}, got {}",
                proto::MAX_MESSAGE,
                self.slot_bytes
            ));
        }
        if self.qps_per_peer == 0 || self.recv_per_qp == 0 {
            return Err("--qps-per-peer and --recv-per-qp must be at least 1".into());
        }
        let per_link = self.qps_per_peer as usize * self.recv_per_qp + LEND + NOTICE_RESERVE;
        if self.slots < per_link + 1 || self.slots > u32::MAX as usize {
            return Err(format!(
                "--slots must be at least --qps-per-peer x --recv-per-qp + {LEND} (lent for WRITEs) + {NOTICE_RESERVE} (for notices) + 1 = {}",
                per_link + 1
            ));
        }
        if self.slot_bytes < crate::notice::MAX_LEN {
            return Err(format!(
                "--slot-bytes must be at least {} (a notice)",
                crate::notice::MAX_LEN
            ));
        }
        if !self.ring_bytes.is_power_of_two()
            || !(crate::ring::MIN_RING..=crate::ring::MAX_RING).contains(&self.ring_bytes)
        {
            return Err(format!(
                "--ring-bytes must be a power of two in {}..={}, got {}",
                crate::ring::MIN_RING,
                crate::ring::MAX_RING,
                self.ring_bytes
            ));
        }
        if self.socket_mode > 0o777 {
            return Err(format!(
                "--socket-mode must be permission bits (at most 777 octal), got {:o}",
                self.socket_mode
            ));
        }
        if self.max_sessions == 0 || self.max_sessions_per_user == 0 {
            return Err("--max-sessions and --max-sessions-per-user must be at least 1".into());
        }
        if self.own_recv_per_qp == 0 {
            return Err("--own-recv-per-qp must be at least 1".into());
        }
        Ok(())
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Good settings (the defaults), for the daemon's unit tests too.
    pub(in crate::daemon) fn good() -> Config {
        Config {
            control: "/tmp/x.sock".into(),
            socket_mode: 0o666,
            bind: "127.0.0.1:4800".parse().unwrap(),
            transport: EngineKind::from_name("irn").unwrap(),
            qps_per_peer: 1,
            mtu: 4096,
            slot_bytes: 65536,
            slots: 1024,
            recv_per_qp: 128,
            own_recv_per_qp: 32,
            one_sided_bytes: 16384,
            rate_gbps: 25.0,
            rto_us: 4000,
            ring_bytes: 1 << 20,
            backlog_bytes: 8 << 20,
            max_sessions: 1024,
            max_sessions_per_user: 256,
            impair: None,
        }
    }

    /// Spoils one setting.
    type Spoil = fn(&mut Config);

    #[test]
    fn each_bad_setting_is_named_by_its_flag() {
        assert_eq!(good().check(), Ok(()));
        let bad: [(Spoil, &str); 11] = [
            (
                |c| c.transport = EngineKind::from_name("mprdma").unwrap(),
                "--transport mprdma: the daemon runs roce or irn",
            ),
            (|c| c.slot_bytes = 0, "--slot-bytes"),
            (|c| c.slot_bytes = 8, "--slot-bytes"),
            (|c| c.qps_per_peer = 0, "--qps-per-peer"),
            (|c| c.slots = 100, "--slots"),
            (|c| c.ring_bytes = 3000, "--ring-bytes"),
            (|c| c.ring_bytes = 1 << 31, "--ring-bytes"),
            (|c| c.socket_mode = 0o1777, "--socket-mode"),
            (|c| c.own_recv_per_qp = 0, "--own-recv-per-qp"),
            (|c| c.max_sessions = 0, "--max-sessions"),
            (|c| c.max_sessions_per_user = 0, "--max-sessions"),
        ];
        for (spoil, flag) in bad {
            let mut c = good();
            spoil(&mut c);
            let e = c.check().unwrap_err();
            assert!(e.starts_with(flag), "{flag}: {e}");
        }
    }
}
