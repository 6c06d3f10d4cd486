//! Parameter sweeps: one scenario, a list of seeds and of key overrides,
//! every combination run as its own single-threaded simulation, in parallel
//! across cores (rayon). Results come back in input order, and each run's
//! outputs are exactly what a sequential `rdmalab run` of the same
//! combination writes.

use crate::report::{self, SummaryJson};
use crate::{Scenario, ScenarioError};
use rayon::prelude::*;
use std::path::Path;

/// The longest [`Point::label`], in bytes: a folder's name, with room to
/// spare under the usual 255.
pub const MAX_LABEL: usize = 200;

/// One point of a sweep: a seed and the overrides applied to the file.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Point {
    pub seed: u64,
    pub overrides: Vec<(String, String)>,
}

impl Point {
    /// A name usable as a folder: `seed3` or `seed3_switch.pfc=false`.
    /// One longer than [`MAX_LABEL`] bytes (many overrides; a file name
    /// has at most 255) keeps its start and ends with a hash of the
    /// whole, so that distinct points keep distinct folders.
    pub fn label(&self) -> String {
        let mut l = format!("seed{}", self.seed);
        for (k, v) in &self.overrides {
            l.push('_');
            // A directory name: TOML's quotes go (a bare word is the same
            // string), slashes and spaces become dashes.
            l.push_str(&format!("{k}={v}").replace('"', "").replace(['/', ' '], "-"));
        }
        if l.len() > MAX_LABEL {
            // FNV-1a: stable across builds and platforms, unlike std's hasher.
            let hash = l.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            });
            let mut cut = MAX_LABEL - 18;
            while !l.is_char_boundary(cut) {
                cut -= 1;
            }
            l = format!("{}_{hash:016x}", &l[..cut]);
        }
        l
    }
}

/// Parses `key=value` (the value in TOML syntax; bare words become strings).
pub fn parse_assignment(s: &str) -> Result<(String, String), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?}: expected key=value"))?;
    if k.trim().is_empty() {
        return Err(format!("{s:?}: empty key"));
    }
    Ok((k.trim().to_string(), v.trim().to_string()))
}

fn toml_value(v: &str) -> toml::Value {
    // A value that is valid TOML keeps its type (numbers, booleans, arrays);
    // anything else is taken as a string.
    format!("x = {v}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("x"))
        .unwrap_or_else(|| toml::Value::String(v.to_string()))
}

/// The most parts a dotted key may have: the deepest scenario key has
/// five (`switch.lb.conweave.theta_reply_us` and the like). A key nested
/// thousands deep would be written out and read back recursively, and
/// overflow the stack.
const MAX_KEY_PARTS: usize = 16;

/// Sets a dotted key (`switch.buffer_mb`, `traffic.0.load`) in a TOML table.
fn set_key(table: &mut toml::Table, key: &str, value: toml::Value) -> Result<(), String> {
    let parts: Vec<&str> = key.split('.').collect();
    if parts.len() > MAX_KEY_PARTS {
        return Err(format!(
            "a key of {} parts: a scenario key has at most {MAX_KEY_PARTS}",
            parts.len()
        ));
    }
    let mut cur = table;
    for (i, p) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        if last {
            cur.insert(p.to_string(), value);
            return Ok(());
        }
        let next = cur
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        cur = match next {
            toml::Value::Table(t) => t,
            toml::Value::Array(a) => {
                let idx: usize = parts[i + 1]
                    .parse()
                    .map_err(|_| format!("{key}: {p} is a list; give an index, e.g. {p}.0"))?;
                let len = a.len();
                let item = a
                    .get_mut(idx)
                    .ok_or_else(|| format!("{key}: {p} has {len} entries, no index {idx}"))?;
                match item {
                    toml::Value::Table(t) if i + 2 < parts.len() => {
                        return set_key(t, &parts[i + 2..].join("."), value)
                    }
                    _ => return Err(format!("{key}: cannot set inside {p}.{idx}")),
                }
            }
            _ => return Err(format!("{key}: {p} is not a table")),
        };
    }
    Ok(())
}

/// The scenario of one sweep point.
pub fn scenario_for(text: &str, file: &str, point: &Point) -> Result<Scenario, ScenarioError> {
    with_overrides(text, file, &point.overrides).map(|(sc, _)| sc)
}

/// The scenario in `text` (from `file`) with `overrides` applied, each a
/// dotted key and a TOML value (`rdmalab run --set`, and every sweep
/// point), and its text after them (what ran: the run's identity is made
/// from it).
pub fn with_overrides(
    text: &str,
    file: &str,
    overrides: &[(String, String)],
) -> Result<(Scenario, String), ScenarioError> {
    if overrides.is_empty() {
        return Ok((Scenario::parse(text, file)?, text.to_string()));
    }
    let mut table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let at = e
            .span()
            .map(|s| format!(" (line {})", crate::scenario::check::line_of(text, s.start)));
        ScenarioError::new(
            file,
            "",
            format!("{}{}", e.message().trim(), at.unwrap_or_default()),
        )
    })?;
    for (k, v) in overrides {
        set_key(&mut table, k, toml_value(v))
            .map_err(|m| ScenarioError::new(file, k.clone(), m))?;
    }
    let edited =
        toml::to_string(&table).map_err(|e| ScenarioError::new(file, "", e.to_string()))?;
    let with: Vec<String> = overrides.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let sc = Scenario::parse_over(
        &edited,
        text,
        overrides,
        &format!("{file} (with {})", with.join(" ")),
    )?;
    Ok((sc, edited))
}

/// The most runs one sweep takes (seeds x varied values).
pub const MAX_RUNS: usize = 100_000;

