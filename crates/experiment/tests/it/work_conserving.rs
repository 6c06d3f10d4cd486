//! A switch port with a frame waiting starts it the instant the one before
//! it ends. Checked after every window of a loaded lossless fabric: a frame
//! started at the very instant the previous one's end was due (a tie at one
//! picosecond) once made that end stale while the port still believed one
//! pending, so a frame queued behind waited for the next arrival instead
//! (first seen here at 789 us).

use engine::Time;
use experiment::Scenario;
use fabric::RunState;
use std::path::Path;

const FABRIC: &str = r#"
seed = 2
[topology]
kind = "fat_tree"
k = 8
[switch]
pfc = true
[transport]
kind = "roce"
[[traffic]]
pattern = "poisson"
cdf = "websearch"
load = 0.9
duration_us = 1000
"#;

#[test]
fn switch_ports_never_idle_with_work() {
    let sc = Scenario::parse(FABRIC, "fabric.toml").unwrap();
    let mut net = experiment::build(&sc, Path::new("fabric.toml"), None)
        .unwrap()
        .net;
    let until: Time = 850_000_000;
    let mut windows = 0;
    while net.run_until(until, 1) == RunState::Budget {
        windows += 1;
        if let Err(e) = net.check_work_conserving() {
            panic!("after {windows} windows: {e}");
        }
    }
    assert!(windows > 800, "the check ran {windows} times");
}
