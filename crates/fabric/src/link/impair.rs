//! A link direction's impairments, out of the transmitter's hot path
//! (which tests `Port::impaired` once per packet and calls `impair` only
//! when it is set): random loss, and reordering (`FaultAction::Reorder`).
//!
//! A reordered direction delays a share of its packets. The wire stays a
//! FIFO with one pending arrival (its head), so a delayed packet leaves
//! it for the direction's late heap, with one `Ev::Late` event of its
//! own; at each such event the earliest late packet lands as an arrival
//! off the wire would (`Links::take_late`, then the receiving node). Late
//! packets bunch: a window may bring many more bytes than the link's rate
//! over it, so a switch fed by a reordered direction is never calm
//! (`switch/budget.rs`). Touches the direction's port and late heap, the
//! counters and the arena.

use crate::link::{Late, Links, Reorder};
use crate::net::arena::Hdr;
use crate::net::core::Core;
use crate::net::event::Ev;
use crate::observe::counters::DropReason;
use engine::{Rng, StreamKind, Time};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

impl Links {
    /// Sets port `p`'s random loss probability.
    pub(crate) fn set_loss(&mut self, p: u32, loss: f64) {
        self.ports[p as usize].loss = loss;
        self.update_impaired(p);
    }

    /// Reorders a `fraction` of port `p`'s packets, each delayed by up to
    /// `delay` (the switches' window budgets change with it: the caller
    /// recomputes them, `Switches::window_bytes_changed`).
    pub(crate) fn set_reorder(&mut self, seed: u64, p: u32, fraction: f64, delay: Time) {
        let r = self.reorder.entry(p).or_insert_with(|| Reorder {
            fraction,
            delay,
            rng: Rng::new(seed, StreamKind::Reorder, p as u64),
            late: BinaryHeap::new(),
            delayed: 0,
        });
        r.fraction = fraction;
        r.delay = delay.max(1);
        self.update_impaired(p);
    }

    fn update_impaired(&mut self, p: u32) {
        let reorders = self.reorder.get(&p).is_some_and(|r| r.fraction > 0.0);
        let port = &mut self.ports[p as usize];
        port.impaired = port.loss > 0.0 || reorders;
    }

    /// Loses or delays a packet sent on port `p` (done sending at `done`);
    /// true when it does not go on the wire.
    #[inline(never)]
    pub(crate) fn impair(&mut self, core: &mut Core, p: u32, hdr: Hdr, done: Time) -> bool {
        let port = &mut self.ports[p as usize];
        if port.loss > 0.0 && port.loss_rng.bernoulli(port.loss) {
            core.counters.drop(DropReason::LinkLoss, hdr.wire());
            core.arena.free(hdr.idx);
            return true;
        }
        let Some(r) = self.reorder.get_mut(&p) else {
            return false;
        };
        if !r.rng.bernoulli(r.fraction) {
            return false;
        }
        let at = done + port.delay + 1 + r.rng.below(r.delay);
        r.late.push(Reverse(Late {
            at,
            seq: r.delayed,
            hdr,
        }));
        r.delayed += 1;
        // At least a link delay away: the partner's event, after the window.
        core.q.schedule(at, Ev::Late(p));
        true
    }

    /// The late packet of port `p` due now (at an `Ev::Late`), with the
    /// port's state then.
    #[inline(never)]
    pub(crate) fn take_late(&mut self, now: Time, p: u32) -> Hdr {
        let r = self
            .reorder
            .get_mut(&p)
            .expect("a late event has its port's heap");
        let Reverse(late) = r.late.pop().expect("a late event has its packet");
        debug_assert_eq!(late.at, now);
        late.hdr
    }

    pub(crate) fn late_packets(&self) -> impl Iterator<Item = &Hdr> {
        self.reorder
            .values()
            .flat_map(|r| r.late.iter().map(|Reverse(l)| &l.hdr))
    }
}

#[cfg(test)]
mod tests {
    use crate::host::flows::Flow;
    use crate::link::{Fault, FaultAction};
    use crate::net::Network;
    use crate::topo::topology::Topology;
    use crate::FabricConfig;
    use engine::time::US;
    use engine::Time;

    const GBPS: u64 = 1_000_000_000;

    /// Two leaves of two hosts under one spine; h0 and h1 each write 300 KB
    /// to h2 and h3 across leaf0 -> spine0, which reorders `fraction` of
    /// its packets by up to 5 us if given (a switch fed by it), and
    /// spine0 -> leaf1 at 25 Gb/s, so that the spine pauses leaf0.
    fn fabric(fraction: Option<f64>) -> Network {
        let topo = Topology::leaf_spine(2, 1, 2, 100 * GBPS, 100 * GBPS, US);
        let mut net = Network::new(topo, FabricConfig::default()).unwrap();
        let (link, forward) = net.find_link("spine0", "leaf1").unwrap();
        net.add_fault(Fault {
            at: 0,
            link,
            a_to_b: Some(forward),
            action: FaultAction::Rate(25 * GBPS),
        })
        .unwrap();
        if let Some(fraction) = fraction {
            let (link, forward) = net.find_link("leaf0", "spine0").unwrap();
            net.add_fault(Fault {
                at: 0,
                link,
                a_to_b: Some(forward),
                action: FaultAction::Reorder {
                    fraction,
                    delay: 5 * US,
                },
            })
            .unwrap();
        }
        for (src, dst) in [(0, 2), (1, 3)] {
            net.add_flow(Flow {
                src,
                dst,
                bytes: 300_000,
                start: 0,
                verb: transport::Verb::Write,
                class: 0,
                engine: 0,
                messages: 1,
                sync_per_10k: 0,
            })
            .unwrap();
        }
        net
    }

    /// Runs to the end; what the receivers saw: each flow's finish and
    /// the out-of-order packets of the NICs of h2 and h3, the PAUSEs sent.
    fn run(mut net: Network) -> (Vec<Time>, u64, u64) {
        assert_eq!(net.run_until(Time::MAX, u64::MAX), crate::RunState::Done);
        net.check_conservation().unwrap();
        let finish = net.flows().iter().map(|f| f.finish.unwrap()).collect();
        let ooo = (2..4)
            .map(|h| net.nic(h).stats().ood.buckets[1..].iter().sum::<u64>())
            .sum();
        (finish, ooo, net.counters().pause_frames)
    }

    /// The reorder fault is what puts packets out of order: none without
    /// it, many with it, and more the larger the share delayed.
    #[test]
    fn a_reordered_link_delivers_out_of_order_and_a_plain_one_does_not() {
        let (_, plain, _) = run(fabric(None));
        let (_, off, _) = run(fabric(Some(0.0)));
        let (_, some, _) = run(fabric(Some(0.1)));
        let (_, all, _) = run(fabric(Some(1.0)));
        assert_eq!((plain, off), (0, 0));
        assert!(some > 10, "{some}");
        assert!(all > some, "{all} <= {some}");
    }

    /// Late packets bunch, so the spine they reach is never calm: the
    /// results are those of a run with every transmission end an event and
    /// of one whose windows are a picosecond (the global time order).
    #[test]
    fn reordering_results_do_not_depend_on_windows_or_deferred_ends() {
        let full = run(fabric(Some(0.5)));
        let mut every_end = fabric(Some(0.5));
        every_end.set_deferred_ends(false);
        let mut one_ps = fabric(Some(0.5));
        one_ps.set_window(1);
        assert!(full.1 > 0 && full.2 > 0, "{full:?}");
        assert_eq!(run(every_end), full);
        assert_eq!(run(one_ps), full);
    }
}
