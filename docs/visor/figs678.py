#!/usr/bin/env python3
"""RDMAvisor Figs 6-8 on the real datapath (loopback, this machine).

Fig 6, lock-based QP sharing against RDMAvisor: `rdmalab visor bench
--verb read --msg-bytes 65536` with --mode shared (every connection on the
link's one QP, one sender thread) and --mode locked --q 3 and 6 (one QP,
and one client session, per q connections; one sender thread per
connection, the q threads of a QP taking turns under its lock, FaRM's
design). Each point is run --repeats times, the three modes in turn;
prints per number of connections the median goodput and its range
(min-max), and for the locked modes the lock's cost as the bench measures
it (`lock_idle_pct`: the share of the window a QP's lock was held by none
of its threads, all of which want it all the time: its session's sending
time lost to the lock's handovers), with the daemons' CPU.

Figs 7-8, memory and CPU of 1..N applications: each application is a
`visor-echo client` (4 connections, 4 KB messages echoed and checked,
one round every --gap-us) talking to a `visor-echo serve` behind a daemon
on 127.0.0.2. "daemon": every application uses one shared daemon on
127.0.0.1. "naive": every application has an RDMA stack of its own, a
private daemon (its own NIC, QPs, registered buffers and polling thread,
on 127.0.0.(10+k)), as applications that link RDMA directly do. Every
daemon of the sending host registers 256 slots of 4 KB (what one link
needs: 128 receives, 64 lent for WRITEs, 60 for sends, 4 kept for
notices). Measured on the sending host over --seconds while all run: the sum of resident
memory (applications and their daemons) and of CPU time over the window,
and both per application, normalised to one naive application (the
paper's unit).

Usage: docs/visor/figs678.py [--bin target/release] [--fig6 6,12,24]
       [--apps 1,2,4,8] [--seconds 2] [--gap-us 2000] [--repeats 3] [--only 6|78]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

# The sending host's daemons, shared or private, register what one link
# needs: 128 receives on its QP, 64 slots lent for WRITEs, 60 for sends
# and 4 kept for notices, of 4 KB (the messages' size).
SLOTS = 256


def bench(bindir, args):
    out = subprocess.run([os.path.join(bindir, "rdmalab"), "visor", "bench", *args],
                         check=True, capture_output=True, text=True).stdout
    line = [l for l in out.splitlines() if l.startswith("visor ")][-1]
    return dict(f.split("=", 1) for f in line.split()[1:])


def spread(xs, digits=2):
    """Median (min-max)."""
    return f"{statistics.median(xs):.{digits}f} ({min(xs):.{digits}f}-{max(xs):.{digits}f})"


def fig6(bindir, conns, seconds, repeats):
    modes = {"shared": ["--mode", "shared"], "q=3": ["--mode", "locked", "--q", "3"],
             "q=6": ["--mode", "locked", "--q", "6"]}
    print(f"Fig 6: 64 KB READs, goodput Gb/s, median (min-max) of {repeats} runs of {seconds:g} s; "
          "lock idle %: a locked QP's time held by none of its threads; CPU %: the daemons' mean")
    print()
    print("| connections | RDMAvisor (shared) | locked q=3 | locked q=6 "
          "| lock idle % q=3 | lock idle % q=6 | daemons' CPU % |")
    print("|---|---|---|---|---|---|---|")
    for n in conns:
        runs = {m: [] for m in modes}
        for _ in range(repeats):
            for m, args in modes.items():
                runs[m].append(bench(bindir, ["--verb", "read", "--msg-bytes", "65536",
                                              "--connections", str(n), "--seconds", str(seconds),
                                              *args]))
        gbps = {m: [float(r["goodput_gbps"]) for r in rs] for m, rs in runs.items()}
        idle = {m: [float(r["lock_idle_pct"]) for r in runs[m]] for m in ("q=3", "q=6")}
        cpu = [float(r["daemon_cpu_pct"]) for rs in runs.values() for r in rs]
        print(f"| {n} | {spread(gbps['shared'])} | {spread(gbps['q=3'])} | {spread(gbps['q=6'])} "
              f"| {spread(idle['q=3'], 1)} | {spread(idle['q=6'], 1)} | {spread(cpu, 0)} |",
              flush=True)
    print()


def stat(pid):
    """CPU seconds (user + system) and resident MB of a process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        with open(f"/proc/{pid}/status") as f:
            rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
    except (OSError, StopIteration):
        return 0.0, 0.0
    hz = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / hz, rss / 1024


