//! Unit tests of `generate.rs` (moved from the file: the library has
//! `test = false`, so `cargo test` does not compile it twice).

use engine::time::SEC;
use engine::time::{MS, US};
use engine::Time;
use workload::cdf::Cdf;
use workload::generate::*;
use workload::pattern::Pattern;

fn cfg(pattern: Pattern, stop: Stop) -> PoissonConfig {
    PoissonConfig {
        hosts: (0..8).collect(),
        host_bps: 100_000_000_000,
        load: 0.5,
        cdf: Cdf::builtin("websearch").unwrap(),
        pattern,
        start: 2 * SEC,
        stop,
        class: 3,
    }
}

#[test]
fn gap_follows_traffic_gen() {
    let c = cfg(Pattern::AllToAll, Stop::Count(1));
    // 1711250 B * 8 / (100 Gb/s * 0.5) = 273.8 us.
    assert!((c.mean_gap_ps() - 273.8 * US as f64).abs() < 1.0);
}

#[test]
fn count_stop_gives_exactly_count_sorted_flows() {
    let flows = poisson_flows(&cfg(Pattern::AllToAll, Stop::Count(500)), 1).unwrap();
    assert_eq!(flows.len(), 500);
    for (i, f) in flows.iter().enumerate() {
        assert_eq!(f.id, i as u32);
        assert_eq!(f.class, 3);
        assert!(f.start > 2 * SEC);
        assert_ne!(f.src, f.dst);
        assert!(f.bytes >= 1);
    }
    assert!(flows.windows(2).all(|w| w[0].start <= w[1].start));
}

#[test]
fn count_is_a_prefix_of_duration() {
    // Both stops walk the same merged arrival sequence.
    let long = poisson_flows(&cfg(Pattern::AllToAll, Stop::Duration(20 * MS)), 9).unwrap();
    let short = poisson_flows(&cfg(Pattern::AllToAll, Stop::Count(100)), 9).unwrap();
    assert!(long.len() > 100);
    assert_eq!(&long[..100], &short[..]);
    assert!(long.iter().all(|f| f.start < 2 * SEC + 20 * MS));
}

#[test]
fn incast_events_have_fan_in_distinct_senders() {
    let c = cfg(
        Pattern::Incast {
            fan_in: 5,
            bytes: 4096,
        },
        Stop::Count(50),
    );
    let flows = poisson_flows(&c, 2).unwrap();
    assert_eq!(flows.len(), 50);
    for ev in flows.chunks(5) {
        let dst = ev[0].dst;
        let mut srcs: Vec<u32> = ev.iter().map(|f| f.src).collect();
        assert!(ev.iter().all(|f| f.dst == dst && f.start == ev[0].start));
        assert!(ev.iter().all(|f| f.bytes == 4096 && f.src != dst));
        srcs.sort();
        srcs.dedup();
        assert_eq!(srcs.len(), 5);
    }
    // Count rounds up to whole events.
    let c = cfg(
        Pattern::Incast {
            fan_in: 5,
            bytes: 4096,
        },
        Stop::Count(51),
    );
    assert_eq!(poisson_flows(&c, 2).unwrap().len(), 55);
}

#[test]
fn incast_offers_the_target_share_of_total_capacity() {
    // 7 x 1 MB per event, 2% of 8 x 100 Gb/s: 3.5 ms between events,
    // so 200 s gives about 57,100 events (relative sd 0.42%).
    let mut c = cfg(
        Pattern::Incast {
            fan_in: 7,
            bytes: 1_000_000,
        },
        Stop::Duration(200 * SEC),
    );
    c.load = 0.02;
    let flows = poisson_flows(&c, 5).unwrap();
    assert!((391_000..409_000).contains(&flows.len()), "{}", flows.len());
    let bits: f64 = flows.iter().map(|f| f.bytes as f64 * 8.0).sum();
    let offered = bits / (200.0 * 8.0 * 100e9);
    assert!((offered / 0.02 - 1.0).abs() < 0.02, "{offered}");
}

#[test]
fn invalid_configs_are_rejected() {
    let e = |c: PoissonConfig| poisson_flows(&c, 0).unwrap_err().to_string();
    let base = || cfg(Pattern::AllToAll, Stop::Count(10));
    assert!(e(PoissonConfig {
        load: 0.0,
        ..base()
    })
    .contains("load must be in (0, 1]"));
    assert!(e(PoissonConfig {
        load: 1.2,
        ..base()
    })
    .contains("load"));
    assert!(e(PoissonConfig {
        load: f64::NAN,
        ..base()
    })
    .contains("load"));
    assert!(e(PoissonConfig {
        hosts: vec![4],
        ..base()
    })
    .contains("at least 2 hosts"));
    assert!(e(PoissonConfig {
        hosts: vec![1, 2, 1],
        ..base()
    })
    .contains("listed twice"));
    assert!(e(PoissonConfig {
        host_bps: 0,
        ..base()
    })
    .contains("host_bps"));
    let hot = Pattern::HotSpot {
        hot: vec![],
        fraction: 0.5,
    };
    assert!(e(PoissonConfig {
        pattern: hot,
        ..base()
    })
    .contains("hot host"));
    let inc = Pattern::Incast {
        fan_in: 8,
        bytes: 1,
    };
    assert!(e(PoissonConfig {
        pattern: inc,
        ..base()
    })
    .contains("fan_in"));
    let inc = Pattern::Incast {
        fan_in: 2,
        bytes: 0,
    };
    assert!(e(PoissonConfig {
        pattern: inc,
        ..base()
    })
    .contains("bytes"));
    let zero = Cdf::parse("0 1\n", "zero").unwrap();
    assert!(e(PoissonConfig {
        cdf: zero,
        ..base()
    })
    .contains("mean 0"));
    let stop = Stop::Duration(Time::MAX);
    assert!(e(PoissonConfig { stop, ..base() }).contains("overflows"));
}
