//! Setup grows with the fabric, not with its square: building a fat tree
//! with a permutation on it (topology, routing tables, NICs, flows) and
//! starting its flows (their QPs) makes allocations and holds a peak of
//! heap bytes per host that stay flat from k=8 (128 hosts) to k=16 (1024).
//! A per-host search of every switch in the routing build, or any table
//! of hosts x hosts or hosts x switches, makes the k=16 figures per host
//! several times the k=8 ones. Counted, not timed: the counts are the
//! same on any machine.

use experiment::{build, Scenario};
use std::path::Path;

/// Allocations made and peak heap bytes held, per host, building a k-ary
/// fat tree with a permutation of 2 MB flows and running it for 1 ns.
fn per_host(k: u32) -> (f64, f64) {
    let text = format!(
        "[topology]\nkind = \"fat_tree\"\nk = {k}\n\
         [[traffic]]\npattern = \"permutation\"\nbytes = 2_000_000\n"
    );
    let sc = Scenario::parse(&text, "t.toml").unwrap();
    let info = allocation_counter::measure(|| {
        let mut built = build(&sc, Path::new("t.toml"), None).unwrap();
        built.net.run_until(1000, u64::MAX);
        assert_eq!(built.net.flows().len(), (k * k * k / 4) as usize);
    });
    let hosts = (k * k * k / 4) as f64;
    (
        info.count_total as f64 / hosts,
        info.bytes_max as f64 / hosts,
    )
}

#[test]
fn setup_per_host_stays_flat_as_hosts_grow_eightfold() {
    let (small_allocs, small_bytes) = per_host(8);
    let (large_allocs, large_bytes) = per_host(16);
    eprintln!("allocs/host {small_allocs:.1} -> {large_allocs:.1}, bytes/host {small_bytes:.0} -> {large_bytes:.0}");
    assert!(
        large_allocs < 1.3 * small_allocs,
        "allocations per host {small_allocs:.1} at 128 hosts, {large_allocs:.1} at 1024"
    );
    assert!(
        large_bytes < 1.3 * small_bytes,
        "peak heap bytes per host {small_bytes:.0} at 128 hosts, {large_bytes:.0} at 1024"
    );
}
