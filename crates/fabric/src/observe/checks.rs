//! Invariants a run can be checked against: conservation (every packet
//! injected, by a host or a switch's load balancer, was delivered,
//! consumed by a switch, dropped with a counted reason, or is still in a
//! queue, on a wire or held by a load balancer) and work conservation (no
//! switch port idles with something to send). Reads only.

use crate::link::frame::Frame;
use crate::link::port::End;
use crate::link::Links;
use crate::net::core::Core;
use crate::switch::Switches;
use crate::topo::topology::Topology;

/// What a run's conservation is checked over: the event core (counters,
/// arena, time), the links and the switches.
pub(crate) struct Books<'a> {
    pub core: &'a Core,
    pub links: &'a Links,
    pub sw: &'a Switches,
    pub topo: &'a Topology,
}

impl Books<'_> {
    /// Packets held in queues, on wires (delayed ones too) and by the load
    /// balancer (for conservation checks).
    pub(crate) fn in_flight(&self) -> (u64, u64) {
        let (mut packets, mut bytes) = self.sw.lb.held();
        for (p, port) in self.links.ports.iter().enumerate() {
            for hdr in self.sw.queues.queued(p as u32) {
                packets += 1;
                bytes += hdr.wire() as u64;
            }
            for &(_, f) in port.wire.iter() {
                if let Frame::Packet(hdr) = f {
                    packets += 1;
                    bytes += hdr.wire() as u64;
                }
            }
        }
        for hdr in self.links.late_packets() {
            packets += 1;
            bytes += hdr.wire() as u64;
        }
        (packets, bytes)
    }

    /// Checks that no switch port sits idle with something it may send: a
    /// port whose frame ended before the latest event handled has started
    /// its next one if it had one (between calls of `run_until`, every
    /// event before that instant has run).
    pub(crate) fn check_work_conserving(&self) -> Result<(), String> {
        for (p, port) in self.links.ports.iter().enumerate() {
            let switch = matches!(port.owner, End::Switch(..));
            if switch && port.busy_until < self.core.now && port.has_work() {
                return Err(format!(
                    "port {} idle since {} ps with a frame to send at {} ps",
                    self.links.port_name(self.topo, p as u32),
                    port.busy_until,
                    self.core.now
                ));
            }
        }
        Ok(())
    }

    /// Checks that every packet injected was delivered, dropped with a
    /// counted reason, or is still in the network (and every byte, but
    /// those trimming cut off).
    pub(crate) fn check_conservation(&self) -> Result<(), String> {
        let c = &self.core.counters;
        let (fp, fb) = self.in_flight();
        let [(mp, mb), (cp, cb)] = self.sw.lb.own_packets();
        let accounted_p = c.delivered_packets + c.total_dropped_packets() + fp + cp;
        // Trimming cuts bytes off packets on their way.
        let trimmed = self.sw.trimmer.cut_bytes;
        let accounted_b = c.delivered_bytes + c.total_dropped_bytes() + fb + cb + trimmed;
        if accounted_p != c.injected_packets + mp || accounted_b != c.injected_bytes + mb {
            return Err(format!(
                "conservation violated: injected {} packets / {} B (and {} / {} made by switches), delivered {} / {}, consumed by switches {} / {}, dropped {} / {}, in flight {} / {}",
                c.injected_packets, c.injected_bytes, mp, mb, c.delivered_packets, c.delivered_bytes,
                cp, cb, c.total_dropped_packets(), c.total_dropped_bytes(), fp, fb
            ));
        }
        if fp as usize != self.core.arena.live() {
            return Err(format!(
                "arena holds {} packets but {} are in queues or on wires",
                self.core.arena.live(),
                fp
            ));
        }
        Ok(())
    }
}
