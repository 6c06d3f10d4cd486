//! The commands over many runs: `sweep` (all runs here, in parallel, or
//! `--plan` to list them for elsewhere), `run --plan --index` (one run of a
//! plan), `merge` (a sweep directory's `sweep.csv` from its finished runs)
//! and `report` (the HTML report of a directory already written). The
//! work is `experiment::plan`, `experiment::sweep` and `experiment::html`;
//! this file parses arguments and prints. Touches standard output and the
//! files and directories named by its arguments.

use crate::out::say;
use experiment::plan::{self, Plan};
use experiment::sweep::MAX_RUNS;
use experiment::{html, summary_text, sweep_csv};
use std::path::Path;

/// The most seeds one sweep takes (each is a whole simulation).
const MAX_SEEDS: u64 = 10_000;

/// The seeds of `--seeds`.
#[derive(Clone, Debug)]
pub struct Seeds(pub Vec<u64>);

/// `--seeds`: a list (1,2,3) or an inclusive range (1..8); a seed given
/// twice is refused. An error here is an argument error (exit 2).
pub fn parse_seeds(s: &str) -> Result<Seeds, String> {
    seeds_of(s).map(Seeds)
}

fn seeds_of(s: &str) -> Result<Vec<u64>, String> {
    let bad = || format!("--seeds {s:?}: expected a list like 1,2,3 or a range like 1..8");
    let many = |n: u64| {
        format!("--seeds {s:?}: {n} seeds; at most {MAX_SEEDS} (each is a whole simulation)")
    };
    if let Some((a, b)) = s.split_once("..") {
        let a: u64 = a.trim().parse().map_err(|_| bad())?;
        let b: u64 = b.trim().parse().map_err(|_| bad())?;
        if a > b {
            return Err(bad());
        }
        if b - a >= MAX_SEEDS {
            return Err(many((b - a).saturating_add(1)));
        }
        return Ok((a..=b).collect());
    }
    let seeds: Vec<u64> = s
        .split(',')
        .map(|x| x.trim().parse().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    if seeds.len() as u64 > MAX_SEEDS {
        return Err(many(seeds.len() as u64));
    }
    let mut seen = std::collections::BTreeSet::new();
    if let Some(d) = seeds.iter().find(|&&x| !seen.insert(x)) {
        return Err(format!("--seeds {s:?}: seed {d} is given twice"));
    }
    Ok(seeds)
}

/// `--set KEY=VALUE`.
pub fn parse_set(s: &str) -> Result<(String, String), String> {
    experiment::sweep::parse_assignment(s)
}

/// `--vary KEY=V1,V2,..`, where an item `A..B` is the integers from A to
/// B inclusive (as `--seeds`), or `--vary KEY=@FILE`: FILE's lines, one
/// value each (blank lines and lines starting with `#` skipped). At most
/// [`MAX_RUNS`] values; an error names the item, line or file at fault.
pub fn parse_vary(s: &str) -> Result<(String, Vec<String>), String> {
    let (k, v) = experiment::sweep::parse_assignment(s)?;
    let at = |what: String| format!("--vary {k}: {what}");
    let values = match v.strip_prefix('@') {
        Some(file) => values_of_file(file).map_err(at)?,
        None => {
            let mut values = Vec::new();
            for item in v.split(',').map(str::trim) {
                match range_of(item).map_err(at)? {
                    Some((a, b)) => {
                        let n = i128::from(b) - i128::from(a) + 1;
                        if n > MAX_RUNS as i128 {
                            return Err(at(format!(
                                "the range {item} has {n} values; a sweep runs at most {MAX_RUNS}"
                            )));
                        }
                        values.extend((a..=b).map(|x| x.to_string()));
                    }
                    None => values.push(item.to_string()),
                }
                if values.len() > MAX_RUNS {
                    return Err(at(format!("more than {MAX_RUNS} values")));
                }
            }
            values
        }
    };
    Ok((k, values))
}

/// `A..B` of integers as (A, B); None for a value that is no range (a
/// number, a word, a path such as ../x.txt); an error for one that looks
/// like a range and is not one of integers, or is empty.
fn range_of(item: &str) -> Result<Option<(i64, i64)>, String> {
    let Some((a, b)) = item.split_once("..") else {
        return Ok(None);
    };
    let numeric =
        |x: &str| !x.is_empty() && x.chars().all(|c| c.is_ascii_digit() || ".-+".contains(c));
    if !(numeric(a) && numeric(b)) {
        return Ok(None);
    }
    let bad = || format!("{item:?} is not a range of integers like 1..8 (inclusive)");
    let (a, b): (i64, i64) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
    if a > b {
        return Err(format!("the range {item} is empty ({a} > {b})"));
    }
    Ok(Some((a, b)))
}

/// The values of `--vary KEY=@file`.
fn values_of_file(file: &str) -> Result<Vec<String>, String> {
    let text = engine::input::read_text(Path::new(file))
        .map_err(|e| format!("cannot read @{file}: {e}"))?;
    let values: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect();
    if values.is_empty() {
        return Err(format!("@{file} holds no value (one a line)"));
    }
    if values.len() > MAX_RUNS {
        return Err(format!(
            "@{file} holds {} values; a sweep runs at most {MAX_RUNS}",
            values.len()
        ));
    }
    Ok(values)
}

/// A key varied twice, or both set and varied: the runs would be
/// ambiguous. The message for the argument error, if any.
pub fn conflicting_keys(
    set: &[(String, String)],
    vary: &[(String, Vec<String>)],
) -> Option<String> {
    let mut varied = std::collections::BTreeSet::new();
    for (k, _) in vary {
        if !varied.insert(k.as_str()) {
            return Some(format!("--vary {k}: the key is varied twice"));
        }
    }
    set.iter()
        .find(|(k, _)| varied.contains(k.as_str()))
        .map(|(k, _)| format!("--set {k} and --vary {k}: the key is both set and varied"))
}

/// What `rdmalab sweep` was asked.
pub struct SweepArgs<'a> {
    pub path: &'a Path,
    pub seeds: &'a [u64],
    pub set: &'a [(String, String)],
    pub vary: &'a [(String, Vec<String>)],
    pub jobs: Option<usize>,
    pub out: Option<&'a Path>,
    pub plan: Option<&'a Path>,
    pub report: bool,
}

