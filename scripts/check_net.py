#!/usr/bin/env python3
"""Checks the real datapath's packets as Wireshark sees them, beside the
simulator's.

Runs `rdmalab net serve` and `rdmalab net run` (go-back-N, two 10 kB
WRITEs in 1000-byte packets) on 127.77.0.1:4791 while tshark captures the
loopback interface, and the client writes its own `--pcap`; both ends with
--no-gso, since a capture on the sending host shows a GSO call as one
frame. Then:
- every frame of the loopback capture dissects as RRoCE
  (eth:ethertype:ip:udp:infiniband), none malformed, and its ICRC is
  right, computed here as Linux's rxe computes it (so the IPv4 header the
  kernel wrote is the one the endpoints assume: identification 0);
- the data packets show the opcodes IBA gives their places in the
  messages (first, middle, last), one destination QP, consecutive PSNs,
  the RETH's DMA length on first packets, and the ACKs an AETH;
- the client's --pcap holds the same UDP payloads as the capture;
- a simulator trace of the same transfer (`[output] pcap`) shows the same
  protocols, opcodes and fields (its PSNs start at 0, the datapath's at a
  random PSN);
- a `--transport uet` transfer to UET's port 4793 (4 entropy values): what
  tshark shows of the client's --pcap. tshark 4.0.17 has no UET
  dissector, so every frame must show as UDP data (a tshark that
  dissects UET is named and accepted); the UDP checksum of every frame
  the client sent verifies (status Good), the ones it received have none
  (the kernel stripped it); the requests leave from 4 source ports and
  their PDS type is a RUD request, the answers' an ACK. Our own parser
  checks every field (crates/datapath/tests/it/uet.rs).

Where capturing needs a privilege this process lacks, the loopback part
is skipped with a message and the --pcap is checked instead. tshark comes
from Debian's packages when missing (check_pcap.py installs it).
Usage: scripts/check_net.py [RDMALAB_BINARY]. Exits 1 on any mismatch.
"""

import os
import signal
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_pcap import ensure_tshark, fail  # noqa: E402

ADDR = "127.77.0.1:4791"
UET_ADDR = "127.77.0.1:4793"
FIELDS = ["frame.protocols", "udp.srcport", "udp.dstport", "infiniband.bth.opcode",
          "infiniband.bth.destqp", "infiniband.bth.psn", "infiniband.reth.dmalen",
          "infiniband.aeth.msn"]
WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, ACK = 6, 7, 8, 17
SIM = """
seed = 1
[topology]
kind = "leaf_spine"
leaves = 2
spines = 1
hosts_per_leaf = 1
[transport]
mtu = 1000
[[flows]]
src = 0
dst = 1
bytes = 10_000
[output]
pcap = {}
"""


def dissect(pcap):
    cmd = ["tshark", "-r", pcap, "-d", "udp.port==4791,infiniband", "-T", "fields",
           "-E", "separator=\t"] + [a for f in FIELDS for a in ("-e", f)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"tshark -r {pcap}: {r.stderr.strip()}")
    summary = subprocess.run(["tshark", "-r", pcap, "-d", "udp.port==4791,infiniband"],
                             capture_output=True, text=True).stdout
    if "Malformed" in summary:
        fail(f"{pcap}: frames malformed to tshark")
    rows = [(l.split("\t") + [""] * len(FIELDS))[:len(FIELDS)] for l in r.stdout.splitlines()]
    if not rows:
        fail(f"{pcap}: no frames")
    return rows


