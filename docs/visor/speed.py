#!/usr/bin/env python3
"""What RDMAvisor's service layer costs, on this machine: messages per
second and goodput of B-byte messages through two daemons on loopback
(`rdmalab visor bench --connections 16`: the link's one shared QP) beside
the bare datapath moving the same messages between two processes
(`rdmalab net serve` and `net run --verb send --transport irn --qps 16
--depth 16`), both paced at --rate-gbps, run one after the other per
size. Prints a table with the ratio (daemon / bare, messages per second)
and the load average before each size.

Usage: docs/visor/speed.py [--bin target/release] [--sizes 64,4096,65536]
       [--seconds 3] [--scale 1] [--rate-gbps 25]

--scale multiplies the bare runs' byte counts (64 MiB at 64 B, 2 GiB at
4 KB and 64 KB: about a second each on a quiet 2-core VM) and, with
--seconds, sets how long each daemon run sends: CI runs it at a tiny
scale so it cannot rot.
"""

import argparse
import os
import subprocess
import time

PORT = 47941
BARE_BYTES = {64: 64 << 20}
DEFAULT_BYTES = 2 << 30


def fields(text, prefix):
    line = [l for l in text.splitlines() if l.startswith(prefix)][-1]
    return dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)


def bare(rdmalab, size, nbytes, rate):
    nbytes -= nbytes % size
    server = subprocess.Popen([rdmalab, "net", "serve", "--bind", f"127.0.0.3:{PORT}", "--once",
                               "--rate-gbps", rate], stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        out = subprocess.run([rdmalab, "net", "run", "--to", f"127.0.0.3:{PORT}", "--verb", "send",
                              "--transport", "irn", "--qps", "16", "--depth", "16",
                              "--msg-bytes", str(size), "--bytes", str(nbytes),
                              "--rate-gbps", rate],
                             check=True, capture_output=True, text=True).stdout
    finally:
        server.wait(timeout=60)
    r = fields(out, "net ")
    secs = float(r["seconds"])
    return int(r["bytes"]) / size / secs, float(r["goodput_gbps"]), int(r["retransmitted"])


def daemons(rdmalab, size, seconds, rate):
    out = subprocess.run([rdmalab, "visor", "bench", "--connections", "16", "--msg-bytes",
                          str(size), "--seconds", str(seconds), "--rate-gbps", rate],
                         check=True, capture_output=True, text=True).stdout
    r = fields(out, "visor ")
    return float(r["msgs_per_s"]), float(r["goodput_gbps"]), float(r["daemon_cpu_pct"])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default="target/release")
    p.add_argument("--sizes", default="64,4096,65536")
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--rate-gbps", default="25")
    a = p.parse_args()
    rdmalab = os.path.join(a.bin, "rdmalab")
    print("| message | load | bare datapath msgs/s (Gb/s; retransmitted) "
          "| through the daemons msgs/s (Gb/s; daemons' CPU) | ratio |")
    print("|---|---|---|---|---|")
    for size in [int(s) for s in a.sizes.split(",")]:
        load = open("/proc/loadavg").read().split()[0]
        nbytes = max(size, int(BARE_BYTES.get(size, DEFAULT_BYTES) * a.scale))
        b_msgs, b_gbps, retx = bare(rdmalab, size, nbytes, a.rate_gbps)
        d_msgs, d_gbps, cpu = daemons(rdmalab, size, a.seconds * min(1.0, a.scale * 10),
                                      a.rate_gbps)
        print(f"| {size} B | {load} | {b_msgs:.0f} ({b_gbps:.3f}; {retx}) "
              f"| {d_msgs:.0f} ({d_gbps:.3f}; {cpu:.0f}%) | {100 * d_msgs / b_msgs:.0f}% |")


if __name__ == "__main__":
    main()
