#!/usr/bin/env python3
"""Prints results tables of docs/ as markdown, each from the runs that
make it, so that a table in the docs is the output of the command written
next to it; `--check` re-runs the named tables and fails when the doc's
copy differs (.ci/run checks the cheapest). Standard library only.

    scripts/doc_tables.py BINARY TABLE          # print TABLE's markdown
    scripts/doc_tables.py BINARY --check TABLE  # compare with the doc

Tables (the doc that holds each is in TABLES):
  lb-one-flow            docs/load_balancing.md, one flow over four uplinks
  faults-reorder         docs/faults.md, reordering on the incast's uplinks
  mprdma-ecn-misconfig   docs/mprdma.md, ECN mis-configuration (Fig. 14)
  mprdma-link-updown     docs/mprdma.md, link down and up (Fig. 11b), seeds 1-8
  collectives-alpha-beta docs/collectives.md, each algorithm against its formula
  visor-fig5             docs/visor.md, RDMAvisor Fig 5 in the simulator
  visor-fig5-sensitivity docs/visor.md, Fig 5 at 1000 connections, other caches
  rcm-fig6               docs/rcm.md, Fig 6: incast with a burst, seeds 1-3, and
                         the burst at every CFR sampling period
  rcm-fig7               docs/rcm.md, Fig 7: incast with a victim, seeds 1-3
  eunomia-steady         docs/eunomia.md, section 5.1 at 80% load in steady state
                         (9 runs of 20 ms; about 10 minutes of CPU: not in .ci/run)
  uet-htsim              docs/uet.md, UET with and without NSCC beside uet-htsim's
                         reference runs (their connection matrices, from
                         ../shared/reference/uec-htsim; $RDMALAB_SHARED as below)
  irn-vs-roce            docs/irn.md, IRN without PFC against RoCE with PFC, 1 and 9 MiB
                         buffers (24 runs of 8 ms: not in .ci/run)
  ns3-NAME               docs/ns3_validation.md and docs/cc.md, `bench` beside an
                         ns-3 FCT file (`rdmalab compare`): NAME is p128, p128-own
                         (our ECMP hash), a2a128, a2a128-own, ws128, ws128-own (DCQCN),
                         hpcc-ws128, hpcc-p128, dctcp-ws128, timely-ws128; the files
                         of ../shared are read from $RDMALAB_SHARED if set

    scripts/doc_tables.py BINARY TABLE --out DIR  # keep the runs' folders in DIR
"""

