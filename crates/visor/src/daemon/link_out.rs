//! A link's control output, never blocking the loop: a message is
//! appended to the link's outbox (a JSON line) and written as far as the
//! TCP connection takes it; the rest waits for a turn that finds the
//! connection writable (the link's token is watched for both). A remote
//! daemon that stops reading would otherwise stall this daemon's loop
//! once the TCP buffers fill; here its outbox grows instead, and past
//! `MAX_LINK_OUTBOX` the link is ended with the reason logged.
//!
//! The handshake's hello and ready are written the same way, before
//! the link exists (`pending.rs`).
//!
//! An `impl Daemon` block: uses the daemon's links (`super`) and `link`.

use std::io::Write;

use super::Daemon;
use crate::link::LinkMsg;

/// Control bytes a link's daemon may leave unread (beyond what the
/// kernel's buffers hold) before the link is ended: tens of thousands of
/// messages, where a burst of a thousand connections opening is 100 KB.
pub(super) const MAX_LINK_OUTBOX: usize = 4 << 20;

impl Daemon {
    /// Sends `m` on link `l`'s control connection; an error (the link
    /// was already gone, or is ended now) says why.
    pub(super) fn link_send(&mut self, l: usize, m: &LinkMsg) -> Result<(), String> {
        let link = self.links.get_mut(l).ok_or("the link went away")?;
        serde_json::to_writer(link.out.back(), m).map_err(|e| e.to_string())?;
        link.out.back().push(b'\n');
        self.flush_link(l);
        match self.links.get(l) {
            Some(_) => Ok(()),
            None => Err("the link was ended".into()),
        }
    }

    /// Writes what waits in link `l`'s outbox while the connection takes
    /// it; ends the link on a write error or an outbox over the bound.
    pub(super) fn flush_link(&mut self, l: usize) {
        let Some(link) = self.links.get_mut(l) else {
            return;
        };
        let mut failed = None;
        while !link.out.is_empty() {
            match (&mut link.ctl.stream()).write(link.out.bytes()) {
                Ok(0) => failed = Some("control connection closed".to_string()),
                Ok(n) => {
                    link.out.take(n);
                    continue;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => failed = Some(format!("control connection: {e}")),
            }
            break;
        }
        if failed.is_none() && link.out.len() > MAX_LINK_OUTBOX {
            failed = Some(format!(
                "the remote daemon left {} bytes of control messages unread (at most {MAX_LINK_OUTBOX})",
                link.out.len()
            ));
        }
        if let Some(why) = failed {
            eprintln!("rdmavisord: link to {}: {why}: link ended", link.peer.ip());
            self.link_down(l);
        }
    }
}
