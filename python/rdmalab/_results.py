"""The results of a run or a sweep, read from the folder rdmalab wrote:
`Run` (one run's summary.json as a dict and each of its CSV files as a
DataFrame) and `Sweep` (plan.json, sweep.csv and every finished run, with
the runs' tables stacked). CSV numbers are read with pandas' round-trip
parser, so each float is the one the file holds. Reads only the folder
it is given.
"""

import json
import os
from pathlib import Path

import pandas as pd

from ._native import Error


# pandas before 3 parses floats to within an ulp unless asked; 3 parses
# them exactly (and deprecates the argument).
_EXACT = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}


def _csv(path):
    return pd.read_csv(path, **_EXACT)


class Run:
    """One run's results.

    dir: its folder (None when it was a temporary one, now removed).
    summary: summary.json as a dict.
    tables: every CSV file of the folder as a DataFrame, by name without
        ".csv": flows, slowdown_by_size, and series and the others when
        the scenario's [output] asks for them.
    flows, series, collectives, slowdown_by_size: those tables (None when
        the run wrote no such file).
    """

    def __init__(self, dir, summary, tables):
        self.dir = dir
        self.summary = summary
        self.tables = tables

    @property
    def flows(self):
        return self.tables.get("flows")

    @property
    def series(self):
        return self.tables.get("series")

    @property
    def collectives(self):
        return self.tables.get("collectives")

    @property
    def slowdown_by_size(self):
        return self.tables.get("slowdown_by_size")

    def __repr__(self):
        s = self.summary
        return (f"<rdmalab.Run {s.get('scenario')!r} seed {s.get('seed')}: "
                f"{s.get('flows_finished')}/{s.get('flows')} flows, "
                f"tables {sorted(self.tables)}>")


class Sweep:
    """A sweep's results.

    dir: its folder (None when it was a temporary one, now removed).
    plan: plan.json as a dict (the seeds, --set, --vary and every run).
    table: sweep.csv as a DataFrame (None before `rdmalab merge`).
    runs: each finished run's `Run`, by its folder's name, in plan order.
    summary: each finished run's summary dict, by folder name.
    flows, series, collectives: the runs' tables stacked, with first the
        columns run (the folder's name), seed and each varied key (its
        value as a number, bool or string); None when no run has one.
    """

    def __init__(self, dir, plan, table, runs):
        self.dir = dir
        self.plan = plan
        self.table = table
        self.runs = runs

    @property
    def summary(self):
        return {label: r.summary for label, r in self.runs.items()}

    @property
    def flows(self):
        return self.stacked("flows")

    @property
    def series(self):
        return self.stacked("series")

    @property
    def collectives(self):
        return self.stacked("collectives")

    def stacked(self, name):
        """The table `name` of every finished run that has it, one below
        the other, led by the columns run, seed and the varied keys."""
        varied = [k for k, _ in self.plan["vary"]]
        parts = []
        for r in self.plan["runs"]:
            run = self.runs.get(r["label"])
            table = run.tables.get(name) if run else None
            if table is None:
                continue
            values = dict(r["overrides"])
            lead = {"run": r["label"], "seed": r["seed"]}
            lead.update({k: _value(values[k]) for k in varied})
            table = table.copy()
            for i, (k, v) in enumerate(lead.items()):
                table.insert(i, k, [v] * len(table))
            parts.append(table)
        return pd.concat(parts, ignore_index=True) if parts else None

    def __repr__(self):
        return (f"<rdmalab.Sweep {self.plan['scenario']!r}: {len(self.runs)} of "
                f"{len(self.plan['runs'])} runs, varied {[k for k, _ in self.plan['vary']]}>")


def _value(text):
    """An override's TOML text as a Python value (a bare word stays a string)."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _run(dir):
    with open(dir / "summary.json", encoding="utf-8") as f:
        summary = json.load(f)
    tables = {p.stem: _csv(p) for p in sorted(dir.glob("*.csv"))}
    return Run(dir, summary, tables)


def load(out_dir):
    """The results in `out_dir`: a `Sweep` where it holds a plan.json
    (`rdmalab sweep --out`, or runs of a plan), otherwise a `Run`
    (`rdmalab run --out`)."""
    dir = Path(os.fspath(out_dir))
    if (dir / "plan.json").is_file():
        with open(dir / "plan.json", encoding="utf-8") as f:
            plan = json.load(f)
        runs = {r["label"]: _run(dir / r["label"]) for r in plan["runs"]
                if (dir / r["label"] / "summary.json").is_file()}
        table = _csv(dir / "sweep.csv") if (dir / "sweep.csv").is_file() else None
        return Sweep(dir, plan, table, runs)
    if (dir / "summary.json").is_file():
        return _run(dir)
    raise Error(f"{dir}: neither a run's outputs (summary.json) nor a sweep's (plan.json)")


def detached(result):
    """`result` with no folder (its temporary one is about to go)."""
    result.dir = None
    for r in getattr(result, "runs", {}).values():
        r.dir = None
    return result
