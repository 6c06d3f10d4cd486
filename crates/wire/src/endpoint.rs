//! One end of a frame (its MAC and IPv4 address), and the simulator's
//! addressing plan: host `h` is 10.0.0.0/8 + `h` with MAC 02:00:0a and the
//! same 24 bits. The one place that maps a simulated host to addresses
//! (the transport's frames and the simulator's pcap use it).
//!
//! Uses `crate::{error, ethernet, bth}`.

use std::net::Ipv4Addr;

use crate::bth::MASK24;
use crate::error::Error;
use crate::ethernet::Mac;

/// One end of a packet: its MAC and IPv4 address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub mac: Mac,
    pub ip: Ipv4Addr,
}

impl Endpoint {
    /// The simulator's host `host`: IPv4 10.0.0.0/8 + `host`, MAC
    /// 02:00:0a followed by the same 24 bits (locally administered).
    pub fn sim(host: u32) -> Result<Endpoint, Error> {
        if host > MASK24 {
            return Err(Error::Unrepresentable {
                field: "src/dst",
                reason: "a simulated host id must fit 24 bits (10.0.0.0/8)",
            });
        }
        let [_, a, b, c] = host.to_be_bytes();
        Ok(Endpoint {
            mac: [0x02, 0x00, 0x0a, a, b, c],
            ip: Ipv4Addr::new(10, a, b, c),
        })
    }

    /// The simulated host an address names (the inverse of [`Self::sim`]
    /// on the low 24 bits).
    pub fn sim_host(ip: Ipv4Addr) -> u32 {
        u32::from(ip) & MASK24
    }
}
