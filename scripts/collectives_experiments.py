#!/usr/bin/env python3
"""The experiments of docs/collectives.md ("Experiments"): collective
jobs under load balancers, congestion controls, loss recovery, beside
each other and placed differently. Each run is one `rdmalab run` of a
scenario written here; the tables are printed in markdown, as the doc
has them.

  scripts/collectives_experiments.py BINARY [NAME ...]

NAME: allreduce, cc, scale, moe, interference, placement (all when none
given). Every number but the packet-hops rate is deterministic (the
same binary gives the same table); the rate is wall-clock, measured
on whatever machine runs it (the doc says on which). Runs are niced.
"""

import csv
import json
import os
import re
import subprocess
import sys
import tempfile

# Leaf-spine of 8 leaves of 16 hosts at 100 Gb/s; `spines` sets the
# oversubscription, 16 down links to `spines` up links a leaf (8: 2:1,
# 4: 4:1).
LEAF_SPINE = """[topology]
kind = "leaf_spine"
leaves = 8
spines = {spines}
hosts_per_leaf = 16
host_gbps = 100
fabric_gbps = 100
"""

FAT_TREE = """[topology]
kind = "fat_tree"
k = 16
host_gbps = 100
fabric_gbps = 100
"""

# The load balancers compared, as scenario lines: [switch] and
# [transport] additions.
BALANCERS = {
    "ECMP": ("", ""),
    "spray + Eunomia": ('load_balancer = "spray"\n', 'ordering = "eunomia"\n'),
    "DRILL + Eunomia": ('load_balancer = "drill"\n', 'ordering = "eunomia"\n'),
    "ConWeave": ('load_balancer = "conweave"\n', ""),
}


def scenario(topology, jobs, switch="", transport="", cc="dcqcn", kind="roce", pfc=True):
    eunomia = "ordering" in transport
    return (
        'name = "exp"\nseed = 1\n'
        + topology
        + f"[switch]\npfc = {'true' if pfc else 'false'}\n"
        + switch
        + f'[transport]\nkind = "{kind}"\ncc = "{cc}"\n'
        + transport
        + ('[transport.eunomia]\nlast_packet = "receiver_hold"\n' if eunomia else "")
        + jobs
    )


def job(collective, algorithm, size, nbytes, placement="spread", name=None, iterations=1, chunk=524_288):
    return (
        "[[jobs]]\n"
        + (f'name = "{name}"\n' if name else "")
        + f'collective = "{collective}"\nalgorithm = "{algorithm}"\n'
        + f'placement = "{placement}"\nsize = {size}\nbytes = {nbytes}\n'
        + f"chunk_bytes = {chunk}\niterations = {iterations}\n"
    )


def run(binary, tmp, label, text):
    """Runs one scenario: its jobs' rows, summary.json and the wall-clock
    packet-hops rate the readable summary printed."""
    path = os.path.join(tmp, label + ".toml")
    with open(path, "w") as f:
        f.write(text)
    out = os.path.join(tmp, label)
    p = subprocess.run(
        ["nice", "-n", "10", binary, "run", path, "--out", out, "--quiet"],
        capture_output=True,
        text=True,
    )
    if p.returncode != 0:
        sys.exit(f"{label}: {p.stderr}")
    rate = re.search(r"speed .* ([0-9.]+) M packet-hops/s", p.stdout)
    with open(os.path.join(out, "collectives.csv")) as f:
        rows = list(csv.DictReader(f))
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    return rows, s, float(rate.group(1)) if rate else float("nan")


def mean_busbw(rows, name=None):
    v = [float(r["busbw_gbps"]) for r in rows if r["busbw_gbps"] and (name is None or r["job"] == name)]
    return sum(v) / len(v)


def mean_time_us(rows, name=None):
    v = [int(r["time_ns"]) for r in rows if r["time_ns"] and (name is None or r["job"] == name)]
    return sum(v) / len(v) / 1e3


def allreduce(binary, tmp):
    """Ring, tree and halving-doubling all-reduce of 8 MB per rank, 16
    to 128 ranks spread over the 2:1 leaf-spine, DCQCN, under each load
    balancer."""
    rows = [
        "| algorithm | ranks | load balancer | time (us) | busbw (Gb/s) | retransmitted | M packet-hops/s |",
        "|---|---|---|---|---|---|---|",
    ]
    for alg in ["ring", "tree", "halving_doubling"]:
        for n in [16, 64, 128]:
            for lb, (sw, tr) in BALANCERS.items():
                label = f"ar-{alg}-{n}-{lb.split()[0]}"
                text = scenario(LEAF_SPINE.format(spines=8), job("all_reduce", alg, n, 8_000_000), sw, tr)
                r, s, rate = run(binary, tmp, label, text)
                rows.append(
                    f"| {alg} | {n} | {lb} | {mean_time_us(r):.1f} | {mean_busbw(r):.2f} "
                    f"| {s['retransmitted_packets']} | {rate:.2f} |"
                )
    return rows


def cc(binary, tmp):
    """DCQCN against HPCC: each algorithm at 128 ranks, ECMP, 2:1 and
    4:1 leaf-spine."""
    rows = [
        "| algorithm | spines (oversubscription) | DCQCN time (us) | DCQCN busbw | HPCC time (us) | HPCC busbw | M packet-hops/s (DCQCN, HPCC) |",
        "|---|---|---|---|---|---|---|",
    ]
    for alg in ["ring", "tree", "halving_doubling"]:
        for spines in [8, 4]:
            res = []
            for c in ["dcqcn", "hpcc"]:
                text = scenario(LEAF_SPINE.format(spines=spines), job("all_reduce", alg, 128, 8_000_000), cc=c)
                res.append(run(binary, tmp, f"cc-{alg}-{spines}-{c}", text))
            (d, _, dr), (h, _, hr) = res
            rows.append(
                f"| {alg} | {spines} ({16 // spines}:1) | {mean_time_us(d):.1f} | {mean_busbw(d):.2f} "
                f"| {mean_time_us(h):.1f} | {mean_busbw(h):.2f} | {dr:.2f}, {hr:.2f} |"
            )
    return rows


