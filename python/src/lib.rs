//! `rdmalab._native`: the Rust side of the Python package. Two calls, each
//! running the simulator in-process (without holding the GIL) and writing
//! the same files as the command line into a folder the Python side names;
//! the Python side (`python/rdmalab/`) reads them back as DataFrames, so a
//! DataFrame holds exactly the numbers of its file. Every error (a
//! scenario that does not parse, an override naming no key, a folder that
//! cannot be written) is raised as `rdmalab.Error` with the message the
//! command line prints. Touches only the folders it is given.

use experiment::plan::Plan;
use pyo3::create_exception;
use pyo3::prelude::*;
use std::path::{Path, PathBuf};

create_exception!(
    _native,
    Error,
    pyo3::exceptions::PyValueError,
    "An rdmalab error: a bad scenario or override (the message names the key), or a file that cannot be read or written."
);

fn err(m: String) -> PyErr {
    Error::new_err(m)
}

fn read(path: &Path) -> Result<String, String> {
    engine::input::read_text(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))
}

/// Runs `scenario` with `overrides` (dotted keys, TOML values) under
/// `seed` (None: the scenario's) into `out`, as `rdmalab run --out`.
#[pyfunction]
#[pyo3(signature = (scenario, overrides, seed, out))]
fn run(
    py: Python<'_>,
    scenario: PathBuf,
    overrides: Vec<(String, String)>,
    seed: Option<u64>,
    out: PathBuf,
) -> PyResult<()> {
    py.detach(|| {
        let text = read(&scenario)?;
        // As the command line's: never into a sweep's folder.
        experiment::out_dir::open_run(&out)?;
        match experiment::sweep::run_into(&text, &scenario, &overrides, seed, Some(&out))? {
            (_, Some(stalled)) => Err(stalled),
            (_, None) => Ok(()),
        }
    })
    .map_err(err)
}

/// Runs seeds x `vary` over `scenario` (every run with `overrides`) on
/// `jobs` threads into `out`, as `rdmalab sweep --out`: `plan.json`,
/// `sweep.csv` and a folder per run. Every run's scenario is checked
/// before any runs. Returns the runs' folder names, in plan order.
#[pyfunction]
#[pyo3(signature = (scenario, seeds, overrides, vary, jobs, out))]
fn sweep(
    py: Python<'_>,
    scenario: PathBuf,
    seeds: Vec<u64>,
    overrides: Vec<(String, String)>,
    vary: Vec<(String, Vec<String>)>,
    jobs: Option<usize>,
    out: PathBuf,
) -> PyResult<Vec<String>> {
    py.detach(|| {
        let text = read(&scenario)?;
        experiment::sweep::run_count(seeds.len(), &vary)?;
        let plan = Plan::new(&scenario, &text, &seeds, &overrides, &vary);
        let jobs =
            jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        plan.check(jobs)?;
        // As the command line's sweep (`Plan::run_sweep`).
        let (points, _) = plan.run_sweep(jobs, Some(&out))?;
        Ok(points.iter().map(experiment::sweep::Point::label).collect())
    })
    .map_err(err)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("Error", m.py().get_type::<Error>())?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    Ok(())
}
