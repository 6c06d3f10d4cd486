"""Eunomia's section 5 experiments that need no new model (docs/eunomia.md,
"Section 5: what Eunomia enables"), run with rdmalab and printed as the
Markdown tables of that page.

  fig15 Figs 14-15: the k=8 fat tree with ECMP, Jellyfish with FKSP, and
        Jellyfish with power of two over its k paths and Eunomia's layer;
        mean and p99 FCT, aggregate goodput by load; FCT by flow size at
        50% and 80% (docs/topologies/*.toml)
  fig16 Fig 16: Poisson 50-to-1 queries of 40 KB flows on the lossy 8x8
        leaf-spine: IRN alone, DIBS + IRN, DIBS + Eunomia; query completion
        time (QCT) by incast load, then with background traffic
        (scenarios/eunomia_incast.toml, scenarios/eunomia_incast_bg.toml)
  fig17 Fig 17: SRPT against FIFO, ECMP and power of two, 80% load, with
        Eunomia's layer uncapped; FCT by flow size, bitmap bytes
        (scenarios/eunomia_srpt.toml)
  fig18 Fig 18 (§5.7): DRILL with static bitmaps of 2 to 64 bytes and
        with Eunomia's layer, lossless go-back-N, 80% load: FCT, drops
        beyond the bitmap, NACKs, and the NICs' ordering bytes sampled
        over time (scenarios/eunomia_lb.toml)
  fig19 Fig 19: random failures of 1-10% of the links at the paper's
        100 ms interval (one set per run, failed halfway through the
        arrivals): ECMP, ConWeave, and DRILL, power of two and spray with
        Eunomia's layer and IRN's timeouts (§3.2.3)
        (scenarios/eunomia_failures.toml)
  fig20 Fig 20 (Appendix A): every flow a WRITE, lossless, 50% and 80%
        load: ECMP, ConWeave, DRILL + Eunomia with the last packet held at
        the sender and at the receiver (scenarios/eunomia_lb.toml)

Every flow is a SEND (`traffic.N.verb = "send"`) but in fig20: section
5's flows complete at the receiver, where Eunomia orders completions
(§3.5); a WRITE under Eunomia would wait for its last packet's hold,
which is what fig20 measures. Loads on the
leaf-spine are network loads (host load = network load / 2, run.py's
convention); on the fat tree and Jellyfish, host loads (neither is
oversubscribed). Runs, folders and helpers are docs/eunomia/run.py's
(imported); each figure's wall-clock time goes to stderr.

usage: python3 docs/eunomia/section5.py [fig15 fig16 fig17 fig18 fig19 fig20]
           [--duration-us N] [--seeds 1..3] [--jobs N] [--out DIR]
           [--bin PATH] [--stop-ms N] [--rto-us N] [--fig15-loads 0.3,0.5]
           [--fig16-loads ...] [--fig16-bg ...] [--fig18-sample-us N]
           [--fig19-fractions ...] [--fig20-loads ...]
"""
import argparse
import csv
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (the section-2 script beside this one)
from run import FAIL_FILE, FAT_TREE, JELLYFISH, LB_FILE  # noqa: E402
from run import SEND, avg, by_size, finished, flows, host_load, mean, p99, summaries  # noqa: E402
from run import FCT_SIZES as SIZES  # noqa: E402

