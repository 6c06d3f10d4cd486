//! MP-RDMA's two senders on the paper's Fig. 14 scenario
//! (`mprdma_ood.toml`: the testbed permutation with one path degraded to
//! 1G), L = 64 without OOO control: the guarded sender (the default) never
//! overflows the receiver's bitmap; the paper's sends beyond it, so the
//! receiver drops and NACKs and recovery runs, and every byte still
//! arrives (the conservation check of `run_toml`, every flow finished).

use crate::common;
use common::*;

fn degraded(sender: &str) -> experiment::report::SummaryJson {
    let text = std::fs::read_to_string(format!(
        "{}/../../scenarios/mprdma_ood.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("scenario file");
    let text = text.replace(
        "[transport.mprdma]\ninitial_window = 15",
        &format!("[transport.mprdma]\ninitial_window = 15\ndelta = 64\nsender = \"{sender}\""),
    );
    assert!(
        text.contains("sender ="),
        "the table to extend is in the scenario"
    );
    let o = run_toml(&text);
    assert_eq!(
        o.net.flows_done(),
        o.net.flows().len(),
        "{sender}: every flow finishes"
    );
    summary(&o)
}

#[test]
fn only_the_papers_sender_overflows_the_bitmap_and_recovers() {
    let guarded = degraded("guarded").mprdma.expect("mprdma summary");
    let paper = degraded("paper").mprdma.expect("mprdma summary");
    eprintln!("guarded {guarded:?}\npaper {paper:?}");
    assert_eq!((guarded.bitmap_drops, guarded.recoveries), (0, 0));
    assert!(paper.bitmap_drops > 0 && paper.recoveries > 0, "{paper:?}");
}
