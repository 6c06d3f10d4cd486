"""Eunomia's section 2 experiments (docs/eunomia.md), run with rdmalab and
printed as the Markdown tables of that page.

  fig1  load balancers on RDMA, with and without the ideal ordering layer
        (and Eunomia's, for the per-packet ones),
        lossless (PFC, go-back-N) and lossy (IRN), 50% and 80% load
        (scenarios/eunomia_lb.toml); MP-RDMA beside them; Fig 1(c): the
        retransmissions that reordering triggered; from the same runs,
        Figs 11-12 (FCT by flow size: ECMP, ConWeave and the per-packet
        balancers with Eunomia's layer) and Fig 13 (the time ports are
        paused, switch ports and host ports apart). Every flow is a SEND
        (`traffic.0.verb = "send"`), as in section5.py: a WRITE under
        Eunomia would wait for its last packet's hold (Appendix A)
  fig2  the flows hit by recurring failures of 1% of the links, per load
        balancer (scenarios/eunomia_failures.toml)
  fig4  reordering against load and flow size: DRILL, measured before the
        ideal ordering layer (what a reordering buffer must absorb; without
        it go-back-N's rewinds add their own) (scenarios/eunomia_lb.toml)
  fig14 Jellyfish with FKSP, and with power of two over its k paths and
        the ideal ordering layer, against the k=8 fat tree with ECMP
        (docs/topologies/*.toml)

Each run is one `rdmalab sweep FILE --seeds S --set KEY=VALUE ...` into
its own folder under --out; up to --jobs run at once. Only the standard
library; reads summary.json and flows.csv.

usage: python3 docs/eunomia/run.py [fig1 fig2 fig4 fig14] [--duration-us N]
           [--seeds 1..3] [--jobs N] [--out DIR] [--bin PATH] [--lbs a,b]
           [--cdf NAME]
"""
import argparse
import concurrent.futures
import csv
import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
LB_FILE = os.path.join(ROOT, "scenarios", "eunomia_lb.toml")
FAIL_FILE = os.path.join(ROOT, "scenarios", "eunomia_failures.toml")
FAT_TREE = os.path.join(ROOT, "docs", "topologies", "fat_tree8_ecmp.toml")
JELLYFISH = os.path.join(ROOT, "docs", "topologies", "jellyfish80_fksp.toml")
# The load balancers of Eunomia's Fig 1 (MP-RDMA, a transport, runs
# beside them with ECMP).
LBS = ["ecmp", "conweave", "drill", "power_of_two", "spray"]
LOSSLESS = {"switch.pfc": "true", "transport.kind": '"roce"'}
LOSSY = {"switch.pfc": "false", "transport.kind": '"irn"'}
# The leaf-spine is 1:2 oversubscribed. Loads are network loads, as in
# Eunomia and the ConWeave artifact (whose run.py sets the host load to
# the network load divided by the oversubscription): 80% network load is
# 40% of the host rate, which with 7/8 of the traffic crossing the spines
# loads the uplinks to 70%.
OVERSUB = 2


def host_load(net):
    return str(float(net) / OVERSUB)


# Flow-size buckets of the reordering table (bytes, upper bounds).
SIZES = [10_000, 100_000, 1_000_000, float("inf")]
# The paper's short flows (Fig 15: "up to 16KB").
SHORT = 16 * 1024
# Flow-size buckets of the FCT-by-size tables (bytes, upper bounds).
FCT_SIZES = [SHORT, 100_000, 1_000_000, float("inf")]
SEND = '"send"'


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("figs", nargs="*", default=["fig1", "fig2", "fig4", "fig14"])
    p.add_argument("--duration-us", type=int, default=2000,
                   help="arrivals per run (default 2000 us)")
    p.add_argument("--seeds", default="1", help="e.g. 1 or 1..3")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--out", default="out/eunomia")
    p.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "rdmalab"))
    p.add_argument("--lbs", default=",".join(LBS),
                   help="load balancers of fig1 and fig2 (default %(default)s)")
    p.add_argument("--cdf", default="alistorage",
                   help="flow sizes of fig1, fig2 and fig4 (e.g. fbhdp2015_conweave, "
                        "the FB Hadoop sizes the ConWeave artifact ships; default %(default)s)")
    p.add_argument("--stop-ms", type=int, default=100,
                   help="simulated-time cap of every run (default 100 ms)")
    a = p.parse_args()
    for f in a.figs:
        if f not in ("fig1", "fig2", "fig4", "fig14"):
            p.error(f"unknown figure {f!r}: fig1, fig2, fig4 or fig14")
    a.lbs = [x for x in a.lbs.split(",") if x]
    return a