INCAST = os.path.join(run.ROOT, "scenarios", "eunomia_incast.toml")
INCAST_BG = os.path.join(run.ROOT, "scenarios", "eunomia_incast_bg.toml")
# Lossless, SEND at 80% network load, Eunomia's layer uncapped (Fig 17).
SRPT = os.path.join(run.ROOT, "scenarios", "eunomia_srpt.toml")
FIGS = ("fig15", "fig16", "fig17", "fig18", "fig19", "fig20")
EUNOMIA = {"transport.ordering": '"eunomia"'}


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("figs", nargs="*", default=list(FIGS))
    p.add_argument("--duration-us", type=int, default=2000,
                   help="arrivals per run (default 2000 us)")
    p.add_argument("--seeds", default="1", help="e.g. 1 or 1..3")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--out", default="out/eunomia-sec5")
    p.add_argument("--bin", default=os.path.join(run.ROOT, "target", "release", "rdmalab"))
    p.add_argument("--stop-ms", type=int, default=100,
                   help="simulated-time cap of every run (default 100 ms)")
    p.add_argument("--fig15-loads", default="0.3,0.5,0.7,0.8")
    p.add_argument("--fig16-loads", default="0.1,0.2,0.3,0.4,0.5",
                   help="incast network loads of Fig 16(c)")
    p.add_argument("--fig16-bg", default="0.1,0.2,0.3",
                   help="background network loads of Fig 16(d) (incast at 30%%)")
    p.add_argument("--fig18-sample-us", default="100",
                   help="Fig 18's ordering-memory sampling interval (the paper's 1 ms "
                        "leaves a 2 ms run two samples; default %(default)s us)")
    p.add_argument("--fig19-fractions", default="0.01,0.02,0.05,0.1")
    p.add_argument("--fig20-loads", default="0.5,0.8", help="network loads of Fig 20")
    p.add_argument("--rto-us", help="go-back-N's timeout (transport.rto_us) for every run "
                                    "(default: the files' 4000 us)")
    a = p.parse_args()
    for f in a.figs:
        if f not in FIGS:
            p.error(f"unknown figure {f!r}: {', '.join(FIGS)}")
    for k in ("fig15_loads", "fig16_loads", "fig16_bg", "fig19_fractions", "fig20_loads"):
        setattr(a, k, [x for x in getattr(a, k).split(",") if x])
    # run.Runner sets the flow sizes of the leaf-spine files from this.
    a.cdf = "alistorage"
    return a


def ordering(out, key):
    """The mean over seeds of one field of summary.json's `ordering` block
    (0 without a bitmap layer)."""
    return avg(out, lambda s: (s.get("ordering") or {}).get(key, 0))


PO2_KSP = {"routing.choice": '"load_balancer"', "switch.load_balancer": '"power_of_two"',
           **EUNOMIA}


def fig15(a, r):
    schemes = [
        ("fat tree, ECMP", "ft", FAT_TREE, {}),
        ("Jellyfish, FKSP", "jf", JELLYFISH, {}),
        ("Jellyfish, power of two over KSP + Eunomia", "jp", JELLYFISH, PO2_KSP),
        # Jellyfish's unequal paths reorder beyond the default 256-bit cap
        # (the degree's p99 is 127 packets at 30% load, 767 at 80%): the
        # same with a cap no flow reached in these runs.
        ("Jellyfish, power of two over KSP + Eunomia, 4096-bit cap, 1 MB", "jq", JELLYFISH, {
            **PO2_KSP, "transport.eunomia.cap_bits": "4096",
            "transport.eunomia.memory_bytes": str(1 << 20)}),
    ]
    runs = []
    for load in a.fig15_loads:
        for name, tag, file, sets in schemes:
            runs.append((name, load, r.add(f"fig15/{tag}-{load}", file, {
                **sets, "traffic.0.load": load, "traffic.0.verb": SEND})))

    def table():
        print("### Figs 14-15: Jellyfish with power of two + Eunomia against the k=8 fat tree\n")
        print("Loads are host loads (neither topology is oversubscribed); SEND flows.\n")
        print("| topology and routing | load | flows done | FCT mean (us) | FCT p99 (us) "
              "| goodput (Gb/s) | pause frames | retransmitted | Eunomia NACKs |")
        print("|---|---|---|---|---|---|---|---|---|")
        for name, load, out in runs:
            print("| %s | %s | %s | %.1f | %.0f | %.0f | %.0f | %.0f | %.0f |" % (
                name, load, finished(out),
                avg(out, lambda s: s["fct_ns"]["mean"] / 1000),
                avg(out, lambda s: s["fct_ns"]["p99"] / 1000),
                avg(out, lambda s: s["total_goodput_gbps"]),
                avg(out, lambda s: s["pause_frames"]),
                avg(out, lambda s: s["retransmitted_packets"]),
                ordering(out, "nacks_sent")))
        print()
        print("### Fig 15: FCT by flow size at 50% and 80% load\n")
        print("Over the flows of all seeds; FCTs of the finished ones.\n")
        print("| load | size | topology and routing | flows | finished | FCT mean (us) | FCT p99 (us) |")
        print("|---|---|---|---|---|---|---|")
        for load in ("0.5", "0.8"):
            picked = [(n, o) for n, l, o in runs if l == load]
            sized = [(n, by_size(flows(o))) for n, o in picked]
            for i in range(len(SIZES)):
                for n, rows in sized:
                    if rows[i][1]:
                        print("| %s | %s | %s | %d | %d | %.1f | %.0f |" % (
                            load, rows[i][0], n, *rows[i][1:]))
        print()
    return table


