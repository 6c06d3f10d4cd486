"""The Python package against the files of the same run: every DataFrame
number equals its CSV cell, the summary dict equals summary.json, a run
without a folder equals one with, the command line's files equal the
package's, and a bad scenario or override is an `rdmalab.Error` naming
the key. Run by scripts/check_python.sh (from .ci/run); each test takes
well under a second."""

import csv
import json
import math
import os
import shutil
import subprocess

import pandas as pd
import pytest

import rdmalab

# A small fabric with a sampled queue and flow, so that series.csv exists.
SCENARIO = """
name = "tiny"
seed = 1

[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
host_gbps = 100
fabric_gbps = 100
delay_ns = 1000

[switch]
pfc = true

[[traffic]]
pattern = "permutation"
bytes = 200_000

[[traffic]]
pattern = "incast"
receiver = 0
fan_in = 6
bytes = 50_000

[output]
sample_us = 2
ports = [["leaf0", "spine0"]]
flows = [0, 1]
"""


@pytest.fixture
def scenario(tmp_path):
    p = tmp_path / "tiny.toml"
    p.write_text(SCENARIO)
    return p


def assert_same(frame, path):
    """Every cell of `frame` is the one of the CSV file `path`: the same
    columns, rows, and numbers (an empty cell is a missing value)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    assert list(frame.columns) == rows[0]
    assert len(frame) == len(rows) - 1 > 0
    for i, row in enumerate(rows[1:]):
        for col, cell in zip(rows[0], row):
            got = frame[col].iloc[i]
            if cell == "":
                assert pd.isna(got), (path, i, col)
            elif isinstance(got, str):
                assert got == cell, (path, i, col)
            else:
                want = float(cell)
                assert float(got) == want or (math.isnan(want) and math.isnan(got)), \
                    (path, i, col, got, cell)


def test_run_frames_are_its_files(scenario, tmp_path):
    out = tmp_path / "out"
    r = rdmalab.run(scenario, set={"switch.buffer_mb": 4}, seed=2, out=out)
    assert r.dir == out
    assert_same(r.flows, out / "flows.csv")
    assert_same(r.series, out / "series.csv")
    assert_same(r.slowdown_by_size, out / "slowdown_by_size.csv")
    assert r.summary == json.loads((out / "summary.json").read_text())
    assert r.summary["seed"] == 2 and r.summary["scenario"] == "tiny"
    assert r.summary["flows_finished"] == r.summary["flows"] == len(r.flows) == 14
    assert r.collectives is None


def test_run_without_folder_equals_one_with(scenario, tmp_path):
    a = rdmalab.run(scenario, seed=3)
    b = rdmalab.run(scenario, seed=3, out=tmp_path / "b")
    assert a.dir is None
    pd.testing.assert_frame_equal(a.flows, b.flows)
    pd.testing.assert_frame_equal(a.series, b.series)
    assert a.summary == b.summary
    # The seed matters (so the equality above says something).
    c = rdmalab.run(scenario, seed=4)
    assert not a.flows.equals(c.flows)


def test_default_seed_is_the_scenario_s(scenario):
    assert rdmalab.run(scenario).summary["seed"] == 1


def test_overrides_take_python_values(scenario):
    lossy = rdmalab.run(scenario, set={"switch.pfc": False, "switch.buffer_mb": 0.05,
                                       "switch.load_balancer": "drill"})
    assert lossy.summary["dropped_packets"] > 0
    assert rdmalab.run(scenario).summary["dropped_packets"] == 0


def test_command_line_writes_the_same_files(scenario, tmp_path):
    exe = os.environ.get("RDMALAB_BIN")
    if not exe:
        pytest.skip("RDMALAB_BIN (the rdmalab binary) not given")
    cli, py = tmp_path / "cli", tmp_path / "py"
    subprocess.run([exe, "run", str(scenario), "--quiet", "--seed", "5",
                    "--set", "switch.buffer_mb=4", "--out", str(cli)],
                   check=True, capture_output=True)
    rdmalab.run(scenario, set={"switch.buffer_mb": 4}, seed=5, out=py)
    for name in ("flows.csv", "series.csv", "slowdown_by_size.csv", "summary.json"):
        assert (cli / name).read_bytes() == (py / name).read_bytes(), name
    loaded = rdmalab.load(cli)
    assert_same(loaded.flows, cli / "flows.csv")


def test_bad_key_in_the_file_names_it(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text(SCENARIO.replace("pfc = true", "pfc = true\nbufer_mb = 3"))
    with pytest.raises(rdmalab.Error, match="bufer_mb"):
        rdmalab.run(p)


def test_bad_override_names_the_key(scenario):
    with pytest.raises(rdmalab.Error, match="switch.nonsense"):
        rdmalab.run(scenario, set={"switch.nonsense": 1})
    with pytest.raises(rdmalab.Error, match="topology.leaves"):
        rdmalab.run(scenario, set={"topology.leaves": "many"})
    # rdmalab.Error is a ValueError, so generic handlers catch it too.
    with pytest.raises(ValueError, match="traffic.0.bytes"):
        rdmalab.sweep(scenario, vary={"traffic.0.bytes": [1000, -5]})


def test_a_bad_sweep_point_runs_nothing(scenario, tmp_path):
    out = tmp_path / "sweep"
    with pytest.raises(rdmalab.Error, match="switch.load_balancer"):
        rdmalab.sweep(scenario, vary={"switch.load_balancer": ["ecmp", "nope"]}, out=out)
    assert not out.exists()


def test_sweep_frames_are_its_files(scenario, tmp_path):
    out = tmp_path / "sweep"
    s = rdmalab.sweep(scenario, seeds=[1, 2], set={"switch.buffer_mb": 4},
                      vary={"switch.load_balancer": ["ecmp", "drill"]}, jobs=2, out=out)
    labels = [r["label"] for r in s.plan["runs"]]
    assert list(s.runs) == labels and len(labels) == 4
    assert_same(s.table, out / "sweep.csv")
    for label, run in s.runs.items():
        assert_same(run.flows, out / label / "flows.csv")
        assert s.summary[label] == json.loads((out / label / "summary.json").read_text())
    flows = s.flows
    assert list(flows.columns[:3]) == ["run", "seed", "switch.load_balancer"]
    assert set(flows["switch.load_balancer"]) == {"ecmp", "drill"}
    assert len(flows) == 4 * 14
    first = flows[flows["run"] == labels[0]].drop(
        columns=["run", "seed", "switch.load_balancer"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(first, s.runs[labels[0]].flows)
    assert len(s.series) == sum(len(r.series) for r in s.runs.values())
    assert s.collectives is None
    again = rdmalab.load(out)
    pd.testing.assert_frame_equal(again.flows, flows)


def test_a_sweep_of_too_many_runs_is_refused_before_planning(scenario, tmp_path):
    out = tmp_path / "sweep"
    many = {"switch.buffer_mb": list(range(1, 1001)), "seed_like.x": list(range(1000))}
    with pytest.raises(rdmalab.Error, match="more than 100000 runs"):
        rdmalab.sweep(scenario, vary=many, out=out)
    assert not out.exists()


def test_set_and_vary_one_key_is_refused(scenario):
    with pytest.raises(rdmalab.Error, match="switch.pfc"):
        rdmalab.sweep(scenario, set={"switch.pfc": True}, vary={"switch.pfc": [True, False]})


def test_load_reads_collectives_when_there(scenario, tmp_path):
    out = tmp_path / "r"
    rdmalab.run(scenario, out=out)
    (out / "collectives.csv").write_text("collective,start_ns,finish_ns\n0,10,2000.5\n")
    r = rdmalab.load(out)
    assert list(r.collectives.columns) == ["collective", "start_ns", "finish_ns"]
    assert r.collectives["finish_ns"].iloc[0] == 2000.5


def test_load_of_a_folder_without_outputs_says_so(tmp_path):
    with pytest.raises(rdmalab.Error, match="neither a run"):
        rdmalab.load(tmp_path)
