//! Sweeps run elsewhere: a plan (`plan.json`) lists a sweep's runs without
//! running them (`rdmalab sweep ... --plan FILE`); any process, on any node
//! of a cluster, runs one of them by its index into `DIR/<label>/`
//! (`rdmalab run --plan FILE --index K --out DIR`), exactly as
//! `rdmalab sweep --out DIR` would; `rdmalab merge DIR` then writes
//! `sweep.csv` from the finished runs and names the missing ones. A sweep
//! with `--out` writes the same `plan.json` into its directory, so a merged
//! directory ends byte-identical to a sweep's. Reads and writes only the
//! plan file, `DIR/plan.json` and `DIR/<label>/`.

use crate::files::write_atomic;
use crate::report::SummaryJson;
use crate::sweep::{self, Point};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

pub use crate::out_dir::PLAN_FILE;
/// The format of `plan.json` this program reads and writes (2: with its
/// digest).
pub const FORMAT: u32 = 2;

/// Every run of a sweep, and what is needed to run each one alone.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Plan {
    /// The format (`FORMAT`).
    pub rdmalab_plan: u32,
    /// The program that wrote it: another version may write other bytes.
    pub version: String,
    /// The scenario file as given (files it names are found from there).
    pub scenario: String,
    /// The scenario's text when the plan was made (runs use this text).
    pub text: String,
    pub seeds: Vec<u64>,
    /// `--set`: every run's overrides.
    pub set: Vec<(String, String)>,
    /// `--vary`: the keys varied and their values, in order.
    pub vary: Vec<(String, Vec<String>)>,
    pub runs: Vec<PlanRun>,
    /// SHA-256 of the plan as written with this field empty (hex): an
    /// edit anywhere (the scenario's text, a seed, a label) is refused.
    pub digest: String,
}

/// One run of a plan.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct PlanRun {
    pub index: usize,
    /// Its folder under the output directory.
    pub label: String,
    pub seed: u64,
    pub overrides: Vec<(String, String)>,
}

impl PlanRun {
    pub fn point(&self) -> Point {
        Point {
            seed: self.seed,
            overrides: self.overrides.clone(),
        }
    }
}

/// What `merge` found: the finished runs' summaries (label and JSON, in
/// plan order) and the runs without a `summary.json`.
pub struct Merged {
    pub plan: Plan,
    pub rows: Vec<(String, Value)>,
    pub missing: Vec<PlanRun>,
}

impl Plan {
    /// The plan of `seeds` x `vary` over `scenario` (whose text is `text`),
    /// every run with the overrides `set`, in the order a sweep runs them.
    pub fn new(
        scenario: &Path,
        text: &str,
        seeds: &[u64],
        set: &[(String, String)],
        vary: &[(String, Vec<String>)],
    ) -> Plan {
        let runs = sweep::points(seeds, set, vary)
            .into_iter()
            .enumerate()
            .map(|(index, p)| PlanRun {
                index,
                label: p.label(),
                seed: p.seed,
                overrides: p.overrides,
            })
            .collect();
        let mut plan = Plan {
            rdmalab_plan: FORMAT,
            version: env!("CARGO_PKG_VERSION").to_string(),
            scenario: scenario.display().to_string(),
            text: text.to_string(),
            seeds: seeds.to_vec(),
            set: set.to_vec(),
            vary: vary.to_vec(),
            runs,
            digest: String::new(),
        };
        plan.digest = plan.content_digest();
        plan
    }

