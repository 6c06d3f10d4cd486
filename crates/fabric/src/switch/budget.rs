//! What a switch's links can bring into it in one window: the budget the
//! calm test (`Mmu::calm`) compares with the buffer's margins. Touches
//! the switches' budgets only.

use crate::net::Network;

/// What a link that may bring anything in a window counts for: more than
/// any buffer, and small enough that a buffer's counts added to it do not
/// overflow.
const UNBOUNDED: u64 = u64::MAX / 4;

impl Network {
    /// What a link can bring into a switch in one window: its rate over the
    /// window, plus the frame whose start came before it; unbounded from a
    /// reordered direction. Recomputed when the window, a rate or a
    /// reordering changes, never lowered: frames sent at a higher rate
    /// may still be on the wire.
    pub(crate) fn window_bytes_changed(&mut self) {
        let max_frame = (self.cfg.nic.mtu + self.cfg.nic.header_bytes) as u64;
        for sw in &mut self.switches {
            let bytes = sw.ports.iter().map(|&p| {
                if self.reorder.contains_key(&(p ^ 1)) {
                    // Late packets bunch (`link/impair.rs`): no bound but
                    // the buffer, so the switch is never calm.
                    return UNBOUNDED;
                }
                let rate = self.ports[p as usize ^ 1].rate_bps() as u128;
                (rate * self.lookahead as u128).div_ceil(8 * engine::time::SEC as u128) as u64
                    + max_frame
            });
            sw.window_port_bytes = sw.window_port_bytes.max(bytes.clone().max().unwrap_or(0));
            let sum = bytes.fold(0, u64::saturating_add);
            sw.window_bytes = sw.window_bytes.max(sum);
        }
    }
}
