#!/usr/bin/env python3
"""The tables of docs/rcm.md for Figs 8 and 9: runs each scenario with RCM
off and on (target/release/rdmalab, or the binary given) and prints, over
the flows that finished in both runs, the mean FCT by size class (Fig 9:
mice < 1 MB, 1-10 MB, elephants > 10 MB) or the mean goodput and FCT of
background and hot flows (Fig 8: hot = a flow to one of the scenario's
hot hosts). Standard library only.

usage: docs/rcm/tables.py [RDMALAB] [OUT_DIR]
"""
import csv
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/release/rdmalab")
OUT = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "out/rcm")


def run(name, rcm):
    out = os.path.join(OUT, f"{name}-{'on' if rcm else 'off'}")
    subprocess.run(
        [BIN, "run", os.path.join(ROOT, "scenarios", f"rcm_{name}.toml"), "--quiet",
         "--set", f"switch.rcm.enabled={'true' if rcm else 'false'}", "--out", out],
        check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "flows.csv")) as f:
        return {r["flow_id"]: r for r in csv.DictReader(f)}


def both(name):
    off, on = run(name, False), run(name, True)
    done = [k for k in off if off[k]["fct_ns"] and on[k]["fct_ns"]]
    print(f"rcm_{name}: {len(done)} flows finished in both runs "
          f"(off {sum(1 for r in off.values() if r['fct_ns'])}, "
          f"on {sum(1 for r in on.values() if r['fct_ns'])}, of {len(off)})")
    return off, on, done


def mean(v):
    return sum(v) / len(v) if v else float("nan")


def fig9(name):
    off, on, done = both(name)
    classes = [("< 1 MB", lambda s: s < 1_000_000),
               ("1-10 MB", lambda s: 1_000_000 <= s <= 10_000_000),
               ("> 10 MB", lambda s: s > 10_000_000),
               ("all", lambda s: True)]
    print("| class | flows | mean FCT off (us) | on (us) | change |")
    print("|---|---|---|---|---|")
    for label, sel in classes:
        ks = [k for k in done if sel(int(off[k]["size_bytes"]))]
        a = mean([int(off[k]["fct_ns"]) / 1000 for k in ks])
        b = mean([int(on[k]["fct_ns"]) / 1000 for k in ks])
        print(f"| {label} | {len(ks)} | {a:.1f} | {b:.1f} | {100 * (b - a) / a:+.1f}% |")


def fig8():
    text = open(os.path.join(ROOT, "scenarios", "rcm_hotspot.toml")).read()
    hot = {int(h) for h in re.search(r"^hot = \[([^\]]*)\]", text, re.M).group(1).split(",")}
    off, on, done = both("hotspot")
    print("| flows | count | goodput off (Gb/s) | on | change | FCT off (us) | on | change |")
    print("|---|---|---|---|---|---|---|---|")
    for label, sel in [("background", lambda d: d not in hot), ("hot", lambda d: d in hot),
                       ("all", lambda d: True)]:
        ks = [k for k in done if sel(int(off[k]["dst"]))]
        ga = mean([float(off[k]["goodput_gbps"]) for k in ks])
        gb = mean([float(on[k]["goodput_gbps"]) for k in ks])
        fa = mean([int(off[k]["fct_ns"]) / 1000 for k in ks])
        fb = mean([int(on[k]["fct_ns"]) / 1000 for k in ks])
        print(f"| {label} | {len(ks)} | {ga:.2f} | {gb:.2f} | {100 * (gb - ga) / ga:+.1f}% "
              f"| {fa:.1f} | {fb:.1f} | {100 * (fb - fa) / fa:+.1f}% |")


if __name__ == "__main__":
    fig8()
    fig9("enterprise")
    fig9("datamining")
