#!/usr/bin/env python3
"""The HTML report in a real browser: renders the reports of two runs (one
with time series, one lossy with drops) and of a small sweep in headless
Chromium (Debian's `chromium`, installed when missing), and fails on any
console message (the pages have no script, and their content security
policy forbids every fetch, so an attempted network load is a console error
too), on a plot that is missing or empty in the DOM Chromium built (or
drawn where every value is zero, or a categorical key drawn as lines), or
on a report that `rdmalab report DIR` does not rewrite byte for byte. First it
checks that a page with a console error is caught, so the check cannot pass
by seeing nothing. Writes only under a temporary directory, and the
screenshot where --screenshot says (docs/report.png is one).

    scripts/check_report.py [RDMALAB_BINARY] [--screenshot FILE.png]

Run by .ci/run."""

import fnmatch
import html.parser
import os
import shutil
import struct
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
    "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
    "--enable-logging=stderr", "--v=0",
]


def fail(msg):
    sys.exit(f"check_report: FAILED: {msg}")


def chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(sudo + ["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "chromium"],
                   check=True, env=env)
    return shutil.which("chromium") or fail("chromium did not install")


def browse(browser, tmp, page, *extra):
    """Chromium on `page` with `extra` flags, a fresh profile each time:
    (stdout, console lines)."""
    profile = tempfile.mkdtemp(dir=tmp, prefix="profile-")
    r = subprocess.run(
        [browser, *FLAGS, f"--user-data-dir={profile}", *extra,
         "file://" + os.path.abspath(page)],
        capture_output=True, text=True, timeout=120)
    console = [l for l in r.stderr.splitlines() if ":CONSOLE" in l]
    if r.returncode != 0:
        fail(f"chromium exited {r.returncode} on {page}:\n{r.stderr[-2000:]}")
    return r.stdout, console


class Dom(html.parser.HTMLParser):
    """The figures of a dumped DOM: id -> counts of what they draw."""

    def __init__(self):
        super().__init__()
        self.figures = {}
        self.current = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "figure" and "chart" in a.get("class", ""):
            self.current = a.get("id")
            self.figures[self.current] = {"svg": 0, "line_points": 0,
                                          "bars": 0, "err": 0, "bands": 0}
        elif self.current is None:
            return
        elif tag == "svg" and a.get("class") == "plot":
            self.figures[self.current]["svg"] += 1
        elif tag == "polyline":
            self.figures[self.current]["line_points"] += len(
                (a.get("points") or "").split())
        elif tag == "rect" and a.get("class") == "bar":
            self.figures[self.current]["bars"] += 1
        elif tag == "path" and a.get("class") == "err":
            self.figures[self.current]["err"] += 1
        elif tag == "polygon" and a.get("class") == "band":
            self.figures[self.current]["bands"] += 1

    def handle_endtag(self, tag):
        if tag == "figure":
            self.current = None


def check_page(browser, tmp, page, wants, absent=(), notes=()):
    """Renders `page`; `wants` maps figure ids (or patterns with '*') to the least (line points, bars, error bars, bands) they must
    draw, and the most line points (None: any); figures of `absent` must
    not be there, elements of ids `notes` must."""
    dom, console = browse(browser, tmp, page, "--dump-dom")
    if console:
        fail(f"{page}: console messages:\n" + "\n".join(console))
    d = Dom()
    d.feed(dom)
    if not d.figures:
        fail(f"{page}: no chart in the DOM")
    for fid, f in d.figures.items():
        if f["svg"] != 1:
            fail(f"{page}: figure {fid} has {f['svg']} plots")
    for want, (points, bars, errs, bands, most) in wants.items():
        ids = [i for i in d.figures if fnmatch.fnmatchcase(i, want)]
        if not ids:
            fail(f"{page}: no figure {want} (has {sorted(d.figures)})")
        for i in ids:
            f = d.figures[i]
            if (f["line_points"] < points or f["bars"] < bars or f["err"] < errs
                    or f["bands"] < bands
                    or (most is not None and f["line_points"] > most)):
                fail(f"{page}: figure {i} draws {f}, wanted at least "
                     f"{points} line points (at most {most}), {bars} bars, "
                     f"{errs} error bars, {bands} bands")
    for fid in absent:
        if fid in d.figures:
            fail(f"{page}: figure {fid} is drawn (its values are all zero)")
    for nid in notes:
        if f'id="{nid}"' not in dom:
            fail(f"{page}: no element {nid}")
    return len(d.figures)


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path}: not a PNG")
    return struct.unpack(">II", head[16:24])


