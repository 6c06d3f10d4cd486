//! `[output] pcap`: a run with the trace writes otherwise the very same
//! files as one without; the trace is classic pcap with nanosecond
//! timestamps in order, every frame a RoCEv2 frame that decodes to a
//! packet of a chosen flow or a PFC frame, each data packet seen at its
//! sender and its receiver (the fabric is lossless), the payloads adding
//! up to the flows' sizes; `max_packets` bounds the records. No frame's
//! BTH names QP 0 or 1, which IBA reserves for management (Wireshark
//! dissects those as MADs).

use crate::common;
use experiment::report;
use std::collections::BTreeMap;
use std::path::Path;
use transport::packet::{PacketKind, Verb};

/// An incast of 4 WRITEs on a lossless fabric small enough to pause the
/// senders (PFC frames reach hosts), and a READ elsewhere.
const SCENARIO: &str = r#"
seed = 3
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
[switch]
pfc = true
buffer_mb = 1
[[traffic]]
pattern = "incast"
receiver = 0
senders = [4, 5, 6, 7]
bytes = 200_000
[[flows]]
src = 1
dst = 5
bytes = 20_000
verb = "read"
"#;

/// Runs `text` and writes its outputs into `dir`.
fn write(text: &str, dir: &Path) {
    let o = common::run_toml(text);
    let s = report::summary(&o, "pcap", 3, &common::any_ran());
    report::write_outputs(&o, &s, dir).unwrap();
}

/// The records of a pcap file: (ns, frame), checking its header.
fn records(file: &[u8]) -> Vec<(u64, &[u8])> {
    let w = |at: usize| u32::from_le_bytes(file[at..at + 4].try_into().unwrap());
    assert_eq!(w(0), 0xa1b2_3c4d, "nanosecond magic");
    assert_eq!((w(4), w(20)), (2 | 4 << 16, 1), "version 2.4, Ethernet");
    let mut out = Vec::new();
    let mut at = 24;
    while at < file.len() {
        let (caught, len) = (w(at + 8) as usize, w(at + 12) as usize);
        assert_eq!(caught, len, "whole frames");
        let ns = u64::from(w(at)) * 1_000_000_000 + u64::from(w(at + 4));
        out.push((ns, &file[at + 16..at + 16 + len]));
        at += 16 + len;
    }
    assert_eq!(at, file.len());
    out
}

#[test]
fn the_trace_changes_no_other_output_and_decodes_to_the_flows_packets() {
    let tmp = std::env::temp_dir().join(format!("rdmalab-pcap-{}", std::process::id()));
    let (plain, traced) = (tmp.join("plain"), tmp.join("traced"));
    write(SCENARIO, &plain);
    write(
        &format!("{SCENARIO}[output]\npcap = {{ flows = [0, 4] }}\n"),
        &traced,
    );
    for f in ["flows.csv", "slowdown_by_size.csv"] {
        let a = std::fs::read(plain.join(f)).unwrap();
        assert_eq!(a, std::fs::read(traced.join(f)).unwrap(), "{f}");
    }
    // The summary differs only in what identifies the run: its files
    // (one more, the trace) and what ran (another text).
    let summary = |d: &std::path::Path| {
        let mut v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(d.join("summary.json")).unwrap()).unwrap();
        let m = v.as_object_mut().unwrap();
        assert!(m.remove("files").is_some());
        v
    };
    assert_eq!(summary(&plain), summary(&traced));
    assert!(!plain.join("trace.pcap").exists());
    let file = std::fs::read(traced.join("trace.pcap")).unwrap();
    let recs = records(&file);
    assert!(recs.windows(2).all(|w| w[0].0 <= w[1].0), "in time order");
    let (mut pfc, mut seen) = (0, BTreeMap::new());
    for (_, frame) in &recs {
        if frame[12..14] == [0x88, 0x08] {
            wire::pfc::PauseFrame::parse(frame).unwrap();
            pfc += 1;
            continue;
        }
        let bth = wire::roce::RoceFrame::parse(frame).unwrap().iba.bth;
        assert!(
            bth.dest_qp >= 2,
            "QP {} is IBA's management QP",
            bth.dest_qp
        );
        let d = transport::frame::decode(frame).unwrap();
        let p = d.packet;
        assert_eq!(p.dst_qp + transport::frame::QPN_BASE, bth.dest_qp);
        let ends = (p.src.min(p.dst), p.src.max(p.dst));
        assert!(
            ends == (0, 4) || ends == (1, 5),
            "{p:?} is of no chosen flow"
        );
        if p.kind == PacketKind::Request && p.verb == Verb::Write
            || p.kind == PacketKind::ReadResponse
        {
            let at = seen.entry((p.src, p.psn)).or_insert((0, p.payload));
            at.0 += 1;
        }
    }
    assert!(pfc > 0, "the incast pauses the senders' ports");
    // Each data packet twice (sent, received), none lost; the payloads
    // make up the WRITE (4 -> 0) and the READ's responses (1 -> 5).
    assert!(seen.values().all(|&(n, _)| n == 2), "{seen:?}");
    let bytes = |src| -> u32 {
        seen.iter()
            .filter(|((s, _), _)| *s == src)
            .map(|(_, &(_, b))| b)
            .sum()
    };
    assert_eq!((bytes(4), bytes(1)), (200_000, 20_000));
    std::fs::remove_dir_all(&tmp).ok();
}

#[test]
fn max_packets_bounds_the_records() {
    let tmp = std::env::temp_dir().join(format!("rdmalab-pcap-max-{}", std::process::id()));
    write(
        &format!("{SCENARIO}[output]\npcap = {{ max_packets = 25 }}\n"),
        &tmp,
    );
    let file = std::fs::read(tmp.join("trace.pcap")).unwrap();
    assert_eq!(records(&file).len(), 25);
    std::fs::remove_dir_all(&tmp).ok();
}