def queries(out):
    """Completion times (us) of the 50-to-1 queries of every seed, and the
    count of queries with a flow unfinished. A query is the flows of
    traffic[0] with one destination and one start (an incast event starts
    all its flows at once); its QCT runs from that start to its last
    flow's end."""
    qs = {}
    for d in sorted(os.listdir(out)):
        f = os.path.join(out, d, "flows.csv")
        if not os.path.exists(f):
            continue
        for x in csv.DictReader(open(f)):
            if x["class"].startswith("traffic[0]"):
                qs.setdefault((d, x["dst"], x["start_ns"]), []).append(x["fct_ns"])
    done = [max(int(t) for t in q) / 1000 for q in qs.values() if all(q)]
    return done, len(qs) - len(done)


# Fig 16's schemes, lossy. The paper pairs DIBS with Eunomia and with IRN,
# and runs Eunomia over go-back-N elsewhere (§5.6): Eunomia's row runs
# RoCE's go-back-N under the layer; the same over IRN beside it, and over
# go-back-N with a memory controller no 50-to-1 incast fills (the default
# 2 KB holds about 40 connections' metadata and first blocks).
INCAST_SCHEMES = [
    ("IRN", {"transport.kind": '"irn"', "switch.deflection": '"none"',
             "transport.ordering": '"none"'}),
    ("DIBS + IRN", {"transport.kind": '"irn"', "switch.deflection": '"dibs"',
                    "transport.ordering": '"none"'}),
    ("DIBS + Eunomia (go-back-N)", {"transport.kind": '"roce"', "switch.deflection": '"dibs"',
                                    **EUNOMIA}),
    ("DIBS + Eunomia (IRN)", {"transport.kind": '"irn"', "switch.deflection": '"dibs"',
                              **EUNOMIA}),
    ("DIBS + Eunomia (go-back-N, 16 MB)", {
        "transport.kind": '"roce"', "switch.deflection": '"dibs"', **EUNOMIA,
        "transport.eunomia.memory_bytes": str(1 << 24)}),
]


def fig16(a, r):
    runs, bg = [], []
    for load in a.fig16_loads:
        for i, (name, sets) in enumerate(INCAST_SCHEMES):
            runs.append((name, load, r.add(f"fig16/{i}-{load}", INCAST, {
                **sets, "traffic.0.load": host_load(load)})))
    for load in a.fig16_bg:
        for i, (name, sets) in enumerate(INCAST_SCHEMES):
            bg.append((name, load, r.add(f"fig16/bg{i}-{load}", INCAST_BG, {
                **sets, "traffic.0.load": host_load("0.3"),
                "traffic.1.load": host_load(load),
                "traffic.1.duration_us": str(a.duration_us)})))

    def row(name, load, out):
        qct, unfinished = queries(out)
        print("| %s | %s | %d | %d | %.1f | %.1f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f |" % (
            load, name, len(qct) + unfinished, unfinished, mean(qct), p99(qct),
            avg(out, lambda s: s["dropped_packets"]),
            avg(out, lambda s: s.get("deflected") or 0),
            avg(out, lambda s: s["retransmitted_packets"]),
            avg(out, lambda s: s["reordering"]["reorder_retx"]),
            avg(out, lambda s: s["timeouts"]),
            ordering(out, "untracked_dropped") + ordering(out, "beyond_cap_dropped")))

    head = ("| scheme | queries | unfinished | QCT mean (us) | QCT p99 (us) | drops "
            "| deflected | retransmitted | dup. retransmitted | timeouts | Eunomia drops |")

    def table():
        print("### Fig 16(c): 50-to-1 incast of 40 KB flows, by incast load\n")
        print("Lossy 8x8 leaf-spine, ECMP; incast loads are network loads (host load x 2).\n")
        print("| incast load " + head)
        print("|---" * 12 + "|")
        for name, load, out in runs:
            row(name, load, out)
        print()
        print("### Fig 16(d): incast at 30% with AliStorage background traffic\n")
        print("QCTs of the queries only; background loads are network loads.\n")
        print("| background load " + head)
        print("|---" * 12 + "|")
        for name, load, out in bg:
            row(name, load, out)
        print()
    return table


