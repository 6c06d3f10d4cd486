//! Settings that have no effect in the combination chosen are named,
//! each with what would make it act; settings that act are not.

use experiment::Scenario;

const TOPOLOGY: &str =
    "[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\n";
const FLOW: &str = "[[flows]]\nsrc = 0\ndst = 3\nbytes = 1000\n";

fn warnings(middle: &str) -> Vec<String> {
    let text = format!("{TOPOLOGY}{middle}\n{FLOW}");
    Scenario::parse(&text, "t.toml").unwrap().no_effect()
}

#[test]
fn tables_of_what_does_not_run_are_named() {
    let w = warnings(
        "[transport]\ncc = \"dcqcn\"\nordering = \"eunomia\"\n[transport.hpcc]\neta = 0.9\n\
         [transport.irn]\nrto_low_us = 100\n[transport.eunomia]\ncap_bits = 1024\n\
         [switch]\npfc = false\nheadroom_bytes = 1000\n[switch.conga]\nalpha = 0.5\n",
    );
    assert_eq!(
        w,
        [
            "transport.hpcc has no effect: transport.cc is \"dcqcn\"",
            "transport.irn has no effect: no flow runs \"irn\" (transport.kind is \"roce\")",
            "switch.conga has no effect: switch.load_balancer is \"ecmp\"",
            "switch.headroom_bytes has no effect: switch.pfc is false",
        ]
    );
}

#[test]
fn tables_of_what_runs_are_not() {
    let w = warnings(
        "[transport]\ncc = \"hpcc\"\nordering = \"eunomia\"\n[transport.hpcc]\neta = 0.9\n\
         [transport.eunomia]\ncap_bits = 1024\n[switch]\npfc = true\nheadroom_bytes = 100000\n\
         load_balancer = \"conga\"\n[switch.conga]\nalpha = 0.5\n",
    );
    assert!(w.is_empty(), "{w:?}");
    // An engine's table acts when any flow runs it.
    let text =
        format!("{TOPOLOGY}[transport.irn]\nrto_low_us = 100\n\n{FLOW}transport = \"irn\"\n");
    let w = Scenario::parse(&text, "t.toml").unwrap().no_effect();
    assert!(w.is_empty(), "{w:?}");
}
