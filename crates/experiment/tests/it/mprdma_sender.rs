//! MP-RDMA's senders on the testbed. On the paper's Fig. 14 scenario
//! (`mprdma_ood.toml`: the testbed permutation with one path degraded to
//! 1G), L = 64 without OOO control: the guarded sender (the default) never
//! overflows the receiver's bitmap; the paper's sends beyond it, so the
//! receiver drops and NACKs and recovery runs, and every byte still
//! arrives (the conservation check of `run_toml`, every flow finished).
//! On equal, loss-free paths (`mprdma_fairness.toml`,
//! `mprdma_permutation.toml`) whose reordering stays below Delta, the
//! guarded sender resends nothing.

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

fn scenario(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/../../scenarios/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("scenario file")
}

#[test]
fn loss_free_runs_on_equal_paths_retransmit_nothing() {
    let perm = scenario("mprdma_permutation.toml");
    // 1 KB payloads (the doc's second row): L = 64 is about one BDP, so
    // the sender stalls at the bitmap's end, where early retransmission
    // resent 14-25 late (not lost) holes per seed.
    let perm_1k = perm
        .replace("mtu = 4000", "mtu = 1000")
        .replace("initial_window = 15", "initial_window = 60");
    assert_ne!(perm, perm_1k, "the lines to replace are in the scenario");
    let runs = [
        ("fairness", scenario("mprdma_fairness.toml")),
        ("permutation 4 KB", perm),
        ("permutation 1 KB", perm_1k),
    ];
    for (name, text) in &runs {
        for seed in 1..=3 {
            let o = run_toml_seed(text, Some(seed));
            assert_eq!(o.net.flows_done(), o.net.flows().len(), "{name}");
            let s = summary(&o);
            let mp = s.mprdma.expect("mprdma summary");
            assert_eq!(s.dropped_packets, 0, "{name} seed {seed}: loss-free");
            assert!(
                mp.max_ooo_degree < 32,
                "{name} seed {seed}: reordering {} within Delta",
                mp.max_ooo_degree
            );
            assert_eq!(
                (s.retransmitted_packets, mp.early_retransmits),
                (0, 0),
                "{name} seed {seed}"
            );
        }
    }
}