def shape(rows, name):
    """Checks one trace's data packets and ACKs; returns what must match
    between traces: protocols, opcodes, and the fields present by opcode."""
    # A simulator trace holds each packet as sent and as received: once
    # each here, in order of first appearance.
    seen, data = set(), []
    for r in rows:
        if r[3] and int(r[3]) != ACK and tuple(r) not in seen:
            seen.add(tuple(r))
            data.append(r)
    acks = [r for r in rows if r[3] and int(r[3]) == ACK]
    for r in rows:
        # A data packet's payload (rdmalab's extension first) shows as data.
        if r[0] not in ("eth:ethertype:ip:udp:infiniband", "eth:ethertype:ip:udp:infiniband:data"):
            fail(f"{name}: a frame is not RRoCE: {r}")
    if not acks or any(not r[7] for r in acks):
        fail(f"{name}: no ACKs, or an ACK without its AETH MSN")
    psns = [int(r[5]) for r in data]
    if any((b - a) % (1 << 24) != 1 for a, b in zip(psns, psns[1:])):
        fail(f"{name}: data PSNs are not consecutive: {psns}")
    if len({r[4] for r in data}) != 1:
        fail(f"{name}: more than one destination QP")
    if any(int(r[4], 16) < 2 for r in rows if r[4]):
        fail(f"{name}: a frame goes to QP 0 or 1, IBA's management QPs")
    ops = [int(r[3]) for r in data]
    for i, op in enumerate(ops):
        if op == WRITE_FIRST and r_len(data[i]) != 10_000:
            fail(f"{name}: a first packet's RETH DMA length is {data[i][6]!r}, not 10000")
        if op != WRITE_FIRST and data[i][6]:
            fail(f"{name}: a RETH on a packet that is not first")
    runs = "".join({WRITE_FIRST: "F", WRITE_MIDDLE: "M", WRITE_LAST: "L"}.get(o, "?") for o in ops)
    if runs.replace("F" + "M" * 8 + "L", "") != "":
        fail(f"{name}: opcodes are not first, 8 middle, last per message: {ops}")
    return {r[0] for r in rows}, set(ops) | {ACK}, {(int(r[3]), tuple(bool(x) for x in r[6:8])) for r in rows if r[3]}


def r_len(row):
    return int(row[6]) if row[6] else -1


def icrc_ok(frame):
    """rxe's ICRC over an Ethernet frame (docs/wire.md): 8 bytes of 0xff,
    the IPv4 header with TOS, TTL and checksum ones, the UDP header with
    its checksum ones, the BTH with byte 4 ones, the rest up to the ICRC."""
    ip = bytearray(frame[14:34])
    ip[1] = 0xff
    ip[8] = 0xff
    ip[10:12] = b"\xff\xff"
    total = int.from_bytes(frame[16:18], "big")
    rest = bytearray(frame[34:14 + total - 4])
    rest[6:8] = b"\xff\xff"
    rest[8 + 4] = 0xff
    crc = zlib.crc32(b"\xff" * 8 + bytes(ip) + bytes(rest)) & 0xffffffff
    return crc.to_bytes(4, "little") == frame[14 + total - 4:14 + total]


def frames(pcap):
    """The frames of a classic pcap file."""
    with open(pcap, "rb") as f:
        data = f.read()
    at, out = 24, []
    while at + 16 <= len(data):
        n = int.from_bytes(data[at + 8:at + 12], "little")
        out.append(data[at + 16:at + 16 + n])
        at += 16 + n
    return out


def udp_payloads(pcap):
    return [f[42:] for f in frames(pcap) if len(f) > 42]


