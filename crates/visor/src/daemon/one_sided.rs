//! One-sided verbs between daemons (FLAGS WRITE and READ, and the
//! daemon's own choice for `Flags::Auto`). The vQPN rides in the work
//! request's `wr_id` (RDMAvisor §2.3: a one-sided verb's completion is
//! the requester's, so it names the connection there), with the local
//! slot; the other daemon learns of the message by a notice (`notice`,
//! sent in batches on the link's QPs: `notices.rs`):
//! - WRITE: each daemon lends the other `LEND` of its slots when a link
//!   opens; a WRITE goes into one, and once it completes, `Written`
//!   names the connection and the buffer; the receiver hands the message
//!   on and lends the buffer back.
//! - READ: the sender keeps the message in its slot and says `ReadFrom`;
//!   the receiver READs it into a slot of its own, hands it on and says
//!   `ReadDone`, which frees the sender's slot.
//!
//! Messages of one connection sent with different verbs may arrive out
//! of order (a SEND overtakes a WRITE's notice).
//!
//! An `impl Daemon` block: uses the daemon's tables (`super`), `link`,
//! `notice` and the transport's work requests.

use std::time::Instant;

use datapath::window::Access;
use transport::{Completion, Verb, WorkRequest};

use super::{Daemon, BASE, NOTICE_RESERVE};
use crate::notice::Notice;
use crate::proto::Flags;

/// A one-sided work request's `wr_id`: this bit, the vQPN (bits 32-61)
/// and the local slot (bits 0-31).
pub(super) const ONE_SIDED_TAG: u64 = 1 << 62;
/// Slots each daemon lends the other per link for WRITEs.
pub(super) const LEND: usize = 64;
/// The most buffers a link may have borrowed (a hostile daemon's `Lend`
/// cannot grow the table past it).
const MAX_BORROWED: usize = 4 * LEND;

/// What a slot in flight for a one-sided verb is for.
pub(super) enum OneSided {
    /// Holds a message being written to `addr` there, for connection `to`.
    Write { to: u32, addr: u64, len: u32 },
    /// Holds a message the other daemon READs (freed by `ReadDone`).
    ReadOut,
    /// Receives a READ of the other daemon's buffer at `addr`.
    ReadIn { addr: u64 },
}

/// How `Flags::Auto` chooses: SEND below `threshold` bytes, WRITE from
/// it. The threshold halves (to `MIN`) while the daemon's CPU, measured
/// every `PERIOD`, is above 80%, and doubles back (to its configured
/// value) below 50%: under load the daemon moves more messages with
/// one-sided verbs, which take no receive buffer from a shared QP's
/// queue and no SEND path at the receiver (the paper's rule, our
/// thresholds; not tuned).
pub(super) struct Chooser {
    pub threshold: usize,
    base: usize,
    at: Instant,
    cpu: f64,
}

const PERIOD: std::time::Duration = std::time::Duration::from_millis(100);
const MIN: usize = 1024;

/// This process's user plus system CPU seconds.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

impl Chooser {
    pub fn new(base: usize) -> Chooser {
        Chooser {
            threshold: base,
            base,
            at: Instant::now(),
            cpu: cpu_seconds(),
        }
    }

    /// Called every turn: re-measures the load once per period.
    pub fn tick(&mut self) {
        let wall = self.at.elapsed();
        if wall < PERIOD {
            return;
        }
        let cpu = cpu_seconds();
        let load = (cpu - self.cpu) / wall.as_secs_f64();
        (self.at, self.cpu) = (Instant::now(), cpu);
        self.adjust(load);
    }

    /// Moves the threshold for a measured `load` (CPU seconds per second).
    fn adjust(&mut self, load: f64) {
        if load > 0.8 {
            self.threshold = (self.threshold / 2).max(MIN.min(self.base));
        } else if load < 0.5 {
            self.threshold = (self.threshold * 2).min(self.base);
        }
    }

    pub fn verb(&self, flags: Flags, len: usize) -> Verb {
        match flags {
            Flags::Send => Verb::Send,
            Flags::Write => Verb::Write,
            Flags::Read => Verb::Read,
            Flags::Auto if len < self.threshold => Verb::Send,
            Flags::Auto => Verb::Write,
        }
    }
}

impl Daemon {
    fn slot_addr(&self, slot: u32) -> u64 {
        BASE + u64::from(slot) * self.cfg.slot_bytes as u64
    }

    /// The slot at `addr` in this daemon's region, if it is one.
    fn slot_at(&self, addr: u64) -> Option<u32> {
        let off = addr.checked_sub(BASE)?;
        let sb = self.cfg.slot_bytes as u64;
        (off % sb == 0 && off / sb < self.cfg.slots as u64).then_some((off / sb) as u32)
    }