# Fig 17's schemes on SRPT's file (its Eunomia uncapped); the rows
# without ordering show what SRPT's reordering does to go-back-N. SRPT
# dequeues as pFabric ("flow_earliest": a port never reorders a flow) or
# as the paper ("packet": a message's later packets overtake its earlier
# ones, `[switch.srpt] dequeue`).
FIG17 = [
    ("ECMP + FIFO, no ordering", "ecmp", "fifo", "none", None),
    ("ECMP + SRPT, no ordering", "ecmp", "srpt", "none", "flow_earliest"),
    ("ECMP + FIFO + Eunomia", "ecmp", "fifo", "eunomia", None),
    ("ECMP + SRPT + Eunomia", "ecmp", "srpt", "eunomia", "flow_earliest"),
    ("PO2 + FIFO + Eunomia", "power_of_two", "fifo", "eunomia", None),
    ("PO2 + SRPT + Eunomia", "power_of_two", "srpt", "eunomia", "flow_earliest"),
    ("ECMP + SRPT (packet), no ordering", "ecmp", "srpt", "none", "packet"),
    ("ECMP + SRPT (packet) + Eunomia", "ecmp", "srpt", "eunomia", "packet"),
    ("PO2 + SRPT (packet) + Eunomia", "power_of_two", "srpt", "eunomia", "packet"),
]


def fig17(a, r):
    runs = []
    for i, (name, lb, sched, order, dequeue) in enumerate(FIG17):
        sets = {"switch.load_balancer": f'"{lb}"', "switch.scheduling": f'"{sched}"',
                "transport.ordering": f'"{order}"'}
        if dequeue:
            sets["switch.srpt.dequeue"] = f'"{dequeue}"'
        runs.append((name, r.add(f"fig17/{i}", SRPT, sets)))

    def table():
        print("### Fig 17: SRPT against FIFO at 80% load (lossless, go-back-N)\n")
        print("Eunomia uncapped: `cap_bits` = 65536, `memory_bytes` = 16777216. FCTs over the "
              "flows of all seeds; gain: mean FCT against ECMP + FIFO without ordering. "
              "SRPT: pFabric's dequeue (a flow's earliest packet); SRPT (packet): the "
              "paper's (the packet itself).\n")
        print("| scheme | flows done | FCT mean (us) | <= 16 KiB mean | gain | <= 16 KiB p99 "
              "| >= 1000 KB mean | retransmitted | QP peak bitmap B (mean) | QP peak bitmap B (max) "
              "| NIC peak B (mean) | NIC peak B (max) | Eunomia drops | out of order | timeouts |")
        print("|---" * 15 + "|")
        base = None
        for name, out in runs:
            sized = by_size(flows(out))
            short, large = sized[0], sized[-1]
            if base is None:
                base = short[3]
            print("| %s | %s | %.1f | %.2f | %+.0f%% | %.1f | %.0f | %.0f | %.1f | %.0f | %.0f | %.0f "
                  "| %.0f | %.0f | %.1f |" % (
                name, finished(out), avg(out, lambda s: s["fct_ns"]["mean"] / 1000),
                short[3], 100 * (short[3] / base - 1), short[4], large[3],
                avg(out, lambda s: s["retransmitted_packets"]),
                ordering(out, "qp_peak_bitmap_bytes_mean"),
                ordering(out, "qp_peak_bitmap_bytes_max"),
                ordering(out, "nic_peak_bytes_mean"),
                ordering(out, "nic_peak_bytes_max"),
                ordering(out, "untracked_dropped") + ordering(out, "beyond_cap_dropped"),
                avg(out, lambda s: s["reordering"]["ooo_packets"]),
                avg(out, lambda s: s["timeouts"])))
        print()
        print("### Fig 17: FCT by flow size\n")
        print("| scheme | size | flows | finished | FCT mean (us) | FCT p99 (us) |")
        print("|---|---|---|---|---|---|")
        for name, out in runs:
            for label, n, *rest in by_size(flows(out)):
                if n:
                    print("| %s | %s | %d | %d | %.1f | %.0f |" % (name, label, n, *rest))
        print()
    return table


# Fig 18's static bitmaps (bits): 2, 4, 8, 16, 32 and 64 bytes.
STATIC_BITS = (16, 32, 64, 128, 256, 512)


