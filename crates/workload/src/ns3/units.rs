//! ns-3 style quantities with units: data rates (`100Gbps`, `20Mb/s`,
//! `1.5Gbps`) and times (`1000ns`, `0.001ms`, `1us`, `2s`), converted to
//! integer bits per second and picoseconds.

use engine::time::{MS, NS, PS, SEC, US};
use engine::Time;

/// Splits `12.5Gbps` into ("12.5", "Gbps") at the first letter.
fn split_unit(s: &str) -> (&str, &str) {
    let at = s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len());
    s.split_at(at)
}

fn magnitude(num: &str, whole: &str) -> Result<f64, String> {
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!(
            "'{whole}' does not start with a non-negative number"
        )),
    }
}

/// A data rate in bits per second. Units: `bps` or `b/s` (bits), `Bps` or
/// `B/s` (bytes), with an optional SI prefix k/K, M, G, T (powers of 1000,
/// as ns-3's DataRate). The result is rounded to whole bits per second and
/// must be at least 1.
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let (num, unit) = split_unit(s);
    let v = magnitude(num, s)?;
    let bad_unit = || {
        format!("'{s}' has no rate unit (expected e.g. 100Gbps, 40Gb/s, 10Mbps, 1.5Gbps, 1GBps)")
    };
    let base = unit
        .strip_suffix("ps")
        .or_else(|| unit.strip_suffix("/s"))
        .ok_or_else(bad_unit)?;
    let (prefix, bits) = if let Some(p) = base.strip_suffix('b') {
        (p, 1.0)
    } else if let Some(p) = base.strip_suffix('B') {
        (p, 8.0)
    } else {
        return Err(bad_unit());
    };
    let scale = match prefix {
        "" => 1.0,
        "k" | "K" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        _ => return Err(bad_unit()),
    };
    let bps = (v * scale * bits).round();
    if !(1.0..=u64::MAX as f64).contains(&bps) {
        return Err(format!("rate '{s}' is out of range (1 bps ..= 2^64 bps)"));
    }
    Ok(bps as u64)
}

/// A time in picoseconds. Units: `ps`, `ns`, `us`, `ms`, `s`; rounded to the
/// nearest picosecond.
pub fn parse_time(s: &str) -> Result<Time, String> {
    let (num, unit) = split_unit(s);
    let v = magnitude(num, s)?;
    let scale = match unit {
        "ps" => PS,
        "ns" => NS,
        "us" => US,
        "ms" => MS,
        "s" => SEC,
        _ => {
            return Err(format!(
                "'{s}' has no time unit (expected ps, ns, us, ms or s, e.g. 1000ns)"
            ))
        }
    };
    let ps = (v * scale as f64).round();
    if ps > u64::MAX as f64 {
        return Err(format!("time '{s}' is out of range"));
    }
    Ok(ps as Time)
}
