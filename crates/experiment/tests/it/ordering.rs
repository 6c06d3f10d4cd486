//! `[transport] ordering` on a fabric: on an ECMP leaf-spine, where every
//! flow keeps one path and nothing is reordered, the ideal ordering layer
//! holds nothing and changes no result; it builds for go-back-N and IRN;
//! Eunomia's changes nothing but by its sender hold of a WRITE's last
//! packet.
//! (The layer's effect under reordering is tested at the NIC, over the
//! chaos channel: `crates/transport/tests/it/ordering.rs`.)

use crate::common;
use common::*;

const ECMP: &str = r#"
seed = 5
[topology]
kind = "leaf_spine"
leaves = 2
spines = 4
hosts_per_leaf = 4
[transport]
kind = "KIND"
ordering = "ORDERING"
[[traffic]]
pattern = "permutation"
bytes = 300_000
"#;

fn run(kind: &str, ordering: &str) -> experiment::Outcome {
    run_toml(&ECMP.replace("KIND", kind).replace("ORDERING", ordering))
}

#[test]
fn ideal_layer_changes_nothing_on_an_ecmp_fabric() {
    for kind in ["roce", "irn"] {
        let (none, ideal) = (run(kind, "none"), run(kind, "ideal"));
        let fcts =
            |o: &experiment::Outcome| -> Vec<_> { o.net.flows().iter().map(|f| f.fct()).collect() };
        assert!(!fcts(&none).is_empty());
        assert!(fcts(&none).iter().all(Option::is_some), "{kind}: all done");
        assert_eq!(fcts(&none), fcts(&ideal), "{kind}");
        assert_eq!(none.end_time, ideal.end_time);
        let layer = ideal.net.nic(0).config().ordering;
        assert_eq!(layer, transport::OrderingKind::Ideal);
        for h in 0..8 {
            let (a, b) = (none.net.nic(h).stats(), ideal.net.nic(h).stats());
            assert_eq!(a, b, "{kind}: host {h}");
            assert_eq!(b.ordering_held, 0);
        }
    }
}

/// Eunomia on an ECMP fabric makes no bitmap (under DRILL:
/// `load_balancers.rs`). With the receiver hold it changes no result; with
/// the sender hold (the default) every flow, a WRITE, waits about one RTT
/// for the ACK that releases its last packet, and finishes that much
/// later.
#[test]
fn eunomia_changes_nothing_on_an_ecmp_fabric_but_the_sender_hold() {
    let none = run("roce", "none");
    let receiver = run_toml(&ECMP.replace("KIND", "roce").replace(
        "ORDERING",
        "eunomia\"\n[transport.eunomia]\nlast_packet = \"receiver_hold",
    ));
    let sender = run("roce", "eunomia");
    let fcts = |o: &experiment::Outcome| -> Vec<u64> {
        o.net.flows().iter().map(|f| f.fct().unwrap()).collect()
    };
    assert_eq!(fcts(&none), fcts(&receiver));
    let (rs, ss) = (
        experiment::report::summary(&receiver, "t", 5, &common::any_ran()),
        experiment::report::summary(&sender, "t", 5, &common::any_ran()),
    );
    let (ro, so) = (rs.ordering.expect("a layer"), ss.ordering.expect("a layer"));
    assert_eq!(
        (
            ro.layer,
            ro.last_packet,
            ro.bitmaps_made,
            ro.nic_peak_bytes_max
        ),
        ("eunomia", "receiver_hold", 0, 0)
    );
    assert_eq!((ro.sender_held_packets, ro.receiver_held_packets), (0, 0));
    assert_eq!((so.last_packet, so.bitmaps_made), ("sender_hold", 0));
    let flows = none.net.flows().len() as u64;
    assert_eq!(so.sender_held_packets, flows, "one last packet per flow");
    assert_eq!(so.receiver_held_packets, 0);
    // The base RTT of a 2-hop leaf-spine path is a few microseconds; the
    // hold and the FCT growth are of that order, never more than a few.
    let rtt_us = so.sender_hold_mean_us;
    assert!(rtt_us > 1.0 && rtt_us < 20.0, "{so:?}");
    for (a, b) in fcts(&none).into_iter().zip(fcts(&sender)) {
        let later_us = (b - a) as f64 / 1e6;
        assert!(
            later_us > 0.5 * rtt_us && later_us < 3.0 * rtt_us,
            "{later_us} us"
        );
    }
    eprintln!(
        "sender hold on ECMP: mean hold {rtt_us} us; FCT none {:?} sender {:?}",
        fcts(&none),
        fcts(&sender)
    );
}

/// `[transport.eunomia] timeouts = "irn"` (§3.2.3) gives go-back-N IRN's
/// two timeouts from `[transport.irn]`; "transport" (the default) keeps
/// `rto_us`; an unknown choice names the key.
#[test]
fn eunomia_timeouts_irn_arms_irn_s_two_timeouts() {
    use engine::time::US;
    let nic = |extra: &str| {
        let text = ECMP.replace("KIND", "roce").replace(
            "ORDERING",
            // The template's closing quote ends up in a comment.
            &format!("eunomia\"\nrto_us = 4000\n[transport.eunomia]\n{extra}\n[transport.irn]\nrto_low_us = 90\nrto_high_us = 300\nn_packets = 4\n#"),
        );
        let sc = experiment::Scenario::parse(&text, "t.toml").map_err(|e| e.to_string())?;
        let built = experiment::build(&sc, std::path::Path::new("t.toml"), None)
            .map_err(|e| e.to_string())?;
        Ok::<_, String>(built.net.nic(0).config().clone())
    };
    let irn = nic("timeouts = \"irn\"").expect("builds");
    assert_eq!(irn.rto, 300 * US);
    assert_eq!(
        irn.rto_low,
        Some(transport::RtoLow {
            rto: 90 * US,
            below_packets: 4
        })
    );
    for own in ["", "timeouts = \"transport\""] {
        let c = nic(own).expect("builds");
        assert_eq!((c.rto, c.rto_low), (4000 * US, None), "{own:?}");
    }
    let err = nic("timeouts = \"ibm\"").unwrap_err();
    assert!(
        err.contains("transport.eunomia.timeouts") && err.contains("accepted: transport, irn"),
        "{err}"
    );
}
