//! HPCC's in-band telemetry at a switch's egress port: a data packet
//! leaving gets a hop record of the port (the time, the bytes the port
//! sent before it, the bytes queued in all its classes behind it, its
//! rate), as HPCC ns-3's `SwitchNotifyDequeue` pushes it. The egress
//! pipeline calls it when the port's marker stamps (`Marker::stamps_int`,
//! `mark.rs`, read beside the ECN setting it marks with), out of line. A function of what it reads; touches
//! the packet's telemetry in the arena.

use crate::link::port::Port;
use crate::net::arena::{Arena, Hdr};
use engine::Time;
use transport::IntHop;

/// Stamps the packet of `hdr` in `arena`, about to be sent at `now` by
/// `port` (which has not counted it in `tx_bytes` yet) with `queued` bytes
/// behind it, with the port's record.
pub(crate) fn stamp(arena: &mut Arena, port: &Port, queued: u64, now: Time, hdr: Hdr) {
    let sent_before = port.tx_bytes;
    let multi = arena.int_multi();
    let hop = IntHop::new(now, sent_before, queued, port.rate_bps(), multi);
    arena.push_int(hdr.idx, hop);
}