def scale(binary, tmp):
    """Each algorithm from 256 to 1024 ranks (every host) of the k=16
    fat tree, 8 MB per rank, ECMP, DCQCN."""
    rows = [
        "| algorithm | ranks | time (us) | busbw (Gb/s) | packet-hops | M packet-hops/s |",
        "|---|---|---|---|---|---|",
    ]
    for alg in ["ring", "tree", "halving_doubling"]:
        for n in [256, 512, 1024]:
            text = scenario(FAT_TREE, job("all_reduce", alg, n, 8_000_000))
            r, s, rate = run(binary, tmp, f"scale-{alg}-{n}", text)
            rows.append(
                f"| {alg} | {n} | {mean_time_us(r):.1f} | {mean_busbw(r):.2f} | {s['packet_hops']} | {rate:.2f} |"
            )
    return rows


def moe(binary, tmp):
    """MoE all-to-all (NCCL's: every pair at once, `direct`) of 8 to 64
    ranks spread over the 4:1 leaf-spine, 1 and 16 MB per rank: RoCEv2
    with PFC and go-back-N against IRN without PFC, DCQCN both."""
    rows = [
        "| ranks | bytes | recovery | time (us) | busbw (Gb/s) | drops | retransmitted | pause frames | M packet-hops/s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for n in [8, 16, 32, 64]:
        for nbytes in [1_000_000, 16_000_000]:
            for label, kind, pfc in [("RoCEv2 + PFC", "roce", True), ("IRN, no PFC", "irn", False)]:
                text = scenario(
                    LEAF_SPINE.format(spines=4), job("all_to_all", "direct", n, nbytes, chunk=0), kind=kind, pfc=pfc
                )
                r, s, rate = run(binary, tmp, f"moe-{n}-{nbytes}-{kind}", text)
                rows.append(
                    f"| {n} | {nbytes // 1_000_000} MB | {label} | {mean_time_us(r):.1f} | {mean_busbw(r):.2f} "
                    f"| {s['dropped_packets']} | {s['retransmitted_packets']} | {s['pause_frames']} | {rate:.2f} |"
                )
    return rows


def interference(binary, tmp):
    """Two jobs on the 4:1 leaf-spine, three iterations each: a ring
    all-reduce of 8 MB and a direct all-to-all of 4 MB, 32 ranks each,
    alone and together (packed: each on its own two leaves; spread: both
    over every leaf), ECMP, DCQCN."""
    ar = lambda p: job("all_reduce", "ring", 32, 8_000_000, p, "allreduce", 3)
    a2a = lambda p: job("all_to_all", "direct", 32, 4_000_000, p, "alltoall", 3, chunk=0)
    cases = [
        ("all-reduce alone, spread", ar("spread")),
        ("all-to-all alone, spread", a2a("spread")),
        ("both, spread", ar("spread") + a2a("spread")),
        ("all-reduce alone, packed", ar("packed")),
        ("all-to-all alone, packed", a2a("packed")),
        ("both, packed", ar("packed") + a2a("packed")),
    ]
    rows = [
        "| case | all-reduce iteration (us) | its busbw | all-to-all iteration (us) | its busbw | M packet-hops/s |",
        "|---|---|---|---|---|---|",
    ]
    for i, (label, jobs) in enumerate(cases):
        r, _, rate = run(binary, tmp, f"mix-{i}", scenario(LEAF_SPINE.format(spines=4), jobs))
        cell = lambda name: (
            (f"{mean_time_us(r, name):.1f}", f"{mean_busbw(r, name):.2f}")
            if any(x["job"] == name for x in r)
            else ("-", "-")
        )
        (at, ab), (bt, bb) = cell("allreduce"), cell("alltoall")
        rows.append(f"| {label} | {at} | {ab} | {bt} | {bb} | {rate:.2f} |")
    return rows


def placement(binary, tmp):
    """A ring all-reduce of 32 ranks, 8 MB, on the 4:1 leaf-spine:
    packed (two leaves), spread (four a leaf), random; ECMP and spray +
    Eunomia, DCQCN."""
    rows = [
        "| placement | load balancer | time (us) | busbw (Gb/s) | M packet-hops/s |",
        "|---|---|---|---|---|",
    ]
    for p in ["packed", "spread", "random"]:
        for lb in ["ECMP", "spray + Eunomia"]:
            sw, tr = BALANCERS[lb]
            text = scenario(LEAF_SPINE.format(spines=4), job("all_reduce", "ring", 32, 8_000_000, p), sw, tr)
            r, _, rate = run(binary, tmp, f"place-{p}-{lb.split()[0]}", text)
            rows.append(f"| {p} | {lb} | {mean_time_us(r):.1f} | {mean_busbw(r):.2f} | {rate:.2f} |")
    return rows


EXPERIMENTS = {
    "allreduce": allreduce,
    "cc": cc,
    "scale": scale,
    "moe": moe,
    "interference": interference,
    "placement": placement,
}


def main():
    if len(sys.argv) < 2 or any(a not in EXPERIMENTS for a in sys.argv[2:]):
        sys.exit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    names = sys.argv[2:] or list(EXPERIMENTS)
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            print(f"<!-- collectives_experiments.py {name} -->")
            print("\n".join(EXPERIMENTS[name](binary, tmp)))
            print()
            sys.stdout.flush()


if __name__ == "__main__":
    main()
