#!/usr/bin/env python3
"""The live page of `stride run --view` measured on this machine (docs/viewer.md, "Live"); not
run by CI. Needs Chromium (Debian package chromium) for the runs with a browser.

  python3 bench/live_view.py [--stride build/bin/stride] [--quick]

For each case, one paced run without a browser (`--view`, nobody connected) and one with Debian's
headless Chromium showing the live page (tests/browser/cdp.py), from summary.json's "real_time":
deadlines missed and the compute time per held point (median, 99th percentile, largest); with the
browser (and, beside it, a WebSocket client that never reads, with a 1-KiB receive buffer) also
the rows the page received per second of wall time while the run went:
  1. manifests/real_time/log_crane_view.json (the log crane driven from the page: 16-ms frames,
     154 columns with the 18 bodies' poses, 100 rows/s) for 20 s at factor 1 (--quick: 8 s);
  2. tests/browser/live_two_mass.json with a 0.1-ms record interval (10 000 rows/s of 8 columns)
     for 10 s at factor 1 (--quick: 4 s): the streaming throughput.
"""
import argparse
import base64
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "browser"))
import cdp  # noqa: E402
from smoke import SMOKE  # noqa: E402


def ms(x):
    return f"{1e3 * x:.3f} ms"


def silent_client(port):
    """A WebSocket client that never reads (1 KiB receive buffer): the server's writes to it stall."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    sock.connect(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET /live HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    return sock


def paced(stride, manifest, sets, out, browser):
    cmd = [stride, "run", os.path.join(ROOT, manifest), "--quiet", "--out", out, "--view", "--port", "0"] + sets
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = re.search(r"(http://\S+/)", proc.stdout.readline()).group(1)
    rates = []
    silent = None
    try:
        if browser:
            silent = silent_client(int(url.rsplit(":", 1)[1].strip("/")))
            browser.open(url)
            label = os.path.basename(out)
            t0, n0 = time.monotonic(), browser.evaluate(f"window.strideView.rowCounts[{label!r}]")
            while browser.evaluate("document.body.dataset.strideLive !== 'ended'"):
                time.sleep(0.5)
                t1, n1 = time.monotonic(), browser.evaluate(f"window.strideView.rowCounts[{label!r}]")
                rates.append((n1 - n0) / (t1 - t0))
                t0, n0 = t1, n1
        else:
            while not os.path.exists(os.path.join(out, "summary.json")) or \
                    json.load(open(os.path.join(out, "summary.json"))).get("status") == "running":
                time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=10)
        if silent:
            silent.close()
    s = json.load(open(os.path.join(out, "summary.json")))
    return s, rates, " ".join(cmd)


def show(title, s, rates, cmd):
    rt = s["real_time"]
    c = rt["compute_time_per_macro_step_s"]
    print(f"{title}\n  command: {cmd}\n  status {s['status']}, {s['rows']} rows, wall {rt['wall_time_s']:.4f} s, "
          f"{rt['deadline_misses']} of {rt['communication_points']} deadlines missed; compute per held point median "
          f"{ms(c['median'])}, p99 {ms(c['p99'])}, max {ms(c['max'])}")
    if rates:
        steady = sorted(rates[:-1] or rates)
        print(f"  rows received by the page per wall second: median {steady[len(steady) // 2]:.0f}, "
              f"lowest {steady[0]:.0f}, highest {steady[-1]:.0f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stride", default=os.path.join(ROOT, "build", "bin", "stride"))
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="stride_live_bench_")
    # smoke: long enough for the page to connect and count rows before the run ends
    crane_end, two_mass_end = (2, 2) if SMOKE else (8, 4) if a.quick else (20, 10)
    cases = [("1. log crane from the page", "manifests/real_time/log_crane_view.json",
              ["--set", f"/coupling/end={crane_end}"]),
             ("2. two-mass, 10 000 rows/s", "tests/browser/live_two_mass.json",
              ["--real-time", "1", "--set", f"/coupling/end={two_mass_end}",
               "--set", "/record/interval=0.0001"])]
    browser = cdp.Browser(timeout=60)
    try:
        for title, manifest, sets in cases:
            for with_browser in (False, True):
                out = os.path.join(tmp, ("browser_" if with_browser else "alone_") + manifest.split("/")[-1][:-5])
                s, rates, cmd = paced(a.stride, manifest, sets, out, browser if with_browser else None)
                who = "headless Chromium and a client that never reads" if with_browser else "no browser"
                show(f"{title}, {who}", s, rates, cmd)
    finally:
        browser.close()


if __name__ == "__main__":
    main()
