#!/usr/bin/env python3
"""Switch queue lengths of WS128 beside the HPCC ns-3 simulator's, by level
of the fat tree (docs/ns3_validation.md, "Queues").

  scripts/ns3_queues.py run RDMALAB OUT
      runs bench/ws128.toml (DCQCN) with ns-3's ECMP hash, sampling every
      switch egress port every microsecond from 2.000 to 2.010 s, into OUT;
  scripts/ns3_queues.py compare QLEN_FILE OUT/series.csv
      prints, per kind of port, the time-sampled distribution of queue
      bytes in both: QLEN_FILE is ns-3's QLEN_MON_FILE from a run of
      ../shared/reference/ns3-hpcc/config-ws128-dcqcn.txt with
      QLEN_MON_START 2000000000, QLEN_MON_END 2010000000 and its
      qlen_dump_interval (scratch/third.cc) set to 10000000, so that it
      dumps at 2.010 s (that dump, gzipped, is docs/ns3/qlen-ws128-dcqcn.txt.gz).
      ns-3 samples every 100 ns, we every microsecond.

Standard library only.
"""

import collections
import gzip
import os
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), ".."))
TOPO = os.path.join(ROOT, "bench", "topo-fattree-k8-100g.txt")
START_NS, END_NS = 2_000_000_000, 2_010_000_000


def topology():
    """Switch ids, and each node's neighbours in the order of the file's
    links (ns-3's device order: its device j >= 1 is the j-th link)."""
    lines = open(TOPO).read().split("\n")
    _, _, links = map(int, lines[0].split())
    switches = set(map(int, lines[1].split()))
    devices = collections.defaultdict(list)
    for line in lines[2 : 2 + links]:
        a, b = map(int, line.split()[:2])
        devices[a].append(b)
        devices[b].append(a)
    return switches, devices


def level(node, switches):
    # The bench fat tree numbers hosts 0-127, ToRs 128-159, aggregation
    # switches 160-191 and cores 192-207.
    if node not in switches:
        return "host"
    return "tor" if node < 160 else "agg" if node < 192 else "core"


def name(node, switches):
    return f"sw{node}" if node in switches else f"h{node}"


def run(binary, out):
    switches, devices = topology()
    ports = [
        (name(a, switches), name(b, switches))
        for a in sorted(switches)
        for b in devices[a]
    ]
    bench = os.path.join(ROOT, "bench")
    text = open(os.path.join(bench, "ws128.toml")).read()
    text = text.replace('load_balancer = "ecmp"', 'load_balancer = "ecmp"\necmp_hash = "ns3"')
    text = text.replace('file = "', f'file = "{bench}/')
    text += "\n[output]\nsample_us = 1\n"
    text += f"from_us = {START_NS // 1000}\nuntil_us = {END_NS // 1000}\n"
    text += "ports = [" + ", ".join(f'["{a}", "{b}"]' for a, b in ports) + "]\n"
    os.makedirs(out, exist_ok=True)
    scenario = os.path.join(out, "ws128_queues.toml")
    open(scenario, "w").write(text)
    subprocess.run([binary, "run", scenario, "--out", out, "--quiet"], check=True)


def ns3_histograms(path, switches, devices):
    """{(switch, peer): counts by KB} at the dump of END_NS."""
    opener = gzip.open if path.endswith(".gz") else open
    lines = opener(path, "rt").read().split("\n")
    try:
        at = lines.index(f"time: {END_NS}")
    except ValueError:
        sys.exit(f"{path}: no dump at {END_NS} ns (see this script's doc)")
    hist = {}
    for line in lines[at + 1 :]:
        if line.startswith("time:"):
            break
        if line.strip():
            v = list(map(int, line.split()))
            sw, port = v[0], v[1]
            hist[(sw, devices[sw][port - 1])] = collections.Counter(dict(enumerate(v[2:])))
    return hist


def our_histograms(path):
    hist = collections.defaultdict(collections.Counter)
    node = lambda s: int(s[2:]) if s.startswith("sw") else int(s[1:])
    with open(path) as f:
        next(f)
        for line in f:
            t, series, value = line.rstrip("\n").split(",")
            if series.startswith("queue_bytes:") and START_NS <= int(t) <= END_NS:
                a, b = series[len("queue_bytes:") :].split("->")
                hist[(node(a), node(b))][int(float(value)) // 1000] += 1
    return hist


def summary(hists):
    total = collections.Counter()
    for h in hists:
        total.update(h)
    n = sum(total.values())
    mean = sum(k * c for k, c in total.items()) / n
    above = lambda kb: sum(c for k, c in total.items() if k > kb) / n
    quantile, acc = {}, 0
    for k in sorted(total):
        acc += total[k]
        for q in (0.99, 0.999):
            if q not in quantile and acc >= q * n:
                quantile[q] = k
    return (mean, quantile[0.99], quantile[0.999], above(100), above(400), max(k for k, c in total.items() if c))


def compare(qlen, series):
    switches, devices = topology()
    ns3 = ns3_histograms(qlen, switches, devices)
    ours = our_histograms(series)
    kinds = collections.defaultdict(lambda: ([], []))
    for port, h in ns3.items():
        kinds[f"{level(port[0], switches)}->{level(port[1], switches)}"][0].append(h)
    for port, h in ours.items():
        kinds[f"{level(port[0], switches)}->{level(port[1], switches)}"][1].append(h)
    print("queue bytes at switch egress ports, 2.000-2.010 s (KB)")
    print(f"{'ports':<10} {'':<5} {'mean':>7} {'p99':>6} {'p99.9':>6} {'>100KB':>7} {'>400KB':>7} {'max':>6}")
    for kind in sorted(kinds):
        for who, hists in zip(("ns-3", "ours"), kinds[kind]):
            if not hists:
                sys.exit(f"no {kind} ports in {who}'s data")
            mean, p99, p999, a100, a400, mx = summary(hists)
            label = kind if who == "ns-3" else ""
            print(f"{label:<10} {who:<5} {mean:7.1f} {p99:6d} {p999:6d} {a100:7.4f} {a400:7.4f} {mx:6d}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
