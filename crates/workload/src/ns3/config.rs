//! The ns-3 key-value configuration (`KEY value...` a line), kept as an
//! ordered list with typed getters whose errors name the file, line and key,
//! and the rate-keyed maps `KMAX_MAP n rate value ...` (KMIN_MAP, PMAX_MAP).

use std::collections::HashMap;

use super::text::{field, records};
use super::units::parse_rate;
use crate::error::WorkloadError;

/// One `KEY value...` line.
#[derive(Clone, Debug, PartialEq)]
pub struct Ns3Entry {
    pub key: String,
    pub values: Vec<String>,
    pub line: usize,
}

/// A parsed configuration: the entries in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct Ns3Config {
    pub origin: String,
    pub entries: Vec<Ns3Entry>,
}

/// Parses a configuration. Blank lines and `#` comments are skipped; a key
/// given twice is an error (ns-3 silently keeps the last, which hides typos).
pub fn parse_config(text: &str, origin: &str) -> Result<Ns3Config, WorkloadError> {
    let mut entries = Vec::new();
    let mut first_line: HashMap<&str, usize> = HashMap::new();
    for rec in records(text) {
        if rec.fields[0].starts_with('#') {
            continue;
        }
        let key = rec.fields[0];
        if let Some(prev) = first_line.insert(key, rec.line) {
            return Err(WorkloadError::parse(
                origin,
                rec.line,
                format!("{key} is set twice (first on line {prev})"),
            ));
        }
        entries.push(Ns3Entry {
            key: key.to_string(),
            values: rec.fields[1..].iter().map(|s| s.to_string()).collect(),
            line: rec.line,
        });
    }
    Ok(Ns3Config {
        origin: origin.to_string(),
        entries,
    })
}

impl Ns3Config {
    /// The entry for `key`, if present.
    pub fn get(&self, key: &str) -> Option<&Ns3Entry> {
        self.entries.iter().find(|e| e.key == key)
    }

    /// The entry for `key`, or a missing-key error.
    pub fn entry(&self, key: &str) -> Result<&Ns3Entry, WorkloadError> {
        self.get(key).ok_or_else(|| WorkloadError::MissingKey {
            origin: self.origin.clone(),
            key: key.to_string(),
        })
    }

    /// The single value of `key`.
    pub fn get_str(&self, key: &str) -> Result<&str, WorkloadError> {
        let e = self.entry(key)?;
        match e.values.as_slice() {
            [v] => Ok(v),
            vs => Err(self.error(e, format!("expected one value, found {}", vs.len()))),
        }
    }

    pub fn get_f64(&self, key: &str) -> Result<f64, WorkloadError> {
        let v = self.get_str(key)?;
        match v.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(x),
            _ => Err(self.error(self.entry(key)?, format!("'{v}' is not a number"))),
        }
    }

    pub fn get_u64(&self, key: &str) -> Result<u64, WorkloadError> {
        let v = self.get_str(key)?;
        v.parse::<u64>().map_err(|_| {
            let e = self.get(key).expect("present");
            self.error(e, format!("'{v}' is not a non-negative integer"))
        })
    }

    /// A rate value such as `20Mb/s` or `100Gbps`, in bits per second.
    pub fn get_rate(&self, key: &str) -> Result<u64, WorkloadError> {
        let v = self.get_str(key)?;
        parse_rate(v).map_err(|m| self.error(self.get(key).expect("present"), m))
    }

    /// A map `KEY n rate_1 value_1 ... rate_n value_n` (KMAX_MAP, KMIN_MAP,
    /// PMAX_MAP) as (rate in bits per second, value) pairs in file order.
    /// Rates are plain bits per second, as HPCC writes them, or carry a unit.
    pub fn rate_map(&self, key: &str) -> Result<Vec<(u64, f64)>, WorkloadError> {
        let e = self.entry(key)?;
        let (origin, line) = (self.origin.as_str(), e.line);
        let Some((n, rest)) = e.values.split_first() else {
            return Err(self.error(e, "expected a count and rate/value pairs"));
        };
        let what = format!("{key} count");
        let n: usize = field(n, &what, "a count", origin, line)?;
        if rest.len() != 2 * n {
            return Err(self.error(
                e,
                format!(
                    "count {n} needs {} values after it, found {}",
                    2 * n,
                    rest.len()
                ),
            ));
        }
        rest.chunks(2)
            .map(|kv| {
                let rate = kv[0]
                    .parse::<u64>()
                    .ok()
                    .filter(|&r| r > 0)
                    .map_or_else(|| parse_rate(&kv[0]), Ok)
                    .map_err(|_| {
                        self.error(e, format!("rate '{}' is not a positive bits/s rate", kv[0]))
                    })?;
                let value = kv[1].parse::<f64>().ok().filter(|v| v.is_finite());
                let value = value
                    .ok_or_else(|| self.error(e, format!("value '{}' is not a number", kv[1])))?;
                Ok((rate, value))
            })
            .collect()
    }

    fn error(&self, e: &Ns3Entry, msg: impl std::fmt::Display) -> WorkloadError {
        WorkloadError::parse(&self.origin, e.line, format!("{}: {msg}", e.key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(e(c.get_rate("CC_MODE").map(drop))
            .starts_with("c.txt:2: CC_MODE: '1' has no rate unit"));
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
}