    /// The digest of this plan's content (its bytes with `digest` empty).
    fn content_digest(&self) -> String {
        use sha2::{Digest, Sha256};
        let bare = Plan {
            digest: String::new(),
            ..self.clone()
        };
        Sha256::digest(bare.to_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// The points of the runs, in order.
    pub fn points(&self) -> Vec<Point> {
        self.runs.iter().map(PlanRun::point).collect()
    }

    /// The plan as written (pretty JSON, a final newline).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = serde_json::to_vec_pretty(self).expect("a plan serialises");
        v.push(b'\n');
        v
    }

    /// Checks that every run's scenario parses and builds, with `jobs`
    /// threads (so a bad override is found before anything runs, here or
    /// on a cluster), listing the bad runs; returns the runs' warnings
    /// ([`sweep::check`]).
    pub fn check(&self, jobs: usize) -> Result<Vec<String>, String> {
        sweep::check(&self.text, Path::new(&self.scenario), &self.points(), jobs)
    }

    /// Runs every run of the plan on `jobs` threads, as `rdmalab sweep`
    /// does: with `out`, the folder is opened as a sweep's (an earlier
    /// sweep's plan and runs removed, a run's folder refused), the plan
    /// written first and `sweep.csv` last; returns the points and the
    /// table's rows. The command line and the Python package both run
    /// sweeps through this.
    pub fn run_sweep(
        &self,
        jobs: usize,
        out: Option<&Path>,
    ) -> Result<(Vec<Point>, Vec<Row>), String> {
        if let Some(dir) = out {
            crate::out_dir::open_sweep(dir)?;
            crate::out_dir::clear_sweep(dir)?;
            let path = dir.join(PLAN_FILE);
            write_atomic(&path, &self.to_bytes())
                .map_err(|e| format!("writing {}: {e}", path.display()))?;
        }
        let points = self.points();
        let results = sweep::run(&self.text, Path::new(&self.scenario), &points, jobs, out)?;
        let rows = rows(&points, &results);
        if let Some(dir) = out {
            write_table(dir, &rows)?;
        }
        Ok((points, rows))
    }

    /// Reads a plan, naming `path` in every error.
    pub fn load(path: &Path) -> Result<Plan, String> {
        let name = path.display();
        let bytes = engine::input::read_bytes(path)
            .map_err(|e| format!("{name}: cannot read the plan: {e}"))?;
        let plan: Plan = serde_json::from_slice(&bytes)
            .map_err(|e| format!("{name}: not a plan written by `rdmalab sweep --plan` ({e})"))?;
        if plan.rdmalab_plan != FORMAT {
            return Err(format!(
                "{name}: plan format {} (this program reads {FORMAT})",
                plan.rdmalab_plan
            ));
        }
        let ours = env!("CARGO_PKG_VERSION");
        if plan.version != ours {
            return Err(format!(
                "{name}: written by rdmalab {}, this is {ours}; make the plan again",
                plan.version
            ));
        }
        if plan.digest != plan.content_digest() {
            return Err(format!(
                "{name}: the plan's content does not match its digest (edited by hand?); make the plan again"
            ));
        }
        for (i, r) in plan.runs.iter().enumerate() {
            if r.index != i || r.label != r.point().label() {
                return Err(format!(
                    "{name}: run {i} is not what its seed and overrides make (edited by hand?)"
                ));
            }
        }
        Ok(plan)
    }

    /// The run at `index`, or an error saying what the plan has.
    pub fn run_at(&self, index: usize) -> Result<&PlanRun, String> {
        self.runs.get(index).ok_or_else(|| match self.runs.len() {
            0 => format!("--index {index}: the plan has no runs"),
            n => format!(
                "--index {index}: the plan has {n} runs, indices 0 to {}",
                n - 1
            ),
        })
    }

    /// Writes this plan as `dir/plan.json`, unless the one there is the
    /// same; a different plan there is an error (two sweeps in one folder).
    pub fn write_into(&self, dir: &Path) -> Result<(), String> {
        let path = dir.join(PLAN_FILE);
        let bytes = self.to_bytes();
        match std::fs::read(&path) {
            Ok(old) if old == bytes => Ok(()),
            Ok(_) => Err(format!(
                "{}: another sweep's plan is there; give another --out",
                path.display()
            )),
            Err(_) => {
                write_atomic(&path, &bytes).map_err(|e| format!("writing {}: {e}", path.display()))
            }
        }
    }

    /// Runs the run at `index` into `out/<label>/`, after writing the plan
    /// as `out/plan.json`.
    pub fn run_one(&self, index: usize, out: &Path) -> Result<SummaryJson, String> {
        let r = self.run_at(index)?;
        crate::out_dir::open_sweep(out)?;
        self.write_into(out)?;
        sweep::run_point(&self.text, Path::new(&self.scenario), &r.point(), Some(out))
    }
}

/// Reads the sweep directory `dir`: its plan and every finished run's
/// summary. A directory without a plan, or a summary that cannot be read,
/// is an error naming the path.
pub fn merge(dir: &Path) -> Result<Merged, String> {
    let plan_path = dir.join(PLAN_FILE);
    if !plan_path.exists() {
        return Err(format!(
            "{}: not a sweep directory (no {PLAN_FILE}; `rdmalab sweep --out` and `rdmalab run --plan` write one)",
            dir.display()
        ));
    }
    let plan = Plan::load(&plan_path)?;
    let mut rows = Vec::new();
    let mut missing = Vec::new();
    for r in &plan.runs {
        let path = dir.join(&r.label).join("summary.json");
        let bytes = match engine::input::read_bytes(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                missing.push(r.clone());
                continue;
            }
            Err(e) => return Err(format!("{}: cannot read: {e}", path.display())),
        };
        let v: Value = serde_json::from_slice(&bytes)
            .map_err(|e| format!("{}: not a run's summary ({e})", path.display()))?;
        check_summary(&v).map_err(|m| format!("{}: not a run's summary ({m})", path.display()))?;
        let (_, resolved) = sweep::with_overrides(&plan.text, &plan.scenario, &r.overrides)
            .map_err(|e| format!("run {} ({}): {e}", r.index, r.label))?;
        let id = crate::out_dir::run_id(&resolved, r.seed);
        let found = v.get("run_id").and_then(Value::as_str);
        if found != Some(id.as_str()) {
            return Err(format!(
                "{}: another run's summary (run_id {}; run {} of the plan, seed {}, is {id}): run it again",
                path.display(),
                found.unwrap_or("none"),
                r.index,
                r.seed
            ));
        }
        rows.push((r.label.clone(), v));
    }
    Ok(Merged {
        plan,
        rows,
        missing,
    })
}

