//! DIBS deflection (`[switch] deflection = "dibs"`): in a lossy incast it
//! drops fewer packets than no deflection and every flow finishes; no
//! packet is deflected more than `[switch.dibs] max_deflections` times;
//! no packet is deflected out a down link; `deflection = "none"` is the
//! default. (Bad names and bounds: `bad_input.rs`.)

use crate::common;
use common::*;
use fabric::DropReason;

fn incast(switch: &str, extra: &str) -> String {
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
{switch}
[transport]
kind = "irn"
[[traffic]]
pattern = "incast"
receiver = 0
senders = [9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24]
bytes = 200_000
{extra}
"#
    )
}

fn dibs(max: u32) -> String {
    format!("deflection = \"dibs\"\n[switch.dibs]\nmax_deflections = {max}")
}

#[test]
fn dibs_drops_fewer_packets_in_a_lossy_incast() {
    let off = run_toml(&incast("", ""));
    let on = run_toml(&incast("deflection = \"dibs\"", ""));
    for o in [&off, &on] {
        assert!(o.flows().iter().all(|f| f.fct().is_some()));
    }
    let (d0, d1) = (
        off.counters().total_dropped_packets(),
        on.counters().total_dropped_packets(),
    );
    assert!(d0 > 0, "the incast drops without deflection");
    assert!(d1 < d0, "dibs drops {d1}, none {d0}");
    let s = summary(&on);
    assert!(s.deflected.unwrap() > 0);
    assert_eq!(s.most_deflections, Some(10), "the default bound is reached");
    let s = summary(&off);
    assert_eq!((s.deflected, s.most_deflections), (None, None));
}

/// The bound holds whatever it is, and binds: with it at 2 packets reach
/// 2 and no more, where the default lets some go further.
#[test]
fn no_packet_is_deflected_more_than_the_bound() {
    for max in [1, 2, 5] {
        let s = summary(&run_toml(&incast(&dibs(max), "")));
        assert_eq!(s.most_deflections, Some(max as u8), "bound {max}");
    }
    let s = summary(&run_toml(&incast(&dibs(255), "")));
    assert!(s.most_deflections.unwrap() > 5);
}

/// With the receiver's leaf cut from one spine (routes avoid it), a
/// deflection may never pick that link: nothing is dropped as link_down.
#[test]
fn no_packet_is_deflected_out_a_down_link() {
    let fault = r#"
[[faults]]
link = ["leaf0", "spine0"]
action = "down"
at_us = 0
"#;
    let o = run_toml(&incast(&dibs(10), fault));
    let c = o.counters();
    assert!(c.deflected > 0);
    let down = DropReason::ALL
        .iter()
        .position(|&r| r == DropReason::LinkDown)
        .unwrap();
    assert_eq!(c.dropped_packets[down], 0, "{:?}", c.dropped_packets);
    assert!(o.flows().iter().all(|f| f.fct().is_some()));
}

#[test]
fn none_is_the_default() {
    let a = summary(&run_toml(&incast("", "")));
    let b = summary(&run_toml(&incast("deflection = \"none\"", "")));
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
}
