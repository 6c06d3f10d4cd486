#!/usr/bin/env python3
"""Checks that Wireshark dissects the simulator's pcap trace as RoCEv2.

Runs a small scenario with `[output] pcap` of three flows (WRITEs of one
and of several packets, a READ, QPs 0 to 2) beside an incast that makes
the lossless fabric pause host 0, reads `trace.pcap` with
`tshark -d udp.port==4791,infiniband -T fields` and compares what tshark
shows against what the run's flows.csv says was sent: every frame is
RRoCE (eth:ethertype:ip:udp:infiniband) or a PFC frame (MAC Control
opcode 0x0101, one class enabled), none malformed, some PFC; each data
packet of the three flows shows twice (as its sender sends it and as its
receiver gets it: PFC loses none), with the opcode IBA gives its place in
the message, the PSNs 0..n-1, and the destination QP the flow's QP has at
that host (QPs are numbered per host in the order flows open, requester
first, from 2: IBA reserves QP 0 and 1 for management, and no frame may
go to them).

tshark comes from Debian's packages when missing (apt-get, non-interactive;
as root or through sudo). Usage: scripts/check_pcap.py [RDMALAB_BINARY]
(default: `cargo run --release`). Exits 1 on any mismatch, naming it.
"""

import csv
import math
import os
import shutil
import subprocess
import sys
import tempfile

MTU = 1000
SCENARIO = f"""
seed = 1
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 2
[transport]
mtu = {MTU}
[[flows]]
src = 0
dst = 3
bytes = 5_500
[[flows]]
src = 0
dst = 3
bytes = 700
start_us = 1
[[flows]]
src = 0
dst = 3
bytes = 4_000
verb = "read"
start_us = 2
[switch]
pfc = true
buffer_mb = 0.5
[[traffic]]
pattern = "incast"
receiver = 3
senders = [0, 1, 2]
bytes = 300_000
start_us = 3
[output]
pcap = {{ flows = [0, 1, 2] }}
"""

# IBA RC opcodes (docs/wire.md).
WRITE = {"first": 6, "middle": 7, "last": 8, "only": 10}
READ_REQUEST = 12
READ_RESPONSE = {"first": 13, "middle": 14, "last": 15, "only": 16}
ACKNOWLEDGE = 17
FIELDS = ["frame.number", "frame.protocols", "eth.type", "ip.src", "ip.dst",
          "infiniband.bth.opcode", "infiniband.bth.destqp", "infiniband.bth.psn",
          "macc.opcode", "macc.cbfc.enbv"]


