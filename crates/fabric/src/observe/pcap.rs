//! The pcap trace's state and file: what to capture ([`PcapSpec`]), the
//! records kept, and the file they make. Classic pcap, Ethernet link type,
//! nanosecond timestamps (the simulated time, truncated to ns). Whole
//! frames, the payload zeros (the simulator moves no bytes), the ICRC
//! right: a frame cut short reads as malformed to Wireshark's InfiniBand
//! dissector, which checks the lengths. A frame's length is its RoCEv2
//! length (`transport::frame`), not the simulator's packet size
//! (`[transport] header_bytes`). Records are written in time order, ties in the order
//! they were captured (the window loop runs node by node, so capture
//! order is not time order); all of it deterministic. The trace is kept
//! in memory until the run ends. What is captured, and where: `capture.rs`.
//! Plain data: touches nothing else but the file format, `wire::pcap`.

use engine::Time;

/// The default and the largest number of records (packets and PFC frames):
/// at the default 1000-byte MTU, 100k records are about 110 MB.
pub const DEFAULT_MAX_PACKETS: u64 = 100_000;
pub const MAX_PACKETS: u64 = 1_000_000;

/// The most bytes of frames the records may hold (2 GiB; the file is
/// built beside them, so a run's peak is about twice this), checked
/// before capturing from the largest frame a host may send: at the
/// default MTU every count up to [`MAX_PACKETS`] fits, at 4096 bytes
/// about half of it.
pub const MAX_BYTES: u64 = 2 << 30;

/// A frame's bytes beyond its payload, at most: Ethernet, IPv4, UDP,
/// BTH, RETH, an extension header, ICRC, with room to spare.
pub const FRAME_OVERHEAD: u64 = 128;

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
    /// Where it was captured in the run's order: see [`Key`].
    key: Key,
}

/// A capture's place in the order of a run (its step, its node, its
/// order at this copy): a sharded run's shards' captures, sorted by it,
/// come in the order one thread captures them (`net/shard.rs`).
pub(crate) type Key = (u64, u32, u64);

/// The capture's state.
pub(crate) struct Capture {
    /// By flow id: whether it is captured (empty: every flow).
    pub flows: Vec<bool>,
    /// By host: whether its PFC frames are captured.
    pub hosts: Vec<bool>,
    pub max: u64,
    records: Vec<Record>,
    data: Vec<u8>,
    /// Frames that could not be encoded (a field out of its wire range),
    /// and, in a sharded run, where each was met.
    pub unencodable: u64,
    pub unencodable_at: Vec<Key>,
    /// Captures so far here (the last part of a [`Key`]).
    seq: u64,
    /// The frame being built, and zero payload bytes to build it from.
    pub frame: Vec<u8>,
    pub zeros: Vec<u8>,
}

impl Capture {
    pub fn new(flows: Vec<bool>, hosts: Vec<bool>, max: u64) -> Capture {
        Capture {
            flows,
            hosts,
            max,
            records: Vec::new(),
            data: Vec::new(),
            unencodable: 0,
            unencodable_at: Vec::new(),
            seq: 0,
            frame: Vec::new(),
            zeros: Vec::new(),
        }
    }

    /// The key of the next capture at `node` in step `step`.
    pub fn next_key(&mut self, step: u64, node: u32) -> Key {
        self.seq += 1;
        (step, node, self.seq)
    }

    /// Keeps `self.frame`; false once the maximum is reached (capturing
    /// stops).
    pub fn record(&mut self, at: Time, key: Key) -> bool {
        self.records.push(Record {
            at,
            start: self.data.len(),
            len: self.frame.len() as u32,
            key,
        });
        self.data.extend_from_slice(&self.frame);
        (self.records.len() as u64) < self.max
    }

    /// Takes the shards' captures (this one's among them, first) in the
    /// order one thread makes them, up to the maximum, as one thread
    /// stops: after the record that reaches it, nothing more is counted.
    /// Returns whether capturing would go on.
    pub fn merge(&mut self, others: &[&Capture]) -> bool {
        enum Item {
            Record(usize, usize),
            Unencodable,
        }
        let all: Vec<&Capture> = std::iter::once(&*self)
            .chain(others.iter().copied())
            .collect();
        let mut items: Vec<(Key, Item)> = Vec::new();
        for (k, c) in all.iter().enumerate() {
            items.extend(
                c.records
                    .iter()
                    .enumerate()
                    .map(|(i, r)| (r.key, Item::Record(k, i))),
            );
            items.extend(c.unencodable_at.iter().map(|&key| (key, Item::Unencodable)));
        }
        items.sort_by_key(|(key, _)| *key);
        let (mut records, mut data, mut unencodable) = (Vec::new(), Vec::new(), 0);
        for (_, item) in items {
            if records.len() as u64 >= self.max {
                break;
            }
            match item {
                Item::Record(k, i) => {
                    let r = &all[k].records[i];
                    records.push(Record {
                        start: data.len(),
                        ..*r
                    });
                    data.extend_from_slice(&all[k].data[r.start..r.start + r.len as usize]);
                }
                Item::Unencodable => unencodable += 1,
            }
        }
        (self.records, self.data, self.unencodable) = (records, data, unencodable);
        (self.records.len() as u64) < self.max
    }

    /// The pcap file (`wire::pcap`): the records by time.
    pub fn file(&self) -> Vec<u8> {
        let mut order: Vec<&Record> = self.records.iter().collect();
        order.sort_by_key(|r| r.at); // stable: ties keep capture order
        let mut out = Vec::with_capacity(
            wire::pcap::FILE_HEADER_LEN
                + self.data.len()
                + wire::pcap::RECORD_HEADER_LEN * order.len(),
        );
        wire::pcap::file_header(&mut out);
        for r in order {
            let frame = &self.data[r.start..r.start + r.len as usize];
            wire::pcap::record(&mut out, r.at / engine::time::NS, frame);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_ordered_by_time() {
        let mut c = Capture::new(Vec::new(), Vec::new(), 3);
        c.frame = vec![7; 300];
        assert!(c.record(5_000, (0, 0, 1)));
        c.frame = vec![9; 10];
        assert!(c.record(1_500, (0, 0, 2)));
        c.frame = vec![8; 10];
        assert!(!c.record(1_500, (0, 0, 3)), "the third record is the last");
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
