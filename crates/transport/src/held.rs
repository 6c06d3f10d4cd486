//! Control packets a NIC holds before sending them ([`Held`]): CNPs that
//! wait out the notification point's generation delay
//! (`NicConfig::cnp_delay`), and ACKs coalesced by time
//! (`NicConfig::ack_interval`). Both are what a deployed NIC does and
//! HPCC's ns-3 does not (it sends every ACK, with its CNP flag, at once);
//! with neither set nothing is held and the NIC tests one flag per input.
//!
//! The NIC hands this file the control packets an input made for one QP
//! (the tail of its control FIFO); those held leave the FIFO and come
//! back to it when due, through the NIC's timer channel (an entry per
//! held packet, on the QP that made it; `Nic::handle_timeout` releases
//! what is due before the QP's own timers, which find nothing due).
//!
//! ACK coalescing: the first ACK a QP makes is held `ack_interval`; each
//! later one replaces it (ACKs are cumulative; an ECN echo is kept), and
//! the one held leaves when the interval ends. An ACK of a message's last
//! packet leaves at once, as does a NACK, either taking the held ACK's
//! place (and its echo).
//!
//! Uses `crate::packet` and `crate::timers` only.

use std::collections::VecDeque;

use crate::packet::{Packet, PacketKind};
use crate::timers::Timers;
use engine::Time;

/// The held control packets of one NIC, by release time.
#[derive(Debug, Default)]
pub(crate) struct Held {
    /// Whether anything may be held: an ACK interval or a CNP delay is
    /// set (the one test each input makes).
    pub active: bool,
    /// How long an ACK is held (0: not held).
    ack_interval: Time,
    /// How long a CNP waits (0: not held).
    cnp_delay: Time,
    /// (release time, packet), earliest first.
    queue: VecDeque<(Time, Packet)>,
}

impl Held {
    pub fn new(ack_interval: Time, cnp_delay: Time) -> Held {
        Held {
            active: ack_interval > 0 || cnp_delay > 0,
            ack_interval,
            cnp_delay,
            queue: VecDeque::new(),
        }
    }

    /// The control packets in `ctrl` from index `from` on, made at `now`
    /// by one input of one QP: holds those that wait (arming a timer for
    /// each), leaves the others in order. `acks`: the QP's ACKs may be
    /// coalesced (its engine answers packets one by one: go-back-N and
    /// IRN); `last`: the input ended a message. Out of line: the NIC's
    /// receive path, which calls it only when something may be held,
    /// stays as it was without it.
    #[cold]
    #[inline(never)]
    pub fn take(
        &mut self,
        ctrl: &mut VecDeque<Packet>,
        from: usize,
        now: Time,
        (acks, last): (bool, bool),
        timers: &mut Timers,
    ) {
        let cnp_delay = self.cnp_delay;
        let coalesce = acks && self.ack_interval > 0;
        let mut i = from;
        while i < ctrl.len() {
            let p = ctrl[i];
            let wait = match p.kind {
                PacketKind::Cnp if cnp_delay > 0 => Some(cnp_delay),
                PacketKind::Ack if coalesce && !last => {
                    if let Some(old) = self.held_ack(p.src_qp) {
                        // The interval runs from the first ACK held.
                        old.ecn_echo |= p.ecn_echo;
                        let echo = old.ecn_echo;
                        *old = Packet {
                            ecn_echo: echo,
                            ..p
                        };
                        ctrl.remove(i);
                        continue;
                    }
                    Some(self.ack_interval)
                }
                PacketKind::Ack | PacketKind::Nack if coalesce => {
                    if let Some(old) = self.remove_ack(p.src_qp) {
                        ctrl[i].ecn_echo |= old.ecn_echo;
                    }
                    None
                }
                _ => None,
            };
            match wait {
                Some(w) => {
                    ctrl.remove(i);
                    let at = now.saturating_add(w);
                    self.insert(at, p);
                    timers.arm(at, p.src_qp);
                }
                None => i += 1,
            }
        }
    }

    /// Moves every packet due at `now` to the back of `ctrl`, in release
    /// order.
    pub fn release(&mut self, now: Time, ctrl: &mut VecDeque<Packet>) {
        while let Some(&(t, p)) = self.queue.front() {
            if t > now {
                break;
            }
            self.queue.pop_front();
            ctrl.push_back(p);
        }
    }

