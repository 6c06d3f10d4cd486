#!/usr/bin/env python3
"""DCQCN micro-scenarios run in rdmalab and in the HPCC ns-3 simulator with
identical parameters (docs/ns3_validation.md, "Micro-scenarios"; issue 33).

  scripts/ns3_micro.py write
      writes each micro-scenario's inputs into docs/ns3/micro/NAME/: the
      ns-3 topology (topo.txt), flow file (flows.txt) and config
      (config.txt: bench/ns3-hpcc-config-ws128-dcqcn.txt with this
      scenario's files and the queue monitor on), and ours (scenario.toml:
      bench/ws128.toml with the same files, ns-3's ECMP hash and series);
  scripts/ns3_micro.py ns3 NS3_SIMULATION_DIR [NAME...]
      runs ns-3 (built by scripts/ns3_build.sh, which turns PRINT_LOG on)
      in each micro-scenario's folder, keeping its outputs there: fct.txt,
      qlen.txt (the queue monitor's histograms) and rates.txt (PRINT_LOG's
      DCQCN lines: rate decreases and increases per QP);
  scripts/ns3_micro.py compare RDMALAB [NAME...] [--out DIR] [--events N] [--set K=V]... [--check]
      runs ours on each and prints, beside ns-3's committed outputs: each
      flow's completion time, its first rate cut (time after the flow's
      start, and the rate after it), its number of rate cuts, and the
      bottleneck queue's mean and max; with --events N, the first N rate
      changes of each flow in both; --set passes an override to our runs;
      with --check (no --events, no --set), fails unless the output is
      docs/ns3/micro/compare.txt's sections of the scenarios run (what the
      tests ns3_micro:: check, one scenario each: ns-3's side is committed,
      so this fails when ours moves).

Metrics, the same on both sides:
- a rate cut is ns-3's `rate dec` line that lowers the rate (one at the
  minimum rate leaves it); ours, a drop of `rate_gbps:flowN` between two
  samples (every 100 ns: cuts are at least 4 us apart);
- the queue is the egress queue of the bottleneck port (all classes), in
  whole KB (ns-3's monitor floors bytes / 1000), sampled every 100 ns from
  2.0 s in both (ns-3's QLEN_MON; our `[output] sample_us = 0.1`); its mean
  is over the samples from 2.0 s to the last ns-3 flow's end (ours count
  as empty after our run ends).

Standard library only.
"""

import argparse
import concurrent.futures
import collections
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
MICRO = os.path.join(ROOT, "docs", "ns3", "micro")
START_NS = 2_000_000_000
SAMPLE_NS = 100
MON_END_NS = 2_100_000_000  # ns-3's monitor dumps every 100 ms: at 2.1 s
SERIES_END_NS = 2_010_000_000  # ours: every flow has ended by then
RUNS = 8  # ns-3's RngRun 1..RUNS beside our seeds 1..RUNS: RED's draws differ
# Scenarios that need more runs: in nic2 a handful of RED marks decide
# whether host 0's flow into the shared port is cut (5 of 40 runs of ours,
# 2 of 40 of ns-3's, leave it uncut), so 8 runs put the queue's mean 12%
# apart by the draws alone (runs 1-8: +11.9%; 1-16 +3.8%, 1-24 +0.1%,
# 1-40 -1.6%, each number within 2% there).
RUNS_OF = {"nic2": 40}


def runs(name):
    return RUNS_OF.get(name, RUNS)
EXPECTED = os.path.join(MICRO, "compare.txt")  # `compare` of every scenario
MAX_LISTED = 20  # a scenario of more flows is compared by size bucket
BUCKETS = [(0, 10_000, "0-10KB"), (10_000, 100_000, "10KB-100KB"), (100_000, 1_000_000, "100KB-1MB"), (1_000_000, None, "1MB-")]

def star(hosts):
    """Hosts 0..hosts-1 on one switch (id hosts): its links and the
    switch's id."""
    return [(h, hosts) for h in range(hosts)], [hosts]


# The second hop of "twohop": hosts 0, 1 on switch 5, hosts 2, 3, 4 on
# switch 6, the two switches joined by one link. Flow 0 (0 -> 4) shares
# 5 -> 6 with flow 1 (1 -> 3) and 6 -> 4 with flow 2 (2 -> 4).
TWO_SWITCHES = ([(0, 5), (1, 5), (2, 6), (3, 6), (4, 6), (5, 6)], [5, 6])