    /// Lends `LEND` free slots to link `l`'s daemon (a link's start).
    pub(super) fn lend(&mut self, l: usize) -> Result<(), String> {
        if self.free_slots.len() < LEND + 1 {
            return Err("no buffer slots left to lend".into());
        }
        let slots: Vec<u32> = self.free_slots.split_off(self.free_slots.len() - LEND);
        for &s in &slots {
            self.lend_slot(l, self.slot_addr(s));
        }
        let link = self.links.get_mut(l).ok_or("the link went away")?;
        link.lent.extend(slots);
        Ok(())
    }

    /// Lends the slot at `addr` to link `l`'s daemon: writable by it
    /// until its `Written`.
    fn lend_slot(&mut self, l: usize, addr: u64) {
        let len = self.cfg.slot_bytes as u64;
        self.open_window(l, addr, len, Access::Write);
        self.tell(l, Notice::Lend { addr });
    }

    /// Starts a one-sided message (`verb` WRITE or READ) of connection
    /// `v` (`to` at the other end) on `link`'s `qp`, already copied into
    /// `slot`; false if a WRITE has no lent buffer (the caller waits).
    pub(super) fn post_one_sided(
        &mut self,
        verb: Verb,
        (v, to, link, qp): (usize, u32, usize, transport::QpId),
        slot: u32,
        len: usize,
    ) -> Result<bool, String> {
        let local = self.slot_addr(slot);
        let name = self.name_of(v);
        let l = self.links.get_mut(link).ok_or("the link went away")?;
        if verb == Verb::Read {
            l.notices.push(Notice::ReadFrom {
                to,
                addr: local,
                len: len as u32,
            });
            self.one_sided.insert(slot, OneSided::ReadOut);
            self.open_window(link, local, len as u64, Access::Read);
            return Ok(true);
        }
        let Some(addr) = l.borrowed.pop() else {
            return Ok(false);
        };
        let wr = WorkRequest {
            wr_id: ONE_SIDED_TAG | u64::from(name) << 32 | u64::from(slot),
            verb: Verb::Write,
            len: len as u64,
            local_addr: local,
            remote_addr: addr,
            ..WorkRequest::default()
        };
        let now = self.ep.now();
        if let Err(e) = self.ep.nic.post_send(now, qp, wr) {
            if let Some(l) = self.links.get_mut(link) {
                l.borrowed.push(addr);
            }
            return Err(e.to_string());
        }
        self.one_sided.insert(
            slot,
            OneSided::Write {
                to,
                addr,
                len: len as u32,
            },
        );
        Ok(true)
    }

    /// A one-sided requester completion: a WRITE done (tell the other
    /// end) or a READ done (hand the message on, tell the other end).
    pub(super) fn one_sided_done(&mut self, c: &Completion) {
        let slot = c.wr_id as u32;
        let name = ((c.wr_id >> 32) & ((1 << 30) - 1)) as u32;
        let Some((l, _, conn)) = self.sending.remove(&slot) else {
            return;
        };
        let notice = match self.one_sided.remove(&slot) {
            Some(OneSided::Write { to, addr, len }) => Some(Notice::Written { to, addr, len }),
            Some(OneSided::ReadIn { addr }) => {
                let start = (self.slot_addr(slot) - BASE) as usize;
                let len = (c.len as usize).min(self.cfg.slot_bytes);
                self.deliver(name, l, start, len);
                Some(Notice::ReadDone { addr })
            }
            Some(OneSided::ReadOut) | None => None,
        };
        self.free_slots.push(slot);
        if let Some(m) = notice {
            self.tell(l, m);
        }
        // After its notice: a close it lets go must not overtake it.
        self.send_done(conn);
        self.resume_waiting();
    }

    /// Hands `len` bytes at `start` in the region to the connection
    /// `name` names if it is on link `l` (a message for a connection
    /// closed here is dropped).
    pub(super) fn deliver(&mut self, name: u32, l: usize, start: usize, len: usize) {
        let Some(v) = self.on_link(l, name) else {
            return;
        };
        let Some(conn) = self.conns.get(v) else {
            return;
        };
        let (si, fd) = (conn.session, conn.fd);
        if let Some(s) = self.sessions.get_mut(si) {
            let data = &self.ep.mem.bytes()[start..start + len];
            super::sessions::output(s, fd, data);
            self.note_backlog(si, v);
        }
    }

    /// Queues `m` for link `l` (sent at the end of the turn).
    pub(super) fn tell(&mut self, l: usize, m: Notice) {
        if let Some(link) = self.links.get_mut(l) {
            link.notices.push(m);
        }
    }