    /// Drops the packets of `qp` (it was destroyed).
    pub fn forget(&mut self, qp: u32) {
        self.queue.retain(|(_, p)| p.src_qp != qp);
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// After the last entry due no later (equal release times keep the
    /// order they were held in).
    fn insert(&mut self, at: Time, p: Packet) {
        let pos = self
            .queue
            .iter()
            .rposition(|&(t, _)| t <= at)
            .map_or(0, |k| k + 1);
        self.queue.insert(pos, (at, p));
    }

    fn held_ack(&mut self, qp: u32) -> Option<&mut Packet> {
        self.queue
            .iter_mut()
            .find(|(_, p)| p.kind == PacketKind::Ack && p.src_qp == qp)
            .map(|(_, p)| p)
    }

    fn remove_ack(&mut self, qp: u32) -> Option<Packet> {
        let k = self
            .queue
            .iter()
            .position(|(_, p)| p.kind == PacketKind::Ack && p.src_qp == qp)?;
        self.queue.remove(k).map(|(_, p)| p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctrl(kind: PacketKind, qp: u32, psn: u32, echo: bool) -> Packet {
        Packet {
            kind,
            src_qp: qp,
            psn,
            ecn_echo: echo,
            ..Packet::default()
        }
    }

    /// ACKs of one QP within the interval leave as one, the latest PSN
    /// with the echo of any, when the interval from the first ends; a
    /// message's last ACK and a NACK leave at once in its place.
    #[test]
    fn acks_coalesce_by_time() {
        let mut h = Held::new(10, 0);
        let mut t = Timers::default();
        let mut q = VecDeque::new();
        q.push_back(ctrl(PacketKind::Ack, 0, 1, true));
        h.take(&mut q, 0, 100, (true, false), &mut t);
        q.push_back(ctrl(PacketKind::Ack, 0, 2, false));
        q.push_back(ctrl(PacketKind::Ack, 1, 7, false));
        h.take(&mut q, 0, 105, (true, false), &mut t);
        assert!(q.is_empty());
        assert_eq!(t.next(), Some(110));
        h.release(109, &mut q);
        assert!(q.is_empty());
        h.release(110, &mut q);
        assert_eq!(q.len(), 1);
        assert_eq!((q[0].psn, q[0].src_qp, q[0].ecn_echo), (2, 0, true));
        h.release(115, &mut q);
        assert_eq!((q[1].psn, q[1].src_qp), (7, 1));
        q.clear();
        // A NACK leaves at once and takes the held ACK's echo.
        q.push_back(ctrl(PacketKind::Ack, 0, 3, true));
        h.take(&mut q, 0, 200, (true, false), &mut t);
        q.push_back(ctrl(PacketKind::Nack, 0, 3, false));
        h.take(&mut q, 0, 201, (true, false), &mut t);
        assert_eq!(q.len(), 1);
        assert!(q[0].ecn_echo && q[0].kind == PacketKind::Nack);
        assert!(h.is_empty());
        // A message's last ACK too; and an engine that does not coalesce
        // keeps every ACK.
        q.clear();
        q.push_back(ctrl(PacketKind::Ack, 0, 4, false));
        h.take(&mut q, 0, 300, (true, true), &mut t);
        q.push_back(ctrl(PacketKind::Ack, 0, 5, false));
        h.take(&mut q, 1, 300, (false, false), &mut t);
        assert_eq!(q.len(), 2);
    }

    /// A CNP leaves `cnp_delay` after it was made, in the order made;
    /// other packets are not held.
    #[test]
    fn cnps_wait_their_delay() {
        let mut h = Held::new(0, 30);
        let mut t = Timers::default();
        let mut q = VecDeque::new();
        q.push_back(ctrl(PacketKind::Ack, 0, 1, false));
        q.push_back(ctrl(PacketKind::Cnp, 0, 1, false));
        h.take(&mut q, 0, 100, (true, false), &mut t);
        assert_eq!(q.len(), 1);
        q.push_back(ctrl(PacketKind::Cnp, 1, 9, false));
        h.take(&mut q, 1, 110, (true, false), &mut t);
        assert_eq!(t.next(), Some(130));
        h.release(129, &mut q);
        assert_eq!(q.len(), 1);
        h.release(130, &mut q);
        assert_eq!((q[1].kind, q[1].src_qp), (PacketKind::Cnp, 0));
        h.release(140, &mut q);
        assert_eq!((q[2].kind, q[2].src_qp), (PacketKind::Cnp, 1));
        assert!(h.is_empty());
    }
}
