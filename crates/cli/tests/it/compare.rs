//! `rdmalab compare` and `bench --ecmp-hash`, run as a user runs them: a
//! tiny P128 with ns-3's ECMP hash, compared with an fct.txt written from
//! its own flows (every ns-3 FCT twice ours), and malformed inputs named
//! with file and line. Touches only its scratch folder.

use crate::binary;
use binary::rdmalab;

use std::path::PathBuf;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rdmalab-compare-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn compare_matches_a_bench_run_and_names_bad_lines() {
    let dir = scratch("p128");
    let d = dir.to_str().expect("utf-8");
    let (code, _, err) = rdmalab(&[
        "bench",
        "--scenario",
        "p128",
        "--mode",
        "dcqcn",
        "--flows",
        "4",
        "--ecmp-hash",
        "ns3",
        "--out",
        d,
    ]);
    assert_eq!(code, Some(0), "{err}");
    let flows = dir.join("flows.csv");
    let csv = std::fs::read_to_string(&flows).unwrap();
    // An fct.txt of the same flows, each twice as slow.
    let mut fct = String::new();
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let (src, dst): (u32, u32) = (f[1].parse().unwrap(), f[2].parse().unwrap());
        let (fct_ns, ideal): (u64, u64) = (f[5].parse().unwrap(), f[6].parse().unwrap());
        fct.push_str(&format!(
            "{:08x} {:08x} 10000 100 {} {} {} {}\n",
            0x0b00_0001 + src * 256,
            0x0b00_0001 + dst * 256,
            f[3],
            f[4],
            fct_ns.max(ideal) * 2,
            ideal
        ));
    }
    let ns3 = dir.join("fct.txt");
    std::fs::write(&ns3, &fct).unwrap();
    let (code, out, err) = rdmalab(&[
        "compare",
        flows.to_str().unwrap(),
        ns3.to_str().unwrap(),
        "--top",
        "2",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("matched 4 "), "{out}");
    let all = out.lines().find(|l| l.starts_with("all")).expect(&out);
    let v: Vec<&str> = all.split_whitespace().collect();
    assert_eq!(v[1], "4", "{all}");
    let diff: f64 = v[4].trim_end_matches('%').parse().unwrap();
    assert!(
        diff < -40.0 && diff > -60.0,
        "ours about half of ns-3's: {all}"
    );
    assert!(out.contains("flows whose slowdowns differ most"), "{out}");

    let bad = dir.join("bad.txt");
    std::fs::write(&bad, format!("{fct}0b000101 0b000201 1 1 1 1 1\n")).unwrap();
    let (code, _, err) = rdmalab(&["compare", flows.to_str().unwrap(), bad.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("bad.txt:5: 7 fields, expected 8"), "{err}");
    let (code, _, err) = rdmalab(&["compare", ns3.to_str().unwrap(), ns3.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("fct.txt:1: no column"), "{err}");
    let (code, _, err) = rdmalab(&["bench", "--scenario", "p128", "--ecmp-hash", "crc32"]);
    assert_eq!(code, Some(2), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
