//! What every scenario section shares, at the bottom of the module (the
//! sections import it, it imports none of them): the error type, where the
//! files a scenario names are read from, and the number checks
//! (finiteness, sign and range, and conversions to the fabric's units that
//! refuse values which would overflow or round to nothing). Each check
//! returns a [`ScenarioError`] naming the key; the line is added by the
//! caller that holds the text (`Scenario::parse`, `build`).

use engine::time::{MS, NS, US};
use engine::Time;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// A scenario problem, with where it was found.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    pub file: String,
    /// The key path, e.g. `topology.leaves` or `faults[2].link`.
    pub key: String,
    pub message: String,
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.key.is_empty() || self.key == "." {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}: {}: {}", self.file, self.key, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

impl ScenarioError {
    pub fn new(file: &str, key: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError {
            file: file.to_string(),
            key: key.into(),
            message: message.into(),
        }
    }

    /// Adds where the key is written: ` (from the override K=V)` when one
    /// of `overrides` set it (or a table holding it), else ` (line N)` of
    /// its place in `text`, unless the message has a line already or the
    /// key is not found.
    pub fn locate(mut self, text: &str, overrides: &[(String, String)]) -> Self {
        if let Some((k, v)) = override_of(&self.key, overrides) {
            self.message
                .push_str(&format!(" (from the override {k}={v})"));
        } else if !self.message.contains("(line ") {
            if let Some(line) = line_of_key(text, &self.key) {
                self.message.push_str(&format!(" (line {line})"));
            }
        }
        self
    }
}

/// The last of `overrides` that set `key` (`traffic[0].load` or
/// `traffic.0.load`) or a table or list holding it.
fn override_of<'a>(key: &str, overrides: &'a [(String, String)]) -> Option<&'a (String, String)> {
    fn parts(k: &str) -> Vec<&str> {
        k.split(['.', '[', ']']).filter(|p| !p.is_empty()).collect()
    }
    let at = parts(key);
    if at.is_empty() {
        return None;
    }
    overrides
        .iter()
        .rev()
        .find(|(k, _)| at.starts_with(&parts(k)))
}

/// Line number (1-based) of a byte offset.
pub fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
        + 1
}

/// The line of a key path (`traffic[0].load`, `switch.ecn_table[1]`) in a
/// TOML text: the deepest part of the path that is found.
pub fn line_of_key(text: &str, key: &str) -> Option<usize> {
    use toml::de::{DeTable, DeValue};
    let root = DeTable::parse(text).ok()?;
    let mut span = None;
    let mut cur: Option<&toml::Spanned<DeValue>> = None;
    let mut table = Some(root.get_ref());
    for part in key.split('.').filter(|p| !p.is_empty()) {
        let (name, indices) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        let next = match (table, cur) {
            (Some(t), _) => t.get(name),
            (None, Some(v)) => v.get_ref().get(name),
            (None, None) => None,
        };
        let Some(mut v) = next else { break };
        span = Some(v.span());
        for idx in indices.split(['[', ']']).filter(|s| !s.is_empty()) {
            let Ok(i) = idx.parse::<usize>() else { break };
            match v.get_ref().get(i) {
                Some(x) => {
                    v = x;
                    span = Some(v.span());
                }
                None => break,
            }
        }
        table = None;
        cur = Some(v);
    }
    span.map(|s| line_of(text, s.start))
}