def fig18(a, r):
    # The file is lossless go-back-N at 80% network load already; setting
    # no more keys than needed keeps the sweep's folder names (every key
    # set) within a file name's 255 bytes.
    base = {"traffic.0.verb": SEND,
            "switch.load_balancer": '"drill"', "output.ordering_memory": "true",
            "output.sample_us": a.fig18_sample_us}
    runs = [(f"static, {bits // 8} B", r.add(f"fig18/static-{bits}", LB_FILE, {
        **base, "transport.ordering": '"static_bitmap"',
        "transport.static_bitmap.bits": str(bits)})) for bits in STATIC_BITS]
    runs.append(("Eunomia (dynamic, cap 32 B)", r.add("fig18/eunomia", LB_FILE, {
        **base, **EUNOMIA})))

    def table():
        print("### Fig 18: DRILL with static bitmaps and with Eunomia (80% load)\n")
        print("Lossless go-back-N, AliStorage at 80% network load, SEND flows. NIC bytes, "
              f"sampled every {a.fig18_sample_us} us and averaged over the run: the bitmaps "
              "on a NIC (mean over NICs), and bitmaps plus metadata (mean over NICs, and "
              "the busiest NIC); QP bitmap: the largest one connection's bitmap reached.\n")
        print("| ordering | flows done | FCT mean (us) | FCT p99 (us) | slowdown mean | p99 "
              "| dropped beyond the bitmap | NACKs | retransmitted | timeouts "
              "| NIC bitmap B (mean NIC) | NIC total B (mean NIC) | NIC total B (busiest NIC) "
              "| QP bitmap B (max) |")
        print("|---" * 14 + "|")
        for name, out in runs:
            print("| %s | %s | %.1f | %.0f | %.2f | %.1f | %.0f | %.0f | %.0f | %.1f "
                  "| %.1f | %.1f | %.1f | %.0f |" % (
                      name, finished(out),
                      avg(out, lambda s: s["fct_ns"]["mean"] / 1000),
                      avg(out, lambda s: s["fct_ns"]["p99"] / 1000),
                      avg(out, lambda s: s["slowdown"]["mean"]),
                      avg(out, lambda s: s["slowdown"]["p99"]),
                      ordering(out, "beyond_cap_dropped"),
                      ordering(out, "nacks_sent"),
                      avg(out, lambda s: s["retransmitted_packets"]),
                      avg(out, lambda s: s["timeouts"]),
                      avg(out, lambda s: s["ordering"]["sampled"]["bitmap_bytes_mean"]),
                      avg(out, lambda s: s["ordering"]["sampled"]["total_bytes_mean"]),
                      avg(out, lambda s: s["ordering"]["sampled"]["total_bytes_max"]),
                      ordering(out, "qp_peak_bitmap_bytes_max")))
        print()
    return table


FIG19 = [
    ("ecmp", "none"), ("conweave", "none"),
    ("drill", "eunomia"), ("power_of_two", "eunomia"), ("spray", "eunomia"),
]


# The paper's failure interval (§5.6: "at fixed intervals (100ms)").
FIG19_INTERVAL_US = 100_000


def fig19(a, r):
    # A run's arrivals last far less than one interval, so it sees one
    # set of failed links: failed halfway through the arrivals, on a
    # loaded fabric, and down for the rest of the run.
    at = a.duration_us // 2
    runs = []
    for frac in a.fig19_fractions:
        for lb, order in FIG19:
            sets = {
                "switch.load_balancer": f'"{lb}"',
                "transport.ordering": f'"{order}"',
                "faults.0.fraction": frac,
                "faults.0.at_us": str(at),
                "faults.0.interval_us": str(FIG19_INTERVAL_US),
                "faults.0.stop_us": str(at + FIG19_INTERVAL_US),
                "traffic.0.verb": SEND}
            if order == "eunomia":
                # §3.2.3: real losses are left to "the existing timeout
                # mechanism at the sender NICs such as in IRN".
                sets["transport.eunomia.timeouts"] = '"irn"'
            runs.append((frac, lb + (" + eunomia" if order == "eunomia" else ""),
                         r.add(f"fig19/{lb}-{frac}", FAIL_FILE, sets)))

    def table():
        print("### Fig 19: random failures of 1-10% of the links, every 100 ms\n")
        print("Lossless go-back-N at 80% network load; at the paper's 100 ms interval a run "
              "sees one set of the 64 switch-to-switch links fail (fraction x 64, rounded "
              "up), halfway through the arrivals. Eunomia's rows recover with IRN's "
              "timeouts (100 us below 3 packets in flight, else 320 us), the others with "
              "go-back-N's 4 ms.\n")
        print("| failed | links | scheme | flows done | slowdown mean [seeds' range] | p99 "
              "| flows hit | hit: slowdown mean [seeds' range] | drops (link down) "
              "| retransmitted | timeouts |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")

        def spread(out, f):
            # Over the seeds that have a value ("-": none has).
            v = [x for x in (f(s) for s in summaries(out)) if x is not None]
            return "%.2f [%.2f, %.2f]" % (mean(v), min(v), max(v)) if v else "-"

        def hit(s):
            # None when no flow lost a packet.
            return (s["slowdown_hit_by_failures"] or {}).get("mean")

        for frac, scheme, out in runs:
            print("| %s%% | %d | %s | %s | %s | %.1f | %.0f | %s | %.0f | %.0f | %.1f |" % (
                f"{100 * float(frac):g}", math.ceil(float(frac) * 64), scheme, finished(out),
                spread(out, lambda s: s["slowdown"]["mean"]),
                avg(out, lambda s: s["slowdown"]["p99"]),
                avg(out, lambda s: s["flows_hit_by_failures"]),
                spread(out, hit),
                avg(out, lambda s: s["drops"]["link_down"]),
                avg(out, lambda s: s["retransmitted_packets"]),
                avg(out, lambda s: s["timeouts"])))
        print()
    return table


