//! The `rdmalab` command line: `run` a scenario (or the built-in example)
//! and print a readable summary, optionally writing CSV/JSON outputs.

use clap::{Parser, Subcommand};
use experiment::{report, Scenario};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "rdmalab",
    version,
    about = "Packet-level simulator of RDMA datacenter fabrics"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a scenario file (without one: the built-in example).
    Run {
        scenario: Option<PathBuf>,
        /// Override the scenario's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Write flows.csv and summary.json into this directory.
        #[arg(long)]
        out: Option<PathBuf>,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.cmd {
        Cmd::Run {
            scenario,
            seed,
            out,
            quiet,
        } => run(scenario.as_deref(), seed, out.as_deref(), quiet),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(
    path: Option<&Path>,
    seed: Option<u64>,
    out: Option<&Path>,
    quiet: bool,
) -> Result<(), String> {
    let (sc, path) = match path {
        Some(p) => (
            Scenario::load(p).map_err(|e| e.to_string())?,
            p.to_path_buf(),
        ),
        None => {
            let p = PathBuf::from("<built-in example>");
            (
                Scenario::parse(experiment::EXAMPLE, "<built-in example>")
                    .map_err(|e| e.to_string())?,
                p,
            )
        }
    };
    let built = experiment::build(&sc, &path, seed).map_err(|e| e.to_string())?;
    let seed = seed.unwrap_or(sc.seed);
    let name = sc.name.clone().unwrap_or_else(|| "scenario".into());
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::new(built.net.flows().len() as u64);
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} flows  {msg}",
            )
            .expect("valid template"),
        );
        b
    };
    let started = std::time::Instant::now();
    let mut shown = false;
    let outcome = experiment::run(built, |p| {
        // Only runs that last more than a moment get a bar.
        if !shown && started.elapsed() > Duration::from_millis(300) {
            bar.enable_steady_tick(Duration::from_millis(200));
            shown = true;
        }
        if shown {
            bar.set_position(p.flows_done as u64);
            let secs = started.elapsed().as_secs_f64().max(1e-9);
            bar.set_message(format!(
                "sim {:.3} ms  {:.1} M events/s",
                p.sim_time as f64 / 1e9,
                p.events as f64 / secs / 1e6
            ));
        }
    });
    bar.finish_and_clear();
    let s = report::summary(&outcome, &name, seed);
    print!("{}", report::render(&s));
    let hops_per_s = s.packet_hops as f64 / outcome.loop_wall_s.max(1e-9);
    println!(
        "  {:<22} {:.2} s event loop, {:.2} M packet-hops/s, {:.2} M events/s",
        "speed",
        outcome.loop_wall_s,
        hops_per_s / 1e6,
        s.events as f64 / outcome.loop_wall_s.max(1e-9) / 1e6
    );
    if let Some(dir) = out {
        report::write_outputs(&outcome, &s, dir)
            .map_err(|e| format!("writing {}: {e}", dir.display()))?;
        println!("  {:<22} {}", "outputs", dir.display());
    }
    if !s.conservation_ok {
        return Err(outcome.net.check_conservation().unwrap_err());
    }
    Ok(())
}