/// The key path (`flows[0].bytes`, `switch.ecn_table[1]`) of what is at
/// byte `at` of a TOML text: the innermost key or value spanning it (as
/// serde_path_to_error named it: an unknown key's path ends with that
/// key). Empty at the top.
pub fn key_at(text: &str, at: usize) -> String {
    use toml::de::{DeTable, DeValue};
    type Best = (usize, String);
    fn consider(span: std::ops::Range<usize>, at: usize, path: &str, best: &mut Best) {
        // Equal spans: the deeper one, visited later, wins.
        if span.contains(&at) && span.len() <= best.0 {
            *best = (span.len(), path.to_string());
        }
    }
    fn value(v: &toml::Spanned<DeValue>, at: usize, path: &str, best: &mut Best) {
        consider(v.span(), at, path, best);
        match v.get_ref() {
            DeValue::Table(t) => table(t, at, path, best),
            DeValue::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    value(x, at, &format!("{path}[{i}]"), best);
                }
            }
            _ => {}
        }
    }
    fn table(t: &DeTable, at: usize, path: &str, best: &mut Best) {
        for (k, v) in t {
            let name = k.get_ref();
            let p = if path.is_empty() {
                name.to_string()
            } else {
                format!("{path}.{name}")
            };
            consider(k.span(), at, &p, best);
            value(v, at, &p, best);
        }
    }
    let mut best = (usize::MAX, String::new());
    if let Ok(root) = DeTable::parse(text) {
        table(root.get_ref(), at, "", &mut best);
    }
    best.1
}

/// Where the files a scenario names (ns-3 topology and flow files, CDF
/// files) are read from.
#[derive(Clone, Copy, Debug)]
pub enum Files {
    /// The disk, relative to the scenario file's folder.
    Disk,
    /// Texts embedded in the binary, by file name (the bench scenarios).
    Embedded(&'static [(&'static str, &'static str)]),
}

/// The scenario's folder and where its files come from.
#[derive(Clone, Copy, Debug)]
pub struct Source<'a> {
    pub base: &'a Path,
    pub files: Files,
}

impl Source<'_> {
    /// A path written in a scenario, resolved against its folder.
    pub fn resolve(&self, p: &Path) -> PathBuf {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base.join(p)
        }
    }

    /// Whether the file exists.
    pub fn exists(&self, p: &Path) -> bool {
        match self.files {
            Files::Disk => self.resolve(p).exists(),
            Files::Embedded(list) => list.iter().any(|(n, _)| Path::new(n) == p),
        }
    }

    /// Reads a file the scenario names: its text and the name to show.
    pub fn read(&self, p: &Path) -> Result<(Cow<'static, str>, String), String> {
        match self.files {
            Files::Disk => {
                let path = self.resolve(p);
                let shown = path.display().to_string();
                engine::input::read_text(&path)
                    .map(|t| (Cow::Owned(t), shown.clone()))
                    .map_err(|e| format!("cannot read {shown}: {e}"))
            }
            Files::Embedded(list) => list
                .iter()
                .find(|(n, _)| Path::new(n) == p)
                .map(|(n, t)| (Cow::Borrowed(*t), format!("<embedded {n}>")))
                .ok_or_else(|| format!("no embedded file {}", p.display())),
        }
    }
}

/// The input limits shared with the ns-3 file readers (`engine::time`).
pub use engine::time::{MAX_TIME, MIN_RATE_BPS as MIN_BPS};

/// The fastest link a scenario may name, in Gb/s (`engine::time::MAX_RATE_BPS`).
pub const MAX_GBPS: f64 = engine::time::MAX_RATE_BPS as f64 / 1e9;

/// The most nodes (hosts and switches) a topology may have.
pub const MAX_NODES: u64 = 65_536;
/// The most links a topology may have.
pub const MAX_LINKS: u64 = 1 << 20;

/// A section's view of the file it came from: builds errors naming it.
#[derive(Clone, Copy)]
pub struct Check<'a> {
    pub file: &'a str,
}

impl<'a> Check<'a> {
    pub fn new(file: &'a str) -> Self {
        Check { file }
    }

    pub fn err(&self, key: impl Into<String>, message: impl Into<String>) -> ScenarioError {
        ScenarioError::new(self.file, key, message)
    }