class Runner:
    """Queues runs (one sweep each) and runs them `jobs` at a time."""

    def __init__(self, a):
        self.a = a
        self.runs = []

    def add(self, name, file, sets):
        out = os.path.join(self.a.out, name)
        sets = dict(sets)
        sets.setdefault("traffic.0.duration_us", str(self.a.duration_us))
        sets.setdefault("stop_ms", str(self.a.stop_ms))
        if file in (LB_FILE, FAIL_FILE):
            sets.setdefault("traffic.0.cdf", f'"{self.a.cdf}"')
        cmd = [self.a.bin, "sweep", file, "--seeds", self.a.seeds, "--jobs", "1", "--out", out]
        for k, v in sets.items():
            cmd += ["--set", f"{k}={v}"]
        self.runs.append((name, cmd, out))
        return out

    def go(self):
        def one(run):
            name, cmd, _ = run
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                raise SystemExit(f"{name}: {' '.join(cmd)}\n{r.stderr.strip()}")
            print(f"  done {name}", file=sys.stderr)

        with concurrent.futures.ThreadPoolExecutor(self.a.jobs) as ex:
            list(ex.map(one, self.runs))


def summaries(out):
    """The summary.json of every seed of one sweep folder."""
    return [json.load(open(os.path.join(out, d, "summary.json")))
            for d in sorted(os.listdir(out)) if os.path.isdir(os.path.join(out, d))]


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs) if xs else float("nan")


def avg(out, f):
    return mean(f(s) for s in summaries(out))


def finished(out):
    ss = summaries(out)
    return f"{sum(s['flows_finished'] for s in ss)}/{sum(s['flows'] for s in ss)}"


def flows(out, cls=None):
    """Every flow of every seed of one sweep folder (flows.csv rows), those
    of traffic class `cls` (e.g. "traffic[0]") only if given."""
    rows = []
    for d in sorted(os.listdir(out)):
        f = os.path.join(out, d, "flows.csv")
        if os.path.exists(f):
            rows += [x for x in csv.DictReader(open(f))
                     if cls is None or x["class"].startswith(cls)]
    return rows


def p99(v):
    v = sorted(v)
    return v[min(len(v) - 1, int(0.99 * len(v)))] if v else float("nan")


def by_size(rows):
    """(label, flows, finished, FCT mean us, FCT p99 us) per size bucket,
    every bucket (NaN FCTs for an empty one), FCTs over the finished
    flows."""
    out, lo = [], 0
    for hi in FCT_SIZES:
        b = [x for x in rows if lo <= int(x["size_bytes"]) < hi]
        fct = [int(x["fct_ns"]) / 1000 for x in b if x["fct_ns"]]
        label = ("<= 16 KiB" if hi == SHORT else
                 f"{lo // 1000}-{hi // 1000} KB" if hi != float("inf") else
                 f">= {lo // 1000} KB")
        out.append((label, len(b), len(fct), mean(fct), p99(fct)))
        lo = hi
    return out


def orderings(lb):
    """The ordering layers a balancer runs with: none and the ideal one,
    and Eunomia's beside them for the per-packet schemes it is built for."""
    if lb in ("drill", "power_of_two", "spray"):
        return ("none", "ideal", "eunomia")
    return ("none", "ideal")