    /// A notice from link `l`'s daemon. A buffer that is not this
    /// daemon's to name, or a length over a slot, ends the link: the
    /// other daemon is broken or hostile.
    pub(super) fn on_notice(&mut self, l: usize, m: Notice) {
        let max = self.cfg.slot_bytes;
        match m {
            Notice::Lend { addr } => {
                let Some(link) = self.links.get_mut(l) else {
                    return;
                };
                if link.borrowed.len() >= MAX_BORROWED {
                    return self.link_down(l);
                }
                link.borrowed.push(addr);
                self.resume_waiting();
            }
            Notice::Written { to, addr, len } => {
                let slot = self.slot_at(addr);
                let lent =
                    slot.is_some_and(|s| self.links.get(l).is_some_and(|k| k.lent.contains(&s)));
                if !lent || len as usize > max {
                    return self.link_down(l);
                }
                // The loan ends with its notice; the buffer is lent
                // again once its message is handed on.
                self.close_window(l, addr);
                let start = (addr - BASE) as usize;
                self.deliver(to, l, start, len as usize);
                self.lend_slot(l, addr);
            }
            Notice::ReadFrom { to, addr, len } => {
                if len as usize > max {
                    return self.link_down(l);
                }
                self.read_backlog.push_back((l, to, addr, len));
                self.start_reads();
            }
            Notice::Close { vqpn } => self.closed_by_peer(l, vqpn),
            Notice::ReadDone { addr } => {
                let Some(slot) = self.slot_at(addr) else {
                    return self.link_down(l);
                };
                let ours = matches!(self.one_sided.get(&slot), Some(OneSided::ReadOut))
                    && self.sending.get(&slot).is_some_and(|&(k, _, _)| k == l);
                if ours {
                    self.close_window(l, addr);
                    self.one_sided.remove(&slot);
                    let conn = self.sending.remove(&slot).and_then(|s| s.2);
                    self.send_done(conn);
                    self.free_slots.push(slot);
                    self.resume_waiting();
                }
            }
        }
    }

    /// Posts the READs waiting for a free slot, oldest first. A READ for
    /// a client over its backlog stays waiting (`backlog.rs`): a READ is
    /// the receiver's pull, so holding it is this end's back-pressure,
    /// and the message waits in the sender's slot.
    pub(super) fn start_reads(&mut self) {
        let mut held = Vec::new();
        while self.free_slots.len() > NOTICE_RESERVE {
            let Some((l, to, addr, len)) = self.read_backlog.pop_front() else {
                break;
            };
            let conn = self.on_link(l, to).and_then(|v| self.conns.get(v));
            let Some(conn) = conn else {
                // Closed here: the sender's slot is freed all the same.
                self.tell(l, Notice::ReadDone { addr });
                continue;
            };
            let behind = self
                .sessions
                .get(conn.session)
                .is_some_and(|s| s.wbuf.len() > self.cfg.backlog_bytes);
            if behind {
                held.push((l, to, addr, len));
                continue;
            }
            let qp = match conn.own {
                Some(o) => self.own_qps.get(o).map(|q| q.qp),
                None => self.links.get(l).map(|k| k.qp_for(to)),
            };
            let Some(qp) = qp else { continue };
            let slot = self.free_slots.pop().expect("checked");
            let wr = WorkRequest {
                wr_id: ONE_SIDED_TAG | u64::from(to) << 32 | u64::from(slot),
                verb: Verb::Read,
                len: u64::from(len),
                local_addr: self.slot_addr(slot),
                remote_addr: addr,
                ..WorkRequest::default()
            };
            let now = self.ep.now();
            if self.ep.nic.post_send(now, qp, wr).is_err() {
                self.free_slots.push(slot);
                self.tell(l, Notice::ReadDone { addr });
                continue;
            }
            self.one_sided.insert(slot, OneSided::ReadIn { addr });
            self.sending.insert(slot, (l, qp, None));
            self.ep.after_input();
        }
        for r in held.into_iter().rev() {
            self.read_backlog.push_front(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_chooses_by_size_and_the_threshold_follows_the_load() {
        let mut c = Chooser::new(16384);
        assert_eq!(c.verb(Flags::Auto, 16383), Verb::Send);
        assert_eq!(c.verb(Flags::Auto, 16384), Verb::Write);
        assert_eq!(c.verb(Flags::Read, 10), Verb::Read);
        assert_eq!(c.verb(Flags::Send, 1 << 20), Verb::Send);
        for _ in 0..10 {
            c.adjust(0.95);
        }
        assert_eq!(c.threshold, MIN, "busy: down to the floor");
        assert_eq!(c.verb(Flags::Auto, 2048), Verb::Write);
        c.adjust(0.6);
        assert_eq!(c.threshold, MIN, "between the marks: kept");
        for _ in 0..10 {
            c.adjust(0.1);
        }
        assert_eq!(c.threshold, 16384, "idle: back to the configured one");
    }
}