import csv
import json
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sweep(binary, out, scenario, *args):
    """Runs `rdmalab sweep SCENARIO ARGS --out OUT` quietly; returns the
    runs' directories by label, in sweep.csv's order."""
    subprocess.run(
        [binary, "sweep", os.path.join(REPO, scenario), *args, "--out", out],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    with open(os.path.join(out, "sweep.csv")) as f:
        return [os.path.join(out, r["label"]) for r in csv.DictReader(f)]


def run(binary, out, scenario, *args):
    """Runs `rdmalab run SCENARIO ARGS --out OUT` quietly; returns OUT."""
    subprocess.run(
        [binary, "run", os.path.join(REPO, scenario), "--quiet", *args, "--out", out],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return out


def summary(run):
    with open(os.path.join(run, "summary.json")) as f:
        return json.load(f)


def flows(run):
    with open(os.path.join(run, "flows.csv")) as f:
        return list(csv.DictReader(f))


def ecn_misconfig(binary, tmp):
    """Path 4's RED at 240 KB, Delta 32 against no control (L = 4096), seeds
    1-3: OOD, and throughput measured two ways (docs/mprdma.md says why)."""
    rows = [
        "| Delta | OOD p99.9 (seeds 1-3) | max OOD | aggregate goodput: all bytes / makespan (Gb/s) | sum of per-flow goodput, bytes / FCT (Gb/s) |",
        "|---|---|---|---|---|",
    ]
    for delta, name in [(4096, "4096 (no control)"), (32, "32")]:
        runs = sweep(
            binary,
            os.path.join(tmp, f"ecn-{delta}"),
            "scenarios/mprdma_ood_ecn_misconfig.toml",
            "--seeds", "1..3",
            "--set", "transport.mprdma.l_slots=4096",
            "--set", f"transport.mprdma.delta={delta}",
        )
        s = [summary(r) for r in runs]
        per_flow = [sum(float(f["goodput_gbps"] or 0) for f in flows(r)) for r in runs]
        rows.append(
            "| {} | {} | {} | {} | {} |".format(
                name,
                ", ".join(str(x["mprdma"]["ood_p999"]) for x in s),
                ", ".join(str(x["mprdma"]["max_ooo_degree"]) for x in s),
                ", ".join(f"{x['total_goodput_gbps']:.1f}" for x in s),
                ", ".join(f"{g:.1f}" for g in per_flow),
            )
        )
    return rows


# The link down/up table's windows (ms, inclusive of both ends' samples)
# and what they are.
UPDOWN_WINDOWS = [
    (5, 20, "5-20"),
    (25, 40, "25-40 (P1 down at 20)"),
    (45, 60, "45-60 (P2 down at 40)"),
    (65, 80, "65-80 (P3 down at 60)"),
    (85, 110, "85-110 (P1 up at 83, P2 up at 103)"),
    (125, 140, "125-140 (P3 up at 123)"),
    (145, 200, "145-200"),
]


def link_updown(binary, tmp):
    """Per window, over seeds 1-8: each path's mean utilisation and the
    flow's throughput, as the mean over seeds and the lowest and highest
    seed."""
    runs = sweep(
        binary, os.path.join(tmp, "updown"), "scenarios/mprdma_link_updown.toml",
        "--seeds", "1..8",
    )
    names = [f"util:tor0->spine{p}" for p in range(4)] + ["throughput_gbps:flow0"]
    per_run = []
    for r in runs:
        series = {n: [] for n in names}
        with open(os.path.join(r, "series.csv")) as f:
            for row in csv.DictReader(f):
                if row["series"] in series:
                    series[row["series"]].append((int(row["time_ns"]) / 1e6, float(row["value"])))
        per_run.append(series)

    def cell(vals, digits):
        m = sum(vals) / len(vals)
        return f"{m:.{digits}f} ({min(vals):.{digits}f}-{max(vals):.{digits}f})"

    rows = [
        "| t (ms) | path 0 | path 1 | path 2 | path 3 | flow Gb/s |",
        "|---|---|---|---|---|---|",
    ]
    for lo, hi, label in UPDOWN_WINDOWS:
        cells = []
        for k, n in enumerate(names):
            vals = []
            for series in per_run:
                pts = [v for t, v in series[n] if lo <= t <= hi]
                vals.append(sum(pts) / len(pts))
            cells.append(cell(vals, 1 if k == 4 else 2))
        rows.append(f"| {label} | " + " | ".join(cells) + " |")
    # Per seed: path 3's load while paths 1 and 2 are down, and when each
    # returned path first runs at 90% or more (a 1 ms sample).
    rows += [
        "",
        "| seed | path 3, 45-60 ms | path 1 full again (up at 83) | path 2 (up at 103) | path 3 (up at 123) |",
        "|---|---|---|---|---|",
    ]
    for seed, series in enumerate(per_run, 1):
        p3 = [v for t, v in series[names[3]] if 45 <= t <= 60]
        back = []
        for p, up in [(1, 83), (2, 103), (3, 123)]:
            t = next((t for t, v in series[names[p]] if t > up and v >= 0.9), None)
            back.append("never" if t is None else f"{t:.0f} ms")
        rows.append(f"| {seed} | {sum(p3) / len(p3):.2f} | " + " | ".join(back) + " |")
    return rows


def faults_reorder(binary, tmp):
    """Reordering on every sender's uplink (h1..h20 -> leaf0, delay_us 10)
    of scenarios/eunomia_memory.toml at each fraction, without an ordering
    layer, seed 1: what the receiving NICs count."""
    rows = [
        "| fraction | OOO % | degree p99 | degree max | reordering-triggered retx | mean FCT (us) |",
        "|---|---|---|---|---|---|",
    ]
    for name, frac in [("0 (no fault)", None), ("0.01", 0.01), ("0.1", 0.1), ("0.5", 0.5), ("1.0", 1.0)]:
        sets = ["--set", 'transport.ordering="none"', "--set", "output.ordering_memory=false"]
        faults = [] if frac is None else [
            f'{{link=["h{h}","leaf0"],direction="forward",action="reorder",fraction={frac},delay_us=10}}'
            for h in range(1, 21)
        ]
        sets += ["--set", "faults=[" + ",".join(faults) + "]"]
        s = summary(run(
            binary, os.path.join(tmp, f"reorder-{name.split()[0]}"),
            "scenarios/eunomia_memory.toml", "--seed", "1", *sets,
        ))
        r = s["reordering"]
        fct = s["fct_ns"]["mean"] / 1e3
        rows.append(
            f"| {name} | {100 * r['ooo_fraction']:.1f} | {r['ood_p99']} | {r['ood_max']} "
            f"| {r['reorder_retx']} | {fct:.1f} |"
        )
    return rows


# crates/experiment/tests/it/load_balancers.rs's one_long_flow at 25 Gb/s.
ONE_FLOW = """
[topology]
kind = "leaf_spine"
leaves = 2
spines = 4
hosts_per_leaf = 1
host_gbps = 100
fabric_gbps = 25
[switch]
load_balancer = "{lb}"
[[flows]]
src = 0
dst = 1
bytes = 8_000_000
"""


def lb_one_flow(binary, tmp):
    """One 8 MB flow over four 25 Gb/s uplinks under each balancer (the
    load balancers' test setup, seed 1): its goodput and retransmissions."""
    rows = [
        "| balancer | goodput (Gb/s) | retransmitted packets |",
        "|---|---|---|",
    ]
    for lb in ["ecmp", "spray", "drill", "power_of_two", "letflow"]:
        path = os.path.join(tmp, f"{lb}.toml")
        with open(path, "w") as f:
            f.write(ONE_FLOW.format(lb=lb))
        out = run(binary, os.path.join(tmp, lb), path)
        (flow,) = flows(out)
        retx = summary(out)["retransmitted_packets"]
        rows.append(f"| {lb} | {float(flow['goodput_gbps']):.1f} | {retx:,} |".replace(",", " "))
    return rows

ONE_JOB = """
[topology]
kind = "leaf_spine"
leaves = 1
spines = 1
hosts_per_leaf = {n}
host_gbps = 100
delay_ns = 1000

[[jobs]]
collective = "{collective}"
algorithm = "{algorithm}"
ranks = "0..{last}"
bytes = {bytes}
"""


def collectives_alpha_beta(binary, tmp):
    """Each collective algorithm alone on 8 hosts of one switch (100 Gb/s,
    1 us links, MTU 1000, 48 B headers, 60 B ACKs), 8 MB per rank, one
    message per step: its time against its alpha-beta formula (the
    formulas are in docs/collectives.md)."""
    n, size = 8, 8_000_000
    mtu, header, ack, delay = 1000, 48, 60, 1000  # bytes; ns

    def ser(b):  # ns at 100 Gb/s
        return b * 8 / 100

    def step(x, acks=True):
        packets = -(-x // mtu)
        wire = x + packets * (header + (ack if acks else 0))
        return ser(wire) + ser(mtu + header) + 2 * delay

    def tree():
        """NCCL's double binary tree for a power of two, level by level:
        up from the leaves, then down from the roots, both trees at once
        (each carries half the buffer). A level's time is its busiest
        link's: a rank's inbound link carries the halves its children
        send it and the ACKs of what it sends in the other tree at the
        same level; its outbound link the reverse."""
        parent = {0: None}
        for r in range(1, n):  # ncclGetBtree
            bit = r & -r
            up = (r ^ bit) | (bit << 1)
            parent[r] = up if up < n else r ^ bit
        mirror = {r: None if parent[n - 1 - r] is None else n - 1 - parent[n - 1 - r] for r in range(n)}

        def height(p, r):
            kids = [c for c in range(n) if p[c] == r]
            return 0 if not kids else 1 + max(height(p, c) for c in kids)

        trees = [(p, {r: height(p, r) for r in range(n)}) for p in (parent, mirror)]
        top = max(h[r] for _, h in trees for r in range(n))
        half = size // 2
        packets = -(-half // mtu)
        data, acks = half + packets * header, packets * ack

        def level(sends):  # sends: (src, dst) pairs moving a half each
            load = {}
            for s, d in sends:
                for node, link, b in ((s, "out", data), (d, "in", data), (d, "out", acks), (s, "in", acks)):
                    load[node, link] = load.get((node, link), 0) + b
            return ser(max(load.values())) + ser(mtu + header) + 2 * delay

        total = 0
        for lv in range(1, top + 1):
            up = [(c, p[c]) for p, h in trees for c in range(n) if p[c] is not None and h[c] == lv - 1]
            down = [(p[c], c) for p, h in trees for c in range(n) if p[c] is not None and h[p[c]] == top - lv + 1]
            total += level(up) + level(down)
        return total

    piece = size // n
    halves = sum(step(size >> (k + 1)) for k in range(n.bit_length() - 1))
    formulas = {
        ("all_reduce", "ring"): 2 * (n - 1) * step(piece),
        ("all_reduce", "tree"): tree(),
        ("all_reduce", "halving_doubling"): 2 * halves,
        ("all_reduce", "direct"): 2 * step((n - 1) * piece),
        ("all_gather", "ring"): (n - 1) * step(piece),
        ("reduce_scatter", "ring"): (n - 1) * step(piece),
        ("all_to_all", "pairwise"): (n - 1) * step(piece),
        ("all_to_all", "direct"): step((n - 1) * piece),
        ("broadcast", "ring"): (n - 1) * step(size, acks=False),
    }
    rows = [
        "| collective | algorithm | time (us) | alpha-beta (us) | time / formula | busbw (Gb/s) |",
        "|---|---|---|---|---|---|",
    ]
    for (coll, alg), formula in formulas.items():
        path = os.path.join(tmp, f"{coll}-{alg}.toml")
        with open(path, "w") as f:
            f.write(ONE_JOB.format(n=n, last=n - 1, collective=coll, algorithm=alg, bytes=size))
        out = run(binary, os.path.join(tmp, f"{coll}-{alg}"), path)
        with open(os.path.join(out, "collectives.csv")) as f:
            (row,) = list(csv.DictReader(f))
        t = int(row["time_ns"])
        rows.append(
            "| {} | {} | {:.2f} | {} | {} | {:.2f} |".format(
                coll,
                alg,
                t / 1e3,
                "-" if formula is None else f"{formula / 1e3:.2f}",
                "-" if formula is None else f"{t / formula:.4f}",
                float(row["busbw_gbps"]),
            )
        )
    return rows


def visor_fig5_script():
    """docs/visor/fig5.py, which makes both Fig 5 tables."""
    import importlib.util

    path = os.path.join(REPO, "docs", "visor", "fig5.py")
    spec = importlib.util.spec_from_file_location("fig5", path)
    fig5 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fig5)
    return fig5


def visor_fig5(binary, tmp):
    return visor_fig5_script().table(binary, tmp)


def visor_fig5_sensitivity(binary, tmp):
    return visor_fig5_script().sensitivity(binary, tmp)


# Eunomia section 5.1 in steady state: the schemes, each as the sweep
# arguments that make it, and the paper's claim beside each.
STEADY_SCHEMES = [
    ("ECMP", ["--set", 'switch.load_balancer="ecmp"'], "baseline"),
    ("ConWeave", ["--set", 'switch.load_balancer="conweave"'], "-69% vs ECMP (implied by -85% and -52%)"),
    (
        "DRILL + Eunomia",
        ["--set", 'switch.load_balancer="drill"', "--set", 'transport.ordering="eunomia"'],
        "-85% vs ECMP, -52% vs ConWeave",
    ),
]
STEADY_SEEDS = "1..3"
STEADY_SET = [
    "--set", 'traffic.0.verb="send"',
    "--set", "traffic.0.duration_us=20000",
    "--set", "output.warmup_us=5000",
    "--set", "output.fct_window_us=2000",
]


def spread(v, fmt):
    """`mean [lowest, highest]` of v, each formatted by fmt."""
    return f"{fmt(sum(v) / len(v))} [{fmt(min(v))}, {fmt(max(v))}]"


def pct(x):
    return f"{100 * x:+.0f}%"


RCM_SEEDS = [1, 2, 3]


def series_mean(out, name, lo_us, hi_us):
    """The mean of series.csv's `name` over samples in [lo_us, hi_us)."""
    with open(os.path.join(out, "series.csv")) as f:
        v = [float(r["value"]) for r in csv.DictReader(f)
             if r["series"] == name and lo_us * 1000 <= int(r["time_ns"]) < hi_us * 1000]
    return sum(v) / len(v)


def rcm_fig6(binary, tmp):
    """scenarios/rcm_burst.toml with RCM off and on, seeds 1 to 3: the
    burst's and the incast flows' throughput at tB's port toward d (5 us
    samples) while the burst lasts and after it, and the burst's FCT; then
    the burst in 175-195 us for each CFR sampling period (seed 1)."""
    one = lambda v: f"{v:.1f}"
    rows = [
        "| run (seeds 1-3) | burst, 160-170 us (Gb/s) | burst, 175-195 us | each incast flow, 175-195 us | each incast flow, 215-400 us | burst FCT (us) |",
        "|---|---|---|---|---|---|",
        "| paper, DCQCN | 50 | 50 | about 12.5 | | |",
        "| paper, RCM | 50 | 25 | \"recovers quickly\" to its maximum | | |",
    ]
    for rcm in ["false", "true"]:
        res = []
        for seed in RCM_SEEDS:
            out = run(binary, os.path.join(tmp, f"burst-{rcm}-{seed}"), "scenarios/rcm_burst.toml",
                      "--set", f"switch.rcm.enabled={rcm}", "--set", f"seed={seed}")
            incast = lambda lo, hi: [series_mean(out, f"throughput_gbps:flow{i}", lo, hi) for i in range(4)]
            burst = [f for f in flows(out) if f["src"] == "4"][0]
            res.append((series_mean(out, "throughput_gbps:flow4", 160, 170),
                        series_mean(out, "throughput_gbps:flow4", 175, 195),
                        incast(175, 195), incast(215, 400), int(burst["fct_ns"]) / 1000))
        rows.append("| VOQ, RCM {} | {} | {} | {} | {} | {} |".format(
            "on" if rcm == "true" else "off",
            spread([r[0] for r in res], one), spread([r[1] for r in res], one),
            f"{min(min(r[2]) for r in res):.1f}-{max(max(r[2]) for r in res):.1f}",
            f"{min(min(r[3]) for r in res):.1f}-{max(max(r[3]) for r in res):.1f}",
            spread([r[4] for r in res], one)))
    periods = []
    for period in range(1, 9):
        out = run(binary, os.path.join(tmp, f"burst-period-{period}"), "scenarios/rcm_burst.toml",
                  "--set", f"switch.rcm.cam_period={period}")
        periods.append(f"{series_mean(out, 'throughput_gbps:flow4', 175, 195):.1f}")
    rows.append("| VOQ, RCM on, seed 1, `cam_period` 1 to 8 | | " + " ".join(periods) + " | | | |")
    return rows


SECOND_UPLINK = [
    ('{ name = "tC", kind = "switch" },', '{ name = "tC", kind = "switch" }, { name = "X2", kind = "switch" },'),
    ('{ a = "tC", b = "dv", gbps = 100, delay_ns = 1000 },',
     '{ a = "tC", b = "dv", gbps = 100, delay_ns = 1000 },\n'
     '  { a = "tA", b = "X2", gbps = 100, delay_ns = 1000 },\n'
     '  { a = "X2", b = "tB", gbps = 100, delay_ns = 1000 },\n'
     '  { a = "X2", b = "tC", gbps = 100, delay_ns = 1000 },'),
]


def rcm_fig7(binary, tmp):
    """scenarios/rcm_victim.toml, seeds 1 to 3: each flow's goodput
    (flows.csv) on today's shared-buffer switch, on VOQ switches with RCM
    off and on, and with RCM and a second uplink tA - X2 - {tB, tC} for
    SAR; what SAR did."""
    with open(os.path.join(REPO, "scenarios/rcm_victim.toml")) as f:
        text = f.read()
    second = text
    for a, b in SECOND_UPLINK:
        second = second.replace(a, b)
    path2 = os.path.join(tmp, "rcm_victim_x2.toml")
    with open(path2, "w") as f:
        f.write(second)
    one = lambda v: f"{v:.1f}"
    rows = [
        "| run (seeds 1-3) | s1 (Gb/s) | s2 | s3 | s4 | victim | flows detoured | detours let go |",
        "|---|---|---|---|---|---|---|---|",
        "| paper, DCQCN | | | | | \"only about 25\" | | |",
        "| paper, RCM | | | | | \"nearly 50\" | | |",
    ]
    runs = [
        ("shared buffer (today's switch)", "scenarios/rcm_victim.toml",
         ["--set", 'switch.model="shared_buffer"', "--set", "switch.rcm.enabled=false"]),
        ("VOQ, RCM off", "scenarios/rcm_victim.toml", ["--set", "switch.rcm.enabled=false"]),
        ("VOQ, RCM on", "scenarios/rcm_victim.toml", []),
        ("VOQ, RCM on, a second uplink tA - X2 (SAR)", path2, []),
    ]
    for k, (label, scenario, args) in enumerate(runs):
        res = []
        for seed in RCM_SEEDS:
            out = run(binary, os.path.join(tmp, f"victim-{k}-{seed}"), scenario, *args,
                      "--set", f"seed={seed}")
            g = [float(f["goodput_gbps"]) for f in flows(out)]
            r = summary(out).get("rcm") or {}
            res.append((g, r.get("detoured_flows"), r.get("released_detours")))
        cells = [spread([r[0][i] for r in res], one) for i in range(5)]
        sar = lambda j: "" if res[0][j] is None else spread([r[j] for r in res], lambda v: f"{v:.0f}")
        rows.append(f"| {label} | " + " | ".join(cells) + f" | {sar(1)} | {sar(2)} |")
    return rows


def eunomia_steady(binary, tmp):
    """scenarios/eunomia_lb.toml (8x8 leaf-spine, 128 hosts, AliStorage,
    lossless go-back-N with DCQCN) at 80% network load, SEND flows, 20 ms
    of arrivals, statistics over the flows that start after 5 ms, seeds 1
    to 3; each scheme's mean FCT with the seeds' range, its change
    against ECMP and ConWeave seed by seed, what was delivered, the flows
    left unfinished, and the mean FCT per 2 ms window of flow start (mean
    over seeds) to show whether it settled."""
    runs = {}
    for name, args, _ in STEADY_SCHEMES:
        out = os.path.join(tmp, name.replace(" ", "").replace("+", "_"))
        dirs = sweep(binary, out, "scenarios/eunomia_lb.toml", "--seeds", STEADY_SEEDS,
                     "--jobs", "1", *STEADY_SET, *args)
        runs[name] = {summary(d)["seed"]: summary(d) for d in dirs}
    seeds = sorted(runs["ECMP"])

    def fct(name, seed):
        return runs[name][seed]["fct_ns"]["mean"] / 1e3

    rows = [
        "| scheme | flows counted (3 seeds) | unfinished | delivered, 5 ms to the end (Gb/s) | FCT mean (us) | FCT p99 (us) | slowdown mean | vs ECMP | vs ConWeave | mean FCT per 2 ms of start (us) | paper |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, _, paper in STEADY_SCHEMES:
        r = [runs[name][s] for s in seeds]
        m = [x["measured"] for x in r]
        windows = zip(*[[w["fct_mean_ns"] for w in x["fct_over_time"]] for x in r])
        shown = " ".join(
            "-" if None in w else f"{sum(w) / len(w) / 1e3:.0f}" for w in windows
        )
        vs = lambda base: "-" if name == base else spread(
            [fct(name, s) / fct(base, s) - 1 for s in seeds], pct
        )
        rows.append(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
                name,
                sum(x["flows"] for x in m),
                sum(x["flows_unfinished"] for x in m),
                spread([x["delivered_gbps"] for x in m], lambda v: f"{v:.0f}"),
                spread([fct(name, s) for s in seeds], lambda v: f"{v:.1f}"),
                spread([x["fct_ns"]["p99"] / 1e3 for x in r], lambda v: f"{v:.0f}"),
                spread([x["slowdown"]["mean"] for x in r], lambda v: f"{v:.2f}"),
                vs("ECMP"),
                vs("ConWeave"),
                shown,
                paper,
            )
        )
    return rows
IRN_SCHEMES = [
    ("RoCE + PFC", ["--set", 'transport.kind="roce"', "--set", "switch.pfc=true"]),
    ("IRN, no PFC", ["--set", 'transport.kind="irn"', "--set", "switch.pfc=false"]),
]
IRN_SEEDS = "1..3"
IRN_SET = [
    "--set", "traffic.0.duration_us=8000",
    "--set", "output.warmup_us=2000",
    "--set", "output.fct_window_us=1000",
    "--vary", "switch.buffer_mb=1,9",
    "--vary", 'transport.cc="none","dcqcn"',
]


def irn_vs_roce(binary, tmp):
    """scenarios/irn_vs_roce.toml (fat tree k=8, web search, 70% load):
    RoCE (go-back-N) with PFC against IRN without PFC, with 1 and 9 MiB
    switch buffers, without congestion control and with DCQCN; 8 ms of
    arrivals, statistics over the flows that start after 2 ms, seeds 1
    to 3. Each row: flows counted and left unfinished, delivered
    throughput, mean and p99 FCT, IRN's change against RoCE seed by seed,
    what PFC and the buffers did, and the mean FCT per 1 ms window of
    flow start (mean over seeds) to show whether it settled."""
    runs = {}
    for name, args in IRN_SCHEMES:
        out = os.path.join(tmp, "roce" if "RoCE" in name else "irn")
        for d in sweep(binary, out, "scenarios/irn_vs_roce.toml", "--seeds", IRN_SEEDS,
                       "--jobs", "1", *IRN_SET, *args):
            s = summary(d)
            o = dict(s["overrides"])
            key = (o["switch.buffer_mb"], o["transport.cc"].strip('"'), name)
            runs.setdefault(key, {})[s["seed"]] = s
    rows = [
        "| buffer (MiB) | cc | scheme | flows counted (3 seeds) | unfinished | delivered, 2 ms to the end (Gb/s) | FCT mean (us) | FCT p99 (us) | IRN vs RoCE, mean / p99 | pause frames | drops | retransmitted | mean FCT per 1 ms of start (us) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for buf in ("1", "9"):
        for cc in ("none", "dcqcn"):
            for name, _ in IRN_SCHEMES:
                by_seed = runs[(buf, cc, name)]
                seeds = sorted(by_seed)
                r = [by_seed[s] for s in seeds]
                m = [x["measured"] for x in r]
                windows = zip(*[[w["fct_mean_ns"] for w in x["fct_over_time"]] for x in r])
                shown = " ".join(
                    "-" if None in w else f"{sum(w) / len(w) / 1e3:.0f}" for w in windows
                )
                if name == IRN_SCHEMES[0][0]:
                    vs = "-"
                else:
                    base = runs[(buf, cc, IRN_SCHEMES[0][0])]
                    gain = lambda q: spread(
                        [by_seed[s]["fct_ns"][q] / base[s]["fct_ns"][q] - 1 for s in seeds], pct
                    )
                    vs = f"{gain('mean')} / {gain('p99')}"
                rows.append(
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
                        buf,
                        "DCQCN" if cc == "dcqcn" else "none",
                        name,
                        sum(x["flows"] for x in m),
                        sum(x["flows_unfinished"] for x in m),
                        spread([x["delivered_gbps"] for x in m], lambda v: f"{v:.0f}"),
                        spread([x["fct_ns"]["mean"] / 1e3 for x in r], lambda v: f"{v:.1f}"),
                        spread([x["fct_ns"]["p99"] / 1e3 for x in r], lambda v: f"{v:.0f}"),
                        vs,
                        spread([x["pause_frames"] for x in r], lambda v: f"{v:.0f}"),
                        spread([x["dropped_packets"] for x in r], lambda v: f"{v:.0f}"),
                        spread([x["retransmitted_packets"] for x in r], lambda v: f"{v:.0f}"),
                        shown,
                    )
                )
    return rows


SHARED = "../shared/reference/ns3-hpcc"  # as the docs name it: the project's shared folder
# where that folder is (beside the repository unless RDMALAB_SHARED says)
SHARED_DIR = os.environ.get("RDMALAB_SHARED", os.path.join(REPO, "..", "shared"))


def ns3_compare(scenario, mode, own_hash, reference, out, top):
    """`rdmalab bench` into OUT and `rdmalab compare` with REFERENCE (a
    path from the repository root, or under SHARED), printed with the
    paths the docs give."""

    def make(binary, tmp):
        run_dir = os.path.join(tmp, out)
        hash_args = [] if own_hash else ["--ecmp-hash", "ns3"]
        subprocess.run(
            [binary, "bench", "--scenario", scenario, "--mode", mode, *hash_args, "--out", run_dir],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        ref = os.path.join(REPO, reference)
        if reference.startswith("../shared/"):
            ref = os.path.join(SHARED_DIR, reference[len("../shared/") :])
        text = subprocess.run(
            [binary, "compare", os.path.join(run_dir, "flows.csv"), ref, "--top", str(top)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        return text.replace(run_dir, out).replace(ref, reference).rstrip("\n").split("\n")

    return make


NS3 = {
    "ns3-p128": ("p128", "dcqcn", False, "docs/ns3/fct-p128-dcqcn.txt", "out/ns3/p128", 10),
    "ns3-p128-own": ("p128", "dcqcn", True, "docs/ns3/fct-p128-dcqcn.txt", "out/ns3/p128-rdmalab-hash", 0),
    "ns3-a2a128": ("a2a128", "dcqcn", False, f"{SHARED}/fct-a2a128-dcqcn.txt", "out/ns3/a2a128", 10),
    "ns3-a2a128-own": ("a2a128", "dcqcn", True, f"{SHARED}/fct-a2a128-dcqcn.txt", "out/ns3/a2a128-rdmalab-hash", 0),
    "ns3-ws128": ("ws128", "dcqcn", False, f"{SHARED}/fct-ws128-dcqcn.txt", "out/ns3/ws128", 10),
    "ns3-ws128-own": ("ws128", "dcqcn", True, f"{SHARED}/fct-ws128-dcqcn.txt", "out/ns3/ws128-rdmalab-hash", 0),
    "ns3-hpcc-ws128": ("ws128", "hpcc", False, f"{SHARED}/fct-ws128-hpcc.txt", "out/ws128-hpcc", 0),
    "ns3-hpcc-p128": ("p128", "hpcc", False, f"{SHARED}/fct-p128-hpcc.txt", "out/p128-hpcc", 3),
    "ns3-dctcp-ws128": ("ws128", "dctcp", False, "docs/ns3/fct-ws128-dctcp.txt", "out/ws128-dctcp", 0),
    "ns3-timely-ws128": ("ws128", "timely", False, "docs/ns3/fct-ws128-timely.txt", "out/ws128-timely", 5),
}


UEC = "reference/uec-htsim"  # under the shared folder (SHARED_DIR)
# (label, htsim's run folder, our ev_policy, trimming)
UET_RUNS = [
    ("permutation 2 MB, REPS, trimming", "01-perm128-uet-nscc-reps-trim", "reps", True),
    ("permutation 2 MB, oblivious, trimming", "02-perm128-uet-nscc-oblivious-trim", "oblivious", True),
    ("permutation 2 MB, REPS, no trimming", "03-perm128-uet-nscc-reps-notrim", "reps", False),
    ("incast 32-to-1, 1 MB, REPS, trimming", "10-incast32-uet-nscc-reps-trim", "reps", True),
]


def uet_scenario(cm, ev_policy, trimming, cc):
    """A scenario running htsim's connection matrix `cm` on its network:
    the k = 8 fat tree of 100 Gb/s, 1 us links, lossy, its packet sizes
    (4086-byte payloads, 64-byte headers and ACKs), its ECN marking
    (linear from 9 to 35 of its 43-packet queue, always above) and
    trimming threshold (one BDP queue: 43 packets of 4150 B)."""
    lines = [
        'name = "uet_htsim"', "seed = 1",
        "[topology]", 'kind = "fat_tree"', "k = 8", "host_gbps = 100", "fabric_gbps = 100",
        "delay_ns = 1000",
        "[switch]", "pfc = false", f"trimming = {str(trimming).lower()}",
        "ecn_table = [{ gbps = 0, kmin_kb = 37.35, kmax_kb = 145.25, pmax = 1.0 }]",
        "[transport]", 'kind = "uet"', "mtu = 4086", "header_bytes = 64", "ack_bytes = 64",
        "[transport.uet]", f'ev_policy = "{ev_policy}"', f'cc = "{cc}"',
    ]
    if cc == "nscc":
        # htsim's target: 0.75 RTT with trimming, 1 RTT without.
        lines += ["[transport.uet.nscc]"] + ([] if trimming else ["target_qdelay_us = 14.0227"])
    with open(cm) as f:
        for line in f:
            w = line.split()
            if len(w) >= 7 and "->" in w[0] and w[3] == "start":
                src, dst = w[0].split("->")
                lines += ["[[flows]]", f"src = {src}", f"dst = {dst}",
                          f"bytes = {w[6]}", f"start_us = {w[4]}"]
    return "\n".join(lines) + "\n"


def fct_stats(fcts_us):
    """Mean, nearest-rank p99 and max."""
    v = sorted(fcts_us)
    p99 = v[max(0, -(-99 * len(v) // 100) - 1)]
    return sum(v) / len(v), p99, v[-1]


def uet_htsim(binary, tmp):
    """Each reference run of uet-htsim (NSCC) beside ours on its
    connection matrix, with NSCC and without a control: flows finished,
    FCT (until the sender saw its last byte acknowledged) mean, p99 and
    max, packets resent (ours: of them trimmed) and timeouts."""
    rows = [
        "| run | simulator | finished | mean FCT (us) | p99 (us) | max (us) | retransmitted | timeouts |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, folder, ev, trimming in UET_RUNS:
        ref = os.path.join(SHARED_DIR, UEC, folder)
        h = json.load(open(os.path.join(ref, "summary.json")))
        rtx = h["packet_summary"].split("Rtx: ")[1].split()[0]
        rows.append(
            f"| {label} | htsim (NSCC) | {h['flows_finished']}/{h['flows_total']} "
            f"| {h['fct_mean_us']:.1f} | {h['fct_p99_us']:.1f} | {h['fct_max_us']:.1f} | {rtx} | - |"
        )
        cm = [f for f in os.listdir(ref) if f.endswith(".cm")][0]
        for cc, name in (("nscc", "rdmalab (NSCC)"), ("none", "rdmalab (no control)")):
            path = os.path.join(tmp, f"{folder}-{cc}.toml")
            with open(path, "w") as f:
                f.write(uet_scenario(os.path.join(ref, cm), ev, trimming, cc))
            out = run(binary, os.path.join(tmp, f"{folder}-{cc}"), path)
            s = summary(out)
            fl = flows(out)
            done = [int(r["fct_ns"]) / 1e3 for r in fl if r["fct_ns"]]
            mean, p99, mx = fct_stats(done)
            trimmed = (s.get("trimming") or {}).get("trimmed_packets", 0)
            rows.append(
                f"| | {name} | {len(done)}/{len(fl)} | {mean:.1f} | {p99:.1f} | {mx:.1f} "
                f"| {s['retransmitted_packets']:,} ({trimmed:,} trimmed) | {s['timeouts']} |"
            )
    return rows


TABLES = {
    "lb-one-flow": ("docs/load_balancing.md", lb_one_flow),
    "faults-reorder": ("docs/faults.md", faults_reorder),
    "mprdma-ecn-misconfig": ("docs/mprdma.md", ecn_misconfig),
    "mprdma-link-updown": ("docs/mprdma.md", link_updown),
    "collectives-alpha-beta": ("docs/collectives.md", collectives_alpha_beta),
    "visor-fig5": ("docs/visor.md", visor_fig5),
    "visor-fig5-sensitivity": ("docs/visor.md", visor_fig5_sensitivity),
    "eunomia-steady": ("docs/eunomia.md", eunomia_steady),
    "uet-htsim": ("docs/uet.md", uet_htsim),
    "irn-vs-roce": ("docs/irn.md", irn_vs_roce),
    "rcm-fig6": ("docs/rcm.md", rcm_fig6),
    "rcm-fig7": ("docs/rcm.md", rcm_fig7),
    **{
        name: ("docs/cc.md" if name.split("-")[1] in ("hpcc", "dctcp", "timely") else "docs/ns3_validation.md", ns3_compare(*args))
        for name, args in NS3.items()
    },
}


def main():
    args = sys.argv[1:]
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    keep = None
    if "--out" in args:
        i = args.index("--out")
        if i + 1 >= len(args):
            sys.exit(__doc__)
        keep = os.path.abspath(args[i + 1])
        del args[i : i + 2]
    if len(args) != 2 or args[1] not in TABLES:
        sys.exit(__doc__)
    binary, name = os.path.abspath(args[0]), args[1]
    doc, make = TABLES[name]
    if keep:
        os.makedirs(keep, exist_ok=True)
        rows = make(binary, keep)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            rows = make(binary, tmp)
    if not check:
        print("\n".join(rows))
        return
    with open(os.path.join(REPO, doc)) as f:
        text = f.read().splitlines()
    try:
        at = text.index(rows[0])
    except ValueError:
        sys.exit(f"{doc}: no table headed {rows[0]!r}")
    if text[at : at + len(rows)] != rows:
        print(f"{doc}: table {name} differs from a fresh run; the run gives:")
        print("\n".join(rows))
        sys.exit(1)
    print(f"{doc}: table {name} matches a fresh run")


if __name__ == "__main__":
    main()
