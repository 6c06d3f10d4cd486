#!/usr/bin/env python3
"""RDMAvisor Fig 5 on the real datapath (loopback, this machine): 64 KB
READs over N logical connections between two daemons, one QP per
connection (`--mode naive`) against every connection on the link's one QP
(`--mode shared`, RDMAvisor). Each point is run --repeats times, naive and
shared alternating (so a pair shares the machine's state); prints, per N,
the median goodput with its range (min-max over the repeats), in how many
pairs shared was ahead, and the receiving daemon's largest resident
memory. The simulated Fig 5 (the NIC's QP-context cache) is
docs/visor/fig5.py; here there is no cache to miss: what grows with N is
the daemons' per-QP state and receive buffers.

Usage: docs/visor/fig5_real.py [--bin target/release] [--conns 10,100,400,1000]
       [--seconds 2] [--repeats 5]
"""

import argparse
import os
import statistics
import subprocess


def bench(bindir, args):
    out = subprocess.run([os.path.join(bindir, "rdmalab"), "visor", "bench", *args],
                         check=True, capture_output=True, text=True).stdout
    line = [l for l in out.splitlines() if l.startswith("visor ")][-1]
    return dict(f.split("=", 1) for f in line.split()[1:])


def spread(xs):
    """Median (min-max)."""
    return f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default="target/release")
    p.add_argument("--conns", default="10,100,400,1000")
    p.add_argument("--seconds", default="2")
    p.add_argument("--repeats", type=int, default=5)
    a = p.parse_args()
    print(f"Fig 5 (real datapath): 64 KB READs, goodput Gb/s, median (min-max) of "
          f"{a.repeats} runs of {a.seconds} s each")
    print()
    print("| connections | naive (QP per connection) | RDMAvisor (shared QP) "
          "| shared ahead | naive daemon MB | shared daemon MB |")
    print("|---|---|---|---|---|---|")
    for n in [int(x) for x in a.conns.split(",")]:
        runs = {"naive": [], "shared": []}
        for _ in range(a.repeats):
            for mode in runs:
                runs[mode].append(bench(a.bin, [
                    "--mode", mode, "--verb", "read", "--msg-bytes", "65536",
                    "--connections", str(n), "--seconds", a.seconds]))
        gbps = {m: [float(r["goodput_gbps"]) for r in rs] for m, rs in runs.items()}
        rss = {m: max(float(r["daemon_rss_mb"]) for r in rs) for m, rs in runs.items()}
        ahead = sum(s > v for v, s in zip(gbps["naive"], gbps["shared"]))
        print(f"| {n} | {spread(gbps['naive'])} | {spread(gbps['shared'])} "
              f"| {ahead} of {a.repeats} | {rss['naive']:.0f} | {rss['shared']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