def pod():
    """One pod of the bench's k=8 fat tree: hosts 0-15, four to each ToR
    (16-19), every ToR joined to the four aggregation switches (20-23)."""
    links = [(h, 16 + h // 4) for h in range(16)] + [(t, a) for t in range(16, 20) for a in range(20, 24)]
    return links, list(range(16, 24))


def pod_flows():
    """WS128's flows that stay inside a pod, each pod's hosts folded onto
    pod 0's (host % 16), in the flow file's order: 258 flows, about the
    load WS128 puts on a host."""
    lines = open(os.path.join(ROOT, "bench", "flows-ws128.txt")).read().split("\n")[1:]
    out = []
    for line in lines:
        v = line.split()
        if v and int(v[0]) // 16 == int(v[1]) // 16:
            start = round(float(v[5]) * 1e9) - START_NS
            out.append((int(v[0]) % 16, int(v[1]) % 16, int(v[4]), start))
    return out


# name: (topology (links, switches), [(src, dst, bytes, start offset in
# ns)], bottleneck ports [(switch, peer)], what it asks). Every link is
# 100 Gb/s with 1 us of delay (the bench fat tree's links).
SCENARIOS = {
    "single": (star(2), [(0, 1, 1_000_000, 0)], [(2, 1)], "one flow alone, 1 MB"),
    "pair": (star(3), [(0, 2, 2_000_000, 0), (1, 2, 2_000_000, 0)], [(3, 2)], "two 2 MB flows into one port"),
    "incast4": (star(5), [(i, 4, 1_000_000, 0) for i in range(4)], [(5, 4)], "4-to-1 incast, 1 MB each"),
    "join": (
        star(3),
        [(0, 2, 4_000_000, 0), (1, 2, 1_000_000, 100_000)],
        [(3, 2)],
        "a 1 MB flow joins a 4 MB one 100 us after it started",
    ),
    "twohop": (
        TWO_SWITCHES,
        [(0, 4, 2_000_000, 0), (1, 3, 2_000_000, 0), (2, 4, 2_000_000, 0)],
        [(5, 6), (6, 4)],
        "flow 0 crosses two congested hops, each shared with one other 2 MB flow",
    ),
    "nic2": (
        star(4),
        [(0, 2, 2_000_000, 0), (1, 2, 2_000_000, 0), (0, 3, 2_000_000, 0)],
        [(4, 2), (4, 3)],
        "host 0 sends two 2 MB flows, one into a port shared with host 1's, one to an idle host",
    ),
    "reverse": (
        star(4),
        [(1, 0, 2_000_000, 0), (2, 0, 2_000_000, 0)] + [(0, 3, 10_000, 20_000 + 10_000 * k) for k in range(10)],
        [(4, 0)],
        "ten 10 KB flows from host 0, one every 10 us from 20 us, whose ACKs cross the port two 2 MB flows into host 0 share",
    ),
    "short": (
        star(4),
        [(0, 2, 4_000_000, 0), (1, 2, 4_000_000, 0)] + [(3, 2, 10_000, 20_000 + 10_000 * k) for k in range(10)],
        [(4, 2)],
        "ten 10 KB flows, one every 10 us from 20 us, into the port two 4 MB flows share",
    ),
    "pod": (
        pod(),
        pod_flows(),
        [(19, 13), (16, 20)],
        "one pod of the k=8 fat tree carrying WS128's intra-pod flows of every pod (host % 16)",
    ),
}


def topo_file(topology):
    links, switches = topology
    nodes = 1 + max(max(l) for l in links)
    lines = [f"{nodes} {len(switches)} {len(links)}", " ".join(map(str, switches))]
    lines += [f"{a} {b} 100Gbps 1000ns 0.000000" for a, b in links]
    return "\n".join(lines) + "\n"


def node_name(node, topology):
    return f"sw{node}" if node in topology[1] else f"h{node}"


def devices(topology):
    """Each node's neighbours in the order of the file's links (ns-3's
    device order: its device j >= 1 is the j-th link)."""
    out = collections.defaultdict(list)
    for a, b in topology[0]:
        out[a].append(b)
        out[b].append(a)
    return out


def flow_file(flows):
    lines = [f"{len(flows)}"]
    for src, dst, size, off in flows:
        lines.append(f"{src} {dst} 3 100 {size} {(START_NS + off) / 1e9:.9f}")
    return "\n".join(lines) + "\n"


def ns3_config():
    text = open(os.path.join(ROOT, "bench", "ns3-hpcc-config-ws128-dcqcn.txt")).read()
    files = {
        "TOPOLOGY_FILE": "topo.txt",
        "FLOW_FILE": "flows.txt",
        "TRACE_FILE": "trace.txt",
        "TRACE_OUTPUT_FILE": "/dev/null",
        "FCT_OUTPUT_FILE": "fct.txt",
        "PFC_OUTPUT_FILE": "pfc.txt",
        "QLEN_MON_FILE": "qlen.txt",
        "QLEN_MON_START": str(START_NS),
        "QLEN_MON_END": str(MON_END_NS),
        "SIMULATOR_STOP_TIME": "2.101",
    }
    out = []
    for line in text.split("\n"):
        key = line.split(" ")[0]
        out.append(f"{key} {files.pop(key)}" if key in files else line)
    out += [f"{k} {v}" for k, v in files.items()]
    return "\n".join(out).rstrip("\n") + "\n"


def scenario_toml(topology, flows, ports):
    text = open(os.path.join(ROOT, "bench", "ws128.toml")).read()
    body = text[text.index("seed = 1") :]
    body = body.replace("topo-fattree-k8-100g.txt", "topo.txt").replace("flows-ws128.txt", "flows.txt")
    body = body.replace('load_balancer = "ecmp"', 'load_balancer = "ecmp"\necmp_hash = "ns3"')
    head = (
        "# A DCQCN micro-scenario beside ns-3 (scripts/ns3_micro.py writes it):\n"
        "# bench/ws128.toml's fabric and DCQCN settings on this folder's ns-3\n"
        "# topology and flow files, with ns-3's ECMP hash.\n"
    )
    out = (
        "\n[output]\nsample_us = 0.1\n"
        f"from_us = {START_NS // 1000}\nuntil_us = {SERIES_END_NS // 1000}\n"
        "ports = [" + ", ".join(f'["{node_name(a, topology)}", "{node_name(b, topology)}"]' for a, b in ports) + "]\n"
        # the rates of flows of 100 KB and more (a shorter one ends before its
        # first cut), in a scenario of few flows (one of many is summed up by size)
        "flows = [" + ", ".join(str(i) for i, f in enumerate(flows) if f[2] >= 100_000 and len(flows) <= MAX_LISTED) + "]\n"
    )
    return head + body.rstrip("\n") + "\n" + out


def write():
    for name, (topology, flows, ports, _) in SCENARIOS.items():
        d = os.path.join(MICRO, name)
        os.makedirs(d, exist_ok=True)
        for file, text in [
            ("topo.txt", topo_file(topology)),
            ("flows.txt", flow_file(flows)),
            ("trace.txt", "0\n"),
            ("config.txt", ns3_config()),
            ("scenario.toml", scenario_toml(topology, flows, ports)),
        ]:
            open(os.path.join(d, file), "w").write(text)


RATE_LINE = re.compile(
    r"^(\d+) (rate dec|fast recovery|active inc|hyper inc): (\w+) (\w+) (\d+) (\d+) "
    r"\(([\d.]+) ([\d.]+)\)->\(([\d.]+) ([\d.]+)\)$"
)


def run_ns3(sim, names):
    binary = os.path.join(sim, "build", "scratch", "third")
    if not os.access(binary, os.X_OK):
        sys.exit(f"{binary}: not built (scripts/ns3_build.sh)")
    for name in names:
        d = os.path.join(MICRO, name)
        for run in range(1, runs(name) + 1):
            # ns-3's RED draws come from its global stream: RngRun k is our seed k's peer
            env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(sim, "build"), NS_GLOBAL_VALUE=f"RngRun={run}")
            keep = os.path.join(d, f"run{run}")
            os.makedirs(keep, exist_ok=True)
            with tempfile.TemporaryDirectory() as tmp:
                for f in ("topo.txt", "flows.txt", "trace.txt", "config.txt"):
                    shutil.copy(os.path.join(d, f), tmp)
                with open(os.path.join(tmp, "stdout.txt"), "w") as out:
                    subprocess.run([binary, "config.txt"], cwd=tmp, env=env, stdout=out, check=True)
                rates = [l for l in open(os.path.join(tmp, "stdout.txt")) if RATE_LINE.match(l.rstrip("\n"))]
                if not rates and len(SCENARIOS[name][1]) > 1:
                    sys.exit(f"{name}: no PRINT_LOG rate lines: build ns-3 with scripts/ns3_build.sh")
                open(os.path.join(keep, "rates.txt"), "w").writelines(rates)
                qlen = open(os.path.join(tmp, "qlen.txt")).read()
                open(os.path.join(keep, "qlen.txt"), "w").write(qlen[qlen.index(f"time: {MON_END_NS}") :])
                shutil.copy(os.path.join(tmp, "fct.txt"), keep)
        print(f"{name}: ns-3 outputs of RngRun 1-{runs(name)} in {os.path.relpath(d, ROOT)}/run*/")


def host_of(ip_hex):
    v = int(ip_hex, 16)
    return ((v >> 16) & 0xFF) * 256 + ((v >> 8) & 0xFF)


def ns3_outputs(name, run, flows, topology):
    """Per flow: fct_ns, [(t_ns from its start, rate Gb/s after, kind,
    rate before)];
    and the switch ports' queue histograms by (switch, peer)."""
    d = os.path.join(MICRO, name, f"run{run}")
    # ns-3 gives flow k of a (source, destination) pair source port 10000 + k
    seen, index = collections.Counter(), {}
    for i, (src, dst, _, _) in enumerate(flows):
        index[(src, dst, 10000 + seen[(src, dst)])] = i
        seen[(src, dst)] += 1
    fct = {}
    for line in open(os.path.join(d, "fct.txt")):
        v = line.split()
        fct[index[(host_of(v[0]), host_of(v[1]), int(v[2]))]] = int(v[6])
    events = collections.defaultdict(list)
    for line in open(os.path.join(d, "rates.txt")):
        m = RATE_LINE.match(line.rstrip("\n"))
        i = index[(host_of(m.group(3)), host_of(m.group(4)), int(m.group(5)))]
        t = int(m.group(1)) - START_NS - flows[i][3]
        events[i].append((t, float(m.group(10)), m.group(2), float(m.group(8))))
    hist = {}
    lines = open(os.path.join(d, "qlen.txt")).read().split("\n")
    for line in lines[1:]:
        if line.strip():
            v = list(map(int, line.split()))
            hist[(v[0], devices(topology)[v[0]][v[1] - 1])] = v[2:]
    return fct, events, hist


def run_ours(binary, name, seed, out, sets):
    subprocess.run(
        [binary, "run", os.path.join(MICRO, name, "scenario.toml"), "--set", f"seed={seed}", "--out", out, "--quiet"]
        + [a for kv in sets for a in ("--set", kv)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    fct = {}
    with open(os.path.join(out, "flows.csv")) as f:
        for r in csv.DictReader(f):
            fct[int(r["flow_id"])] = int(r["fct_ns"]) if r["fct_ns"] else None
    rates = collections.defaultdict(list)
    queue = collections.defaultdict(list)
    node = lambda n: int(n.lstrip("swh"))
    kinds = {}  # series name -> (list it goes to, whether it is a rate)
    with open(os.path.join(out, "series.csv")) as f:
        next(f)
        for line in f:
            t, series, value = line.split(",")
            kind = kinds.get(series)
            if kind is None:
                if series.startswith("rate_gbps:flow"):
                    kind = (rates[int(series[len("rate_gbps:flow") :])], True)
                elif series.startswith("queue_bytes:"):
                    a, b = series[len("queue_bytes:") :].split("->")
                    kind = (queue[(node(a), node(b))], False)
                else:
                    kind = (None, False)
                kinds[series] = kind
            if kind[0] is not None:
                kind[0].append((int(t), float(value)) if kind[1] else int(float(value)) // 1000)
    return fct, rates, queue


def our_events(samples, start, fct):
    """(t_ns from the flow's start, rate after, "cut" or "inc") at each
    change of the sampled rate while the flow runs (its rate reads 0 once
    it has finished)."""
    out, last = [], None
    for t, r in samples:
        if fct is not None and t > start + fct:
            break
        if last is not None and r != last and t >= start:
            out.append((t - start, r, "cut" if r < last else "inc"))
        last = r
    return out


def pct(ours, ns3):
    # A queue that holds less than 0.05 KB on average has no meaningful ratio.
    return f"{100.0 * (ours - ns3) / ns3:+.1f}%" if ns3 >= 0.05 else "-"


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def first_cut(cuts):
    return (cuts[0][0] / 1000, cuts[0][1]) if cuts else (None, None)


def fmt(x, spec, width):
    return f"{'-' if x is None else format(x, spec):>{width}}"


def by_size(flows, rows, print):
    """Per size bucket: the flows' mean FCT and the mean of each run's
    largest, in both (a scenario of many flows)."""
    print(f"{'size':<10} {'flows':>5} {'':>5} {'mean fct us':>11} {'diff':>7} {'max fct us':>10} {'diff':>7}")
    for lo, hi, label in BUCKETS:
        idx = [i for i, f in enumerate(flows) if f[2] >= lo and (hi is None or f[2] < hi)]
        stats = {}
        for who in ("ns-3", "ours"):
            fcts = [[run[i][0] / 1000 for i in idx if run[i][0] is not None] for run in rows[who]]
            stats[who] = (mean([mean(r) for r in fcts]), mean([max(r, default=None) for r in fcts]))
        for who in ("ns-3", "ours"):
            m, x = stats[who]
            lead = f"{label:<10} {len(idx):>5}" if who == "ns-3" else " " * 16
            diff = lambda k: "" if who == "ns-3" else pct(stats["ours"][k], stats["ns-3"][k])
            print(f"{lead} {who:>5} {fmt(m, '.1f', 11)} {diff(0):>7} {fmt(x, '.1f', 10)} {diff(1):>7}")


def compare(binary, out_dir, names, n_events, sets):
    """The comparison's text: one table per micro-scenario, each number
    the mean over ns-3's RngRun 1..runs(name) and over our seeds
    1..runs(name)."""
    lines = []
    print = lines.append
    for name in names:
        topology, flows, ports, what = SCENARIOS[name]
        n_runs = runs(name)
        ns3 = [ns3_outputs(name, r, flows, topology) for r in range(1, n_runs + 1)]
        # Our seeds side by side, one process a core (the results in seed order).
        with concurrent.futures.ProcessPoolExecutor(os.cpu_count() or 1) as pool:
            ours = list(pool.map(
                run_ours,
                *zip(*[(binary, name, r, os.path.join(out_dir, name, f"seed{r}"), sets) for r in range(1, n_runs + 1)]),
            ))
        # Per run and flow: fct, first cut (us, Gb/s), number of cuts.
        rows = {"ns-3": [], "ours": []}
        for fct, ev, _ in ns3:
            cuts = [[e for e in ev[i] if e[2] == "rate dec" and e[1] < e[3]] for i in range(len(flows))]
            rows["ns-3"].append([(fct[i], *first_cut(cuts[i]), len(cuts[i])) for i in range(len(flows))])
        for fct, rates, _ in ours:
            r = []
            for i, f in enumerate(flows):
                cuts = [e for e in our_events(rates[i], START_NS + f[3], fct.get(i)) if e[2] == "cut"]
                r.append((fct.get(i), *first_cut(cuts), len(cuts)))
            rows["ours"].append(r)
        print(f"== {name}: {what} (mean of {n_runs} runs: ns-3 RngRun 1-{n_runs}, ours seed 1-{n_runs})")
        if len(flows) > MAX_LISTED:
            by_size(flows, rows, print)
        else:
            print(f"{'flow':>4} {'src':>3} {'dst':>3} {'bytes':>8} {'':>5} {'fct us':>8} {'min':>7} {'max':>7}"
                  f" {'cut1 us':>8} {'cut1 Gb/s':>9} {'cuts':>5}")
        for i, (src, dst, size, off) in enumerate(flows if len(flows) <= MAX_LISTED else []):
            for who in ("ns-3", "ours"):
                per = [run[i] for run in rows[who]]
                fcts = [x[0] / 1000 for x in per if x[0] is not None]
                lead = f"{i:>4} {src:>3} {dst:>3} {size:>8}" if who == "ns-3" else " " * 21
                print(f"{lead} {who:>5} {fmt(mean(fcts), '.1f', 8)} {fmt(min(fcts), '.1f', 7)} {fmt(max(fcts), '.1f', 7)}"
                      f" {fmt(mean([x[1] for x in per]), '.1f', 8)} {fmt(mean([x[2] for x in per]), '.2f', 9)}"
                      f" {fmt(mean([x[3] for x in per]), '.1f', 5)}")
        # The queue's mean over a window both sides share: to the last end of a flow in any ns-3 run.
        end = max(flows[i][3] + fct[i] for fct, _, _ in ns3 for i in range(len(flows)))
        n = end // SAMPLE_NS + 1
        for port in ports:
            nm = [sum(kb * c for kb, c in enumerate(h[port])) / n for _, _, h in ns3]
            nx = [max(kb for kb, c in enumerate(h[port]) if c) for _, _, h in ns3]
            om = [sum(q[port]) / n for _, _, q in ours]
            ox = [max(q[port], default=0) for _, _, q in ours]
            a, b = (node_name(x, topology) for x in port)
            print(f"queue {a}->{b}, 0-{end / 1000:.1f} us: mean ns-3 {mean(nm):.1f} KB, ours {mean(om):.1f} KB"
                  f" ({pct(mean(om), mean(nm))}); max ns-3 {mean(nx):.0f} KB, ours {mean(ox):.0f} KB")
        if n_events:
            (_, nev, _), (ofct, orates, _) = ns3[0], ours[0]
            for i in range(len(flows)):
                oev = our_events(orates[i], START_NS + flows[i][3], ofct.get(i))
                print(f"flow {i}, run 1: first {n_events} rate changes (us from its start, Gb/s after)")
                print("  ns-3: " + "  ".join(f"{t / 1000:.1f} {r:.2f}{'v' if k == 'rate dec' else '^'}" for t, r, k, _ in nev[i][:n_events]))
                print("  ours: " + "  ".join(f"{t / 1000:.1f} {r:.2f}{'v' if k == 'cut' else '^'}" for t, r, k in oev[:n_events]))
        print("")
    return "\n".join(lines)


def expected(names):
    """The sections of the committed comparison for `names`, in order
    (each from its `== NAME:` line to the blank line after it)."""
    sections = {}
    for block in open(EXPECTED).read().split("\n\n"):
        block = block.strip("\n")
        if block.startswith("== "):
            sections[block[3:].split(":", 1)[0]] = block + "\n"
    return "\n".join(sections[n] for n in names)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("write")
    n = sub.add_parser("ns3")
    n.add_argument("sim")
    n.add_argument("names", nargs="*")
    c = sub.add_parser("compare")
    c.add_argument("rdmalab")
    c.add_argument("--out", default=os.path.join(ROOT, "out", "ns3-micro"))
    c.add_argument("--events", type=int, default=0)
    c.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="passed to our runs")
    c.add_argument("--check", action="store_true", help=f"fail unless the output is {os.path.relpath(EXPECTED, ROOT)}")
    c.add_argument("names", nargs="*")
    a = p.parse_args()
    names = getattr(a, "names", None) or list(SCENARIOS)
    bad = [x for x in names if x not in SCENARIOS]
    if bad:
        sys.exit(f"unknown micro-scenario {bad[0]} (known: {', '.join(SCENARIOS)})")
    if a.cmd == "write":
        write()
    elif a.cmd == "ns3":
        run_ns3(a.sim, names)
    else:
        text = compare(a.rdmalab, a.out, names, a.events, a.set)
        if a.set and a.check:
            sys.exit("--check compares the committed scenarios: no --set")
        if not a.check:
            print(text)
        elif text.rstrip("\n") != expected(names).rstrip("\n"):
            print(text)
            sys.exit(f"differs from {EXPECTED}: our side moved (re-run without --check, and say why in the commit)")


if __name__ == "__main__":
    main()
