//! The per-port PFC records: `pfc.csv` (every PAUSE and RESUME a port
//! received, `[output] pfc = true`; HPCC ns-3's pfc.txt) and the ports
//! that were paused, with for how long, in summary.json's `pfc_pause`.
//! Reads the network only.

use engine::time::NS;
use engine::Time;
use fabric::Network;
use serde::Serialize;

/// A port its link partner paused at some time in the run.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct PausedPort {
    /// `<node>-><peer>`: the egress port that stopped sending.
    pub port: String,
    /// Time with at least one class paused, a pause still in force at
    /// the end included.
    pub paused_ns: u64,
    /// PAUSE frames it received.
    pub pauses: u64,
}

/// The ports with paused time by the run's end `end`, in port order
/// (none: an empty list, left out of summary.json).
pub fn paused_ports(net: &Network, end: Time) -> Vec<PausedPort> {
    net.ports()
        .iter()
        .enumerate()
        .filter(|(_, p)| p.paused_time_at(end) > 0)
        .map(|(i, p)| PausedPort {
            port: net.port_name(i as u32),
            paused_ns: p.paused_time_at(end) / NS,
            pauses: p.stats().pause_received,
        })
        .collect()
}

/// `pfc.csv`'s bytes when the record was asked for: one row per PFC frame
/// a port received, in time order: `time_ns,node,port,class,event` (the
/// node's name, the paused port as `<node>-><peer>`, the traffic class,
/// `pause` or `resume`).
pub fn pfc_csv(net: &Network) -> Option<Result<Vec<u8>, csv::Error>> {
    // Nodes run their share of a time window in turn, so the frames were
    // recorded in time order per node only.
    let mut events = net.pfc_events()?.to_vec();
    events.sort_by_key(|e| (e.at, e.port));
    let write = || {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(["time_ns", "node", "port", "class", "event"])?;
        let nodes = &net.topology().nodes;
        for e in &events {
            let node = &nodes[net.ports()[e.port as usize].node as usize].name;
            w.write_record([
                (e.at / NS).to_string(),
                node.clone(),
                net.port_name(e.port),
                e.class.to_string(),
                if e.pause { "pause" } else { "resume" }.to_string(),
            ])?;
        }
        w.into_inner().map_err(|e| e.into_error().into())
    };
    Some(write())
}
