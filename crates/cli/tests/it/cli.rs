//! The command line when its reader goes away (`rdmalab bench | head`)
//! and when its arguments are wrong: the program itself, run as a user
//! runs it.

use crate::binary;
use binary::rdmalab;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// Runs the program with its standard output a pipe whose reading end is
/// already closed, as after `| head` has taken its lines.
fn with_closed_stdout(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rdmalab"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start rdmalab");
    drop(child.stdout.take());
    child.wait_with_output().expect("wait for rdmalab")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rdmalab-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn a_closed_pipe_ends_bench_quietly_with_the_sigpipe_status() {
    // Every scenario in both modes, each in a process of its own: the
    // first one's line finds no reader, and no other run starts.
    let out = with_closed_stdout(&["bench", "--flows", "2"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "stderr: {stderr}");
    assert!(stderr.is_empty(), "stderr: {stderr}");
}

#[test]
fn a_closed_pipe_still_lets_run_write_its_files() {
    let dir = scratch("run");
    let out = with_closed_stdout(&["run", "--quiet", "--out", dir.to_str().expect("utf-8")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "stderr: {stderr}");
    assert!(stderr.is_empty(), "stderr: {stderr}");
    let summary = std::fs::read_to_string(dir.join("summary.json")).expect("summary.json");
    assert!(summary.contains("\"flows_finished\""), "{summary}");
    std::fs::remove_dir_all(&dir).expect("clean up");
}

/// A device given as an input file is refused at once: /dev/zero took
/// 3-15 s and 4 GB before its error.
#[test]
fn a_device_as_an_input_file_is_refused_at_once() {
    for args in [
        &["run", "/dev/zero"][..],
        &["sweep", "/dev/zero", "--seeds", "1"],
        &["compare", "/dev/zero", "/dev/zero"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_rdmalab"))
            .args(args)
            .output()
            .expect("run rdmalab");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(
            stderr.contains("a device, not a file"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn no_flows_is_refused_by_name() {
    let out = Command::new(env!("CARGO_BIN_EXE_rdmalab"))
        .args([
            "bench",
            "--scenario",
            "p128",
            "--mode",
            "line-rate",
            "--flows",
            "0",
        ])
        .output()
        .expect("run rdmalab");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    assert!(stderr.contains("'--flows"), "stderr: {stderr}");
    assert!(out.stdout.is_empty());
}

#[test]
fn zero_jobs_is_refused_by_name() {
    let out = Command::new(env!("CARGO_BIN_EXE_rdmalab"))
        .args(["sweep", "no-such.toml", "--jobs", "0"])
        .output()
        .expect("run rdmalab");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    assert!(stderr.contains("'--jobs"), "stderr: {stderr}");
}

#[test]
fn an_out_path_that_is_a_file_fails_before_the_run_and_is_kept() {
    let dir = scratch("out-file");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let file = dir.join("results");
    std::fs::write(&file, "earlier results\n").expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_rdmalab"))
        .args(["run", "--quiet", "--out", file.to_str().expect("utf-8")])
        .output()
        .expect("run rdmalab");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert!(
        stderr.contains("--out") && stderr.contains("results"),
        "stderr: {stderr}"
    );
    // No summary: the run did not start.
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(
        std::fs::read_to_string(&file).expect("read"),
        "earlier results\n"
    );
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn bad_scenario_numbers_are_named_errors_not_panics() {
    let dir = scratch("bad-input");
    std::fs::create_dir_all(&dir).expect("scratch folder");
    let base = "[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\n";
    for (name, extra, says) in [
        (
            "nan.toml",
            "[transport]\nrto_us = nan\n",
            "transport.rto_us",
        ),
        (
            "lb.toml",
            "[switch]\nload_balancer = \"hula\"\n",
            "switch.load_balancer",
        ),
        ("fat.toml", "", "topology.k"),
    ] {
        let text = if name == "fat.toml" {
            "[topology]\nkind = \"fat_tree\"\nk = 1000\n".to_string()
        } else {
            format!("{base}{extra}[[flows]]\nsrc = 0\ndst = 3\nbytes = 1000\n")
        };
        let file = dir.join(name);
        std::fs::write(&file, text).expect("write scenario");
        let (code, _, stderr) = rdmalab(&["run", "--quiet", file.to_str().expect("utf-8")]);
        assert_eq!(code, Some(1), "{name}: {stderr}");
        assert!(stderr.contains(says), "{name}: {stderr}");
        assert!(stderr.contains("(line "), "{name}: {stderr}");
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    }
    // A run that cannot progress ends with an error, and its files are written.
    let stuck = dir.join("stuck.toml");
    std::fs::write(
        &stuck,
        "[topology]\nkind = \"testbed\"\npaths = 1\nhosts_per_tor = 1\n[transport]\nrto_us = 100\n\
         [[flows]]\nsrc = 0\ndst = 1\nbytes = 100000\n\
         [[faults]]\nlink = [\"tor0\", \"spine0\"]\naction = \"down\"\nat_us = 1\n",
    )
    .expect("write scenario");
    let out = dir.join("out");
    let (code, _, stderr) = rdmalab(&[
        "run",
        "--quiet",
        stuck.to_str().expect("utf-8"),
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("flow 0 (host 0 -> host 1)"), "{stderr}");
    assert!(
        out.join("summary.json").exists(),
        "outputs are still written"
    );
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn sweep_seeds_and_jobs_are_bounded() {
    let example = format!(
        "{}/../../scenarios/example.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let (code, _, stderr) = rdmalab(&["sweep", &example, "--seeds", "1..100000000"]);
    assert_eq!(code, Some(2), "an argument error: {stderr}");
    assert!(stderr.contains("at most 10000"), "{stderr}");
    let (code, _, stderr) = rdmalab(&["sweep", &example, "--jobs", "100000"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--jobs"), "{stderr}");
}

/// `run --set` overrides keys as `sweep --set` does: the same files, byte
/// for byte, and a bad key named with the override that made it.
#[test]
fn run_set_overrides_keys_as_sweep_does() {
    let dir = scratch("run-set");
    let (run_dir, sweep_dir) = (dir.join("run"), dir.join("sweep"));
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/incast_pfc.toml"
    );
    let set = "switch.pfc=false";
    let (code, _, err) = rdmalab(&[
        "run",
        file,
        "--quiet",
        "--set",
        set,
        "--out",
        run_dir.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = rdmalab(&[
        "sweep",
        file,
        "--set",
        set,
        "--out",
        sweep_dir.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let point = sweep_dir.join("seed1_switch.pfc=false");
    for f in ["summary.json", "flows.csv"] {
        let a = std::fs::read(run_dir.join(f)).expect("run output");
        assert_eq!(
            a,
            std::fs::read(point.join(f)).expect("sweep output"),
            "{f}"
        );
    }
    // Lossy, the incast drops packets; lossless (the file as written) it cannot.
    let summary = std::fs::read_to_string(run_dir.join("summary.json")).expect("summary");
    assert!(!summary.contains("\"dropped_packets\": 0,"), "{summary}");
    let (code, _, err) = rdmalab(&["run", file, "--set", "switch.pfcc=false"]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("(with switch.pfcc=false)") && err.contains("pfcc"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).expect("clean up");
}

/// Malformed --seeds, --set and --vary, a seed given twice, a key varied
/// twice or both set and varied are argument errors: exit 2, naming the
/// option, before any file is read.
#[test]
fn sweep_argument_errors_exit_2() {
    let empty = scratch("vary-empty.txt");
    std::fs::write(&empty, "# no values\n\n").unwrap();
    let empty_arg = format!("a=@{}", empty.display());
    let cases: [(&[&str], &str); 12] = [
        (
            &["--vary", "a=8..1"],
            "--vary a: the range 8..1 is empty (8 > 1)",
        ),
        (
            &["--vary", "a=1,0.1..0.5"],
            "--vary a: \"0.1..0.5\" is not a range of integers",
        ),
        (
            &["--vary", "a=1..200000"],
            "the range 1..200000 has 200000 values",
        ),
        (
            &["--vary", "a=@/no/such/file"],
            "--vary a: cannot read @/no/such/file",
        ),
        (&["--vary", &empty_arg], "holds no value"),
        (&["--seeds", "1,x"], "expected a list like 1,2,3"),
        (&["--seeds", "3..1"], "expected a list like 1,2,3"),
        (&["--seeds", "1,2,1"], "seed 1 is given twice"),
        (&["--set", "noequals"], "expected key=value"),
        (&["--vary", "x"], "expected key=value"),
        (
            &["--vary", "a=1", "--vary", "a=2"],
            "--vary a: the key is varied twice",
        ),
        (&["--set", "a=1", "--vary", "a=2,3"], "both set and varied"),
    ];
    for (args, says) in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_rdmalab"))
            .args(["sweep", "no-such.toml"])
            .args(args)
            .output()
            .expect("run rdmalab");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    std::fs::remove_file(&empty).ok();
    let out = Command::new(env!("CARGO_BIN_EXE_rdmalab"))
        .args(["run", "--set", "bad"])
        .output()
        .expect("run rdmalab");
    assert_eq!(out.status.code(), Some(2));
}

/// The readable summary labels a size bucket with both its bounds: the
/// example's 1,000,000-byte flows are in "1MB-10MB", its 256 KB ones in
/// "100KB-1MB".
#[test]
fn size_buckets_say_where_a_flow_falls() {
    let (code, stdout, stderr) = rdmalab(&["run", "--quiet"]);
    assert_eq!(code, Some(0), "{stderr}");
    let row = |label: &str| {
        stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(label))
            .map(|l| l.split_whitespace().nth(1).unwrap_or("").to_string())
    };
    assert_eq!(row("1MB-10MB").as_deref(), Some("32"), "{stdout}");
    assert_eq!(row("100KB-1MB").as_deref(), Some("16"), "{stdout}");
}

/// The sweep's table: a string value reads as itself in the run's label
/// (TOML's quotes dropped, not turned into dashes), and every row's
/// columns start where the header's do, however long the labels.
#[test]
fn the_sweep_table_is_aligned_and_its_labels_readable() {
    let example = format!(
        "{}/../../scenarios/example.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let (code, stdout, stderr) = rdmalab(&[
        "sweep",
        &example,
        "--vary",
        "traffic.0.verb=\"read\",\"write\"",
        "--vary",
        "switch.pfc=true,false",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let lines: Vec<&str> = stdout.lines().take(5).collect();
    assert!(
        lines[1].starts_with("seed1_traffic.0.verb=read_switch.pfc=true "),
        "{stdout}"
    );
    assert!(!stdout.contains("-read-"), "{stdout}");
    // Every right-aligned column after "finished" ends where its header
    // ends: the end of the header's k-th word is the end of the row's.
    let ends = |l: &str| -> Vec<usize> {
        let mut v = Vec::new();
        let b = l.as_bytes();
        for i in 1..=b.len() {
            if b[i - 1] != b' ' && (i == b.len() || b[i] == b' ') {
                v.push(i);
            }
        }
        v
    };
    let head = ends(lines[0]);
    for l in &lines[1..] {
        assert_eq!(ends(l)[2..], head[2..], "{stdout}");
    }
}

/// The readable summary points to where its terms are explained, and the
/// README has that section.
#[test]
fn the_summary_points_to_its_glossary() {
    let (code, stdout, _) = rdmalab(&["run", "--quiet"]);
    assert_eq!(code, Some(0));
    assert!(
        stdout.contains("README, \"Reading the summary\""),
        "{stdout}"
    );
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    assert!(readme.contains("## Reading the summary"));
    for term in [
        "**packet-hops**",
        "**NIC state**",
        "**simulator memory**",
        "**slowdown**",
    ] {
        assert!(readme.contains(term), "{term}");
    }
}

/// `--vary KEY=A..B` is the integers from A to B inclusive (mixed with
/// single values in a list), `--vary KEY=@FILE` the file's lines (blank
/// and `#` lines skipped). The plan lists the values expanded.
#[test]
fn vary_takes_integer_ranges_and_files() {
    let example = format!(
        "{}/../../scenarios/example.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let dir = scratch("vary-ranges");
    std::fs::create_dir_all(&dir).unwrap();
    let list = dir.join("bufs.txt");
    std::fs::write(&list, "# buffers\n4\n\n 8 \n16\n").unwrap();
    let plan = dir.join("plan.json");
    let (code, _, stderr) = rdmalab(&[
        "sweep",
        &example,
        "--vary",
        "traffic.0.bytes=1000..1002,5000",
        "--vary",
        &format!("switch.buffer_mb=@{}", list.display()),
        "--plan",
        plan.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    let vary = p["vary"].as_array().expect("vary in the plan");
    let values = |i: usize| -> Vec<String> {
        vary[i][1]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(values(0), ["1000", "1001", "1002", "5000"]);
    assert_eq!(values(1), ["4", "8", "16"]);
    std::fs::remove_dir_all(&dir).ok();
}
