//! Unit tests of `ns3/flows.rs` (moved from the file: the library has
//! `test = false`, so `cargo test` does not compile it twice).

use engine::time::{NS, SEC};
use workload::flow::FlowSpec;
use workload::ns3::*;

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
        "flows.txt:2: expected 6 fields 'src dst priority dport size_bytes start_seconds', found 5"
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
        "flows.txt:2: start -1 s is not a time in [0, 4.6e6) seconds (2^62 ps)"
    );
    assert!(err("1\n0 1 3 100 10 5e6\n").contains("start 5000000 s is not a time"));
    assert_eq!(
        err("0\n"),
        "flows.txt:1: the header says 0 flows: a flow file has at least one"
    );
    assert!(err("1\n0 1 3 100 10 NaN\n").contains("start NaN s"));
}