    /// Finite (no NaN or infinity) and >= 0.
    pub fn non_negative(&self, key: &str, v: f64) -> Result<f64, ScenarioError> {
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err(self.err(key, format!("must be a finite number >= 0, got {v}")))
        }
    }

    /// Finite and > 0.
    pub fn positive(&self, key: &str, v: f64) -> Result<f64, ScenarioError> {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(self.err(key, format!("must be a finite number > 0, got {v}")))
        }
    }

    /// A fraction in [0, 1].
    pub fn fraction(&self, key: &str, v: f64) -> Result<f64, ScenarioError> {
        if (0.0..=1.0).contains(&v) {
            Ok(v)
        } else {
            Err(self.err(key, format!("must be between 0 and 1, got {v}")))
        }
    }

    /// An integer count of at least `min`.
    pub fn at_least<T: Into<u64> + Copy + std::fmt::Display>(
        &self,
        key: &str,
        v: T,
        min: u64,
    ) -> Result<T, ScenarioError> {
        if v.into() >= min {
            Ok(v)
        } else {
            Err(self.err(key, format!("must be at least {min}, got {v}")))
        }
    }

    /// A time of `v` units of `unit` picoseconds, >= 0 (or > 0 when
    /// `nonzero`), at most [`MAX_TIME`], and not rounding to 0 ps when it
    /// must be positive.
    fn time(&self, key: &str, v: f64, unit: Time, nonzero: bool) -> Result<Time, ScenarioError> {
        let v = if nonzero {
            self.positive(key, v)?
        } else {
            self.non_negative(key, v)?
        };
        let ps = v * unit as f64;
        if ps > MAX_TIME as f64 {
            return Err(self.err(
                key,
                format!(
                    "{v} is too long: at most {} (about 53 days in picoseconds)",
                    MAX_TIME as f64 / unit as f64
                ),
            ));
        }
        let t = ps.round() as Time;
        if nonzero && t == 0 {
            return Err(self.err(key, format!("{v} rounds to 0 picoseconds")));
        }
        Ok(t)
    }

    /// Microseconds to picoseconds, >= 0.
    pub fn us(&self, key: &str, v: f64) -> Result<Time, ScenarioError> {
        self.time(key, v, US, false)
    }

    /// Microseconds to picoseconds, > 0.
    pub fn us_positive(&self, key: &str, v: f64) -> Result<Time, ScenarioError> {
        self.time(key, v, US, true)
    }

    /// Nanoseconds to picoseconds, >= 0.
    pub fn ns(&self, key: &str, v: f64) -> Result<Time, ScenarioError> {
        self.time(key, v, NS, false)
    }

    /// Milliseconds to picoseconds, > 0 (converted as seconds, the way
    /// run lengths always were).
    pub fn ms_positive(&self, key: &str, v: f64) -> Result<Time, ScenarioError> {
        self.time(key, v, MS, true)?;
        Ok(engine::time::from_secs_f64(v / 1000.0))
    }

    /// A link rate in Gb/s to bits per second: positive, finite, at most
    /// [`MAX_GBPS`] and at least [`MIN_BPS`] once rounded.
    pub fn gbps(&self, key: &str, v: f64) -> Result<u64, ScenarioError> {
        let v = self.positive(key, v)?;
        if v > MAX_GBPS {
            return Err(self.err(key, format!("{v} Gb/s is above the {MAX_GBPS} Gb/s limit")));
        }
        let bps = gbps(v);
        if bps < MIN_BPS {
            return Err(self.err(
                key,
                format!("{v} Gb/s rounds to {bps} b/s, below the {MIN_BPS} b/s minimum"),
            ));
        }
        Ok(bps)
    }

    /// A rate in Mb/s to bits per second: positive and finite.
    pub fn mbps(&self, key: &str, v: f64) -> Result<u64, ScenarioError> {
        let v = self.positive(key, v)?;
        if v > MAX_GBPS * 1000.0 {
            return Err(self.err(key, format!("{v} Mb/s is above the {MAX_GBPS} Gb/s limit")));
        }
        Ok((v * 1e6).round() as u64)
    }
}

/// Gb/s to b/s, rounded (for values already checked).
pub fn gbps(x: f64) -> u64 {
    (x * 1e9).round() as u64
}

/// Nanoseconds to picoseconds, rounded (for values already checked).
pub fn ns(x: f64) -> Time {
    (x * NS as f64).round() as Time
}

/// Microseconds to picoseconds, rounded (for values already checked).
pub fn us(x: f64) -> Time {
    (x * US as f64).round() as Time
}
