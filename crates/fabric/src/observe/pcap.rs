//! A pcap trace of what the hosts' ports send and receive: each packet a
//! host's NIC sends (captured as it starts onto the wire, at the sender's
//! port) and each packet delivered to a host (as it lands, at the
//! receiver's port), as RoCEv2 frames (`transport::frame`), and the PFC
//! frames a host's port receives (switches send them; hosts send none).
//! A packet lost on the way shows at its sender only. Only the packets
//! of the chosen flows (by the QP that sends or receives them), and the
//! PFC frames at those flows' hosts, up to a maximum count.
//!
//! Classic pcap, Ethernet link type, nanosecond timestamps (the simulated
//! time, truncated to ns). Whole frames, the payload zeros (the simulator
//! moves no bytes), the ICRC right: a frame cut short reads as malformed
//! to Wireshark's InfiniBand dissector, which checks the lengths. A
//! frame's length is its RoCEv2 length (`transport::frame`), not the
//! simulator's packet size (`[nic]` header bytes). Records are written in
//! time order, ties in the order they were captured (the window loop runs
//! node by node, so capture order is not time order); all of it
//! deterministic. The trace is kept in memory until the run ends.
//!
//! The hooks (`Network::capturing`, one predictable branch where a host
//! sends or receives, see `host/driver.rs` and `link/arrive.rs`) call the
//! out-of-line functions here. Touches only the capture's own state;
//! reads the hosts' QP-to-flow maps.

use crate::net::arena::Hdr;
use crate::net::Network;
use engine::Time;
use transport::Packet;
use wire::pfc::PauseFrame;

/// The default and the largest number of records (packets and PFC frames):
/// at the default 1000-byte MTU, 100k records are about 110 MB.
pub const DEFAULT_MAX_PACKETS: u64 = 100_000;
pub const MAX_PACKETS: u64 = 1_000_000;
/// The file's snap length: IPv4's largest datagram and its Ethernet
/// header; no frame is cut.
const SNAPLEN: u32 = 65_535 + 14;
/// A PAUSE's time, in quanta of 512 bit times: the largest (802.1Qbb), as
/// a switch that sends RESUME (time 0) when its queue drains.
const PAUSE_QUANTA: u16 = 0xffff;

/// What to capture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PcapSpec {
    /// Flow ids; `None`: every flow.
    pub flows: Option<Vec<u32>>,
    /// Records to keep, at most [`MAX_PACKETS`]; later ones are not taken.
    pub max_packets: u64,
}

/// One record: when, and where its bytes are in `Capture::data`.
struct Record {
    at: Time,
    start: usize,
    len: u32,
}

/// The capture's state.
pub(crate) struct Capture {
    /// By flow id: whether it is captured (empty: every flow).
    flows: Vec<bool>,
    /// By host: whether its PFC frames are captured.
    hosts: Vec<bool>,
    max: u64,
    records: Vec<Record>,
    data: Vec<u8>,
    /// Frames that could not be encoded (a field out of its wire range).
    unencodable: u64,
    frame: Vec<u8>,
    zeros: Vec<u8>,
}

impl Network {
    /// Captures `spec`'s packets from now on (call after the flows are
    /// added). Fails with the field at fault (`flows`, `max_packets`)
    /// and why: an unknown flow id, no flow, a count out of range.
    pub fn set_pcap(&mut self, spec: PcapSpec) -> Result<(), (&'static str, String)> {
        if spec.max_packets == 0 || spec.max_packets > MAX_PACKETS {
            return Err((
                "max_packets",
                format!("must be in 1..={MAX_PACKETS}, got {}", spec.max_packets),
            ));
        }
        let n = self.flows.len();
        let mut flows = Vec::new();
        let mut hosts = vec![spec.flows.is_none(); self.hosts.len()];
        if let Some(ids) = &spec.flows {
            if ids.is_empty() {
                return Err((
                    "flows",
                    "is empty: name at least one flow, or leave it out for all".into(),
                ));
            }
            flows = vec![false; n];
            for &id in ids {
                let Some(f) = self.flows.get(id as usize) else {
                    return Err(("flows", format!("flow {id} does not exist ({n} flows)")));
                };
                flows[id as usize] = true;
                hosts[f.requester() as usize] = true;
                hosts[f.responder() as usize] = true;
            }
        }
        self.capture = Some(Box::new(Capture {
            flows,
            hosts,
            max: spec.max_packets,
            records: Vec::new(),
            data: Vec::new(),
            unencodable: 0,
            frame: Vec::new(),
            zeros: Vec::new(),
        }));
        self.capturing = true;
        Ok(())
    }

