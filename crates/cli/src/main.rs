//! The `rdmalab` command line: `run` a scenario (or the built-in example)
//! and print a readable summary, optionally writing CSV/JSON outputs;
//! `sweep` and `bench` for many runs; `net` for the real datapath
//! (`net.rs`); `visor` for RDMAvisor (`visor.rs`).

mod net;
mod visor;

use clap::{Parser, Subcommand};
use experiment::report;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
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
        /// Override a key, e.g. --set switch.pfc=false (as for sweep).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// Run a scenario over several seeds and parameter values, one
    /// simulation per core; each run's outputs equal a sequential run's.
    Sweep {
        scenario: PathBuf,
        /// Seeds, e.g. 1,2,3 or 1..8 (inclusive).
        #[arg(long, default_value = "1")]
        seeds: String,
        /// Override a key for every run, e.g. --set switch.pfc=false.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Sweep a key over values, e.g. --vary traffic.0.load=0.3,0.5.
        #[arg(long, value_name = "KEY=V1,V2,..")]
        vary: Vec<String>,
        /// Parallel runs (default: the number of cores; at most 1024).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=MAX_JOBS as i64))]
        jobs: Option<u32>,
        /// Write each run's outputs into DIR/<label>/ and a sweep.csv.
        #[arg(long)]
        out: Option<PathBuf>,
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
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        flows: Option<u64>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Write flows.csv and summary.json of the run into this directory.
        #[arg(long)]
        out: Option<PathBuf>,
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
        } => run(scenario.as_deref(), seed, out.as_deref(), quiet, &set),
        Cmd::Sweep {
            scenario,
            seeds,
            set,
            vary,
            jobs,
            out,
        } => sweep(
            &scenario,
            &seeds,
            &set,
            &vary,
            jobs.map(|n| n as usize),
            out.as_deref(),
        ),
        Cmd::Bench {
            scenario,
            mode,
            flows,
            seed,
            out,
        } => bench(
            scenario.as_deref(),
            mode.as_deref(),
            flows.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
            seed,
            out.as_deref(),
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

/// Set when standard output's reader went away (`rdmalab bench | head`).
/// The program then finishes its work, files included, without printing,
/// and exits with the status a shell gives a process that SIGPIPE ended,
/// as other Unix tools do, instead of panicking in `println!`.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
const SIGPIPE_STATUS: u8 = 128 + 13;

/// Writes to standard output (see [`STDOUT_CLOSED`]).
fn say(args: std::fmt::Arguments) -> Result<(), String> {
    use std::io::Write;
    if STDOUT_CLOSED.load(Relaxed) {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    match out.write_fmt(args).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, Relaxed);
            Ok(())
        }
        Err(e) => Err(format!("writing to standard output: {e}")),
    }
}

/// `println!` through [`say`], returning its error from the caller.
macro_rules! say {
    ($($arg:tt)*) => {
        say(format_args!("{}\n", format_args!($($arg)*)))?
    };
}

/// Creates the `--out` directory before the work, so that a path that
/// cannot be one fails at once rather than after a long run.
fn prepare_out(dir: Option<&Path>) -> Result<(), String> {
    match dir {
        Some(d) => std::fs::create_dir_all(d)
            .map_err(|e| format!("--out {}: cannot create the directory: {e}", d.display())),
        None => Ok(()),
    }
}

