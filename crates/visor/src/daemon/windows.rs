//! The memory windows this daemon opens to each link's daemon
//! (`datapath::window`, checked by the endpoint before the NIC): the
//! transport has no rkeys, so without them a linked daemon could READ or
//! WRITE any slot here, other applications' messages included. A slot
//! lent for WRITEs is writable by that link's daemon until its `Written`
//! is handled (and again once lent back); a slot whose message `ReadFrom`
//! offered is readable by it, for the message's length, until its
//! `ReadDone` (or until the slot is freed otherwise). A link's end
//! closes all of its host's windows. Packets outside them are dropped
//! and counted (`Drops::outside_window`), and the count logged, at most
//! once a second, when it grows.
//!
//! An `impl Daemon` block: uses the daemon's links (`super`) and the
//! endpoint's windows.

use std::time::{Duration, Instant};

use datapath::window::Access;

use super::Daemon;

impl Daemon {
    /// Opens `[addr, addr + len)` of this daemon's region to link `l`'s
    /// daemon.
    pub(super) fn open_window(&mut self, l: usize, addr: u64, len: u64, access: Access) {
        let Some(host) = self.links.get(l).map(|k| k.host) else {
            return;
        };
        if let Some(w) = self.ep.windows.as_mut() {
            w.open(host, addr, len, access);
        }
    }

    /// Closes link `l`'s window at `addr`.
    pub(super) fn close_window(&mut self, l: usize, addr: u64) {
        let Some(host) = self.links.get(l).map(|k| k.host) else {
            return;
        };
        if let Some(w) = self.ep.windows.as_mut() {
            w.close(host, addr);
        }
    }

    /// Closes every window of `host` (its link ended).
    pub(super) fn close_windows(&mut self, host: u32) {
        if let Some(w) = self.ep.windows.as_mut() {
            w.close_host(host);
        }
    }

    /// Logs the packets dropped outside windows, if more than when last
    /// logged and a second has passed since.
    pub(super) fn log_window_drops(&mut self) {
        let n = self.ep.drops.outside_window;
        let (logged, at) = self.window_drops_logged;
        if n > logged && at.elapsed() >= Duration::from_secs(1) {
            eprintln!(
                "rdmavisord: {} READ/WRITE packets outside the windows open to their sender dropped ({n} in all)",
                n - logged
            );
            self.window_drops_logged = (n, Instant::now());
        }
    }
}
