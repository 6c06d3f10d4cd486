//! What a switch's links can bring into it in one window: the budget the
//! calm test (`Mmu::calm`) compares with the buffer's margins, as a
//! method of the switch over what it reads (its inbound links' ports and
//! which of them reorder). Touches the switch's budget only.

use crate::link::port::Port;
use crate::switch::Switch;
use engine::Time;

/// What a link that may bring anything in a window counts for: more than
/// any buffer, and small enough that a buffer's counts added to it do not
/// overflow.
const UNBOUNDED: u64 = u64::MAX / 4;

impl Switch {
    /// What each of its links can bring into the switch in one window of
    /// `window` ps: its rate over the window, plus a frame of `max_frame`
    /// bytes whose start came before it; unbounded from a direction
    /// `reordered` says is. Recomputed when the window, a rate or a
    /// reordering changes, never lowered: frames sent at a higher rate
    /// may still be on the wire.
    pub(crate) fn window_budget(
        &mut self,
        ports: &[Port],
        reordered: impl Fn(u32) -> bool,
        window: Time,
        max_frame: u64,
    ) {
        let bytes = self.ports.iter().map(|&p| {
            if reordered(p ^ 1) {
                // Late packets bunch (`link/impair.rs`): no bound but
                // the buffer, so the switch is never calm.
                return UNBOUNDED;
            }
            let rate = ports[p as usize ^ 1].rate_bps() as u128;
            (rate * window as u128).div_ceil(8 * engine::time::SEC as u128) as u64 + max_frame
        });
        self.window_port_bytes = self.window_port_bytes.max(bytes.clone().max().unwrap_or(0));
        let sum = bytes.fold(0, u64::saturating_add);
        self.window_bytes = self.window_bytes.max(sum);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::FabricConfig;
    use crate::link::port::{End, PortEnds};
    use crate::switch::mmu::Mmu;

    /// A switch on links 0 and 1 (its ports 1 and 3), the far ends at
    /// 100 and 10 Gb/s.
    fn switch_and_ports() -> (Switch, Vec<Port>) {
        let rates = [
            100_000_000_000,
            100_000_000_000,
            10_000_000_000,
            10_000_000_000,
        ];
        let ports = rates
            .iter()
            .enumerate()
            .map(|(i, &r)| {
                let ends = PortEnds {
                    node: 0,
                    owner: End::Host(0),
                    peer: End::Host(0),
                };
                Port::new(ends, r, 1_000_000, 1, i as u32)
            })
            .collect();
        let sw = Switch {
            ports: vec![1, 3],
            mmu: Mmu::new(FabricConfig::default().mmu, vec![0, 0]),
            window_port_bytes: 0,
            window_bytes: 0,
        };
        (sw, ports)
    }

    /// A 1 us window brings 12 500 B at 100 Gb/s and 1 250 B at 10 Gb/s,
    /// a frame more each; a reordered direction is unbounded; a budget
    /// is never lowered.
    #[test]
    fn the_budget_is_rate_over_the_window_plus_a_frame() {
        let (mut sw, ports) = switch_and_ports();
        sw.window_budget(&ports, |_| false, 1_000_000, 1000);
        assert_eq!((sw.window_port_bytes, sw.window_bytes), (13_500, 15_750));
        sw.window_budget(&ports, |_| false, 1000, 1000);
        assert_eq!((sw.window_port_bytes, sw.window_bytes), (13_500, 15_750));
        sw.window_budget(&ports, |p| p == 2, 1_000_000, 1000);
        assert_eq!(sw.window_port_bytes, UNBOUNDED);
        assert_eq!(sw.window_bytes, UNBOUNDED + 13_500);
    }
}
