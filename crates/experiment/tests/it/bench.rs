//! The shared benchmark scenarios build from the embedded ns-3 files and do
//! exactly the work htsim and ns-3 did (packet-hops, bench/README.md).

use experiment::bench::{self, Mode};

fn expected_hops(spec: &bench::BenchSpec) -> f64 {
    let (n, unit) = spec.expected_hops.split_once(' ').unwrap();
    assert_eq!(unit, "M");
    n.parse::<f64>().unwrap() * 1e6
}

#[test]
fn p128_packet_hops_match_htsim_and_ns3_in_both_modes() {
    let spec = bench::find("p128").unwrap();
    for mode in Mode::ALL {
        let built = bench::build(spec, mode, 1, None).unwrap();
        let o = experiment::run(built, |_| {});
        assert_eq!(o.net.flows_done(), 128, "{mode:?}");
        o.net.check_conservation().unwrap();
        let hops = o.net.counters().packet_hops as f64;
        // The README gives four significant digits.
        assert!(
            (hops - expected_hops(spec)).abs() < 500.0,
            "{mode:?}: {hops}"
        );
        assert_eq!(o.net.counters().total_dropped_packets(), 0);
    }
}

#[test]
fn every_bench_scenario_builds_and_bad_names_are_refused() {
    for spec in &bench::SCENARIOS {
        let b = bench::build(spec, Mode::Dcqcn, 1, Some(4)).unwrap();
        assert_eq!(b.net.flows().len(), 4);
        assert!(expected_hops(spec) > 1e6);
    }
    assert!(bench::find("p129").err().unwrap().contains("p128"));
    assert!(Mode::parse("fast").unwrap_err().contains("line-rate"));
}
