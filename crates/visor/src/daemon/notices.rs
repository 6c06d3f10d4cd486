//! The one-sided verbs' notices on the wire: the notices a loop turn
//! queued for a link leave at its end, packed into as few SENDs as the
//! slot size allows (`notice::encode_batch`), on the link's first QP with
//! the immediate `notice::IMM`; a batch that arrives is decoded out of
//! its receive slot, the slot re-posted at once, and each notice handled
//! (`one_sided.rs`). A batch that does not decode ends the link.
//!
//! A notice SEND takes a send slot like any SEND, and the daemon keeps
//! `NOTICE_RESERVE` free slots that only notices may take: a notice is
//! what frees slots (here, by `ReadDone`, and at the other daemon), so
//! applications' messages filling every slot must not hold it back.
//!
//! An `impl Daemon` block: uses the daemon's tables (`super`), `notice`
//! and the transport's work requests.

use transport::{Completion, Verb, WorkRequest};

use super::{Daemon, BASE, SEND_TAG};
use crate::notice::{self, Notice};

impl Daemon {
    /// Sends every link's queued notices, while slots are free (the rest
    /// wait for a later turn).
    pub(super) fn flush_notices(&mut self) {
        let mut ids = std::mem::take(&mut self.ids);
        self.links.keys_into(&mut ids);
        for &l in &ids {
            while let Some(link) = self.links.get_mut(l) {
                if link.notices.is_empty() {
                    break;
                }
                let Some(slot) = self.free_slots.pop() else {
                    self.ids = ids;
                    return;
                };
                let n = notice::encode_batch(&link.notices, self.cfg.slot_bytes, &mut self.batch);
                link.notices.drain(..n);
                let (qp, ip) = (link.qps[0], *link.peer.ip());
                let addr = BASE + u64::from(slot) * self.cfg.slot_bytes as u64;
                use transport::Memory;
                self.ep.mem.write(addr, &self.batch);
                let wr = WorkRequest {
                    wr_id: SEND_TAG | u64::from(slot),
                    verb: Verb::Send,
                    len: self.batch.len() as u64,
                    local_addr: addr,
                    imm: u64::from(notice::IMM),
                    ..WorkRequest::default()
                };
                let now = self.ep.now();
                if let Err(e) = self.ep.nic.post_send(now, qp, wr) {
                    self.free_slots.push(slot);
                    eprintln!(
                        "rdmavisord: link to {ip}: a notice could not be sent ({e}): link ended"
                    );
                    self.link_down(l);
                    break;
                }
                self.sending.insert(slot, (l, qp, None));
                self.ep.after_input();
            }
        }
        self.ids = ids;
    }

    /// A batch of notices received into slot `c.wr_id` on QP `c.qp`: if
    /// that is a link's shared QP, its notices are handled.
    pub(super) fn on_notices(&mut self, c: &Completion) {
        let slot = c.wr_id as u32;
        let addr = BASE + u64::from(slot) * self.cfg.slot_bytes as u64;
        let start = (addr - BASE) as usize;
        let len = (c.len as usize).min(self.cfg.slot_bytes);
        let mut got: Vec<Notice> = Vec::new();
        let decoded = notice::decode_batch(&self.ep.mem.bytes()[start..start + len], &mut got);
        let _ = self
            .ep
            .nic
            .post_recv_at(c.qp, u64::from(slot), addr, self.cfg.slot_bytes as u64);
        let on_link = self.links.iter().find(|(_, k)| k.qps.contains(&c.qp));
        let Some((l, link)) = on_link else {
            return;
        };
        if let Err(e) = decoded {
            eprintln!("rdmavisord: link to {}: {e}: link ended", link.peer.ip());
            return self.link_down(l);
        }
        for m in got {
            if self.links.get(l).is_none() {
                return;
            }
            self.on_notice(l, m);
        }
    }
}
