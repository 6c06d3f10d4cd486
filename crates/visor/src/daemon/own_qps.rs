//! The baselines' QPs (`Sharing::Connection`: one per connection, naive
//! RDMA; `Sharing::Session`: one per session and remote host, shared by
//! the session's connections, which the application's threads take in
//! turn under a lock). Unlike a link's QPs, such a QP is made when a
//! connection opens, before the other end's number is known (reserve,
//! then `Nic::connect_qp` once `Accepted` names it), has its own receive
//! slots, and is destroyed, its slots returned, when its last connection
//! closes.
//!
//! An `impl Daemon` block: uses the daemon's tables (`super`), `link`
//! and the transport's QP calls.

use transport::{InitialPsns, QpConfig, QpId};

use super::{err, Daemon, BASE, NOTICE_RESERVE};
use crate::link::QpOffer;

/// A placeholder peer number for a reserved QP: over any QP number a
/// daemon hands out before it is connected.
const UNCONNECTED: u32 = (1 << 24) - 1;

/// Where an own QP is found again by a later connection.
pub(super) enum OwnKey {
    /// Only its one connection's (naive).
    Conn,
    /// Session `s`'s QP to the link's host (connecting end).
    Session(usize),
    /// Made for the other end's QP of this number (accepting end).
    Offer(u32),
}

pub(super) struct OwnQp {
    pub qp: QpId,
    pub link: usize,
    /// The numbers this end offered (connecting end; a session's later
    /// connections repeat them).
    pub offer: Option<QpOffer>,
    pub connected: bool,
    pub recv_slots: Vec<u32>,
    pub users: u32,
    pub key: OwnKey,
}

impl Daemon {
    /// Makes a QP on link `l` to the other end's `peer_qp` (or, if None,
    /// reserved until `Accepted` names it) with `own_recv_per_qp` receives.
    pub(super) fn make_own_qp(
        &mut self,
        l: usize,
        peer_qp: Option<u32>,
        psns: InitialPsns,
        key: OwnKey,
    ) -> Result<usize, String> {
        let need = self.cfg.own_recv_per_qp;
        // The slots kept for notices stay free.
        if self.free_slots.len() < need + NOTICE_RESERVE + 1 {
            return Err(format!(
                "no buffer slots left for another QP ({} free, {need} needed)",
                self.free_slots.len()
            ));
        }
        let host = self.links.get(l).ok_or("the link went away")?.host;
        let cfg = QpConfig {
            peer_host: host,
            peer_qp: peer_qp.unwrap_or(UNCONNECTED),
            sport: self.local_addr().port(),
        };
        let qp = self.ep.nic.create_qp_with_psns(cfg, psns).map_err(err)?;
        let mut recv_slots = Vec::with_capacity(need);
        for _ in 0..need {
            let slot = self.free_slots.pop().expect("counted above");
            let addr = BASE + slot as u64 * self.cfg.slot_bytes as u64;
            recv_slots.push(slot);
            self.ep
                .nic
                .post_recv_at(qp, u64::from(slot), addr, self.cfg.slot_bytes as u64)
                .map_err(err)?;
        }
        let offer = peer_qp.is_none().then_some(QpOffer {
            qpn: qp,
            sq_psn: psns.sq_psn,
            rq_psn: psns.rq_psn,
        });
        Ok(self.own_qps.insert(OwnQp {
            qp,
            link: l,
            offer,
            connected: peer_qp.is_some(),
            recv_slots,
            users: 1,
            key,
        }))
    }

    /// The connecting end's QP for a new connection of session `si` on
    /// link `l`: the session's if it has one and `per_session`, else a
    /// new one.
    pub(super) fn own_qp_for_connect(
        &mut self,
        si: usize,
        l: usize,
        per_session: bool,
    ) -> Result<usize, String> {
        if per_session {
            let have = self.sessions.get(si).and_then(|s| s.own_qps.get(&l));
            if let Some(&o) = have {
                if let Some(q) = self.own_qps.get_mut(o) {
                    q.users += 1;
                    return Ok(o);
                }
            }
        }
        let seed = self.ep.nic.num_qps() as u64 ^ 0x0c0c;
        let p = datapath::session::psns(seed, 2);
        let psns = InitialPsns {
            sq_psn: p[0],
            rq_psn: p[1],
        };
        let key = if per_session {
            OwnKey::Session(si)
        } else {
            OwnKey::Conn
        };
        let o = self.make_own_qp(l, None, psns, key)?;
        if per_session {
            if let Some(s) = self.sessions.get_mut(si) {
                s.own_qps.insert(l, o);
            }
        }
        Ok(o)
    }

    /// The accepting end's QP for the other end's `offer` on link `l`: the
    /// one made for it before (a session's later connection), or a new
    /// one connected to it.
    pub(super) fn own_qp_for_offer(&mut self, l: usize, offer: QpOffer) -> Result<usize, String> {
        offer.check()?;
        let have = self.links.get(l).and_then(|k| k.accepted.get(&offer.qpn));
        if let Some(&o) = have {
            if let Some(q) = self.own_qps.get_mut(o) {
                q.users += 1;
                return Ok(o);
            }
        }
        let psns = InitialPsns {
            sq_psn: offer.rq_psn,
            rq_psn: offer.sq_psn,
        };
        let o = self.make_own_qp(l, Some(offer.qpn), psns, OwnKey::Offer(offer.qpn))?;
        if let Some(k) = self.links.get_mut(l) {
            k.accepted.insert(offer.qpn, o);
        }
        Ok(o)
    }

    /// `Accepted` named the other end's QP: a reserved QP is connected to
    /// it (a session's QP, connected already, keeps its peer).
    pub(super) fn connect_own_qp(&mut self, o: usize, peer_qp: u32) {
        let Some(q) = self.own_qps.get_mut(o) else {
            return;
        };
        if !q.connected && peer_qp < UNCONNECTED {
            q.connected = self.ep.nic.connect_qp(q.qp, peer_qp).is_ok();
        }
    }

    /// One connection of own QP `o` is gone; the last one destroys it and
    /// returns its slots (sends still in flight on it are dropped, as a
    /// socket's abortive close drops them).
    pub(super) fn release_own_qp(&mut self, o: usize) {
        let Some(q) = self.own_qps.get_mut(o) else {
            return;
        };
        q.users -= 1;
        if q.users > 0 {
            return;
        }
        let mut q = self.own_qps.remove(o).expect("just read");
        match q.key {
            OwnKey::Conn => {}
            OwnKey::Session(si) => {
                if let Some(s) = self.sessions.get_mut(si) {
                    s.own_qps.remove(&q.link);
                }
            }
            OwnKey::Offer(n) => {
                if let Some(k) = self.links.get_mut(q.link) {
                    k.accepted.remove(&n);
                }
            }
        }
        let _ = self.ep.nic.destroy_qp(q.qp);
        self.free_slots.append(&mut q.recv_slots);
        self.free_sending(|_, qp| qp == q.qp);
    }
}