def fig1(a, r):
    runs = []
    for load in ("0.5", "0.8"):
        for mode, sets in (("lossless", LOSSLESS), ("lossy", LOSSY)):
            for lb in a.lbs:
                for order in orderings(lb):
                    name = f"fig1/{mode}-{load}-{lb}-{order}"
                    runs.append((load, mode, lb, order, r.add(name, LB_FILE, {
                        **sets, "traffic.0.load": host_load(load), "traffic.0.verb": SEND,
                        "switch.load_balancer": f'"{lb}"',
                        "transport.ordering": f'"{order}"'})))
        name = f"fig1/lossless-{load}-mprdma"
        runs.append((load, "lossless", "mprdma", "none", r.add(name, LB_FILE, {
            **LOSSLESS, "transport.kind": '"mprdma"', "traffic.0.load": host_load(load),
            "traffic.0.verb": SEND, "switch.load_balancer": '"ecmp"'})))

    def scheme(lb, order):
        return lb + ("" if order == "none" else f" + {order}")

    def table():
        print(f"### Fig 1: FCT slowdown, retransmissions ({a.cdf}, 8x8 leaf-spine)\n")
        print("Loads are network loads (host load x 2); SEND flows.\n")
        print("| load | fabric | scheme | flows done | slowdown mean | p99 | small mean "
              "| large mean | retransmitted | reordering-triggered | out of order | paused (switch ports) |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for load, mode, lb, order, out in runs:
            print("| %s | %s | %s | %s | %.2f | %.1f | %.2f | %.2f | %.0f | %.0f | %.1f%% | %.3f%% |" % (
                load, mode, scheme(lb, order), finished(out),
                avg(out, lambda s: s["slowdown"]["mean"]),
                avg(out, lambda s: s["slowdown"]["p99"]),
                avg(out, lambda s: s["slowdown_small"]["mean"]),
                avg(out, lambda s: s["slowdown_large"]["mean"]),
                avg(out, lambda s: s["retransmitted_packets"]),
                avg(out, lambda s: s["reordering"]["reorder_retx"]),
                100 * avg(out, lambda s: s["reordering"]["ooo_fraction"]),
                100 * avg(out, lambda s: s["pfc_pause"]["switch_paused_fraction_mean"])))
        print()
        # Figs 11-12: ECMP and ConWeave against the per-packet balancers
        # with Eunomia's layer.
        print(f"### Figs 11-12: FCT by flow size ({a.cdf})\n")
        print("FCT mean and p99 (us) over the finished flows of all seeds, by flow size; "
              "`-`: no flow of that size.\n")
        sized = [(load, mode, scheme(lb, order), by_size(flows(out)))
                 for load, mode, lb, order, out in runs
                 if lb in ("ecmp", "conweave") and order == "none" or order == "eunomia"]
        head = " | ".join(f"{b[0]} mean | {b[0]} p99" for b in sized[0][3])
        print(f"| load | fabric | scheme | {head} |")
        print("|---" * (3 + 2 * len(FCT_SIZES)) + "|")
        for load, mode, name, buckets in sized:
            cells = " | ".join("%.1f | %.0f" % (m, p) if n else "- | -"
                               for _, _, n, m, p in buckets)
            print(f"| {load} | {mode} | {name} | {cells} |")
        print()
        # Fig 13: lossless only (the lossy fabric has no PFC).
        print("### Fig 13: time paused, switch ports and host ports (lossless)\n")
        print("Per port, the fraction of the run it was paused, averaged over the "
              "switches' ports and over the hosts' ports; the mean of the seeds.\n")
        print("| load | scheme | switch ports paused | host ports paused | pause frames |")
        print("|---|---|---|---|---|")
        for load, mode, lb, order, out in runs:
            if mode == "lossless" and order != "ideal":
                print("| %s | %s | %.4f%% | %.4f%% | %.0f |" % (
                    load, scheme(lb, order),
                    100 * avg(out, lambda s: s["pfc_pause"]["switch_paused_fraction_mean"]),
                    100 * avg(out, lambda s: s["pfc_pause"]["host_paused_fraction_mean"]),
                    avg(out, lambda s: s["pause_frames"])))
        print()
    return table


def fig2(a, r):
    runs = []
    for lb in a.lbs:
        for order in ("none", "ideal"):
            name = f"fig2/{lb}-{order}"
            runs.append((lb, order, r.add(name, FAIL_FILE, {
                "switch.load_balancer": f'"{lb}"', "transport.ordering": f'"{order}"',
                "faults.0.stop_us": str(a.duration_us + 20)})))

    def table():
        print("### Fig 2: flows hit by recurring failures of 1% of the links\n")
        print("| scheme | flows done | flows hit | hit: slowdown mean | hit: p99 "
              "| all: slowdown mean | drops (link down) |")
        print("|---|---|---|---|---|---|---|")
        for lb, order, out in runs:
            scheme = lb + (" + ideal" if order == "ideal" else "")
            print("| %s | %s | %.0f | %.2f | %.1f | %.2f | %.0f |" % (
                scheme, finished(out),
                avg(out, lambda s: s["flows_hit_by_failures"]),
                avg(out, lambda s: s["slowdown_hit_by_failures"]["mean"]),
                avg(out, lambda s: s["slowdown_hit_by_failures"]["p99"]),
                avg(out, lambda s: s["slowdown"]["mean"]),
                avg(out, lambda s: s["drops"]["link_down"])))
        print()
    return table


def fig4(a, r):
    runs = []
    for load in ("0.3", "0.5", "0.8"):
        runs.append((load, r.add(f"fig4/drill-{load}", LB_FILE, {
            **LOSSLESS, "traffic.0.load": host_load(load),
            "switch.load_balancer": '"drill"', "transport.ordering": '"ideal"'})))

    def table():
        print("### Fig 4: out-of-order degree by load and flow size (DRILL, ideal ordering)\n")
        print("Per flow, `ood_max` (the largest PSN gap ahead of the expected one); "
              "the mean and p99 over the flows of each size, and the share of flows "
              "with any reordering.\n")
        print("| load (network) | size | flows | reordered | ood_max mean | ood_max p99 | ood p99 (all packets) |")
        print("|---|---|---|---|---|---|---|")
        for load, out in runs:
            rows = []
            for d in sorted(os.listdir(out)):
                f = os.path.join(out, d, "flows.csv")
                if os.path.exists(f):
                    rows += list(csv.DictReader(open(f)))
            lo = 0
            for hi in SIZES:
                v = sorted(int(x["ood_max"]) for x in rows if lo <= int(x["size_bytes"]) < hi)
                label = f"{lo // 1000}-{hi // 1000} KB" if hi != float("inf") else f">= {lo // 1000} KB"
                if v:
                    print("| %s | %s | %d | %.0f%% | %.1f | %d | %.0f |" % (
                        load, label, len(v), 100 * sum(1 for x in v if x > 0) / len(v),
                        mean(v), v[min(len(v) - 1, int(0.99 * len(v)))],
                        avg(out, lambda s: s["reordering"]["ood_p99"])))
                lo = hi
        print()
    return table


def fig14(a, r):
    runs = []
    for load in ("0.3", "0.5", "0.8"):
        base = {"traffic.0.load": load}
        runs.append(("fat tree, ECMP", load, r.add(f"fig14/ft-{load}", FAT_TREE, base)))
        runs.append(("Jellyfish, FKSP", load, r.add(f"fig14/jf-{load}", JELLYFISH, base)))
        runs.append(("Jellyfish, power of two over KSP + ideal", load, r.add(
            f"fig14/jp-{load}", JELLYFISH, {
                **base, "routing.choice": '"load_balancer"',
                "switch.load_balancer": '"power_of_two"', "transport.ordering": '"ideal"'})))

    def table():
        print("### Figs 3 and 14: Jellyfish (80 switches, 128 servers) against the k=8 fat tree\n")
        print("| topology and routing | load | flows done | FCT mean (us) | FCT p99 (us) "
              "| goodput (Gb/s) | pause frames |")
        print("|---|---|---|---|---|---|---|")
        for name, load, out in runs:
            print("| %s | %s | %s | %.1f | %.0f | %.0f | %.0f |" % (
                name, load, finished(out),
                avg(out, lambda s: s["fct_ns"]["mean"] / 1000),
                avg(out, lambda s: s["fct_ns"]["p99"] / 1000),
                avg(out, lambda s: s["total_goodput_gbps"]),
                avg(out, lambda s: s["pause_frames"])))
        print()
    return table


def main():
    a = parse()
    if not os.path.exists(a.bin):
        raise SystemExit(f"{a.bin}: no such binary (cargo build --release, or --bin PATH)")
    r = Runner(a)
    tables = [globals()[f](a, r) for f in a.figs]
    print(f"{len(r.runs)} runs, {a.jobs} at a time, into {a.out}", file=sys.stderr)
    r.go()
    for t in tables:
        t()


if __name__ == "__main__":
    main()
