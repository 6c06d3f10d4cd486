//! HPCC's in-band telemetry at a switch's egress port: a data packet
//! leaving gets a hop record of the port (the time, the bytes the port
//! sent before it, the bytes queued in all its classes behind it, its
//! rate), as HPCC ns-3's `SwitchNotifyDequeue` pushes it. Touches the
//! packet's telemetry in the arena; reads the port.

use crate::net::Network;
use engine::Time;
use transport::IntHop;

impl Network {
    /// Stamps packet `idx`, leaving by port `p`, with the port's record.
    /// Out of line: only HPCC runs call it.
    #[inline(never)]
    pub(crate) fn stamp_int(&mut self, now: Time, p: u32, idx: u32) {
        let port = &self.ports[p as usize];
        let queued: u64 = port.queues.iter().map(|q| q.bytes).sum();
        let multi = self.arena.int_multi();
        let hop = IntHop::new(now, port.tx_bytes, queued, port.rate_bps(), multi);
        self.arena.push_int(idx, hop);
    }
}
