//! UET in the fabric (`[transport] kind = "uet"`) with packet trimming
//! (`[switch] trimming`): in a lossy incast a trimmed packet is NACKed by
//! its receiver and resent by its sender without a timeout, and nothing
//! is dropped; without trimming the same incast drops and times out.
//! NSCC, the sender's window, makes the incast trim far fewer packets
//! than senders without it.
//! (Bad keys: `bad_input.rs`; the engine itself: the transport crate's
//! tests.)

use crate::common;
use common::*;

fn incast(switch: &str) -> String {
    incast_with(switch, "", 100_000)
}

/// The incast of `bytes` per sender, `uet` adding lines to
/// `[transport.uet]`.
fn incast_with(switch: &str, uet: &str, bytes: u64) -> String {
    format!(
        r#"
seed = 1
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 8
host_gbps = 100
fabric_gbps = 100
[switch]
pfc = false
buffer_mb = 0.2
{switch}
[transport]
kind = "uet"
[transport.uet]
rto_us = 5000
ev_policy = "reps"
{uet}
[[traffic]]
pattern = "incast"
receiver = 0
senders = [8, 9, 10, 11, 12, 13, 14, 15]
bytes = {bytes}
"#
    )
}

#[test]
fn trimmed_packets_are_resent_without_a_timeout() {
    let on = run_toml(&incast("trimming = true\ntrim_threshold_bytes = 20_000"));
    assert!(on.flows().iter().all(|f| f.fct().is_some()));
    let s = summary(&on);
    let trimmed = s
        .trimming
        .as_ref()
        .expect("a trimming block")
        .trimmed_packets;
    assert!(trimmed > 0, "the incast trims");
    assert_eq!(on.counters().total_dropped_packets(), 0);
    assert!(
        s.retransmitted_packets >= trimmed,
        "each trimmed packet resent"
    );
    assert_eq!(s.timeouts, 0, "resent on the NACK, not the timeout");
    // Every flow done well within one timeout.
    assert!(on
        .flows()
        .iter()
        .all(|f| f.fct().unwrap() < 5000 * engine::time::US));

    let off = run_toml(&incast(""));
    let s = summary(&off);
    assert!(s.trimming.is_none());
    assert!(
        off.counters().total_dropped_packets() > 0,
        "without trimming the incast drops"
    );
    assert!(s.timeouts > 0, "and recovers by timeouts");
}

#[test]
fn nscc_trims_far_fewer_packets_than_no_control() {
    let trim = "trimming = true\ntrim_threshold_bytes = 20_000";
    let trimmed = |uet: &str| {
        let r = run_toml(&incast_with(trim, uet, 1_000_000));
        assert!(r.flows().iter().all(|f| f.fct().is_some()));
        let s = summary(&r);
        s.trimming.as_ref().map_or(0, |t| t.trimmed_packets)
    };
    let (nscc, none) = (trimmed(""), trimmed("cc = \"none\""));
    eprintln!("trimmed: nscc {nscc}, none {none}");
    assert!(none > 0 && nscc * 4 < none, "nscc {nscc}, none {none}");
}
