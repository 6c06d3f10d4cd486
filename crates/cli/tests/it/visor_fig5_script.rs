//! `docs/visor/fig5.py` (RDMAvisor's Fig 5 in the simulator, with the
//! NICs' QP-context cache) on a small input: one QP per connection loses
//! throughput past the cache's 400 entries, one QP per pair of hosts
//! does not (the acceptance test).

use crate::scripts;

#[test]
fn naive_throughput_falls_past_the_cache_and_shared_does_not() {
    let text = scripts::run(
        "visor/fig5.py",
        &["--connections", "200,1000", "--messages", "2"],
    );
    let rows: Vec<Vec<f64>> = text
        .lines()
        .filter(|l| l.starts_with("| 200 |") || l.starts_with("| 1000 |"))
        .map(|l| {
            l.split('|')
                .filter_map(|c| c.trim().parse::<f64>().ok())
                .collect()
        })
        .collect();
    assert_eq!(rows.len(), 2, "{text}");
    // Cells: connections, naive Gb/s, QPs, misses, shared Gb/s, QPs, misses.
    let (small, large) = (&rows[0], &rows[1]);
    assert!(large[1] < 0.8 * small[1], "naive did not fall: {text}");
    assert!(large[4] > 0.97 * small[4], "shared fell: {text}");
    assert!(
        large[3] > 10.0 * small[3],
        "naive past the cache misses on most packets: {text}"
    );
    assert_eq!(
        large[5], small[5],
        "shared: one QP pair per peer whatever N: {text}"
    );
}
