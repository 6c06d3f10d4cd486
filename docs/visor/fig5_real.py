#!/usr/bin/env python3
"""RDMAvisor Fig 5 on the real datapath (loopback, this machine): 64 KB
READs over N logical connections between two daemons, one QP per
connection (`--mode naive`) against every connection on the link's one QP
(`--mode shared`, RDMAvisor). Prints goodput, messages per second and the
receiving daemon's resident memory per N. The simulated Fig 5 (the NIC's
QP-context cache) is docs/visor/fig5.py; here there is no cache to miss:
what grows with N is the daemons' per-QP state and receive buffers.

Usage: docs/visor/fig5_real.py [--bin target/release] [--conns 10,100,400,1000] [--seconds 2]
"""

import argparse
import os
import subprocess


def bench(bindir, args):
    out = subprocess.run([os.path.join(bindir, "rdmalab"), "visor", "bench", *args],
                         check=True, capture_output=True, text=True).stdout
    line = [l for l in out.splitlines() if l.startswith("visor ")][-1]
    return dict(f.split("=", 1) for f in line.split()[1:])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default="target/release")
    p.add_argument("--conns", default="10,100,400,1000")
    p.add_argument("--seconds", default="2")
    a = p.parse_args()
    print("Fig 5 (real datapath): 64 KB READs, goodput Gb/s (msgs/s), daemon RSS MB")
    print()
    print("| connections | naive (QP per connection) | RDMAvisor (shared QP) |")
    print("|---|---|---|")
    for n in [int(x) for x in a.conns.split(",")]:
        cells = []
        for mode in ("naive", "shared"):
            r = bench(a.bin, ["--mode", mode, "--verb", "read", "--msg-bytes", "65536",
                              "--connections", str(n), "--seconds", a.seconds])
            cells.append(f"{float(r['goodput_gbps']):.2f} ({float(r['msgs_per_s']):.0f}), "
                         f"{float(r['daemon_rss_mb']):.0f} MB")
        print(f"| {n} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
