//! The `rdmalab` command line: `run` a scenario (or the built-in example)
//! and print a readable summary, optionally writing CSV/JSON outputs;
//! `sweep` and `bench` for many runs; `net` for the real datapath
//! (`net.rs`); `visor` for RDMAvisor (`visor.rs`); `run --plan`, `merge`
//! and `report` (`sweep.rs`).

/// `println!` through [`out::say`], returning its error from the caller.
macro_rules! say {
    ($($arg:tt)*) => {
        crate::out::say(format_args!("{}\n", format_args!($($arg)*)))?
    };
}

mod net;
mod out;
mod sweep;
mod visor;

use clap::{CommandFactory, Parser, Subcommand};
use experiment::{report, summary_text};
use indicatif::{ProgressBar, ProgressStyle};
use out::{prepare_out, say, SIGPIPE_STATUS, STDOUT_CLOSED};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering::Relaxed;
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
    /// Run a scenario file (without one: the built-in example), or one
    /// run of a sweep's plan (--plan FILE --index K --out DIR).
    Run {
        /// A scenario file (TOML; README, "Scenario format"); without
        /// one, the built-in example (scenarios/example.toml).
        #[arg(conflicts_with = "plan")]
        scenario: Option<PathBuf>,
        /// Override the scenario's seed.
        #[arg(long, conflicts_with = "plan")]
        seed: Option<u64>,
        /// Write the run's files into this directory: flows.csv (a row
        /// per flow), summary.json (every headline number),
        /// slowdown_by_size.csv (slowdown by flow-size bucket), and when
        /// the scenario's [output] asks: series.csv (sampled time
        /// series), trace.pcap (packets); report.html with --report.
        /// With --plan: into DIR/<label>/, as sweep --out.
        #[arg(long)]
        out: Option<PathBuf>,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
        /// Override a key, e.g. --set switch.pfc=false (as for sweep).
        #[arg(long = "set", value_name = "KEY=VALUE", conflicts_with = "plan",
              value_parser = sweep::parse_set)]
        set: Vec<(String, String)>,
        /// A plan written by `sweep --plan`: run its run --index.
        #[arg(long, requires_all = ["index", "out"])]
        plan: Option<PathBuf>,
        /// Which run of --plan (0-based; e.g. $SLURM_ARRAY_TASK_ID).
        #[arg(long, requires = "plan")]
        index: Option<usize>,
        /// Also write report.html (plots; one offline file) into --out.
        #[arg(long, requires = "out")]
        report: bool,
        /// Split the run over N threads (overrides `[run] threads`): the
        /// outputs are byte-identical for any N (docs/scale_out.md).
        #[arg(long, value_name = "N", conflicts_with = "plan")]
        threads: Option<u32>,
    },
    /// Run a scenario over several seeds and parameter values, one
    /// simulation per core; each run's outputs equal a sequential run's.
    Sweep {
        scenario: PathBuf,
        /// Seeds, e.g. 1,2,3 or 1..8 (inclusive); each at most once.
        #[arg(long, default_value = "1", value_parser = sweep::parse_seeds)]
        seeds: sweep::Seeds,
        /// Override a key for every run, e.g. --set switch.pfc=false.
        #[arg(long = "set", value_name = "KEY=VALUE", value_parser = sweep::parse_set)]
        set: Vec<(String, String)>,
        /// Sweep a key over values, e.g. --vary traffic.0.load=0.3,0.5,
        /// --vary traffic.0.senders=1..8 (integers, inclusive) or
        /// --vary workload.cdf=@files.txt (one value a line); a key at
        /// most once, and not also in --set.
        #[arg(long, value_name = "KEY=V1,V2,..|A..B|@FILE", value_parser = sweep::parse_vary)]
        vary: Vec<(String, Vec<String>)>,
        /// Parallel runs (default: the number of cores; at most 1024).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=MAX_JOBS as i64))]
        jobs: Option<u32>,
        /// Write each run's outputs into DIR/<label>/, a plan.json and a
        /// sweep.csv.
        #[arg(long, conflicts_with = "plan")]
        out: Option<PathBuf>,
        /// Write the list of runs to this file and run nothing (then
        /// `run --plan FILE --index K --out DIR` each, and `merge DIR`).
        #[arg(long)]
        plan: Option<PathBuf>,
        /// Also write report.html: the sweep's in --out, each run's in
        /// its folder.
        #[arg(long, requires = "out")]
        report: bool,
    },
    /// Write sweep.csv of a sweep directory from its finished runs (made
    /// by `run --plan ... --out DIR`), and name the missing ones.
    Merge {
        dir: PathBuf,
        /// Also write the sweep's report.html (run reports are written by
        /// `run --plan ... --report`).
        #[arg(long)]
        report: bool,
    },
    /// Write report.html of a run's or a sweep's output directory.
    Report { dir: PathBuf },
    /// Put rdmalab's flows beside the HPCC ns-3 simulator's: FLOWS is a
    /// run's flows.csv, FCT ns-3's fct.txt; prints per flow-size bucket
    /// the mean and p99 slowdown of each and their difference, then the
    /// flows that differ most (docs/ns3_validation.md).
    Compare {
        flows: PathBuf,
        fct: PathBuf,
        /// How many of the most different flows to list.
        #[arg(long, default_value_t = 10)]
        top: usize,
    },
    /// Run the shared benchmark scenarios (bench/README.md) and print one
    /// parseable line per run. Without --scenario/--mode, every scenario in
    /// every mode, each in its own process so peak memory is per run.
    Bench {
        /// p128, ws128, a2a128 or p1024.
        #[arg(long)]
        scenario: Option<String>,
        /// line-rate or dcqcn (both without --mode); hpcc, timely or dctcp
        /// when named.
        #[arg(long)]
        mode: Option<String>,
        /// Keep only the first N flows (a tiny input for CI).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        flows: Option<u64>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Write flows.csv and summary.json of the run into this directory.
        #[arg(long)]
        out: Option<PathBuf>,
        /// ECMP's hash: rdmalab (the files as written) or ns3 (the HPCC
        /// ns-3 simulator's, so flows take ns-3's paths; for `compare`).
        #[arg(long, value_parser = ["rdmalab", "ns3"])]
        ecmp_hash: Option<String>,
        /// Split the run over N threads (one --scenario and --mode).
        #[arg(long, value_name = "N")]
        threads: Option<u32>,
    },
    /// The real datapath: the transport over UDP sockets between
    /// processes (docs/datapath.md).
    Net {
        #[command(subcommand)]
        cmd: net::NetCmd,
    },
    /// RDMAvisor, RDMA as a service (docs/visor.md).
    Visor {
        #[command(subcommand)]
        cmd: visor::VisorCmd,
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
            set,
            plan,
            index,
            report,
            threads,
        } => match (plan, index, out) {
            (Some(plan), Some(index), Some(out)) => sweep::run_planned(&plan, index, &out, report),
            (_, _, out) => run(
                scenario.as_deref(),
                seed,
                out.as_deref(),
                quiet,
                &set,
                report,
                threads,
            ),
        },
        Cmd::Sweep {
            scenario,
            seeds,
            set,
            vary,
            jobs,
            out,
            plan,
            report,
        } => match sweep::conflicting_keys(&set, &vary) {
            Some(m) => Cli::command()
                .error(clap::error::ErrorKind::ArgumentConflict, m)
                .exit(),
            None => sweep::sweep(sweep::SweepArgs {
                path: &scenario,
                seeds: &seeds.0,
                set: &set,
                vary: &vary,
                jobs: jobs.map(|n| n as usize),
                out: out.as_deref(),
                plan: plan.as_deref(),
                report,
            }),
        },
        Cmd::Merge { dir, report } => sweep::merge(&dir, report),
        Cmd::Report { dir } => sweep::report_dir(&dir),
        Cmd::Compare { flows, fct, top } => compare(&flows, &fct, top),
        Cmd::Bench {
            scenario,
            mode,
            flows,
            seed,
            out,
            ecmp_hash,
            threads,
        } => bench(
            scenario.as_deref(),
            mode.as_deref(),
            flows.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
            seed,
            out.as_deref(),
            ecmp_hash.as_deref(),
            threads,
        ),
        Cmd::Net { cmd } => net::main(cmd),
        Cmd::Visor { cmd } => visor::main(cmd),
    };
    match result {
        Ok(()) if STDOUT_CLOSED.load(Relaxed) => ExitCode::from(SIGPIPE_STATUS),
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
    overrides: &[(String, String)],
    html: bool,
    threads: Option<u32>,
) -> Result<(), String> {
    let path_given = path.is_some();
    let (text, path) = match path {
        Some(p) => (
            engine::input::read_text(p)
                .map_err(|e| format!("{}: cannot read: {e}", p.display()))?,
            p.to_path_buf(),
        ),
        None => (
            experiment::EXAMPLE.to_string(),
            PathBuf::from("<built-in example>"),
        ),
    };
    let file = path.display().to_string();
    let (mut sc, resolved) =
        experiment::sweep::with_overrides(&text, &file, overrides).map_err(|e| e.to_string())?;
    if sc.name.is_none() && path_given {
        sc.name = path.file_stem().map(|s| s.to_string_lossy().into_owned());
    }
    let files = experiment::scenario::check::Files::Disk;
    let built = experiment::build::build_from(&sc, &path, seed, files, threads)
        .map_err(|e| e.to_string())?;
    if !quiet {
        print_shards(built.net.shard_summary());
    }
    prepare_out(out)?;
    let ran = experiment::ran::Ran::new(&sc, &resolved, overrides);
    warn(&ran.warnings);
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
    let s = report::summary(&outcome, &name, seed, &ran);
    say(format_args!("{}", summary_text::render(&s)))?;
    let hops_per_s = s.packet_hops as f64 / outcome.loop_wall_s.max(1e-9);
    say!(
        "  {:<22} {:.2} s event loop, {:.2} M packet-hops/s, {:.2} M events/s",
        "speed",
        outcome.loop_wall_s,
        hops_per_s / 1e6,
        s.events as f64 / outcome.loop_wall_s.max(1e-9) / 1e6
    );
    say!(
        "  {:<22} README, \"Reading the summary\"",
        "what these mean"
    );
    if let Some(dir) = out {
        report::write_outputs(&outcome, &s, dir)
            .map_err(|e| format!("writing {}: {e}", dir.display()))?;
        say!("  {:<22} {}", "outputs", dir.display());
        if html {
            let p = experiment::html::write_report(dir)?;
            say!("  {:<22} {}", "report", p.display());
        }
    }
    if let Some(m) = &outcome.stalled {
        return Err(m.clone());
    }
    if !s.conservation_ok {
        return Err(outcome.net.check_conservation().unwrap_err());
    }
    Ok(())
}