# Fig 20's schemes (every flow a WRITE): the baselines, and DRILL with
# Eunomia's layer holding a WRITE's last packet at the sender (the
# paper's design) or at the receiver (the appendix's proposal).
FIG20 = [
    ("ecmp", "ECMP", {"switch.load_balancer": '"ecmp"'}),
    ("conweave", "ConWeave", {"switch.load_balancer": '"conweave"'}),
    ("sender", "DRILL + Eunomia, sender hold", {
        "switch.load_balancer": '"drill"', **EUNOMIA,
        "transport.eunomia.last_packet": '"sender_hold"'}),
    ("receiver", "DRILL + Eunomia, receiver hold", {
        "switch.load_balancer": '"drill"', **EUNOMIA,
        "transport.eunomia.last_packet": '"receiver_hold"'}),
]


def fig20(a, r):
    runs = []
    for load in a.fig20_loads:
        for tag, name, sets in FIG20:
            # The file is lossless go-back-N (as fig18, no more keys).
            runs.append((load, name, r.add(f"fig20/{tag}-{load}", LB_FILE, {
                **sets, "traffic.0.load": host_load(load),
                "traffic.0.verb": '"write"'})))

    def table():
        print("### Fig 20: every flow a WRITE, the last packet held (lossless)\n")
        print("Loads are network loads; the base RTT across the spines is 8 us of "
              "propagation (4 links of 1 us each way) plus serialization. Held: last "
              "packets of WRITEs held at the sender until every earlier PSN was "
              "acknowledged, or that arrived out of order and waited in host memory "
              "at the receiver.\n")
        print("| load | scheme | flows done | FCT mean (us) | FCT p99 (us) | slowdown mean "
              "| p99 | held at the sender | sender hold mean (us) | held at the receiver "
              "| receiver-held KB |")
        print("|---" * 11 + "|")
        for load, name, out in runs:
            print("| %s | %s | %s | %.1f | %.0f | %.2f | %.1f | %.0f | %.2f | %.0f | %.0f |" % (
                load, name, finished(out),
                avg(out, lambda s: s["fct_ns"]["mean"] / 1000),
                avg(out, lambda s: s["fct_ns"]["p99"] / 1000),
                avg(out, lambda s: s["slowdown"]["mean"]),
                avg(out, lambda s: s["slowdown"]["p99"]),
                ordering(out, "sender_held_packets"),
                ordering(out, "sender_hold_mean_us"),
                ordering(out, "receiver_held_packets"),
                ordering(out, "receiver_held_bytes") / 1000))
        print()
    return table


class Runner(run.Runner):
    """run.py's runner, with --rto-us set on every run if given."""

    def add(self, name, file, sets):
        if self.a.rto_us:
            sets = {**sets, "transport.rto_us": self.a.rto_us}
        return super().add(name, file, sets)


def main():
    a = parse()
    if not os.path.exists(a.bin):
        raise SystemExit(f"{a.bin}: no such binary (cargo build --release, or --bin PATH)")
    tables = []
    for f in a.figs:
        r = Runner(a)
        t = globals()[f](a, r)
        start = time.monotonic()
        print(f"{f}: {len(r.runs)} runs, {a.jobs} at a time, into {a.out}", file=sys.stderr)
        r.go()
        print(f"{f}: {time.monotonic() - start:.0f} s", file=sys.stderr)
        tables.append(t)
    for t in tables:
        t()


if __name__ == "__main__":
    main()
