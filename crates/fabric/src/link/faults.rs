//! Link faults ([`Fault`]): a link (or one direction) going down or up,
//! changing rate, loss, reordering or ECN marking at a given time; added, and applied
//! between windows, with the routes recomputed when the topology changed.
//! Touches the link's ports (and an ECN fault its switch's marker).

use crate::link::{Fault, FaultAction};
use crate::net::event::Global;
use crate::net::Network;
use engine::Time;

impl Network {
    pub fn add_fault(&mut self, fault: Fault) -> Result<(), String> {
        if fault.link as usize >= self.topo.links.len() {
            return Err(format!(
                "fault on link {}: there are only {} links",
                fault.link,
                self.topo.links.len()
            ));
        }
        self.links.faults.push(fault);
        let i = self.links.faults.len() as u32 - 1;
        self.core
            .globals
            .push(fault.at.max(self.core.now), Global::Fault(i));
        Ok(())
    }

    /// The link index joining two named nodes.
    pub fn find_link(&self, a: &str, b: &str) -> Option<(u32, bool)> {
        let na = self.topo.node_by_name(a)?;
        let nb = self.topo.node_by_name(b)?;
        self.topo.links.iter().enumerate().find_map(|(i, l)| {
            if l.a == na && l.b == nb {
                Some((i as u32, true))
            } else if l.a == nb && l.b == na {
                Some((i as u32, false))
            } else {
                None
            }
        })
    }

    pub(crate) fn apply_fault(&mut self, now: Time, i: u32) {
        let f = self.links.faults[i as usize];
        let dirs: &[u32] = match f.a_to_b {
            None => &[0, 1],
            Some(true) => &[0],
            Some(false) => &[1],
        };
        let mut reroute = false;
        for &d in dirs {
            let p = (2 * f.link + d) as usize;
            match f.action {
                FaultAction::Down | FaultAction::Up => {
                    let up = f.action == FaultAction::Up;
                    reroute |= self.links.ports[p].up != up;
                    self.links.ports[p].up = up;
                }
                FaultAction::Rate(bps) => self.links.ports[p].set_rate(bps),
                FaultAction::Ecn(e) => self.sw.markers[p].ecn = Some(e),
                FaultAction::Loss(l) => self.set_loss(p as u32, l),
                FaultAction::Reorder { fraction, delay } => {
                    self.set_reorder(p as u32, fraction, delay)
                }
            }
        }
        if reroute && self.cfg.reroute_on_failure {
            self.rebuild_routes();
        }
        if let FaultAction::Rate(_) = f.action {
            self.window_bytes_changed();
        }
        if matches!(f.action, FaultAction::Up) {
            for &d in dirs {
                self.kick(now, 2 * f.link + d);
            }
        }
    }
}
