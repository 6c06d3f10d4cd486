//! Link faults ([`Fault`]): a link (or one direction) going down or up,
//! changing rate, loss, reordering or ECN marking at a given time; added, and applied
//! between windows (the routes recomputed when the topology changed, by
//! the caller). Touches the link's ports (and an ECN fault its switch's
//! marker).

use crate::link::{Fault, FaultAction, Links};
use crate::net::core::Core;
use crate::net::event::Global;
use crate::switch::mark::Marker;
use crate::topo::topology::Topology;

impl Links {
    /// Adds a fault of the topology's link `fault.link` (of `links`),
    /// applied at `fault.at` (not before now).
    pub(crate) fn add_fault(&mut self, core: &mut Core, fault: Fault) -> Result<(), String> {
        let links = self.ports.len() / 2;
        if fault.link as usize >= links {
            return Err(format!(
                "fault on link {}: there are only {links} links",
                fault.link
            ));
        }
        self.faults.push(fault);
        let i = self.faults.len() as u32 - 1;
        core.globals.push(fault.at.max(core.now), Global::Fault(i));
        Ok(())
    }

    /// Applies fault `i` to its ports (an ECN fault to their switch's
    /// `markers`); returns the fault and whether a port went up or down
    /// (the caller recomputes routes, window budgets and kicks the ports
    /// that came up: `Network::apply_fault`).
    pub(crate) fn apply_fault(
        &mut self,
        i: u32,
        markers: &mut [Marker],
        seed: u64,
    ) -> (Fault, bool) {
        let f = self.faults[i as usize];
        let mut reroute = false;
        for p in f.ports() {
            match f.action {
                FaultAction::Down | FaultAction::Up => {
                    let up = f.action == FaultAction::Up;
                    reroute |= self.ports[p as usize].up != up;
                    self.ports[p as usize].up = up;
                }
                FaultAction::Rate(bps) => self.ports[p as usize].set_rate(bps),
                FaultAction::Ecn(e) => markers[p as usize].ecn = Some(e),
                FaultAction::Loss(l) => self.set_loss(p, l),
                FaultAction::Reorder { fraction, delay } => {
                    self.set_reorder(seed, p, fraction, delay)
                }
            }
        }
        (f, reroute)
    }
}

impl Fault {
    /// The ports (link directions) the fault acts on.
    pub(crate) fn ports(&self) -> impl Iterator<Item = u32> {
        let dirs: &[u32] = match self.a_to_b {
            None => &[0, 1],
            Some(true) => &[0],
            Some(false) => &[1],
        };
        let link = self.link;
        dirs.iter().map(move |d| 2 * link + d)
    }
}

impl Topology {
    /// The link index joining two named nodes, and whether it runs from
    /// `a` to `b`.
    pub fn find_link(&self, a: &str, b: &str) -> Option<(u32, bool)> {
        let na = self.node_by_name(a)?;
        let nb = self.node_by_name(b)?;
        self.links.iter().enumerate().find_map(|(i, l)| {
            if l.a == na && l.b == nb {
                Some((i as u32, true))
            } else if l.a == nb && l.b == na {
                Some((i as u32, false))
            } else {
                None
            }
        })
    }
}
