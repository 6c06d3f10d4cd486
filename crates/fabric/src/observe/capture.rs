//! What the pcap trace captures, and where: each packet a host's NIC
//! sends (as it starts onto the wire, at the sender's port) and each
//! packet delivered to a host (as it lands, at the receiver's port), as
//! RoCEv2 frames (`transport::frame`), and the PFC frames a host's port
//! receives (switches send them; hosts send none). A packet lost on the
//! way shows at its sender only. Only the packets of the chosen flows (by
//! the QP that sends or receives them), and the PFC frames at those flows'
//! hosts, up to a maximum count (the records and the file: `pcap.rs`).
//!
//! The hooks (`Observe::capturing`, one predictable branch where a host
//! sends or receives, in `host/driver.rs` and `net/run.rs`) call the
//! out-of-line functions here. Touches only the capture's state; reads the
//! hosts' QP-to-flow maps and the arena.

use crate::host::Hosts;
use crate::net::arena::Hdr;
use crate::net::at::AtHost;
use crate::observe::pcap::{Capture, PcapSpec, FRAME_OVERHEAD, MAX_BYTES, MAX_PACKETS};
use crate::observe::Observe;
use engine::Time;
use transport::Packet;
use wire::pfc::PauseFrame;

/// A PAUSE's time, in quanta of 512 bit times: the largest (802.1Qbb), as
/// a switch that sends RESUME (time 0) when its queue drains.
const PAUSE_QUANTA: u16 = 0xffff;

impl Observe {
    /// Captures `spec`'s packets from now on (call after the flows are
    /// added). Fails with the field at fault (`flows`, `max_packets`)
    /// and why: an unknown flow id, no flow, a count out of range.
    pub(crate) fn set_pcap(
        &mut self,
        spec: PcapSpec,
        all: &Hosts,
    ) -> Result<(), (&'static str, String)> {
        if spec.max_packets == 0 || spec.max_packets > MAX_PACKETS {
            return Err((
                "max_packets",
                format!("must be in 1..={MAX_PACKETS}, got {}", spec.max_packets),
            ));
        }
        // The records stay in memory until the run ends: refused before
        // anything is kept when they could outgrow MAX_BYTES.
        let mtu = all.nodes.iter().map(|h| h.nic.config().mtu).max();
        let frame = u64::from(mtu.unwrap_or(0)) + FRAME_OVERHEAD;
        if spec.max_packets.saturating_mul(frame) > MAX_BYTES {
            return Err((
                "max_packets",
                format!(
                    "{} records of up to {frame} bytes (the MTU {} and headers) could hold \
                     {:.2} GB; at most {MAX_BYTES} bytes are kept: at most {} records at this MTU",
                    spec.max_packets,
                    mtu.unwrap_or(0),
                    (spec.max_packets * frame) as f64 / 1e9,
                    MAX_BYTES / frame
                ),
            ));
        }
        let n = all.flows.records.len();
        let mut flows = Vec::new();
        let mut hosts = vec![spec.flows.is_none(); all.nodes.len()];
        if let Some(ids) = &spec.flows {
            if ids.is_empty() {
                return Err((
                    "flows",
                    "is empty: name at least one flow, or leave it out for all".into(),
                ));
            }
            flows = vec![false; n];
            for &id in ids {
                let Some(f) = all.flows.records.get(id as usize) else {
                    return Err(("flows", format!("flow {id} does not exist ({n} flows)")));
                };
                flows[id as usize] = true;
                hosts[f.requester() as usize] = true;
                hosts[f.responder() as usize] = true;
            }
        }
        self.capture = Some(Box::new(Capture::new(flows, hosts, spec.max_packets)));
        self.capturing = true;
        Ok(())
    }

    /// Host `h` sends the packet `hdr` at `now`.
    /// The trace as pcap bytes, when asked for ([`Network::set_pcap`]),
    /// with the number of packets that could not be encoded.
    pub(crate) fn pcap(&self) -> Option<(Vec<u8>, u64)> {
        self.capture.as_deref().map(|c| (c.file(), c.unencodable))
    }
}

impl AtHost {
    #[inline(never)]
    #[cold]
    pub(crate) fn capture_sent(&mut self, now: Time, h: u32, hdr: Hdr) {
        let pkt = self.core().arena.get(&hdr);
        self.capture_packet(now, h, &pkt, true);
    }

    /// Host `h` receives `pkt` at `now`.
    #[inline(never)]
    #[cold]
    pub(crate) fn capture_received(&mut self, now: Time, h: u32, pkt: &Packet) {
        self.capture_packet(now, h, pkt, false);
    }

    /// Host `h` sends (`tx`) or receives `pkt` at `now`.
    fn capture_packet(&mut self, now: Time, h: u32, pkt: &Packet, tx: bool) {
        let flow = self
            .hosts()
            .flow_of_qp(h, if tx { pkt.src_qp } else { pkt.dst_qp });
        let Some(c) = self.observe().capture.as_deref_mut() else {
            return;
        };
        if !c.flows.is_empty() && !flow.is_some_and(|f| c.flows[f as usize]) {
            return;
        }
        let n = pkt.payload as usize;
        if c.zeros.len() < n {
            c.zeros.resize(n, 0);
        }
        c.frame.clear();
        let encoded = transport::frame::encode_sim(pkt, &c.zeros[..n], &mut c.frame);
        let key = self.capture_key(h);
        let Some(c) = self.observe().capture.as_deref_mut() else {
            return;
        };
        match encoded {
            Ok(()) => self.observe().capturing = c.record(now, key),
            Err(_) => {
                c.unencodable += 1;
                if self.core().shard.is_some() {
                    let c = self.observe().capture.as_deref_mut().expect("capturing");
                    c.unencodable_at.push(key);
                }
            }
        }
    }

    /// Host `h`'s port receives a PFC PAUSE or RESUME of `class` from the
    /// switch port `from` at `now`.
    #[inline(never)]
    #[cold]
    pub(crate) fn capture_pfc(&mut self, now: Time, h: u32, from: u32, class: u8, pause: bool) {
        let Some(c) = self.observe().capture.as_deref_mut() else {
            return;
        };
        if !c.hosts[h as usize] {
            return;
        }
        // A switch port's MAC: locally administered, 02:00:0b and the
        // port's 24 bits (hosts are 02:00:0a, `wire::Endpoint::sim`).
        let [_, a, b, d] = from.to_be_bytes();
        let mut quanta = [0; 8];
        quanta[usize::from(class & 7)] = if pause { PAUSE_QUANTA } else { 0 };
        c.frame.clear();
        PauseFrame::new([0x02, 0x00, 0x0b, a, b, d], 1 << (class & 7), quanta).emit(&mut c.frame);
        let key = self.capture_key(h);
        let c = self.observe().capture.as_deref_mut().expect("capturing");
        self.observe().capturing = c.record(now, key);
    }

    /// The key of a capture at host `h` now (`pcap::Key`).
    fn capture_key(&mut self, h: u32) -> crate::observe::pcap::Key {
        let node = self.core().host_node[h as usize];
        let step = self.core().shard.as_ref().map_or(0, |s| s.step);
        let c = self.observe().capture.as_deref_mut().expect("capturing");
        c.next_key(step, node)
    }
}
