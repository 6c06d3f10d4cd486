//! Unit tests of `error.rs` (moved from the file: the library has
//! `test = false`, so `cargo test` does not compile it twice).

use workload::error::*;

#[test]
fn display_names_origin_line_and_key() {
    let e = WorkloadError::parse("a.cdf", 7, "bad number 'x'");
    assert_eq!(e.to_string(), "a.cdf:7: bad number 'x'");
    let e = WorkloadError::MissingKey {
        origin: "cfg".into(),
        key: "CC_MODE".into(),
    };
    assert_eq!(e.to_string(), "cfg: missing key CC_MODE");
    let e = WorkloadError::UnknownBuiltin {
        name: "nope".into(),
        known: &["websearch", "hadoop"],
    };
    assert!(e.to_string().contains("known: websearch, hadoop"));
}
