//! `[transport] ordering` on a fabric: on an ECMP leaf-spine, where every
//! flow keeps one path and nothing is reordered, the ideal ordering layer
//! holds nothing and changes no result; it builds for go-back-N and IRN.
//! (The layer's effect under reordering is tested at the NIC, over the
//! chaos channel: `crates/transport/tests/ordering.rs`.)

mod common;
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

/// Eunomia on an ECMP fabric makes no bitmap and changes no result (under
/// DRILL: `load_balancers.rs`).
#[test]
fn eunomia_changes_nothing_on_an_ecmp_fabric() {
    let none = run("roce", "none");
    let eu = run("roce", "eunomia");
    let fcts =
        |o: &experiment::Outcome| -> Vec<_> { o.net.flows().iter().map(|f| f.fct()).collect() };
    assert_eq!(fcts(&none), fcts(&eu));
    let s = experiment::report::summary(&eu, "t", 5);
    let o = s.ordering.expect("a bitmap layer");
    assert_eq!(
        (o.layer, o.bitmaps_made, o.nic_peak_bytes_max),
        ("eunomia", 0, 0)
    );
}
