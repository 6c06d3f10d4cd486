//! The shared benchmark scenarios build from the embedded ns-3 files and do
//! exactly the work htsim and ns-3 did (packet-hops, bench/README.md).

use experiment::bench::{self, scenario, Mode, NS3_CONFIG, SCENARIOS};
use transport::CcConfig;

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

/// The bench files' switch, NIC and DCQCN settings are those of the
/// ns-3 configuration file, read the way the hand-built bench did.
#[test]
fn bench_files_match_the_ns3_configuration() {
    let c = workload::ns3::parse_config(NS3_CONFIG, "ns3").unwrap();
    for spec in &SCENARIOS {
        let sc = scenario(spec, Mode::Dcqcn, None).unwrap();
        let cfg = experiment::build::fabric_config(&sc, "bench").unwrap();
        assert_eq!(
            cfg.mmu.buffer,
            c.get_u64("BUFFER_SIZE").unwrap() * 1024 * 1024
        );
        assert!(cfg.mmu.pfc && cfg.ecn_enabled);
        assert_eq!(
            cfg.nic.mtu as u64,
            c.get_u64("PACKET_PAYLOAD_SIZE").unwrap()
        );
        assert_eq!(
            cfg.nic.ack_every as u64,
            c.get_u64("L2_ACK_INTERVAL").unwrap()
        );
        let kmin = c.rate_map("KMIN_MAP").unwrap();
        let kmax = c.rate_map("KMAX_MAP").unwrap();
        let pmax = c.rate_map("PMAX_MAP").unwrap();
        assert_eq!(cfg.ecn.len(), kmin.len());
        for (i, e) in cfg.ecn.iter().enumerate() {
            assert_eq!(e.rate_bps, kmin[i].0);
            assert_eq!(e.kmin, (kmin[i].1 * 1000.0) as u64);
            assert_eq!(e.kmax, (kmax[i].1 * 1000.0) as u64);
            assert_eq!(e.pmax, pmax[i].1);
        }
        let us = |k: &str| (c.get_f64(k).unwrap() * 1e6).round() as u64;
        let mut p = transport::DcqcnParams::hpcc(100_000_000_000);
        p.alpha_resume_interval = us("ALPHA_RESUME_INTERVAL");
        p.rate_decrease_interval = us("RATE_DECREASE_INTERVAL");
        p.rp_timer = us("RP_TIMER");
        p.g = c.get_f64("EWMA_GAIN").unwrap();
        p.fast_recovery_times = c.get_u64("FAST_RECOVERY_TIMES").unwrap() as u32;
        p.rai_bps = c.get_rate("RATE_AI").unwrap();
        p.rhai_bps = c.get_rate("RATE_HAI").unwrap();
        p.min_rate_bps = c.get_rate("MIN_RATE").unwrap();
        p.clamp_target_rate = c.get_u64("CLAMP_TARGET_RATE").unwrap() != 0;
        assert_eq!(
            format!("{:?}", cfg.nic.cc),
            format!("{:?}", CcConfig::Dcqcn(p))
        );
        let line = scenario(spec, Mode::LineRate, None).unwrap();
        let cfg = experiment::build::fabric_config(&line, "bench").unwrap();
        assert!(!cfg.ecn_enabled && matches!(cfg.nic.cc, CcConfig::None));
    }
}

/// The ns-3-compared bench files queue ACKs with data at the switches and
/// send ns-3's packet sizes (`transport.ns3_nic`), in every mode under
/// congestion control; mode line-rate puts ACKs above data with our sizes
/// (what htsim ran).
#[test]
fn bench_modes_send_ns3_packets_and_line_rate_htsims() {
    for spec in &SCENARIOS {
        for mode in Mode::ALL {
            let sc = scenario(spec, mode, None).unwrap();
            let cfg = experiment::build::fabric_config(&sc, "bench").unwrap();
            let n = &cfg.nic;
            let cc = n.cc.wire_bytes();
            let sizes = (n.header_bytes, n.ctrl_bytes, cfg.ideal_headers());
            if mode == Mode::LineRate {
                assert_eq!((n.ctrl_priority, n.ctrl_ignores_pause), (0, false));
                assert_eq!(sizes, (48, 60, 48));
            } else {
                assert_eq!(
                    (n.ctrl_priority, n.ctrl_ignores_pause),
                    (3, true),
                    "{mode:?}"
                );
                // ns-3's rdma-hw.cc: 36 header bytes and the control's own
                // on data; ACKs padded to 48 (HPCC's INT makes them 76).
                assert_eq!(sizes, (36 + cc, (34 + cc).max(48), 48), "{mode:?}");
            }
        }
    }
    let hpcc = scenario(&SCENARIOS[0], Mode::Hpcc, None).unwrap();
    let cfg = experiment::build::fabric_config(&hpcc, "bench").unwrap();
    assert_eq!((cfg.nic.header_bytes, cfg.nic.ctrl_bytes), (78, 76));
}

/// The large ring all-reduce builds (its plan and its 1024 ranks, one
/// per host of the k=16 fat tree) and is found by name only.
#[test]
fn the_large_all_reduce_builds_and_is_run_by_name_only() {
    let spec = bench::find("ar1024").unwrap();
    assert!(SCENARIOS.iter().all(|s| s.name != "ar1024"));
    let b = bench::build(spec, Mode::LineRate, 1, None).unwrap();
    assert_eq!(b.jobs.len(), 1);
    let app = b.net.app::<experiment::jobs::JobApp>(b.jobs[0]).unwrap();
    assert_eq!(app.job().hosts, (0..1024).collect::<Vec<u32>>());
    assert_eq!(app.plan().transfers.len(), 1024 * 2046);
    assert_eq!(app.plan().segments[0].bytes, 256 << 20);
}

/// The 16,000-host permutation (issue 37's large fabric) is a k=40 fat
/// tree with 2 MB per host, found by name only; it is built and run by
/// hand (docs/scale_out.md), and `setup_scale.rs` keeps its setup linear.
#[test]
fn the_large_permutation_is_a_k40_fat_tree_run_by_name_only() {
    use experiment::scenario::{TopologyCfg, TrafficCfg};
    let spec = bench::find("p16k").unwrap();
    assert!(SCENARIOS.iter().all(|s| s.name != "p16k"));
    assert!(expected_hops(spec) > 1e8);
    let sc = scenario(spec, Mode::LineRate, None).unwrap();
    assert!(matches!(sc.topology, TopologyCfg::FatTree { k: 40, .. }));
    assert!(matches!(
        sc.traffic[..],
        [experiment::scenario::Traffic {
            pattern: TrafficCfg::Permutation {
                bytes: 2_000_000,
                ..
            },
            ..
        }]
    ));
}