/// A key of a summary, the test of its JSON type, and that type in words.
type SummaryKey = (&'static str, fn(&Value) -> bool, &'static str);

/// What every run's `summary.json` holds (`report::SummaryJson`), by key
/// and JSON type: a file without one of them (`{"seed": 1}` was merged)
/// is no run's summary.
const SUMMARY_KEYS: [SummaryKey; 14] = [
    ("scenario", Value::is_string, "a string"),
    ("seed", Value::is_u64, "a count"),
    ("version", Value::is_string, "a string"),
    ("hosts", Value::is_u64, "a count"),
    ("end_state", Value::is_string, "a string"),
    ("sim_time_ns", Value::is_u64, "a count"),
    ("flows", Value::is_u64, "a count"),
    ("flows_finished", Value::is_u64, "a count"),
    ("fct_ns", Value::is_object, "an object"),
    ("slowdown", Value::is_object, "an object"),
    ("delivered_gbps", Value::is_number, "a number"),
    ("drops", Value::is_object, "an object"),
    ("conservation_ok", Value::is_boolean, "true or false"),
    ("slowdown_by_size", Value::is_array, "a list"),
];

/// Checks that `v` has the keys every run's summary has.
fn check_summary(v: &Value) -> Result<(), String> {
    for (key, is, what) in SUMMARY_KEYS {
        match v.get(key) {
            None => return Err(format!("no \"{key}\"")),
            Some(x) if !is(x) => return Err(format!("\"{key}\" is not {what}")),
            Some(_) => {}
        }
    }
    Ok(())
}

/// A row of `sweep.csv`: a run's label and its summary's columns.
pub type Row = (String, Value);

/// Writes a sweep's table, `dir/sweep.csv` (a sweep's end, or `merge`).
pub fn write_table(dir: &Path, rows: &[Row]) -> Result<(), String> {
    let path = dir.join("sweep.csv");
    write_atomic(&path, crate::sweep_csv::csv(rows).as_bytes())
        .map_err(|e| format!("writing {}: {e}", path.display()))
}

/// The rows `sweep.csv` is made of, from summaries in memory.
pub fn rows(points: &[Point], summaries: &[SummaryJson]) -> Vec<(String, Value)> {
    points
        .iter()
        .zip(summaries)
        .map(|(p, s)| {
            (
                p.label(),
                serde_json::to_value(s).expect("a summary serialises"),
            )
        })
        .collect()
}