def check_uet(binary, tmp):
    """A UET transfer's --pcap as tshark shows it; returns a note."""
    own = os.path.join(tmp, "uet.pcap")
    server = subprocess.Popen(binary + ["net", "serve", "--bind", UET_ADDR, "--once", "--no-gso"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if "listening" not in server.stdout.readline():
        fail(f"net serve (uet) did not start: {server.stderr.read()}")
    run = subprocess.run(binary + ["net", "run", "--to", UET_ADDR, "--verb", "write", "--bytes",
                                   "20000", "--msg-bytes", "10000", "--mtu", "1000", "--paths", "4",
                                   "--transport", "uet", "--no-gso", "--pcap", own],
                         capture_output=True, text=True)
    server.wait(timeout=30)
    if run.returncode != 0:
        fail(f"net run --transport uet failed: {run.stderr.strip()}")
    r = subprocess.run(["tshark", "-o", "udp.check_checksum:TRUE", "-r", own, "-T", "fields",
                        "-E", "separator=\t", "-e", "frame.protocols", "-e", "udp.srcport",
                        "-e", "udp.dstport", "-e", "udp.checksum.status"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"tshark -r {own}: {r.stderr.strip()}")
    rows = [l.split("\t") for l in r.stdout.splitlines()]
    pds_types = [f[42] >> 3 for f in frames(own)]
    if not rows or len(rows) != len(pds_types):
        fail(f"uet: tshark shows {len(rows)} frames of {len(pds_types)}")
    port = UET_ADDR.split(":")[1]
    dissected = {row[0] for row in rows if "uet" in row[0].split(":")}
    if not dissected and any(row[0] != "eth:ethertype:ip:udp:data" for row in rows):
        fail(f"uet: a frame is neither UDP data nor UET: {sorted({row[0] for row in rows})}")
    sent = [(row, t) for row, t in zip(rows, pds_types) if row[2] == port]
    got = [(row, t) for row, t in zip(rows, pds_types) if row[1] == port]
    # Wireshark's checksum status: 1 good, 3 not present.
    if not sent or any(row[3] != "1" or t != 2 for row, t in sent):
        fail(f"uet: a request whose UDP checksum is not good or whose PDS type is not RUD: {sent}")
    if not got or any(row[3] != "3" or t not in (7, 8) for row, t in got):
        fail(f"uet: an answer with a UDP checksum or not an ACK: {got}")
    sports = {row[1] for row, _ in sent}
    if len(sports) != 4:
        fail(f"uet: requests left from {sorted(sports)}, not 4 sprayed source ports")
    shown = "as UET (" + ", ".join(sorted(dissected)) + ")" if dissected else "as UDP data (no UET dissector)"
    return (f"uet: tshark shows {len(rows)} frames {shown}, requests from 4 source ports with good "
            f"UDP checksums")


def main():
    ensure_tshark()
    binary = sys.argv[1:] or ["cargo", "run", "--release", "-q", "--"]
    with tempfile.TemporaryDirectory() as tmp:
        lo_pcap, own_pcap = os.path.join(tmp, "lo.pcap"), os.path.join(tmp, "client.pcap")
        server = subprocess.Popen(binary + ["net", "serve", "--bind", ADDR, "--once", "--no-gso"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if "listening" not in server.stdout.readline():
            fail(f"net serve did not start: {server.stderr.read()}")
        cap = subprocess.Popen(["tshark", "-i", "lo", "-f", "udp port 4791", "-F", "pcap", "-w", lo_pcap],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        started = False
        deadline = time.time() + 15
        while time.time() < deadline and cap.poll() is None:
            line = cap.stderr.readline()
            if "Capturing on" in line:
                started = True
                break
        time.sleep(0.3 if started else 0)
        run = subprocess.run(binary + ["net", "run", "--to", ADDR, "--verb", "write", "--bytes",
                                       "20000", "--msg-bytes", "10000", "--mtu", "1000",
                                       "--transport", "roce", "--no-gso", "--pcap", own_pcap],
                             capture_output=True, text=True)
        server.wait(timeout=30)
        if run.returncode != 0:
            fail(f"net run failed: {run.stderr.strip()}")
        time.sleep(0.5)
        if cap.poll() is None:
            cap.send_signal(signal.SIGINT)
        cap.wait(timeout=15)
        own = shape(dissect(own_pcap), "the client's --pcap")
        lo_note = "loopback capture skipped (tshark could not capture on lo)"
        if started and os.path.exists(lo_pcap):
            lo = shape(dissect(lo_pcap), "the loopback capture")
            if lo != own:
                fail(f"the loopback capture and the client's --pcap differ: {lo} vs {own}")
            bad = [i for i, f in enumerate(frames(lo_pcap)) if not icrc_ok(f)]
            if bad:
                fail(f"loopback capture: {len(bad)} frames with a wrong ICRC (first: frame {bad[0] + 1})")
            if sorted(udp_payloads(lo_pcap)) != sorted(udp_payloads(own_pcap)):
                fail("the loopback capture's UDP payloads differ from the client's --pcap")
            lo_note = f"loopback capture: {len(frames(lo_pcap))} frames, every ICRC right"
        sim_dir = os.path.join(tmp, "sim")
        scenario = os.path.join(tmp, "sim.toml")
        with open(scenario, "w") as f:
            f.write(SIM)
        subprocess.run(binary + ["run", "--quiet", scenario, "--out", sim_dir], check=True,
                       stdout=subprocess.DEVNULL)
        sim_rows = dissect(os.path.join(sim_dir, "trace.pcap"))
        sim = shape(sim_rows, "the simulator's trace")
        if sim != own:
            fail(f"the simulator's and the datapath's traces differ in protocols, opcodes or fields: {sim} vs {own}")
        uet_note = check_uet(binary, tmp)
    print(f"check_net: ok: {lo_note}; the datapath's and the simulator's traces show the same "
          f"protocols, opcodes {sorted(own[1])} and fields; {uet_note}")


if __name__ == "__main__":
    main()
