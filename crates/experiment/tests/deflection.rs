//! DIBS deflection (`[switch] deflection = "dibs"`): in a lossy incast it
//! drops fewer packets than no deflection and every flow finishes; with
//! `deflection = "none"` the run is the one without the key; bad names are
//! refused naming the key.

mod common;
use common::*;
use experiment::Scenario;

fn incast(deflection: &str) -> String {
    format!(
        r#"
seed = 1
[topology]
kind = "leaf_spine"
leaves = 3
spines = 2
hosts_per_leaf = 16
host_gbps = 100
fabric_gbps = 100
[switch]
pfc = false
buffer_mb = 0.5
{deflection}
[transport]
kind = "irn"
[[traffic]]
pattern = "incast"
receiver = 0
senders = [9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24]
bytes = 200_000
"#
    )
}

#[test]
fn dibs_drops_fewer_packets_in_a_lossy_incast() {
    let off = run_toml(&incast(""));
    let dibs = run_toml(&incast("deflection = \"dibs\""));
    for o in [&off, &dibs] {
        assert!(
            o.flows().iter().all(|f| f.fct().is_some()),
            "every flow finishes"
        );
    }
    let (d0, d1) = (
        off.counters().total_dropped_packets(),
        dibs.counters().total_dropped_packets(),
    );
    assert!(d0 > 0, "the incast drops without deflection");
    assert!(d1 < d0, "dibs drops {d1}, none {d0}");
    let s = summary(&dibs);
    assert!(s.deflected.unwrap() > 0);
    assert_eq!(summary(&off).deflected, None);
}

#[test]
fn none_is_the_default() {
    let a = summary(&run_toml(&incast("")));
    let b = summary(&run_toml(&incast("deflection = \"none\"")));
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
}

#[test]
fn unknown_deflection_names_the_key() {
    let e = Scenario::parse(&incast("deflection = \"sideways\""), "t.toml")
        .expect_err("refused")
        .to_string();
    assert!(e.contains("deflection") && e.contains("dibs"), "{e}");
}
