//! `[output] pfc`: `pfc.csv` records every PFC frame a port received (time
//! order; per port and class, PAUSE and RESUME alternate, a PAUSE first),
//! and the paused intervals it shows add up to each port's paused time in
//! summary.json's `pfc_pause.ports`, which lists exactly the ports that
//! paused; a run without the key writes no pfc.csv and otherwise the same
//! bytes.

use crate::common;
use experiment::report;
use std::collections::BTreeMap;
use std::path::Path;

/// A 6-to-1 incast on a lossless fabric with a small buffer: the ToR
/// pauses the senders' ToR and hosts.
const SCENARIO: &str = r#"
seed = 2
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
[switch]
pfc = true
buffer_mb = 0.5
[[traffic]]
pattern = "incast"
receiver = 0
senders = [1, 2, 3, 4, 5, 6]
bytes = 300_000
"#;

fn write(text: &str, dir: &Path) -> report::SummaryJson {
    let o = common::run_toml(text);
    let s = report::summary(&o, "pfc", 2, &crate::common::any_ran());
    report::write_outputs(&o, &s, dir).unwrap();
    s
}

#[test]
fn pfc_csv_records_every_pause_and_adds_up_to_the_summarys_paused_time() {
    let tmp = std::env::temp_dir().join(format!("rdmalab-pfc-{}", std::process::id()));
    let (plain, logged) = (tmp.join("plain"), tmp.join("logged"));
    write(SCENARIO, &plain);
    let s = write(&format!("{SCENARIO}[output]\npfc = true\n"), &logged);
    for f in ["flows.csv", "slowdown_by_size.csv"] {
        let a = std::fs::read(plain.join(f)).unwrap();
        assert_eq!(a, std::fs::read(logged.join(f)).unwrap(), "{f}");
    }
    // summary.json lists the files written beside it: pfc.csv too, and
    // nothing else differs.
    let json = |d: &Path| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(d.join("summary.json")).unwrap()).unwrap()
    };
    let mut with_log = json(&logged);
    assert!(with_log["files"]
        .as_object_mut()
        .unwrap()
        .remove("pfc.csv")
        .is_some());
    assert_eq!(json(&plain), with_log, "summary.json");
    assert!(!plain.join("pfc.csv").exists());
    let text = std::fs::read_to_string(logged.join("pfc.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("time_ns,node,port,class,event"));
    // Per (port, class): the open pause's start, and the paused time.
    let mut open: BTreeMap<(String, String), u64> = BTreeMap::new();
    let mut paused: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut last = 0;
    let mut rows = 0;
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        assert_eq!(f.len(), 5, "{l}");
        let t: u64 = f[0].parse().unwrap();
        assert!(t >= last, "time order: {l}");
        last = t;
        assert!(f[2].starts_with(&format!("{}->", f[1])), "{l}");
        let key = (f[2].to_string(), f[3].to_string());
        match f[4] {
            "pause" => assert!(open.insert(key, t).is_none(), "paused twice: {l}"),
            "resume" => {
                let from = open
                    .remove(&key)
                    .unwrap_or_else(|| panic!("resume first: {l}"));
                let p = paused.entry(f[2].to_string()).or_default();
                *p = (p.0 + t - from, p.1 + 1);
            }
            e => panic!("event {e}"),
        }
        rows += 1;
    }
    assert!(rows > 0 && s.pause_frames > 0, "the incast pauses");
    assert_eq!(rows as u64, s.pause_frames + s.resume_frames);
    assert!(open.is_empty(), "every pause resumed by the end: {open:?}");
    // One class only here, so a port's paused time is its intervals'
    // sum (each row's time rounded down to the nanosecond).
    let listed: BTreeMap<String, u64> = s
        .pfc_pause
        .ports
        .iter()
        .map(|p| (p.port.clone(), p.paused_ns))
        .collect();
    assert_eq!(
        listed.keys().collect::<Vec<_>>(),
        paused.keys().collect::<Vec<_>>()
    );
    for (port, (ns, n)) in &paused {
        let d = listed[port].abs_diff(*ns);
        assert!(d <= *n, "{port}: {} vs {ns} over {n} pauses", listed[port]);
    }
    let json = std::fs::read_to_string(logged.join("summary.json")).unwrap();
    assert!(json.contains("\"paused_ns\""));
    std::fs::remove_dir_all(&tmp).ok();
}