def fail(msg):
    print(f"check_pcap: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def ensure_tshark():
    if shutil.which("tshark"):
        return
    apt = shutil.which("apt-get")
    if not apt:
        fail("tshark is missing and apt-get is not here to install it (install Wireshark's tshark)")
    cmd = [apt]
    if os.geteuid() != 0:
        sudo = shutil.which("sudo")
        if not sudo:
            fail("tshark is missing; installing it needs root (run as root or with sudo)")
        cmd = [sudo, "-n", apt]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for args in (["update", "-qq"], ["install", "-y", "-qq", "tshark"]):
        r = subprocess.run(cmd + args, env=env, stdout=subprocess.DEVNULL)
        if r.returncode != 0:
            fail(f"`{' '.join(cmd + args)}` failed ({r.returncode}): cannot install tshark")
    if not shutil.which("tshark"):
        fail("apt-get ran but tshark is still missing")


def place(i, n):
    if n == 1:
        return "only"
    return "first" if i == 0 else "last" if i == n - 1 else "middle"


def expected(flows):
    """(src ip, dst ip, opcode, dest qp, psn) -> count, for data packets."""
    next_qp, qp = {}, {}
    for f in sorted(flows, key=lambda f: (int(f["start_ns"]), int(f["flow_id"]))):
        src, dst, verb = int(f["src"]), int(f["dst"]), f["verb"]
        req, resp = (dst, src) if verb == "read" else (src, dst)
        for host in (req, resp):
            qp[(f["flow_id"], host)] = next_qp.get(host, 2)
            next_qp[host] = qp[(f["flow_id"], host)] + 1
    want = {}
    ip = lambda h: f"10.0.0.{h}"
    for f in flows:
        src, dst, n = int(f["src"]), int(f["dst"]), math.ceil(int(f["size_bytes"]) / MTU)
        if f["verb"] == "read":
            # The request goes from the requester (dst) to the responder's QP.
            want[(ip(dst), ip(src), READ_REQUEST, qp[(f["flow_id"], src)], 0)] = 2
            for i in range(n):
                key = (ip(src), ip(dst), READ_RESPONSE[place(i, n)], qp[(f["flow_id"], dst)], i)
                want[key] = 2
        elif f["verb"] == "write":
            for i in range(n):
                want[(ip(src), ip(dst), WRITE[place(i, n)], qp[(f["flow_id"], dst)], i)] = 2
        else:
            fail(f"flow {f['flow_id']}: verb {f['verb']} is not in this check")
    return want


def main():
    ensure_tshark()
    binary = sys.argv[1:] or ["cargo", "run", "--release", "-q", "--"]
    with tempfile.TemporaryDirectory() as tmp:
        scenario = os.path.join(tmp, "pcap.toml")
        with open(scenario, "w") as f:
            f.write(SCENARIO)
        out = os.path.join(tmp, "out")
        subprocess.run(binary + ["run", "--quiet", scenario, "--out", out], check=True,
                       stdout=subprocess.DEVNULL)
        with open(os.path.join(out, "flows.csv")) as f:
            flows = [r for r in csv.DictReader(f) if int(r["flow_id"]) in (0, 1, 2)]
        if any(not r["fct_ns"] for r in flows):
            fail("a flow did not finish")
        read = ["tshark", "-r", os.path.join(out, "trace.pcap"), "-d", "udp.port==4791,infiniband"]
        # The one-line summaries: what a user sees, "[Malformed Packet]"
        # included (the _ws.malformed field stays empty in -T fields).
        lines = subprocess.run(read, capture_output=True, text=True, check=True).stdout
        bad = [l for l in lines.splitlines() if "Malformed" in l]
        if bad:
            fail(f"{len(bad)} frames malformed to tshark, the first: {bad[0].strip()}")
        cmd = read + ["-T", "fields", "-E", "separator=\t"] + [a for f in FIELDS for a in ("-e", f)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"tshark failed: {r.stderr.strip()}")
    want = expected(flows)
    got, acks, frames, pfc = {}, 0, 0, 0
    for line in r.stdout.splitlines():
        frames += 1
        no, proto, ethertype, src, dst, opcode, qp, psn, macc, enbv = (line.split("\t") + [""] * 10)[:10]
        if ethertype == "0x8808":
            classes = int(enbv or "0", 16)
            if macc != "0x0101" or classes == 0 or classes & (classes - 1):
                fail(f"frame {no} is not a PFC frame of one class to tshark: {line}")
            pfc += 1
            continue
        # RRoCE: InfiniBand's transport headers straight over UDP.
        if ":ip:udp:infiniband" not in proto or not opcode:
            fail(f"frame {no} is not dissected as RRoCE: {line}")
        key = (src, dst, int(opcode), int(qp, 16), int(psn))
        if int(qp, 16) < 2:
            fail(f"frame {no} goes to QP {int(qp, 16)}, a management QP: {line}")
        if int(opcode) == ACKNOWLEDGE:
            acks += 1
            continue
        got[key] = got.get(key, 0) + 1
    if got != want:
        missing = {k: v for k, v in want.items() if got.get(k) != v}
        extra = {k: v for k, v in got.items() if k not in want}
        fail(f"(src, dst, opcode, destqp, psn) -> count differ: expected but not seen {missing}; "
             f"seen but not expected {extra}")
    if acks == 0 or pfc == 0:
        fail(f"{acks} Acknowledge and {pfc} PFC frames: expected some of each")
    print(f"check_pcap: ok: {frames} frames, {sum(got.values())} data packets with their opcodes, "
          f"QPs and PSNs as flows.csv says, {acks} ACKs, {pfc} PFC; tshark {tshark_version()}")


def tshark_version():
    v = subprocess.run(["tshark", "--version"], capture_output=True, text=True).stdout
    return v.split()[2] if v else "?"


if __name__ == "__main__":
    main()
