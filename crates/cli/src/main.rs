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
    /// Run the shared benchmark scenarios (bench/README.md) and print one
    /// parseable line per run. Without --scenario/--mode, every scenario in
    /// every mode, each in its own process so peak memory is per run.
    Bench {
        /// p128, ws128, a2a128 or p1024.
        #[arg(long)]
        scenario: Option<String>,
        /// line-rate or dcqcn.
        #[arg(long)]
        mode: Option<String>,
        /// Keep only the first N flows (a tiny input for CI).
        #[arg(long)]
        flows: Option<usize>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Write flows.csv and summary.json of the run into this directory.
        #[arg(long)]
        out: Option<PathBuf>,
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
        Cmd::Bench {
            scenario,
            mode,
            flows,
            seed,
            out,
        } => bench(
            scenario.as_deref(),
            mode.as_deref(),
            flows,
            seed,
            out.as_deref(),
        ),
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

fn bench(
    scenario: Option<&str>,
    mode: Option<&str>,
    flows: Option<usize>,
    seed: u64,
    out: Option<&Path>,
) -> Result<(), String> {
    use experiment::bench::{self, Mode};
    let modes: Vec<Mode> = match mode {
        Some(m) => vec![Mode::parse(m)?],
        None => Mode::ALL.to_vec(),
    };
    let specs: Vec<&bench::BenchSpec> = match scenario {
        Some(s) => vec![bench::find(s)?],
        None => bench::SCENARIOS.iter().collect(),
    };
    if specs.len() == 1 && modes.len() == 1 {
        return bench_one(specs[0], modes[0], flows, seed, out);
    }
    if out.is_some() {
        return Err("--out needs one --scenario and one --mode".into());
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    for spec in &specs {
        for m in &modes {
            let mut cmd = std::process::Command::new(&exe);
            cmd.args([
                "bench",
                "--scenario",
                spec.name,
                "--mode",
                m.name(),
                "--seed",
            ])
            .arg(seed.to_string());
            if let Some(n) = flows {
                cmd.arg("--flows").arg(n.to_string());
            }
            let status = cmd
                .status()
                .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
            if !status.success() {
                return Err(format!(
                    "bench {} {} failed ({status})",
                    spec.name,
                    m.name()
                ));
            }
        }
    }
    Ok(())
}

fn bench_one(
    spec: &experiment::bench::BenchSpec,
    mode: experiment::bench::Mode,
    flows: Option<usize>,
    seed: u64,
    out: Option<&Path>,
) -> Result<(), String> {
    let t0 = std::time::Instant::now();
    let built = experiment::bench::build(spec, mode, seed, flows)?;
    let setup_s = t0.elapsed().as_secs_f64();
    let outcome = experiment::run(built, |_| {});
    let wall_s = t0.elapsed().as_secs_f64();
    let s = report::summary(
        &outcome,
        &format!("bench-{}-{}", spec.name, mode.name()),
        seed,
    );
    println!(
        "bench {} {} packet_hops={} events={} loop_s={:.3} wall_s={:.3} hops_per_s={:.0} peak_rss_mb={:.1} setup_s={:.3} flows_done={}/{}",
        spec.name,
        mode.name(),
        s.packet_hops,
        s.events,
        outcome.loop_wall_s,
        wall_s,
        s.packet_hops as f64 / outcome.loop_wall_s.max(1e-9),
        experiment::bench::peak_rss_mb(),
        setup_s,
        s.flows_finished,
        s.flows,
    );
    if let Some(dir) = out {
        report::write_outputs(&outcome, &s, dir)
            .map_err(|e| format!("writing {}: {e}", dir.display()))?;
    }
    if s.flows_finished != s.flows || !s.conservation_ok {
        return Err(format!(
            "bench {} {}: {} of {} flows finished, conservation {}",
            spec.name,
            mode.name(),
            s.flows_finished,
            s.flows,
            if s.conservation_ok { "ok" } else { "violated" }
        ));
    }
    Ok(())
}
