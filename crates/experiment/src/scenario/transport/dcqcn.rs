//! `[transport.dcqcn]`: single DCQCN values replacing the preset's. One
//! table, [`KNOBS`], says for every key its unit, its range and the
//! parameter it sets; parsing, checking and applying all walk it, so a new
//! DCQCN parameter is one line there.

use super::super::check::{us, Check, ScenarioError};
use engine::Time;
use serde::Deserialize;
use std::collections::BTreeMap;
use transport::{DcqcnParams, Notification};

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum DcqcnPreset {
    #[default]
    Conweave,
    Hpcc,
    Mellanox,
}

impl DcqcnPreset {
    /// The preset's parameters for hosts of `line_bps`.
    pub fn params(self, line_bps: u64) -> DcqcnParams {
        match self {
            DcqcnPreset::Conweave => DcqcnParams::conweave_at(line_bps),
            DcqcnPreset::Hpcc => DcqcnParams::hpcc(line_bps),
            DcqcnPreset::Mellanox => DcqcnParams::mellanox(),
        }
    }
}

/// What a key holds, how it is checked, and where it goes.
#[derive(Clone, Copy)]
pub enum Knob {
    /// Microseconds (finite, >= 0) into a time.
    Us(fn(&mut DcqcnParams) -> &mut Time),
    /// Mb/s (finite, > 0) into bits per second.
    Mbps(fn(&mut DcqcnParams) -> &mut u64),
    /// A fraction in [0, 1].
    Fraction(fn(&mut DcqcnParams) -> &mut f64),
    /// A count (>= 0) that fits 32 bits.
    Count(fn(&mut DcqcnParams) -> &mut u32),
    /// A byte count (>= 0).
    Bytes(fn(&mut DcqcnParams) -> &mut u64),
    Flag(fn(&mut DcqcnParams) -> &mut bool),
    /// Microseconds between CNPs: switches notification to CNP packets.
    CnpInterval,
}

/// Every `[transport.dcqcn]` key, in the order they are applied.
pub const KNOBS: [(&str, Knob); 12] = [
    (
        "alpha_resume_interval_us",
        Knob::Us(|p| &mut p.alpha_resume_interval),
    ),
    (
        "rate_decrease_interval_us",
        Knob::Us(|p| &mut p.rate_decrease_interval),
    ),
    ("rp_timer_us", Knob::Us(|p| &mut p.rp_timer)),
    (
        "fast_recovery_times",
        Knob::Count(|p| &mut p.fast_recovery_times),
    ),
    ("g", Knob::Fraction(|p| &mut p.g)),
    ("rai_mbps", Knob::Mbps(|p| &mut p.rai_bps)),
    ("rhai_mbps", Knob::Mbps(|p| &mut p.rhai_bps)),
    ("min_rate_mbps", Knob::Mbps(|p| &mut p.min_rate_bps)),
    (
        "rate_on_first_cnp",
        Knob::Fraction(|p| &mut p.rate_on_first_cnp),
    ),
    (
        "clamp_target_rate",
        Knob::Flag(|p| &mut p.clamp_target_rate),
    ),
    ("byte_counter", Knob::Bytes(|p| &mut p.byte_counter)),
    ("cnp_interval_us", Knob::CnpInterval),
];

/// The values given, by key (only keys of [`KNOBS`]; unknown keys are
/// refused when parsed).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DcqcnOverrides {
    values: BTreeMap<String, toml::Value>,
}

impl<'de> Deserialize<'de> for DcqcnOverrides {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let values = BTreeMap::<String, toml::Value>::deserialize(d)?;
        if let Some(k) = values.keys().find(|k| !KNOBS.iter().any(|(n, _)| n == k)) {
            let names: Vec<&str> = KNOBS.iter().map(|(n, _)| *n).collect();
            return Err(serde::de::Error::custom(format!(
                "unknown field `{k}`, expected one of {}",
                names.join(", ")
            )));
        }
        Ok(DcqcnOverrides { values })
    }
}

impl DcqcnOverrides {
    /// The value given for `key`, if any.
    pub fn get(&self, key: &str) -> Option<&toml::Value> {
        self.values.get(key)
    }

    /// Checks every value given (type, finiteness, range) and applies it
    /// to `p`, the preset's parameters.
    pub fn apply(&self, p: &mut DcqcnParams, c: Check) -> Result<(), ScenarioError> {
        for (name, knob) in KNOBS {
            let Some(v) = self.values.get(name) else {
                continue;
            };
            let key = format!("transport.dcqcn.{name}");
            let number = || -> Result<f64, ScenarioError> {
                match v {
                    toml::Value::Integer(i) => Ok(*i as f64),
                    toml::Value::Float(f) => Ok(*f),
                    other => Err(c.err(
                        &key,
                        format!("invalid type: {}, expected a number", other.type_str()),
                    )),
                }
            };
            let integer = || -> Result<u64, ScenarioError> {
                match v {
                    toml::Value::Integer(i) if *i >= 0 => Ok(*i as u64),
                    other => Err(c.err(&key, format!("expected an integer >= 0, got {other}"))),
                }
            };
            match knob {
                Knob::Us(f) => {
                    let x = number()?;
                    c.us(&key, x)?;
                    *f(p) = us(x);
                }
                Knob::Mbps(f) => *f(p) = c.mbps(&key, number()?)?,
                Knob::Fraction(f) => {
                    let x = number()?;
                    *f(p) = c.fraction(&key, x)?;
                }
                Knob::Count(f) => {
                    *f(p) =
                        u32::try_from(integer()?).map_err(|_| c.err(&key, "must fit 32 bits"))?
                }
                Knob::Bytes(f) => *f(p) = integer()?,
                Knob::Flag(f) => {
                    *f(p) = v.as_bool().ok_or_else(|| {
                        c.err(
                            &key,
                            format!("invalid type: {}, expected a boolean", v.type_str()),
                        )
                    })?
                }
                Knob::CnpInterval => {
                    let x = number()?;
                    c.us(&key, x)?;
                    p.notification = Notification::Cnp {
                        cnp_interval: us(x),
                    };
                }
            }
        }
        Ok(())
    }
}
