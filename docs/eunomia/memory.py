"""Eunomia's section 4 "Memory Utilization" (Figs 9-10; docs/eunomia.md):
the receiving NIC's ordering memory with 20 concurrent connections, 0% to
100% of them facing reordering at degrees 10% to 100%, Eunomia's layer
against a static bitmap of 256 bits. Printed as a Markdown table.

Each point is scenarios/eunomia_memory.toml with its [[faults]] (the
file's last section) replaced by one reorder fault on the uplink of each
reordered sender (h1, h2, ...) at `fraction` = the degree, written to a
temporary file and run with `rdmalab sweep FILE --seeds S --set
transport.ordering=...` into its own folder under --out; up to --jobs
run at once. Only the standard library; reads summary.json.

usage: python3 docs/eunomia/memory.py [--shares 0,20,40,60,80,100]
           [--degrees 0.1,0.25,0.5,1] [--delay-us 10] [--bytes N]
           [--seeds 1..3] [--jobs N] [--out DIR] [--bin PATH]
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
FILE = os.path.join(ROOT, "scenarios", "eunomia_memory.toml")
SENDERS = 20
LAYERS = ["eunomia", "static_bitmap"]


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shares", default="0,20,40,60,80,100",
                   help="percent of the 20 connections reordered (default %(default)s)")
    p.add_argument("--degrees", default="0.1,0.25,0.5,1",
                   help="reorder faults' fraction: share of a connection's packets delayed")
    p.add_argument("--delay-us", type=float, default=10.0,
                   help="a delayed packet arrives up to this much later (default 10)")
    p.add_argument("--bytes", type=int, help="bytes per connection (default: the file's)")
    p.add_argument("--seeds", default="1", help="e.g. 1 or 1..3")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--out", default="out/eunomia_memory")
    p.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "rdmalab"))
    a = p.parse_args()
    a.shares = [int(x) for x in a.shares.split(",") if x]
    a.degrees = [float(x) for x in a.degrees.split(",") if x]
    for s in a.shares:
        if not 0 <= s <= 100:
            p.error(f"share {s}: percent of the connections, 0..100")
    for d in a.degrees:
        if not 0 < d <= 1:
            p.error(f"degree {d}: a share of the packets, (0, 1]")
    return a


def scenario(reordered, degree, delay_us):
    """The scenario file's text with `reordered` senders' uplinks reordered."""
    text = open(FILE).read()
    text = text[:text.index("\n[[faults]]") + 1]
    for h in range(1, reordered + 1):
        text += (f'[[faults]]\nlink = ["h{h}", "leaf0"]\ndirection = "forward"\n'
                 f'action = "reorder"\nfraction = {degree}\ndelay_us = {delay_us}\n\n')
    return text


def run(a, layer, share, degree):
    """Runs one point (every seed); its summaries."""
    reordered = round(share * SENDERS / 100)
    name = f"{layer}-{share}-{degree}"
    out = os.path.join(a.out, name)
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, name + ".toml")
    with open(path, "w") as f:
        f.write(scenario(reordered, degree, a.delay_us))
    cmd = [a.bin, "sweep", path, "--seeds", a.seeds, "--jobs", "1", "--out", out,
           "--set", f'transport.ordering="{layer}"']
    if a.bytes:
        cmd += ["--set", f"traffic.0.bytes={a.bytes}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    os.remove(path)
    if r.returncode != 0:
        raise SystemExit(f"{name}: {' '.join(cmd)}\n{r.stderr.strip()}")
    print(f"  done {name}", file=sys.stderr)
    return [json.load(open(os.path.join(out, d, "summary.json")))
            for d in sorted(os.listdir(out)) if os.path.isdir(os.path.join(out, d))]


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs)


def main():
    a = parse()
    points = [(layer, s, d) for d in a.degrees for s in a.shares for layer in LAYERS]
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        runs = dict(zip(points, ex.map(lambda p: run(a, *p), points)))

    def avg(layer, s, d, f):
        return mean(f(x) for x in runs[(layer, s, d)])

    # The max over the NICs is the receiver's: a sender's NIC holds one
    # connection's state at most.
    def sampled(key):
        return lambda x: x["ordering"]["sampled"][key]

    print("### §4 Figs 9-10: the receiver NIC's ordering memory, 20 connections\n")
    print("| degree | reordered | OOO % | Eunomia bitmap B | static bitmap B "
          "| Eunomia total B | static total B | Eunomia peak B | static peak B "
          "| not tracked |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for d in a.degrees:
        for s in a.shares:
            e = lambda f: avg("eunomia", s, d, f)  # noqa: E731
            st = lambda f: avg("static_bitmap", s, d, f)  # noqa: E731
            ooo = e(lambda x: x["reordering"]["ooo_fraction"]) * 100
            lost = e(lambda x: x["ordering"]["untracked_dropped"]
                     + x["ordering"]["beyond_cap_dropped"])
            print(f"| {d:g} | {s}% | {ooo:.1f} "
                  f"| {e(sampled('bitmap_bytes_max')):.1f} | {st(sampled('bitmap_bytes_max')):.1f} "
                  f"| {e(sampled('total_bytes_max')):.1f} | {st(sampled('total_bytes_max')):.1f} "
                  f"| {e(lambda x: x['ordering']['nic_peak_bytes_max']):.0f} "
                  f"| {st(lambda x: x['ordering']['nic_peak_bytes_max']):.0f} "
                  f"| {lost:g} |")


if __name__ == "__main__":
    main()