/// Prints the known traps of what runs (`experiment::ran::warnings`) on
/// standard error.
fn warn(warnings: &[String]) {
    for w in warnings {
        eprintln!("warning: {w}");
    }
}

fn compare(flows: &Path, fct: &Path, top: usize) -> Result<(), String> {
    use experiment::compare;
    let read = |p: &Path| {
        engine::input::read_text(p).map_err(|e| format!("cannot read {}: {e}", p.display()))
    };
    let (a, b) = (flows.display().to_string(), fct.display().to_string());
    let ours = compare::parse_flows_csv(&read(flows)?, &a)?;
    let ns3 = compare::parse_fct_txt(&read(fct)?, &b)?;
    say!("{}", compare::render(&ours, &ns3, [&a, &b], top).trim_end());
    Ok(())
}

/// The partition of a run split over threads, on stderr (nothing on one
/// thread).
fn print_shards(shards: Vec<(u32, u32, u32)>) {
    for (k, (hosts, switches, cut)) in shards.into_iter().enumerate() {
        eprintln!("shard {k}: {hosts} hosts, {switches} switches, {cut} links to other shards");
    }
}

fn bench(
    scenario: Option<&str>,
    mode: Option<&str>,
    flows: Option<usize>,
    seed: u64,
    out: Option<&Path>,
    ecmp_hash: Option<&str>,
    threads: Option<u32>,
) -> Result<(), String> {
    use experiment::bench::{self, Mode};
    let hash = match ecmp_hash {
        Some(h) => experiment::bench::EcmpHash::NAMES
            .iter()
            .find(|(n, _)| *n == h)
            .map(|&(_, v)| v)
            .ok_or_else(|| format!("unknown ECMP hash {h:?}"))?,
        None => experiment::bench::EcmpHash::default(),
    };
    let modes: Vec<Mode> = match mode {
        Some(m) => vec![Mode::parse(m)?],
        None => Mode::ALL.to_vec(),
    };
    let specs: Vec<&bench::BenchSpec> = match scenario {
        Some(s) => vec![bench::find(s)?],
        None => bench::SCENARIOS.iter().collect(),
    };
    if specs.len() == 1 && modes.len() == 1 {
        prepare_out(out)?;
        return bench_one(specs[0], modes[0], flows, seed, out, hash, threads);
    }
    if out.is_some() || threads.is_some() {
        return Err("--out and --threads need one --scenario and one --mode".into());
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
            if let Some(h) = ecmp_hash {
                cmd.arg("--ecmp-hash").arg(h);
            }
            let status = cmd
                .status()
                .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
            if status.code() == Some(SIGPIPE_STATUS.into()) {
                // Its reader went away: so did ours; the rest would print
                // to nobody.
                STDOUT_CLOSED.store(true, Relaxed);
                return Ok(());
            }
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
    hash: experiment::bench::EcmpHash,
    threads: Option<u32>,
) -> Result<(), String> {
    let t0 = std::time::Instant::now();
    let built = experiment::bench::build_with(spec, mode, seed, flows, hash, threads)?;
    print_shards(built.net.shard_summary());
    let setup_s = t0.elapsed().as_secs_f64();
    let outcome = experiment::run(built, |_| {});
    let wall_s = t0.elapsed().as_secs_f64();
    let name = format!("bench-{}-{}", spec.name, mode.name());
    let threads = threads.unwrap_or(1);
    let ran = experiment::bench::ran(spec, mode, flows, hash)?;
    warn(&ran.warnings);
    let s = report::summary(&outcome, &name, seed, &ran);
    say!(
        "bench {} {} threads={threads} packet_hops={} events={} loop_s={:.3} wall_s={:.3} hops_per_s={:.0} peak_rss_mb={:.1} setup_s={:.3} flows_done={}/{} bytes_per_packet={} bytes_per_flow={}",
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
        s.memory.bytes_per_packet,
        s.memory.bytes_per_flow,
    );
    if let Some(dir) = out {
        report::write_outputs(&outcome, &s, dir)
            .map_err(|e| format!("writing {}: {e}", dir.display()))?;
    }
    if let Some(m) = &outcome.stalled {
        return Err(format!("bench {} {}: {m}", spec.name, mode.name()));
    }
    let jobs = s.jobs.as_deref().unwrap_or_default();
    let jobs_done = jobs
        .iter()
        .filter(|j| j.completion_time_ns.is_some())
        .count();
    if !jobs.is_empty() {
        say!(
            "bench {} {} jobs_done={jobs_done}/{}",
            spec.name,
            mode.name(),
            jobs.len()
        );
    }
    if s.flows_finished != s.flows || jobs_done != jobs.len() || !s.conservation_ok {
        return Err(format!(
            "bench {} {}: {} of {} flows and {jobs_done} of {} jobs finished, conservation {}",
            spec.name,
            mode.name(),
            s.flows_finished,
            s.flows,
            jobs.len(),
            if s.conservation_ok { "ok" } else { "violated" }
        ));
    }
    Ok(())
}

/// The most parallel runs (`sweep --jobs`): each holds a whole network.
const MAX_JOBS: u32 = 1024;
