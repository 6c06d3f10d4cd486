"""The table of docs/topologies.md from `rdmalab sweep --out DIR` folders:
one row per folder and load, averaged over the seeds whose every flow
finished (a run that stopped at stop_ms with flows left is counted in
"seeds done" and left out of the averages). Reads summary.json files only.

Usage: python3 docs/topologies/table.py DIR...
"""
import glob
import json
import os
import re
import sys

rows = {}
for d in sys.argv[1:]:
    for s in sorted(glob.glob(os.path.join(d, "*", "summary.json"))):
        load = re.search(r"load=([0-9.]+)", s).group(1)
        rows.setdefault((d, load), []).append(json.load(open(s)))

print("| run | load | seeds done | slowdown mean | slowdown p99 | FCT mean (us) "
      "| FCT p99 (us) | hops per packet | pause frames |")
print("|---|---|---|---|---|---|---|---|---|")
for (d, load), runs in rows.items():
    done = [j for j in runs if j["flows_finished"] == j["flows"]]

    def avg(f):
        return sum(f(j) for j in done) / len(done) if done else float("nan")

    print("| %s | %s | %d/%d | %.2f | %.1f | %.1f | %.0f | %.2f | %.0f |" % (
        os.path.basename(d.rstrip("/")), load, len(done), len(runs),
        avg(lambda j: j["slowdown"]["mean"]), avg(lambda j: j["slowdown"]["p99"]),
        avg(lambda j: j["fct_ns"]["mean"] / 1e3), avg(lambda j: j["fct_ns"]["p99"] / 1e3),
        avg(lambda j: j["packet_hops"] / j["injected_packets"]),
        avg(lambda j: j["pause_frames"])))
