//! Unit tests of `ns3/units.rs` (moved from the file: the library has
//! `test = false`, so `cargo test` does not compile it twice).

use engine::time::{SEC, US};
use workload::ns3::units::*;

#[test]
fn rates() {
    assert_eq!(parse_rate("100Gbps"), Ok(100_000_000_000));
    assert_eq!(parse_rate("40Gbps"), Ok(40_000_000_000));
    assert_eq!(parse_rate("10Mbps"), Ok(10_000_000));
    assert_eq!(parse_rate("1.5Gbps"), Ok(1_500_000_000));
    assert_eq!(parse_rate("20Mb/s"), Ok(20_000_000));
    assert_eq!(parse_rate("1000Mb/s"), Ok(1_000_000_000));
    assert_eq!(parse_rate("400Kbps"), Ok(400_000));
    assert_eq!(parse_rate("1GBps"), Ok(8_000_000_000));
    assert_eq!(parse_rate("12bps"), Ok(12));
    assert!(parse_rate("100").unwrap_err().contains("no rate unit"));
    assert!(parse_rate("100Gbit").is_err());
    assert!(parse_rate("100Xbps").is_err());
    assert!(parse_rate("fastGbps").unwrap_err().contains("number"));
    assert!(parse_rate("-1Gbps").is_err());
    assert!(parse_rate("0Gbps").unwrap_err().contains("out of range"));
}

#[test]
fn times() {
    assert_eq!(parse_time("1000ns"), Ok(1_000_000));
    assert_eq!(parse_time("0.001ms"), Ok(1_000_000));
    assert_eq!(parse_time("1us"), Ok(US));
    assert_eq!(parse_time("2s"), Ok(2 * SEC));
    assert_eq!(parse_time("0ns"), Ok(0));
    assert_eq!(parse_time("1.5ps"), Ok(2));
    assert!(parse_time("1000").unwrap_err().contains("no time unit"));
    assert!(parse_time("1min").is_err());
    assert!(parse_time("ns").is_err());
    assert!(parse_time("100000000000s")
        .unwrap_err()
        .contains("out of range"));
}
