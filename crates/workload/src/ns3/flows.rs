//! The ns-3 flow file (traffic_gen.py output): the flow count, then one
//! flow a line `src dst priority dport size_bytes start_seconds`.

use engine::time::from_secs_f64;

use super::text::{expect_fields, field, last_line, records};
use crate::error::WorkloadError;
use crate::flow::FlowSpec;

const LAYOUT: &str = "src dst priority dport size_bytes start_seconds";

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
        // 1.8e7 s keeps the picosecond count well inside u64.
        if !(0.0..1.8e7).contains(&secs) {
            return Err(WorkloadError::parse(
                origin,
                line,
                format!("start {secs} s is not a time in [0, 1.8e7) seconds"),
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

#[cfg(test)]
mod tests {
    use super::*;
    use engine::time::{NS, SEC};

    fn err(text: &str) -> String {
        parse_flows(text, "flows.txt").unwrap_err().to_string()
    }

    #[test]
    fn parses_flows_in_file_order() {
        let text = "2 \n26 23 3 100 54831 2.000001492\n\n0 1 3 101 7 0\n";
        assert_eq!(parse_flow_dports(text, "f").unwrap(), [100, 101]);
        let f = parse_flows(text, "f").unwrap();
        assert_eq!(
            f[0],
            FlowSpec {
                id: 0,
                src: 26,
                dst: 23,
                bytes: 54831,
                start: 2 * SEC + 1492 * NS,
                class: 0
            }
        );
        assert_eq!((f[1].id, f[1].start, f[1].bytes), (1, 0, 7));
    }

    #[test]
    fn broken_flow_files_are_reported_with_line() {
        assert_eq!(err(""), "flows.txt:1: empty flow file");
        assert_eq!(err("two\n"), "flows.txt:1: flow count 'two' is not a count");
        assert_eq!(
            err("1 2\n"),
            "flows.txt:1: expected 1 fields 'number_of_flows', found 2"
        );
        assert_eq!(
            err("2\n0 1 3 100 10 0\n"),
            "flows.txt:2: header (line 1) says 2 flows, the file has 1"
        );
        assert_eq!(
            err("1\n0 1 3 100 10 0\n0 1 3 100 10 0\n"),
            "flows.txt:3: header says 1 flows, but the file has more"
        );
        assert_eq!(
            err("1\n0 1 3 100 10\n"),
            format!("flows.txt:2: expected 6 fields '{LAYOUT}', found 5")
        );
        assert_eq!(
            err("1\n0 x 3 100 10 0\n"),
            "flows.txt:2: dst 'x' is not a node id"
        );
        assert_eq!(
            err("1\n0 1 3 70000 10 0\n"),
            "flows.txt:2: dport '70000' is not a port number"
        );
        assert_eq!(
            err("1\n0 1 3 100 -4 0\n"),
            "flows.txt:2: size '-4' is not a byte count"
        );
        assert_eq!(
            err("1\n0 1 3 100 0 0\n"),
            "flows.txt:2: size must be at least 1 byte"
        );
        assert_eq!(
            err("1\n5 5 3 100 10 0\n"),
            "flows.txt:2: flow from node 5 to itself"
        );
        assert_eq!(
            err("1\n0 1 3 100 10 -1\n"),
            "flows.txt:2: start -1 s is not a time in [0, 1.8e7) seconds"
        );
        assert!(err("1\n0 1 3 100 10 NaN\n").contains("start NaN s"));
    }
}