/// How many runs `seeds` seeds x `vary` make, refused above [`MAX_RUNS`]
/// before any is planned (the command line and the Python package alike).
pub fn run_count(seeds: usize, vary: &[(String, Vec<String>)]) -> Result<usize, String> {
    vary.iter()
        .try_fold(seeds, |n, (_, v)| n.checked_mul(v.len()))
        .filter(|&n| n <= MAX_RUNS)
        .ok_or_else(|| format!("seeds x vary make more than {MAX_RUNS} runs; split the sweep"))
}

/// Expands seeds x (one choice per varied key) into points, in order.
pub fn points(
    seeds: &[u64],
    fixed: &[(String, String)],
    vary: &[(String, Vec<String>)],
) -> Vec<Point> {
    let mut combos: Vec<Vec<(String, String)>> = vec![fixed.to_vec()];
    for (k, values) in vary {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push((k.clone(), v.clone()));
                    c
                })
            })
            .collect();
    }
    let mut out = Vec::new();
    for overrides in combos {
        for &seed in seeds {
            out.push(Point {
                seed,
                overrides: overrides.clone(),
            });
        }
    }
    out
}

/// The most bad runs [`check`] lists by name.
const MAX_LISTED: usize = 20;

/// Checks every point before any runs (in parallel with `jobs` threads):
/// its scenario parses and builds (the network is built and dropped), so
/// that a sweep never runs its valid points and then fails on another.
/// The error lists the bad ones, each with its index, label and error.
/// Returns the known traps of the runs (`crate::ran::warnings`), each once.
pub fn check(
    text: &str,
    path: &Path,
    points: &[Point],
    jobs: usize,
) -> Result<Vec<String>, String> {
    let file = path.display().to_string();
    let checked: Vec<Result<Vec<String>, String>> = pool(jobs, points.len())?.install(|| {
        points
            .par_iter()
            .map(|p| {
                let (sc, _) =
                    with_overrides(text, &file, &p.overrides).map_err(|e| e.to_string())?;
                crate::build(&sc, path, Some(p.seed)).map_err(|e| e.to_string())?;
                Ok(crate::ran::warnings(&sc))
            })
            .collect()
    });
    let bad: Vec<String> = checked
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            Some(format!(
                "  run {i} ({}): {}",
                points[i].label(),
                r.as_ref().err()?
            ))
        })
        .collect();
    if bad.is_empty() {
        let mut warnings: Vec<String> = checked.into_iter().flatten().flatten().collect();
        warnings.sort();
        warnings.dedup();
        return Ok(warnings);
    }
    let more = match bad.len().saturating_sub(MAX_LISTED) {
        0 => String::new(),
        n => format!("\n  and {n} more"),
    };
    Err(format!(
        "{} of {} runs cannot run; nothing was run:\n{}{more}",
        bad.len(),
        points.len(),
        bad[..bad.len().min(MAX_LISTED)].join("\n")
    ))
}

/// A pool of `jobs` threads (at most one per point).
fn pool(jobs: usize, points: usize) -> Result<rayon::ThreadPool, String> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.clamp(1, 1024).min(points.max(1)))
        .build()
        .map_err(|e| e.to_string())
}

/// Runs every point (in parallel with `jobs` threads), writing each run's
/// outputs under `out/<label>/` when `out` is given; returns the summaries
/// in point order.
pub fn run(
    text: &str,
    path: &Path,
    points: &[Point],
    jobs: usize,
    out: Option<&Path>,
) -> Result<Vec<SummaryJson>, String> {
    let results: Vec<Result<SummaryJson, String>> = pool(jobs, points.len())?.install(|| {
        points
            .par_iter()
            .map(|p| run_point(text, path, p, out))
            .collect()
    });
    results.into_iter().collect()
}

/// Runs one point as a sweep does: its outputs under `out/<label>/` when
/// `out` is given; a stalled run is an error naming its label, after
/// its files are written.
pub fn run_point(
    text: &str,
    path: &Path,
    p: &Point,
    out: Option<&Path>,
) -> Result<SummaryJson, String> {
    let dir = out.map(|d| d.join(p.label()));
    match run_into(text, path, &p.overrides, Some(p.seed), dir.as_deref())? {
        (_, Some(m)) => Err(format!("{}: {m}", p.label())),
        (s, None) => Ok(s),
    }
}

/// Runs the scenario in `text` (read from `path`) with `overrides`, under
/// `seed` (`None`: the scenario's own), writing its outputs into `dir`
/// when given: what `rdmalab run FILE --set .. --seed .. --out DIR`
/// writes. Returns the summary and, for a run ended for making no
/// progress, what was stuck (its files are written all the same). An
/// error is a scenario that does not parse or build, or a file that
/// cannot be written.
pub fn run_into(
    text: &str,
    path: &Path,
    overrides: &[(String, String)],
    seed: Option<u64>,
    dir: Option<&Path>,
) -> Result<(SummaryJson, Option<String>), String> {
    let file = path.display().to_string();
    let (sc, resolved) = with_overrides(text, &file, overrides).map_err(|e| e.to_string())?;
    let built = crate::build(&sc, path, seed).map_err(|e| e.to_string())?;
    let o = crate::run(built, |_| {});
    let name = sc.name.clone().unwrap_or_else(|| {
        path.file_stem()
            .map_or("scenario".into(), |s| s.to_string_lossy().into_owned())
    });
    let ran = crate::ran::Ran::new(&sc, &resolved, overrides);
    let s = report::summary(&o, &name, seed.unwrap_or(sc.seed), &ran);
    if let Some(d) = dir {
        report::write_outputs(&o, &s, d).map_err(|e| format!("writing {}: {e}", d.display()))?;
    }
    Ok((s, o.stalled))
}
