#!/usr/bin/env python3
# %% [markdown]
# # rdmalab from Python: a notebook in cells
#
# Each `# %%` starts a cell (Jupyter, VS Code and Spyder run them one by
# one); run as a script, it runs them all, as `.ci/run` does through
# scripts/check_python.sh. It needs the package: `pip install ./python`
# (docs/python.md). Every DataFrame below holds the numbers of the files
# the run wrote (flows.csv, series.csv, sweep.csv, ...).

# %%
import os

import pandas as pd

import rdmalab

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(REPO, "scenarios", "example.toml")

# %% [markdown]
# ## One run, with overrides
# `set` takes Python values (as `--set` takes TOML ones); here it also
# samples a queue and two flows every 2 us, so the run has series.

# %%
r = rdmalab.run(EXAMPLE, seed=2, set={
    "switch.buffer_mb": 4,
    "output.sample_us": 2,
    "output.ports": [["leaf0", "spine0"]],
    "output.flows": [0, 16],
})
print(r)
print("mean slowdown", r.summary["slowdown"]["mean"])

# %% [markdown]
# ## Slowdown by flow size, from flows.csv

# %%
flows = r.flows
print(flows.groupby("size_bytes")["slowdown"].describe()[["count", "mean", "50%", "max"]])

# %% [markdown]
# ## Time series: one column per series

# %%
wide = r.series.pivot(index="time_ns", columns="series", values="value")
print(wide.describe().loc[["mean", "max"]].T)

# %% [markdown]
# ## A sweep: two load balancers, two seeds, in parallel
# `.table` is sweep.csv; `.flows` stacks every run's flows.csv with the
# run's seed and varied values as the first columns.

# %%
s = rdmalab.sweep(EXAMPLE, seeds=[1, 2], vary={"switch.load_balancer": ["ecmp", "drill"]})
print(s.table[["label", "slowdown_mean", "slowdown_p99"]])
by_lb = s.flows.groupby(["switch.load_balancer", "size_bytes"])["slowdown"].mean().unstack()
print(by_lb)

# %% [markdown]
# ## Outputs written earlier
# `rdmalab.load` reads a folder `rdmalab run --out` or `rdmalab sweep
# --out` wrote (or `out=` here), without running anything.

# %%
import tempfile

with tempfile.TemporaryDirectory() as out:
    rdmalab.run(EXAMPLE, out=out)
    again = rdmalab.load(out)
    pd.testing.assert_frame_equal(again.flows, rdmalab.run(EXAMPLE).flows)
    print("loaded", again)