def wait_for(path):
    t = time.time()
    while not os.path.exists(path):
        if time.time() - t > 10:
            sys.exit(f"{path} did not appear")
        time.sleep(0.02)


class Run:
    """The processes of one measurement, killed at the end."""

    def __init__(self, bindir, tmp, port):
        self.bindir, self.tmp, self.port, self.procs = bindir, tmp, port, []

    def daemon(self, ip, slots):
        sock = os.path.join(self.tmp, f"d-{ip}.sock")
        p = subprocess.Popen([os.path.join(self.bindir, "rdmavisord"), "--control", sock,
                              "--bind", f"{ip}:{self.port}", "--rate-gbps", "5",
                              "--slot-bytes", "4096", "--slots", str(slots)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs.append(p)
        wait_for(sock)
        return sock, p

    def echo(self, sock, *args):
        p = subprocess.Popen([os.path.join(self.bindir, "visor-echo"), "--daemon", sock, *args],
                             stdout=subprocess.DEVNULL)
        self.procs.append(p)
        return p

    def close(self):
        for p in reversed(self.procs):
            p.kill()
            p.wait()


def resources(bindir, apps, naive, seconds, gap_us, port):
    """Sum of RSS (MB) and CPU (% of one core) of the sending host's
    applications and daemons over the window."""
    with tempfile.TemporaryDirectory() as tmp:
        run = Run(bindir, tmp, port)
        try:
            far, _ = run.daemon("127.0.0.2", 256 * (apps + 1))
            run.echo(far, "serve", "--port", "80")
            measured = []
            shared = None if naive else run.daemon("127.0.0.1", SLOTS)
            if shared:
                measured.append(shared[1])
            time.sleep(0.3)
            for k in range(apps):
                sock, d = run.daemon(f"127.0.0.{10 + k}", SLOTS) if naive else shared
                if naive:
                    measured.append(d)
                measured.append(run.echo(sock, "client", "--to", "127.0.0.2:80",
                                         "--connections", "4", "--messages", "1000000",
                                         "--bytes", "4096", "--gap-us", str(gap_us),
                                         "--seed", str(k)))
            time.sleep(1.0)
            if any(p.poll() is not None for p in measured):
                sys.exit("an application or daemon exited early")
            cpu0 = sum(stat(p.pid)[0] for p in measured)
            t0 = time.time()
            time.sleep(seconds)
            s = [stat(p.pid) for p in measured]
            wall = time.time() - t0
            return sum(x[1] for x in s), 100 * (sum(x[0] for x in s) - cpu0) / wall
        finally:
            run.close()


def fig78(bindir, counts, seconds, gap_us):
    rows, unit = [], None
    for i, n in enumerate(counts):
        naive = resources(bindir, n, True, seconds, gap_us, 47100 + 2 * i)
        shared = resources(bindir, n, False, seconds, gap_us, 47101 + 2 * i)
        unit = unit or naive
        rows.append((n, naive, shared))
    print("Figs 7-8: the sending host's memory (sum of RSS) and CPU (% of one core),")
    print("and both in units of one naive application")
    print()
    print("| applications | naive MB | daemon MB | naive mem units | daemon mem units "
          "| naive CPU % | daemon CPU % | naive CPU units | daemon CPU units |")
    print("|---|---|---|---|---|---|---|---|---|")
    def units(x, u):
        # One naive application's CPU can measure 0 over a short window
        # (clock ticks of 10 ms): no unit, so n/a rather than a quotient.
        return f"{x / u:.2f}" if u > 0 else "n/a"

    for n, (nm, nc), (sm, sc) in rows:
        print(f"| {n} | {nm:.1f} | {sm:.1f} | {units(nm, unit[0])} | {units(sm, unit[0])} "
              f"| {nc:.1f} | {sc:.1f} | {units(nc, unit[1])} | {units(sc, unit[1])} |")
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="target/release")
    ap.add_argument("--fig6", default="6,12,24")
    ap.add_argument("--apps", default="1,2,4,8")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--gap-us", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", choices=["6", "78"])
    a = ap.parse_args()
    if a.only != "78":
        fig6(a.bin, [int(x) for x in a.fig6.split(",")], a.seconds, a.repeats)
    if a.only != "6":
        fig78(a.bin, [int(x) for x in a.apps.split(",")], a.seconds, a.gap_us)


if __name__ == "__main__":
    main()
