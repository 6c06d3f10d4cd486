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
