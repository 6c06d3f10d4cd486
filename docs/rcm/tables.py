#!/usr/bin/env python3
"""The tables of docs/rcm.md for Figs 8 and 9: runs each scenario with RCM
off and on over seeds 1-3 (target/release/rdmalab, or the binary given)
and prints, for each class of flows (Fig 9: mice < 1 MB, 1-10 MB,
elephants > 10 MB; Fig 8: background and hot flows, hot = a flow to one of
the scenario's hot hosts):

- the flows, and those unfinished when the run stops (off, on);
- the payload delivered over the run, as Gb/s (flows.csv's
  delivered_bytes over the simulated time), off, on and the change: what
  the fabric carried, finished or not;
- the mean FCT (Fig 8 also the mean goodput) over the flows that finished
  in both runs of a seed, off, on and the change.

Counts and values are means over the seeds; each change is `mean [lowest,
highest]` over the seeds. Standard library only.

usage: docs/rcm/tables.py [RDMALAB] [OUT_DIR]
"""
import csv
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/release/rdmalab")
OUT = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "out/rcm")
SEEDS = [1, 2, 3]


def run(name, rcm, seed):
    """flows.csv's rows by flow id, and the simulated time in ns."""
    out = os.path.join(OUT, f"{name}-{'on' if rcm else 'off'}-s{seed}")
    subprocess.run(
        [BIN, "run", os.path.join(ROOT, "scenarios", f"rcm_{name}.toml"), "--quiet",
         "--set", f"switch.rcm.enabled={'true' if rcm else 'false'}",
         "--set", f"seed={seed}", "--out", out],
        check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "flows.csv")) as f:
        rows = {r["flow_id"]: r for r in csv.DictReader(f)}
    with open(os.path.join(out, "summary.json")) as f:
        return rows, json.load(f)["sim_time_ns"]


def mean(v):
    return sum(v) / len(v) if v else float("nan")


def pct(a, b):
    return 100 * (b - a) / a if a else float("nan")


def spread(v):
    return f"{mean(v):+.1f}% [{min(v):+.1f}, {max(v):+.1f}]"


def measure(name, classes):
    """Per class label, per seed: the numbers of one seed's two runs."""
    res = {label: [] for label, _ in classes}
    for seed in SEEDS:
        (off, t_off), (on, t_on) = run(name, False, seed), run(name, True, seed)
        for label, sel in classes:
            ks = [k for k in off if sel(off[k])]
            done = [k for k in ks if off[k]["fct_ns"] and on[k]["fct_ns"]]
            gbps = lambda rows, t: sum(int(rows[k]["delivered_bytes"]) for k in ks) * 8 / t
            res[label].append({
                "flows": len(ks),
                "unfinished": [sum(1 for k in ks if not r[k]["fct_ns"]) for r in (off, on)],
                "delivered": [gbps(off, t_off), gbps(on, t_on)],
                "both": len(done),
                "fct": [mean([int(r[k]["fct_ns"]) / 1000 for k in done]) for r in (off, on)],
                "goodput": [mean([float(r[k]["goodput_gbps"]) for k in done]) for r in (off, on)],
            })
    return res


def row(label, per_seed, goodput=False):
    m = lambda key, i: mean([s[key][i] for s in per_seed])
    ch = lambda key: spread([pct(s[key][0], s[key][1]) for s in per_seed])
    cells = [label, f"{mean([s['flows'] for s in per_seed]):.0f}",
             f"{m('unfinished', 0):.1f}", f"{m('unfinished', 1):.1f}",
             f"{m('delivered', 0):.1f}", f"{m('delivered', 1):.1f}", ch("delivered"),
             f"{mean([s['both'] for s in per_seed]):.0f}"]
    if goodput:
        cells += [f"{m('goodput', 0):.2f}", f"{m('goodput', 1):.2f}", ch("goodput")]
    cells += [f"{m('fct', 0):.1f}", f"{m('fct', 1):.1f}", ch("fct")]
    print("| " + " | ".join(cells) + " |")


HEAD = ("| {} | flows | unfinished off | on | delivered off (Gb/s) | on | change "
        "| finished in both |")


def fig9(name):
    size = lambda r: int(r["size_bytes"])
    classes = [("< 1 MB", lambda r: size(r) < 1_000_000),
               ("1-10 MB", lambda r: 1_000_000 <= size(r) <= 10_000_000),
               ("> 10 MB", lambda r: size(r) > 10_000_000),
               ("all", lambda r: True)]
    res = measure(name, classes)
    print(f"rcm_{name}, seeds {SEEDS[0]}-{SEEDS[-1]}:")
    print(HEAD.format("class") + " mean FCT off (us) | on | change |")
    print("|---" * 11 + "|")
    for label, _ in classes:
        row(label, res[label])


def fig8():
    text = open(os.path.join(ROOT, "scenarios", "rcm_hotspot.toml")).read()
    hot = {int(h) for h in re.search(r"^hot = \[([^\]]*)\]", text, re.M).group(1).split(",")}
    classes = [("background", lambda r: int(r["dst"]) not in hot),
               ("hot", lambda r: int(r["dst"]) in hot), ("all", lambda r: True)]
    res = measure("hotspot", classes)
    print(f"rcm_hotspot, seeds {SEEDS[0]}-{SEEDS[-1]}:")
    print(HEAD.format("flows") + " goodput off (Gb/s) | on | change | FCT off (us) | on | change |")
    print("|---" * 14 + "|")
    for label, _ in classes:
        row(label, res[label], goodput=True)


if __name__ == "__main__":
    fig8()
    fig9("enterprise")
    fig9("datamining")
