//! The ns-3 flow file (traffic_gen.py output): the flow count, then one
//! flow a line `src dst priority dport size_bytes start_seconds`.

use engine::time::from_secs_f64;

use super::text::{expect_fields, field, last_line, records};
use crate::error::WorkloadError;
use crate::flow::FlowSpec;

const LAYOUT: &str = "src dst priority dport size_bytes start_seconds";

/// The latest start, in seconds (`engine::time::MAX_TIME`, 2^62 ps).
const MAX_START_S: f64 = engine::time::MAX_TIME as f64 / engine::time::SEC as f64;

/// Parses a flow file into flows in file order (id = position, class 0).
/// Priority and destination port are checked but dropped: rdmalab assigns
/// its own queue pairs and ports ([`parse_flow_dports`] has the ports).
pub fn parse_flows(text: &str, origin: &str) -> Result<Vec<FlowSpec>, WorkloadError> {
    Ok(parse(text, origin)?.into_iter().map(|(f, _)| f).collect())
}

/// The destination port of each flow of a flow file, in file order (what
/// ns-3's ECMP hashes).
pub fn parse_flow_dports(text: &str, origin: &str) -> Result<Vec<u16>, WorkloadError> {
    Ok(parse(text, origin)?.into_iter().map(|(_, p)| p).collect())
}

fn parse(text: &str, origin: &str) -> Result<Vec<(FlowSpec, u16)>, WorkloadError> {
    let mut recs = records(text);
    let head = recs
        .next()
        .ok_or_else(|| WorkloadError::parse(origin, 1, "empty flow file"))?;
    expect_fields(&head, 1, "number_of_flows", origin)?;
    let count: u32 = field(head.fields[0], "flow count", "a count", origin, head.line)?;
    if count == 0 {
        return Err(WorkloadError::parse(
            origin,
            head.line,
            "the header says 0 flows: a flow file has at least one",
        ));
    }

    // No capacity from the header: it is untrusted.
    let mut flows = Vec::new();
    for rec in recs {
        if flows.len() == count as usize {
            return Err(WorkloadError::parse(
                origin,
                rec.line,
                format!("header says {count} flows, but the file has more"),
            ));
        }
        expect_fields(&rec, 6, LAYOUT, origin)?;
        let (f, line) = (&rec.fields, rec.line);
        let src: u32 = field(f[0], "src", "a node id", origin, line)?;
        let dst: u32 = field(f[1], "dst", "a node id", origin, line)?;
        let _priority: u32 = field(f[2], "priority", "an integer", origin, line)?;
        let dport: u16 = field(f[3], "dport", "a port number", origin, line)?;
        let bytes: u64 = field(f[4], "size", "a byte count", origin, line)?;
        let secs: f64 = field(f[5], "start", "a time in seconds", origin, line)?;
        if src == dst {
            return Err(WorkloadError::parse(
                origin,
                line,
                format!("flow from node {src} to itself"),
            ));
        }
        if bytes == 0 {
            return Err(WorkloadError::parse(
                origin,
                line,
                "size must be at least 1 byte",
            ));
        }
        // The longest time a scenario may name, 2^62 ps (about 53 days), as
        // for the TOML's times: the clock then has room for the run.
        if !(0.0..MAX_START_S).contains(&secs) {
            return Err(WorkloadError::parse(
                origin,
                line,
                format!("start {secs} s is not a time in [0, 4.6e6) seconds (2^62 ps)"),
            ));
        }
        let spec = FlowSpec {
            id: flows.len() as u32,
            src,
            dst,
            bytes,
            start: from_secs_f64(secs),
            class: 0,
        };
        flows.push((spec, dport));
    }
    if flows.len() != count as usize {
        return Err(WorkloadError::parse(
            origin,
            last_line(text),
            format!(
                "header (line {}) says {count} flows, the file has {}",
                head.line,
                flows.len()
            ),
        ));
    }
    Ok(flows)
}
