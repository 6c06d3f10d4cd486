//! Unit tests of `ns3/config.rs` (moved from the file: the library has
//! `test = false`, so `cargo test` does not compile it twice).

use workload::error::WorkloadError;
use workload::ns3::*;

const CFG: &str = "# comment\nCC_MODE 1\nRATE_AI 20Mb/s\n\nU_TARGET 0.95\nLINK_DOWN 0 0 0\n\
KMAX_MAP 2 100000000000 1600 400Gbps 6400\nBAD_MAP 2 1 2\nNAME x\nEMPTY\n";

fn cfg() -> Ns3Config {
    parse_config(CFG, "c.txt").unwrap()
}

#[test]
fn typed_getters() {
    let c = cfg();
    assert_eq!(c.entries[0].key, "CC_MODE");
    assert_eq!(c.entries[0].line, 2);
    assert_eq!(c.get_u64("CC_MODE").unwrap(), 1);
    assert_eq!(c.get_f64("U_TARGET").unwrap(), 0.95);
    assert_eq!(c.get_rate("RATE_AI").unwrap(), 20_000_000);
    assert_eq!(c.get_str("NAME").unwrap(), "x");
    assert_eq!(c.get("LINK_DOWN").unwrap().values, vec!["0", "0", "0"]);
    assert_eq!(
        c.rate_map("KMAX_MAP").unwrap(),
        vec![(100_000_000_000, 1600.0), (400_000_000_000, 6400.0)]
    );
}

#[test]
fn getter_errors_name_origin_line_and_key() {
    let c = cfg();
    let e = |r: Result<_, WorkloadError>| r.map(|_: ()| ()).unwrap_err().to_string();
    assert_eq!(e(c.get_u64("NOPE").map(drop)), "c.txt: missing key NOPE");
    assert_eq!(
        e(c.get_u64("U_TARGET").map(drop)),
        "c.txt:5: U_TARGET: '0.95' is not a non-negative integer"
    );
    assert_eq!(
        e(c.get_f64("NAME").map(drop)),
        "c.txt:9: NAME: 'x' is not a number"
    );
    assert_eq!(
        e(c.get_str("LINK_DOWN").map(drop)),
        "c.txt:6: LINK_DOWN: expected one value, found 3"
    );
    assert_eq!(
        e(c.get_str("EMPTY").map(drop)),
        "c.txt:10: EMPTY: expected one value, found 0"
    );
    assert_eq!(
        e(c.rate_map("BAD_MAP").map(drop)),
        "c.txt:8: BAD_MAP: count 2 needs 4 values after it, found 2"
    );
    assert_eq!(
        e(c.rate_map("NAME").map(drop)),
        "c.txt:9: NAME count 'x' is not a count"
    );
    assert!(
        e(c.get_rate("CC_MODE").map(drop)).starts_with("c.txt:2: CC_MODE: '1' has no rate unit")
    );
}

#[test]
fn bad_map_entries_and_duplicates() {
    let c = parse_config("M 1 0 5\nN 1 100 x\n", "c").unwrap();
    assert!(c
        .rate_map("M")
        .unwrap_err()
        .to_string()
        .contains("rate '0'"));
    assert!(c
        .rate_map("N")
        .unwrap_err()
        .to_string()
        .contains("value 'x'"));
    assert_eq!(
        parse_config("A 1\nB 2\nA 3\n", "c")
            .unwrap_err()
            .to_string(),
        "c:3: A is set twice (first on line 1)"
    );
}