fn run(
    path: Option<&Path>,
    seed: Option<u64>,
    out: Option<&Path>,
    quiet: bool,
    set: &[String],
) -> Result<(), String> {
    let path_given = path.is_some();
    let (text, path) = match path {
        Some(p) => (
            std::fs::read_to_string(p).map_err(|e| format!("{}: cannot read: {e}", p.display()))?,
            p.to_path_buf(),
        ),
        None => (
            experiment::EXAMPLE.to_string(),
            PathBuf::from("<built-in example>"),
        ),
    };
    let file = path.display().to_string();
    let overrides = set
        .iter()
        .map(|a| experiment::sweep::parse_assignment(a))
        .collect::<Result<Vec<_>, _>>()?;
    let mut sc =
        experiment::sweep::with_overrides(&text, &file, &overrides).map_err(|e| e.to_string())?;
    if sc.name.is_none() && path_given {
        sc.name = path.file_stem().map(|s| s.to_string_lossy().into_owned());
    }
    let built = experiment::build(&sc, &path, seed).map_err(|e| e.to_string())?;
    prepare_out(out)?;
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
    say(format_args!("{}", report::render(&s)))?;
    let hops_per_s = s.packet_hops as f64 / outcome.loop_wall_s.max(1e-9);
    say!(
        "  {:<22} {:.2} s event loop, {:.2} M packet-hops/s, {:.2} M events/s",
        "speed",
        outcome.loop_wall_s,
        hops_per_s / 1e6,
        s.events as f64 / outcome.loop_wall_s.max(1e-9) / 1e6
    );
    if let Some(dir) = out {
        report::write_outputs(&outcome, &s, dir)
            .map_err(|e| format!("writing {}: {e}", dir.display()))?;
        say!("  {:<22} {}", "outputs", dir.display());
    }
    if let Some(m) = &outcome.stalled {
        return Err(m.clone());
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
        prepare_out(out)?;
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
    say!(
        "bench {} {} packet_hops={} events={} loop_s={:.3} wall_s={:.3} hops_per_s={:.0} peak_rss_mb={:.1} setup_s={:.3} flows_done={}/{} bytes_per_packet={} bytes_per_flow={}",
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

/// The most seeds one sweep takes (each is a whole simulation).
const MAX_SEEDS: u64 = 10_000;
/// The most runs one sweep takes (seeds x varied values).
const MAX_RUNS: usize = 100_000;
/// The most parallel runs (`--jobs`): each holds a whole network.
const MAX_JOBS: u32 = 1024;

fn parse_seeds(s: &str) -> Result<Vec<u64>, String> {
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
    Ok(seeds)
}

fn sweep(
    path: &Path,
    seeds: &str,
    set: &[String],
    vary: &[String],
    jobs: Option<usize>,
    out: Option<&Path>,
) -> Result<(), String> {
    use experiment::sweep;
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let seeds = parse_seeds(seeds)?;
    let fixed = set
        .iter()
        .map(|a| sweep::parse_assignment(a))
        .collect::<Result<Vec<_>, _>>()?;
    let varied = vary
        .iter()
        .map(|a| {
            sweep::parse_assignment(a)
                .map(|(k, v)| (k, v.split(',').map(|x| x.trim().to_string()).collect()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let runs = varied
        .iter()
        .try_fold(seeds.len(), |n, (_, v): &(String, Vec<String>)| {
            n.checked_mul(v.len())
        })
        .filter(|&n| n <= MAX_RUNS)
        .ok_or_else(|| {
            format!("--seeds x --vary make more than {MAX_RUNS} runs; split the sweep")
        })?;
    debug_assert!(runs <= MAX_RUNS);
    let points = sweep::points(&seeds, &fixed, &varied);
    prepare_out(out)?;
    let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let t0 = std::time::Instant::now();
    let results = sweep::run(&text, path, &points, jobs, out)?;
    let wall = t0.elapsed().as_secs_f64();
    say!(
        "{:<40} {:>9} {:>9} {:>9} {:>10} {:>8} {:>8}",
        "run",
        "finished",
        "sd_mean",
        "sd_p99",
        "goodput",
        "drops",
        "pauses"
    );
    let mut csv = String::from(
        "label,seed,flows,flows_finished,slowdown_mean,slowdown_p99,fct_mean_ns,\
         total_goodput_gbps,dropped_packets,pause_frames,slowdown_small_mean,\
         slowdown_small_p99,slowdown_large_mean,slowdown_large_p99,retransmitted_packets,\
         timeouts,ooo_fraction,reorder_retx,switch_paused_fraction_mean,\
         host_paused_fraction_mean,flows_hit_by_failures,slowdown_hit_mean,slowdown_hit_p99\n",
    );
    for (p, s) in points.iter().zip(&results) {
        say!(
            "{:<40} {:>4}/{:<4} {:>9.3} {:>9.3} {:>10.2} {:>8} {:>8}",
            p.label(),
            s.flows_finished,
            s.flows,
            s.slowdown.mean,
            s.slowdown.p99,
            s.total_goodput_gbps,
            s.dropped_packets,
            s.pause_frames
        );
        // Absent without failure schedules: empty cells.
        let hit = |f: fn(&report::Stat) -> f64| s.slowdown_hit_by_failures.as_ref().map(f);
        let cell = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
        csv.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            p.label(),
            p.seed,
            s.flows,
            s.flows_finished,
            s.slowdown.mean,
            s.slowdown.p99,
            s.fct_ns.mean,
            s.total_goodput_gbps,
            s.dropped_packets,
            s.pause_frames,
            s.slowdown_small.mean,
            s.slowdown_small.p99,
            s.slowdown_large.mean,
            s.slowdown_large.p99,
            s.retransmitted_packets,
            s.timeouts,
            s.reordering.ooo_fraction,
            s.reordering.reorder_retx,
            s.pfc_pause.switch_paused_fraction_mean,
            s.pfc_pause.host_paused_fraction_mean,
            s.flows_hit_by_failures
                .map_or(String::new(), |n| n.to_string()),
            cell(hit(|st| st.mean)),
            cell(hit(|st| st.p99)),
        ));
    }
    say!("{} runs on {jobs} threads in {wall:.2} s", points.len());
    if let Some(dir) = out {
        std::fs::write(dir.join("sweep.csv"), csv)
            .map_err(|e| format!("writing {}: {e}", dir.display()))?;
    }
    Ok(())
}