    /// Host `h` sends the packet `hdr` at `now`.
    #[inline(never)]
    #[cold]
    pub(crate) fn capture_sent(&mut self, now: Time, h: u32, hdr: Hdr) {
        let pkt = self.arena.get(&hdr);
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
        let Some(c) = self.capture.as_deref_mut() else {
            return;
        };
        if !c.flows.is_empty() {
            let qp = if tx { pkt.src_qp } else { pkt.dst_qp };
            let flow = self.hosts[h as usize].qp_flow.get(qp as usize);
            if !flow.is_some_and(|&f| c.flows[f as usize]) {
                return;
            }
        }
        let n = pkt.payload as usize;
        if c.zeros.len() < n {
            c.zeros.resize(n, 0);
        }
        c.frame.clear();
        match transport::frame::encode_sim(pkt, &c.zeros[..n], &mut c.frame) {
            Ok(()) => self.capturing = c.record(now),
            Err(_) => c.unencodable += 1,
        }
    }

    /// Host `h`'s port receives a PFC PAUSE or RESUME of `class` from the
    /// switch port `from` at `now`.
    #[inline(never)]
    #[cold]
    pub(crate) fn capture_pfc(&mut self, now: Time, h: u32, from: u32, class: u8, pause: bool) {
        let Some(c) = self.capture.as_deref_mut() else {
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
        self.capturing = c.record(now);
    }

    /// The trace as pcap bytes, when asked for ([`Network::set_pcap`]),
    /// with the number of packets that could not be encoded.
    pub fn pcap(&self) -> Option<(Vec<u8>, u64)> {
        self.capture.as_deref().map(|c| (c.file(), c.unencodable))
    }
}

impl Capture {
    /// Keeps `self.frame`; false once the maximum is reached (capturing
    /// stops).
    fn record(&mut self, at: Time) -> bool {
        self.records.push(Record {
            at,
            start: self.data.len(),
            len: self.frame.len() as u32,
        });
        self.data.extend_from_slice(&self.frame);
        (self.records.len() as u64) < self.max
    }

    /// The pcap file: the global header (nanosecond magic, version 2.4,
    /// snap length, link type 1 Ethernet), then the records by time.
    fn file(&self) -> Vec<u8> {
        let mut order: Vec<&Record> = self.records.iter().collect();
        order.sort_by_key(|r| r.at); // stable: ties keep capture order
        let mut out = Vec::with_capacity(24 + self.data.len() + 16 * order.len());
        out.extend_from_slice(&0xa1b2_3c4d_u32.to_le_bytes());
        out.extend_from_slice(&2u16.to_le_bytes());
        out.extend_from_slice(&4u16.to_le_bytes());
        out.extend_from_slice(&0i32.to_le_bytes()); // thiszone
        out.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        out.extend_from_slice(&SNAPLEN.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes()); // LINKTYPE_ETHERNET
        for r in order {
            let ns = r.at / engine::time::NS;
            let (sec, nsec) = (ns / 1_000_000_000, ns % 1_000_000_000);
            out.extend_from_slice(&(sec as u32).to_le_bytes());
            out.extend_from_slice(&(nsec as u32).to_le_bytes());
            out.extend_from_slice(&r.len.to_le_bytes()); // captured
            out.extend_from_slice(&r.len.to_le_bytes()); // on the wire
            out.extend_from_slice(&self.data[r.start..r.start + r.len as usize]);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_ordered_by_time() {
        let mut c = Capture {
            flows: Vec::new(),
            hosts: Vec::new(),
            max: 3,
            records: Vec::new(),
            data: Vec::new(),
            unencodable: 0,
            frame: Vec::new(),
            zeros: Vec::new(),
        };
        c.frame = vec![7; 300];
        assert!(c.record(5_000));
        c.frame = vec![9; 10];
        assert!(c.record(1_500));
        c.frame = vec![8; 10];
        assert!(!c.record(1_500), "the third record is the last");
        let f = c.file();
        assert_eq!(&f[..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
        // Records at 1 ns (two, in capture order), then 5 ns.
        let rec = |at: usize| {
            let w = |i: usize| u32::from_le_bytes(f[at + i..at + i + 4].try_into().unwrap());
            (w(0), w(4), w(8), w(12))
        };
        assert_eq!(rec(24), (0, 1, 10, 10));
        assert_eq!(rec(24 + 26), (0, 1, 10, 10));
        assert_eq!((f[24 + 16], f[24 + 26 + 16]), (9, 8));
        assert_eq!(rec(24 + 52), (0, 5, 300, 300));
        assert_eq!(f.len(), 24 + 52 + 16 + 300);
    }
}
