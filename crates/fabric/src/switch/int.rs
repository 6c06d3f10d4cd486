//! HPCC's in-band telemetry at a switch's egress port: a data packet
//! leaving gets a hop record of the port (the time, the bytes the port
//! sent before it, the bytes queued in all its classes behind it, its
//! rate), as HPCC ns-3's `SwitchNotifyDequeue` pushes it. The transmitter
//! calls it through the one test it makes for out-of-line work
//! (`Port::impaired`, `link/impair.rs`), so that a hop without telemetry
//! tests nothing more. Touches the packet's telemetry in the arena and
//! the markers' `stamps_int` (`mark.rs`); reads the port and its queues.

use crate::link::port::End;
use crate::net::arena::Hdr;
use crate::net::Network;
use engine::Time;
use transport::IntHop;

impl Network {
    /// Every switch port stamps data packets from now on.
    pub(crate) fn stamp_int_at_switches(&mut self) {
        for p in 0..self.ports.len() as u32 {
            if let End::Switch(..) = self.ports[p as usize].owner {
                self.markers[p as usize].stamps_int = true;
                self.update_impaired(p);
            }
        }
    }

    /// Stamps the packet of `hdr`, sent by port `p` at `now` (the port has
    /// counted it in `tx_bytes` already), with the port's record.
    pub(crate) fn stamp_int(&mut self, now: Time, p: u32, hdr: Hdr) {
        let port = &self.ports[p as usize];
        let queued = self.queues.queued_bytes(p);
        let sent_before = port.tx_bytes - hdr.wire() as u64;
        let multi = self.arena.int_multi();
        let hop = IntHop::new(now, sent_before, queued, port.rate_bps(), multi);
        self.arena.push_int(hdr.idx, hop);
    }
}
