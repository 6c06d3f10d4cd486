"""rdmalab from Python: run a scenario or a sweep in-process and get its
results as pandas DataFrames, or load the outputs of an earlier run.

    import rdmalab
    r = rdmalab.run("scenarios/example.toml", set={"switch.pfc": False}, seed=2)
    r.flows, r.series, r.summary
    s = rdmalab.sweep("scenarios/example.toml", seeds=[1, 2],
                      vary={"switch.lb.kind": ["ecmp", "drill"]})
    s.table, s.flows, s.runs["seed1_switch.lb.kind=ecmp"].summary
    rdmalab.load("out/")

The simulator runs in this process (the Rust library, without the GIL)
and writes the files `rdmalab run --out` and `rdmalab sweep --out` write;
the results are read back from those files, so every DataFrame holds the
numbers of its file (docs/python.md). This file holds the calls; the
result types and the reading are in `_results.py`.
"""

import json
import math
import os
import tempfile

from . import _native, _results
from ._native import Error
from ._results import Run, Sweep, load

__all__ = ["run", "sweep", "load", "Run", "Sweep", "Error"]


def run(scenario_path, set=None, seed=None, out=None):
    """Runs the scenario file `scenario_path` with the overrides `set`
    (``{"switch.pfc": False, "traffic.0.load": 0.5}``, as ``--set``) under
    `seed` (None: the scenario's own). Its files go into the folder `out`
    when given (as ``rdmalab run --out``), otherwise into a temporary
    folder that is removed once they are read. Returns a `Run`; raises
    `rdmalab.Error` naming the key for a bad scenario or override."""
    overrides = _overrides(set)
    if out is not None:
        _native.run(os.fspath(scenario_path), overrides, seed, os.fspath(out))
        return load(out)
    with tempfile.TemporaryDirectory(prefix="rdmalab-") as tmp:
        _native.run(os.fspath(scenario_path), overrides, seed, tmp)
        return _results.detached(load(tmp))


def sweep(scenario_path, seeds=(1,), set=None, vary=None, jobs=None, out=None):
    """Runs `scenario_path` for every seed of `seeds` and every combination
    of the values in `vary` (``{"switch.lb.kind": ["ecmp", "drill"]}``, as
    ``--vary``), each run with the overrides `set`, on `jobs` threads
    (default: one per core). Every run's scenario is checked before any
    runs. Files go into `out` when given (as ``rdmalab sweep --out``: a
    folder per run, plan.json, sweep.csv), otherwise into a temporary
    folder removed once read. Returns a `Sweep`."""
    overrides = _overrides(set)
    varied = [(str(k), [_toml(v) for v in vs]) for k, vs in (vary or {}).items()]
    both = sorted({k for k, _ in overrides} & {k for k, _ in varied})
    if both:
        raise Error(f"{both[0]}: the key is both set and varied")
    if any(not vs for _, vs in varied):
        raise Error("vary: every key needs at least one value")
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise Error("seeds: at least one seed")
    args = (os.fspath(scenario_path), seeds, overrides, varied, jobs)
    if out is not None:
        _native.sweep(*args, os.fspath(out))
        return load(out)
    with tempfile.TemporaryDirectory(prefix="rdmalab-") as tmp:
        _native.sweep(*args, tmp)
        return _results.detached(load(tmp))


def _overrides(set):
    return [(str(k), _toml(v)) for k, v in (set or {}).items()]


def _toml(v):
    """A Python value as the TOML text an override takes."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        # A TOML basic string: JSON's escapes are TOML's.
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {_toml(x)}" for k, x in v.items()) + "}"
    raise Error(f"{v!r}: not a value a scenario key takes (a bool, number, string, list or table)")