def main():
    args = sys.argv[1:]
    shot = None
    if "--screenshot" in args:
        i = args.index("--screenshot")
        shot = os.path.abspath(args[i + 1])
        del args[i:i + 2]
    binary = os.path.abspath(args[0] if args else
                             os.path.join(REPO, "target/release/rdmalab"))
    browser = chromium()
    with tempfile.TemporaryDirectory() as tmp:
        # The check must see a console error when there is one.
        bad = os.path.join(tmp, "bad.html")
        with open(bad, "w") as f:
            f.write("<!DOCTYPE html><p>x</p><script>console.error('boom')</script>")
        _, console = browse(browser, tmp, bad, "--dump-dom")
        if not any("boom" in l for l in console):
            fail("a console error on a test page was not seen")

        def rdmalab(*a):
            r = subprocess.run([binary, *a], cwd=REPO, capture_output=True,
                               text=True)
            if r.returncode != 0:
                fail(f"rdmalab {' '.join(a)}: {r.stderr}")

        run, lossy, sweep = (os.path.join(tmp, n) for n in ("run", "lossy", "sweep"))
        rdmalab("run", "scenarios/dcqcn_fairness.toml", "--quiet", "--out", run,
                "--report")
        # The lossy incast, sampled: every kind of plot in one report.
        rdmalab("run", "scenarios/incast_lossy.toml", "--quiet", "--out", lossy,
                "--report", "--set", "output.sample_us=20",
                "--set", 'output.ports=[["leaf0", "h0"]]',
                "--set", "output.flows=[0, 1, 2]",
                "--set", 'output.ecn_ports=[["leaf0", "h0"]]')
        rdmalab("sweep", "scenarios/incast_pfc.toml", "--seeds", "1..2",
                "--vary", "switch.pfc=true,false", "--vary",
                "traffic.0.bytes=20000,60000", "--out", sweep, "--report")
        for d in (run, lossy, sweep):
            page = os.path.join(d, "report.html")
            with open(page, "rb") as f:
                first = f.read()
            if b"http:" in first or b"https:" in first:
                fail(f"{page} names a network address")
            rdmalab("report", d)
            with open(page, "rb") as f:
                if f.read() != first:
                    fail(f"rdmalab report {d} wrote other bytes than --report")
        # (line points, bars, error bars, bands, most line points)
        n = check_page(browser, tmp, os.path.join(run, "report.html"), {
            "slowdown-by-size": (0, 0, 0, 0, None),
            "slowdown-cdf": (0, 0, 0, 0, None),
            "series-queue_bytes": (100, 0, 0, 0, None),
            "series-rate_gbps": (100, 0, 0, 0, None),
            "series-throughput_gbps": (100, 0, 0, 0, None),
        }, absent=["pfc-paused", "drops"], notes=["zero-charts"])
        n += check_page(browser, tmp, os.path.join(lossy, "report.html"), {
            "slowdown-by-size": (0, 3, 0, 0, None),
            "slowdown-cdf": (10, 0, 0, 0, None),
            "series-queue_bytes": (100, 0, 0, 0, None),
            "series-util": (100, 0, 0, 0, None),
            "series-ecn_mark_ratio": (100, 0, 0, 0, None),
            "drops": (0, 6, 0, 0, None),
        }, absent=["pfc-paused"], notes=["zero-charts"])
        # The sweep: led by slowdown against flow size (a line and band
        # per variant); switch.pfc (true, false) is categorical: bars, no
        # line; traffic.0.bytes is numeric: lines; metrics zero in every
        # run are named, not drawn.
        n += check_page(browser, tmp, os.path.join(sweep, "report.html"), {
            "sweep-slowdown-by-size": (4, 0, 0, 4, None),
            "sweep-slowdown_mean-by-switch-pfc": (0, 4, 4, 0, 0),
            "sweep-*-by-switch-pfc": (0, 4, 4, 0, 0),
            "sweep-slowdown_p99-by-traffic-0-bytes": (4, 0, 4, 0, None),
            "sweep-*-by-traffic-0-bytes": (2, 0, 2, 0, None),
        }, absent=["sweep-pause_frames-by-switch-pfc"], notes=["zero-metrics"])
        out = shot or os.path.join(tmp, "report.png")
        _, console = browse(browser, tmp, os.path.join(lossy, "report.html"),
                            "--window-size=1400,2900", f"--screenshot={out}")
        if console:
            fail("console messages while taking the screenshot:\n" + "\n".join(console))
        w, h = png_size(out)
        if (w, h) != (1400, 2900) or os.path.getsize(out) < 20000:
            fail(f"{out}: {w}x{h}, {os.path.getsize(out)} bytes: not a rendered report")
    print(f"check_report: ok, {n} charts in 3 reports rendered by Chromium "
          "without a console message; `rdmalab report` rewrites the same bytes")


main()
