//! `FlowSpec`, the unit every generator and importer produces: who sends how
//! many bytes to whom, and when. What the bytes are (a WRITE, a SEND, ...)
//! is the caller's business, keyed by `class`.

use engine::Time;

/// One flow to inject into the fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlowSpec {
    /// Position in the workload (0-based, in start order for generators,
    /// in file order for imported flow files).
    pub id: u32,
    /// Sending host (node id).
    pub src: u32,
    /// Receiving host (node id).
    pub dst: u32,
    /// Payload bytes, at least 1.
    pub bytes: u64,
    /// When the sender posts the flow.
    pub start: Time,
    /// Index of the traffic class that generated it; the caller maps
    /// classes to verbs and transports.
    pub class: u16,
}

/// Merges the flows of several classes into one workload sorted by start
/// time; ties keep the order of `parts`, then each part's own order. Ids
/// are renumbered 0.. in the merged order so they stay unique.
pub fn merge(parts: Vec<Vec<FlowSpec>>) -> Vec<FlowSpec> {
    let mut all: Vec<(usize, usize, FlowSpec)> = parts
        .into_iter()
        .enumerate()
        .flat_map(|(p, flows)| flows.into_iter().enumerate().map(move |(i, f)| (p, i, f)))
        .collect();
    // The sort is stable, but key on (part, index) anyway so the order does
    // not depend on how the parts happen to be concatenated.
    all.sort_by_key(|&(p, i, f)| (f.start, p, i));
    all.into_iter()
        .enumerate()
        .map(|(id, (_, _, f))| FlowSpec { id: id as u32, ..f })
        .collect()
}