/// The plan of a sweep's arguments (checked: sizes and every run's
/// scenario).
fn plan_of(a: &SweepArgs) -> Result<Plan, String> {
    let text = engine::input::read_text(a.path)
        .map_err(|e| format!("{}: cannot read: {e}", a.path.display()))?;
    let (seeds, fixed, varied) = (a.seeds, a.set, a.vary);
    experiment::sweep::run_count(seeds.len(), varied)
        .map_err(|_| format!("--seeds x --vary make more than {MAX_RUNS} runs; split the sweep"))?;
    Ok(Plan::new(a.path, &text, seeds, fixed, varied))
}

pub fn sweep(a: SweepArgs) -> Result<(), String> {
    let plan = plan_of(&a)?;
    let jobs = a
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    for w in plan.check(jobs)? {
        eprintln!("warning: {w}");
    }
    if let Some(file) = a.plan {
        experiment::files::write_atomic(file, &plan.to_bytes())
            .map_err(|e| format!("--plan {}: cannot write: {e}", file.display()))?;
        let n = plan.runs.len();
        say(format_args!(
            "{}: {n} runs (indices 0 to {}); run each with\n  rdmalab run --plan {} --index K --out DIR\nthen `rdmalab merge DIR`\n",
            file.display(),
            n - 1,
            file.display()
        ))?;
        return Ok(());
    }
    // A sweep replaces whatever plan and runs the folder had; only
    // `run --plan` refuses another plan.
    let t0 = std::time::Instant::now();
    let (points, rows) = plan.run_sweep(jobs, a.out)?;
    let wall = t0.elapsed().as_secs_f64();
    say(format_args!("{}", sweep_csv::table(&rows)))?;
    say(format_args!(
        "{} runs on {jobs} threads in {wall:.2} s\n",
        points.len()
    ))?;
    if let Some(dir) = a.out {
        if a.report {
            for p in &points {
                html::write_report(&dir.join(p.label()))?;
            }
            sweep_report(dir)?;
        }
    }
    Ok(())
}

/// Writes the sweep's report into `dir` and says where.
fn sweep_report(dir: &Path) -> Result<(), String> {
    let p = html::write_report(dir)?;
    say(format_args!("report: {}\n", p.display()))
}

/// `rdmalab run --plan FILE --index K --out DIR`.
pub fn run_planned(file: &Path, index: usize, out: &Path, html: bool) -> Result<(), String> {
    let plan = Plan::load(file)?;
    let label = plan.run_at(index)?.label.clone();
    let s = plan.run_one(index, out)?;
    for w in &s.warnings {
        eprintln!("warning: {w}");
    }
    if html {
        html::write_report(&out.join(&label))?;
    }
    say(format_args!("{}", summary_text::render(&s)))?;
    say(format_args!(
        "  {:<22} {}\n",
        "outputs",
        out.join(label).display()
    ))?;
    Ok(())
}

/// `rdmalab merge DIR`.
pub fn merge(dir: &Path, html: bool) -> Result<(), String> {
    let m = plan::merge(dir)?;
    say(format_args!("{}", sweep_csv::table(&m.rows)))?;
    plan::write_table(dir, &m.rows)?;
    if html {
        sweep_report(dir)?;
    }
    if m.missing.is_empty() {
        say(format_args!(
            "{}: all {} runs merged into sweep.csv\n",
            dir.display(),
            m.rows.len()
        ))?;
        return Ok(());
    }
    let list: Vec<String> = m
        .missing
        .iter()
        .map(|r| format!("  --index {} ({})", r.index, r.label))
        .collect();
    Err(format!(
        "{}: {} of {} runs missing (sweep.csv has the {} finished); run them with `rdmalab run --plan {} --index K --out {}`:\n{}",
        dir.display(),
        m.missing.len(),
        m.plan.runs.len(),
        m.rows.len(),
        dir.join(plan::PLAN_FILE).display(),
        dir.display(),
        list.join("\n")
    ))
}

/// `rdmalab report DIR`: a run's report, or a sweep's with each finished
/// run's (what `sweep --report` writes).
pub fn report_dir(dir: &Path) -> Result<(), String> {
    if dir.join(plan::PLAN_FILE).is_file() {
        let m = plan::merge(dir)?;
        for (label, _) in &m.rows {
            html::write_report(&dir.join(label))?;
        }
    }
    let p = html::write_report(dir)?;
    say(format_args!("report: {}\n", p.display()))
}
