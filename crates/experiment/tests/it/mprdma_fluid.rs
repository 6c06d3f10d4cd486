//! The MP-RDMA paper's fluid-model checks (§3.2.1, Fig. 4 and 5) on the
//! scenarios `mprdma_fluid_queue.toml` and `mprdma_fluid_paths.toml`:
//! with RED, 8 flows hold the bottleneck queue steadier than with step
//! marking; over four paths with different capacities and RED Pmax,
//! MP-RDMA's per-path ECN marking ratios converge to one value.

use crate::common;
use common::*;

fn scenario(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/../../scenarios/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("scenario file")
}

fn std_dev(v: &[f64]) -> f64 {
    let m = mean(v);
    (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / v.len() as f64).sqrt()
}

/// Bottleneck queue (in 1048-byte frames) after 10 ms: mean, std dev, and
/// the mean utilisation.
fn queue_after_convergence(text: &str) -> (f64, f64, f64) {
    let o = run_toml(text);
    let q: Vec<f64> = series_values(&o, "queue_bytes:sw0->sw1", 10.0, f64::INFINITY)
        .iter()
        .map(|b| b / 1048.0)
        .collect();
    let util = mean(&series_values(&o, "util:sw0->sw1", 10.0, f64::INFINITY));
    (mean(&q), std_dev(&q), util)
}

#[test]
fn red_holds_the_queue_steadier_than_step_marking() {
    let red = scenario("mprdma_fluid_queue.toml");
    let step = red.replace(
        "kmin_kb = 20.96, kmax_kb = 209.6, pmax = 0.8",
        "kmin_kb = 68.12, kmax_kb = 68.12, pmax = 1.0",
    );
    assert_ne!(red, step, "the RED line to replace is in the scenario");
    let (red_mean, red_std, red_util) = queue_after_convergence(&red);
    let (step_mean, step_std, step_util) = queue_after_convergence(&step);
    eprintln!(
        "RED: queue {red_mean:.1} +- {red_std:.1} packets, util {red_util:.4}; \
         step: {step_mean:.1} +- {step_std:.1}, util {step_util:.4}"
    );
    // The fluid model's fixed point with this RED and a 102.7 us base RTT
    // is 40.2 packets (docs/mprdma.md); measured 40.8.
    assert!((red_mean - 40.2).abs() < 6.0, "RED mean queue {red_mean}");
    // Measured 2.8 against 19.3 packets.
    assert!(
        red_std * 3.0 < step_std,
        "RED std {red_std} vs step {step_std}"
    );
    // Full throughput under both.
    assert!(
        red_util > 0.995 && step_util > 0.995,
        "{red_util} {step_util}"
    );
}

#[test]
fn marking_ratios_converge_across_paths_with_different_pmax() {
    // The fluid model has neither a window cap nor OOO pruning: L and
    // Delta large enough to stay out of the way.
    let text = scenario("mprdma_fluid_paths.toml")
        .replace("stop_ms = 20", "stop_ms = 10")
        .replace("num_vps = 8", "num_vps = 8\nl_slots = 4096\ndelta = 4096");
    let o = run_toml(&text);
    let s = summary(&o);
    let names: Vec<&str> = s.ecn_ports.iter().map(|e| e.port.as_str()).collect();
    assert_eq!(
        names,
        [
            "tor0->spine0",
            "tor0->spine1",
            "tor0->spine2",
            "tor0->spine3"
        ]
    );
    let mut ratios = Vec::new();
    for (k, (e, gbps)) in s.ecn_ports.iter().zip([20.0, 40.0, 60.0, 80.0]).enumerate() {
        // Every packet on tor0 -> spineN is a first-hop data packet.
        let tx_packets = o.net.ports()[o.net.sampled_ecn_ports()[k] as usize].tx_packets;
        assert_eq!(e.data_packets, tx_packets, "{}", e.port);
        let r = mean(&series_values(
            &o,
            &format!("ecn_mark_ratio:{}", e.port),
            3.0,
            f64::INFINITY,
        ));
        let util = mean(&series_values(
            &o,
            &format!("util:{}", e.port),
            3.0,
            f64::INFINITY,
        ));
        eprintln!(
            "{}: Pmax {:.1}, marking ratio {r:.4} after 3 ms ({:.4} over the run), {:.2} Gb/s",
            e.port,
            0.2 * (k + 1) as f64,
            e.mark_ratio.expect("data packets left"),
            util * gbps
        );
        assert!(util > 0.99, "{} utilisation {util}", e.port);
        ratios.push(r);
    }
    let m = mean(&ratios);
    // Pmax differs 4x between paths 0 and 3; the ratios do not (measured
    // 0.0355-0.0384 over 5-20 ms, i.e. within 5% of their mean).
    for (k, r) in ratios.iter().enumerate() {
        assert!((r / m - 1.0).abs() < 0.15, "path {k} ratio {r}, mean {m}");
    }
    // Equal marking under different RED curves means different queues:
    // the lower Pmax, the longer the queue.
    let q: Vec<f64> = (0..4)
        .map(|k| {
            mean(&series_values(
                &o,
                &format!("queue_bytes:tor0->spine{k}"),
                3.0,
                f64::INFINITY,
            ))
        })
        .collect();
    assert!(q.windows(2).all(|w| w[0] > w[1]), "queues {q:?}");
}

#[test]
fn ecn_ports_need_sampling_and_a_link() {
    let base = scenario("mprdma_fluid_queue.toml");
    let no_link = base.replace(
        "ecn_ports = [[\"sw0\", \"sw1\"]]",
        "ecn_ports = [[\"sw0\", \"h0\"], [\"sw1\", \"h0\"]]",
    );
    let sc = experiment::Scenario::parse(&no_link, "t.toml").expect("parses");
    let e = experiment::build(&sc, std::path::Path::new("t.toml"), None)
        .err()
        .expect("no link sw1 - h0");
    assert_eq!(e.key, "output.ecn_ports[1]", "{e}");
    let unsampled = base.replace(
        "sample_us = 10\nports = [[\"sw0\", \"sw1\"]]\nflows = [0, 1, 2, 3, 4, 5, 6, 7]\n",
        "",
    );
    assert_ne!(unsampled, base);
    // Found as the file is parsed (it needs no network).
    let e =
        experiment::Scenario::parse(&unsampled, "t.toml").expect_err("ecn_ports without sample_us");
    assert_eq!(e.key, "output.sample_us", "{e}");
}
