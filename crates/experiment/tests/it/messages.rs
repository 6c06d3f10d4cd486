//! Flows of several messages on one QP (`messages`, `sync_ratio`): every
//! message is sent and the flow ends with the last one, one message is
//! today's flow, synchronise messages arrive early more often with less
//! delay under load (MP-RDMA paper §5.2.4), and bad keys are named errors.

use crate::common;
use common::*;
use experiment::{report, Scenario};
use std::path::Path;

/// Two hosts under one leaf of a small leaf-spine, one flow; `extra` goes
/// into the flow's entry, `transport` into `[transport]`.
fn one_flow(transport: &str, extra: &str) -> String {
    format!(
        r#"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 2
[transport]
{transport}
[[flows]]
src = 0
dst = 3
bytes = 100_003
{extra}
"#
    )
}

#[test]
fn a_flow_of_many_messages_sends_each_and_finishes_with_the_last() {
    for transport in ["kind = \"roce\"", "kind = \"irn\"", "kind = \"mprdma\""] {
        for verb in ["write", "send"] {
            let o = run_toml(&one_flow(
                transport,
                &format!("verb = \"{verb}\"\nmessages = 7"),
            ));
            let f = &o.flows()[0];
            assert!(f.finish.is_some(), "{transport} {verb}: unfinished");
            // 7 messages of 14,286-14,287 bytes: 15 packets of 1000 bytes
            // each, where one message of 100,003 bytes takes 101.
            let st = o.net.nic(0).stats();
            assert_eq!(
                st.data_packets_sent - st.retransmitted_packets,
                105,
                "{transport} {verb}"
            );
        }
    }
}

#[test]
fn one_message_is_the_flow_as_before() {
    for (i, transport) in ["kind = \"roce\"", "kind = \"mprdma\""].iter().enumerate() {
        // flows.csv and summary.json as written, without and with the keys.
        let files = |extra: &str, tag: &str| {
            let o = run_toml(&one_flow(transport, extra));
            let s = summary(&o);
            assert_eq!(s.flows_finished, 1);
            // No synchronise operation: the mprdma block keeps its old keys.
            assert!(s.mprdma.as_ref().is_none_or(|m| m.synchronise.is_none()));
            let dir = std::env::temp_dir()
                .join(format!("rdmalab-messages-{}-{i}-{tag}", std::process::id()));
            report::write_outputs(&o, &s, &dir).expect("outputs written");
            let read = |f: &str| std::fs::read(dir.join(f)).expect("output file");
            let got = (read("flows.csv"), read("summary.json"));
            std::fs::remove_dir_all(&dir).expect("temporary directory removed");
            got
        };
        assert_eq!(
            files("", "absent"),
            files("messages = 1\nsync_ratio = 0", "explicit"),
            "{transport}"
        );
    }
}

/// The loaded testbed permutation of `scenarios/mprdma_sync.toml`, scaled
/// down to 2.56 MB per connection (80 x 32 KB), half of them synchronise.
fn loaded_sync(alpha: &str, mode: &str) -> report::SyncSummary {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/mprdma_sync.toml"
    ))
    .expect("scenario file")
    .replace(
        "alpha = 1.0",
        &format!("alpha = {alpha}\nsync_mode = \"{mode}\""),
    )
    .replace("bytes = 40_960_000", "bytes = 2_560_000")
    .replace("messages = 1280", "messages = 80")
    .replace("sync_ratio = 0.2", "sync_ratio = 0.5");
    let o = run_toml(&text);
    assert!(o.flows().iter().all(|f| f.finish.is_some()));
    summary(&o)
        .mprdma
        .and_then(|m| m.synchronise)
        .expect("synchronise counts")
}

#[test]
fn synchronise_messages_arrive_early_more_often_without_delay() {
    let none = loaded_sync("0.0", "delayed");
    let full = loaded_sync("1.0", "delayed");
    let saw = loaded_sync("1.0", "stop_and_wait");
    eprintln!(
        "arrived early: alpha 0 {}/{}, alpha 1 {}/{}, stop-and-wait {}/{}",
        none.arrived_early,
        none.messages,
        full.arrived_early,
        full.messages,
        saw.arrived_early,
        saw.messages
    );
    for s in [&none, &full, &saw] {
        assert_eq!(s.messages, 5 * 40);
    }
    assert!(none.arrived_early >= 10, "alpha 0: {}", none.arrived_early);
    assert!(
        none.arrived_early > 4 * full.arrived_early,
        "alpha 0: {}, alpha 1: {}",
        none.arrived_early,
        full.arrived_early
    );
    // Everything before it acknowledged: never early.
    assert_eq!(saw.arrived_early, 0);
}

/// The key and message of the error building `text` gives.
fn error(text: &str) -> (String, String) {
    let e = match Scenario::parse(text, "t.toml") {
        Err(e) => e,
        Ok(sc) => match experiment::build(&sc, Path::new("t.toml"), None) {
            Err(e) => e,
            Ok(_) => panic!("accepted: {text}"),
        },
    };
    (e.key, e.message)
}

#[test]
fn bad_message_keys_are_named_errors() {
    let traffic = |transport: &str, extra: &str| {
        format!(
            "{}[[traffic]]\npattern = \"permutation\"\nbytes = 64_000\n{extra}\n",
            one_flow(transport, "")
        )
    };
    let cases = [
        (
            traffic("kind = \"roce\"", "sync_ratio = 0.5\nmessages = 4"),
            "traffic[0].sync_ratio",
            "need transport \"mprdma\"",
        ),
        (
            traffic("kind = \"mprdma\"", "sync_ratio = -0.5"),
            "traffic[0].sync_ratio",
            "between 0 and 1",
        ),
        (
            traffic("kind = \"mprdma\"", "sync_ratio = 1.5"),
            "traffic[0].sync_ratio",
            "between 0 and 1",
        ),
        (
            traffic("kind = \"mprdma\"", "messages = 0"),
            "traffic[0].messages",
            "between 1 and 65535",
        ),
        (
            traffic("kind = \"mprdma\"", "messages = 70000"),
            "traffic[0].messages",
            "between 1 and 65535",
        ),
        (
            traffic("kind = \"roce\"", "messages = -2"),
            "traffic[0].messages",
            "invalid value",
        ),
        (
            traffic("kind = \"roce\"", "messages = 64001"),
            "traffic[0].messages",
            "fewer than its 64001 messages",
        ),
        (
            one_flow(
                "kind = \"mprdma\"",
                "transport = \"irn\"\nmessages = 2\nsync_ratio = 0.5",
            ),
            "flows[0].sync_ratio",
            "this entry's is \"irn\"",
        ),
    ];
    for (text, key, msg) in cases {
        let (k, m) = error(&text);
        assert_eq!(k, key, "{m}");
        assert!(m.contains(msg), "{key}: {m}");
    }
}
