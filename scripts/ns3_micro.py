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
  scripts/ns3_micro.py compare RDMALAB [--out DIR] [--events N] [NAME...]
      runs ours on each and prints, beside ns-3's committed outputs: each
      flow's completion time, its first rate cut (time after the flow's
      start, and the rate after it), its number of rate cuts, and the
      bottleneck queue's mean and max; with --events N, the first N rate
      changes of each flow in both.

Metrics, the same on both sides:
- a rate cut is ns-3's `rate dec` line; ours, a drop of `rate_gbps:flowN`
  between two samples (every 100 ns: cuts are at least 4 us apart);
- the queue is the egress queue of the bottleneck port (all classes), in
  whole KB (ns-3's monitor floors bytes / 1000), sampled every 100 ns from
  2.0 s in both (ns-3's QLEN_MON; our `[output] sample_us = 0.1`); its mean
  is over the samples from 2.0 s to the last ns-3 flow's end (ours count
  as empty after our run ends).

Standard library only.
"""

import argparse
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

# name: (hosts, [(src, dst, bytes, start offset in ns)], what it asks)
SCENARIOS = {
    "single": (2, [(0, 1, 1_000_000, 0)], "one flow alone, 1 MB"),
    "pair": (3, [(0, 2, 2_000_000, 0), (1, 2, 2_000_000, 0)], "two 2 MB flows into one port"),
    "incast4": (5, [(i, 4, 1_000_000, 0) for i in range(4)], "4-to-1 incast, 1 MB each"),
    "join": (
        3,
        [(0, 2, 4_000_000, 0), (1, 2, 1_000_000, 100_000)],
        "a 1 MB flow joins a 4 MB one 100 us after it started",
    ),
}


def star(hosts):
    """ns-3 topology: hosts 0..hosts-1 on one switch (id hosts), 100G,
    1 us links (the bench fat tree's links)."""
    sw = hosts
    lines = [f"{hosts + 1} 1 {hosts}", f"{sw}"]
    lines += [f"{h} {sw} 100Gbps 1000ns 0.000000" for h in range(hosts)]
    return "\n".join(lines) + "\n"


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


def scenario_toml(hosts, flows):
    text = open(os.path.join(ROOT, "bench", "ws128.toml")).read()
    body = text[text.index("seed = 1") :]
    body = body.replace("topo-fattree-k8-100g.txt", "topo.txt").replace("flows-ws128.txt", "flows.txt")
    body = body.replace('load_balancer = "ecmp"', 'load_balancer = "ecmp"\necmp_hash = "ns3"')
    dst = sorted({d for _, d, _, _ in flows})
    head = (
        "# A DCQCN micro-scenario beside ns-3 (scripts/ns3_micro.py writes it):\n"
        "# bench/ws128.toml's fabric and DCQCN settings on this folder's ns-3\n"
        "# topology and flow files, with ns-3's ECMP hash.\n"
    )
    out = (
        "\n[output]\nsample_us = 0.1\n"
        f"from_us = {START_NS // 1000}\nuntil_us = {MON_END_NS // 1000}\n"
        "ports = [" + ", ".join(f'["sw{hosts}", "h{d}"]' for d in dst) + "]\n"
        "flows = [" + ", ".join(str(i) for i in range(len(flows))) + "]\n"
    )
    return head + body.rstrip("\n") + "\n" + out


def write():
    for name, (hosts, flows, _) in SCENARIOS.items():
        d = os.path.join(MICRO, name)
        os.makedirs(d, exist_ok=True)
        for file, text in [
            ("topo.txt", star(hosts)),
            ("flows.txt", flow_file(flows)),
            ("trace.txt", "0\n"),
            ("config.txt", ns3_config()),
            ("scenario.toml", scenario_toml(hosts, flows)),
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
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(sim, "build"))
    for name in names:
        d = os.path.join(MICRO, name)
        with tempfile.TemporaryDirectory() as tmp:
            for f in ("topo.txt", "flows.txt", "trace.txt", "config.txt"):
                shutil.copy(os.path.join(d, f), tmp)
            with open(os.path.join(tmp, "stdout.txt"), "w") as out:
                subprocess.run([binary, "config.txt"], cwd=tmp, env=env, stdout=out, check=True)
            rates = [l for l in open(os.path.join(tmp, "stdout.txt")) if RATE_LINE.match(l.rstrip("\n"))]
            if not rates and not name == "single":
                sys.exit(f"{name}: no PRINT_LOG rate lines: build ns-3 with scripts/ns3_build.sh")
            open(os.path.join(d, "rates.txt"), "w").writelines(rates)
            qlen = open(os.path.join(tmp, "qlen.txt")).read()
            last = qlen[qlen.index(f"time: {MON_END_NS}") :]
            open(os.path.join(d, "qlen.txt"), "w").write(last)
            shutil.copy(os.path.join(tmp, "fct.txt"), d)
        print(f"{name}: ns-3 outputs in {os.path.relpath(d, ROOT)}")


def host_of(ip_hex):
    v = int(ip_hex, 16)
    return ((v >> 16) & 0xFF) * 256 + ((v >> 8) & 0xFF)


def ns3_outputs(name, flows, hosts):
    """Per flow: fct_ns, [(t_ns from its start, rate Gb/s after, kind)];
    and the bottleneck ports' queue histograms by destination host."""
    d = os.path.join(MICRO, name)
    index = {(s, t): i for i, (s, t, _, _) in enumerate(flows)}
    fct = {}
    for line in open(os.path.join(d, "fct.txt")):
        v = line.split()
        fct[index[(host_of(v[0]), host_of(v[1]))]] = int(v[6])
    events = collections.defaultdict(list)
    for line in open(os.path.join(d, "rates.txt")):
        m = RATE_LINE.match(line.rstrip("\n"))
        i = index[(host_of(m.group(3)), host_of(m.group(4)))]
        t = int(m.group(1)) - START_NS - flows[i][3]
        events[i].append((t, float(m.group(10)), m.group(2)))
    hist = {}
    lines = open(os.path.join(d, "qlen.txt")).read().split("\n")
    for line in lines[1:]:
        if line.strip():
            v = list(map(int, line.split()))
            if v[0] == hosts:
                hist[v[1] - 1] = v[2:]  # device j is the j-th link: to host j-1
    return fct, events, hist


def run_ours(binary, name, out):
    subprocess.run(
        [binary, "run", os.path.join(MICRO, name, "scenario.toml"), "--out", out, "--quiet"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    fct = {}
    with open(os.path.join(out, "flows.csv")) as f:
        for r in csv.DictReader(f):
            fct[int(r["flow_id"])] = int(r["fct_ns"]) if r["fct_ns"] else None
    rates = collections.defaultdict(list)
    queue = collections.defaultdict(list)
    with open(os.path.join(out, "series.csv")) as f:
        next(f)
        for line in f:
            t, series, value = line.rstrip("\n").split(",")
            if series.startswith("rate_gbps:flow"):
                rates[int(series[len("rate_gbps:flow") :])].append((int(t), float(value)))
            elif series.startswith("queue_bytes:"):
                dst = int(series.split("->h")[1])
                queue[dst].append(int(float(value)) // 1000)
    return fct, rates, queue


def our_events(samples, start):
    """(t_ns from the flow's start, rate after, "cut" or "inc") at each
    change of the sampled rate."""
    out, last = [], None
    for t, r in samples:
        if last is not None and r != last and t >= start:
            out.append((t - start, r, "cut" if r < last else "inc"))
        last = r
    return out


def pct(ours, ns3):
    return f"{100.0 * (ours - ns3) / ns3:+.1f}%" if ns3 else "-"


def compare(binary, out_dir, names, n_events):
    for name in names:
        hosts, flows, what = SCENARIOS[name]
        nfct, nev, nhist = ns3_outputs(name, flows, hosts)
        out = os.path.join(out_dir, name)
        ofct, orates, oqueue = run_ours(binary, name, out)
        print(f"== {name}: {what}")
        print(f"{'flow':>4} {'src':>3} {'dst':>3} {'bytes':>8} {'fct ns-3':>9} {'fct ours':>9} {'diff':>7}"
              f" {'cut1 us ns-3':>12} {'ours':>7} {'Gb/s ns-3':>9} {'ours':>6} {'cuts ns-3':>9} {'ours':>5}")
        for i, (src, dst, size, off) in enumerate(flows):
            ncuts = [e for e in nev[i] if e[2] == "rate dec"]
            oev = our_events(orates[i], START_NS + off)
            ocuts = [e for e in oev if e[2] == "cut"]
            n1 = (f"{ncuts[0][0] / 1000:.1f}", f"{ncuts[0][1]:.2f}") if ncuts else ("-", "-")
            o1 = (f"{ocuts[0][0] / 1000:.1f}", f"{ocuts[0][1]:.2f}") if ocuts else ("-", "-")
            of = ofct.get(i)
            print(f"{i:>4} {src:>3} {dst:>3} {size:>8} {nfct[i]:>9} {of if of else '-':>9}"
                  f" {pct(of, nfct[i]) if of else '-':>7} {n1[0]:>12} {o1[0]:>7} {n1[1]:>9} {o1[1]:>6}"
                  f" {len(ncuts):>9} {len(ocuts):>5}")
        end = max(flows[i][3] + nfct[i] for i in range(len(flows)))
        n = end // SAMPLE_NS + 1
        for dst in sorted(nhist):
            if dst not in {d for _, d, _, _ in flows}:
                continue
            h = nhist[dst]
            ns3_sum = sum(kb * c for kb, c in enumerate(h))  # empty after the end
            ns3_max = max(kb for kb, c in enumerate(h) if c)
            q = oqueue[dst]
            ours_sum, ours_max = sum(q), max(q) if q else 0
            print(f"queue sw{hosts}->h{dst} over 0-{end / 1000:.1f} us: mean ns-3 {ns3_sum / n:.1f} KB,"
                  f" ours {ours_sum / n:.1f} KB ({pct(ours_sum, ns3_sum)}); max ns-3 {ns3_max} KB, ours {ours_max} KB")
        if n_events:
            for i in range(len(flows)):
                oev = our_events(orates[i], START_NS + flows[i][3])
                print(f"flow {i}: first {n_events} rate changes (us from its start, Gb/s after)")
                print("  ns-3: " + "  ".join(f"{t / 1000:.1f} {r:.2f}{'v' if k == 'rate dec' else '^'}" for t, r, k in nev[i][:n_events]))
                print("  ours: " + "  ".join(f"{t / 1000:.1f} {r:.2f}{'v' if k == 'cut' else '^'}" for t, r, k in oev[:n_events]))
        print()


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
        compare(a.rdmalab, a.out, names, a.events)


if __name__ == "__main__":
    main()
