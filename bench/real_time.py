#!/usr/bin/env python3
"""Real-time runs measured on this machine (docs/real-time.md); not run by CI.

  python3 bench/real_time.py [--stride build/bin/stride] [--quick]

Prints, from each run's summary.json "real_time" block:
  1. pacing: the two-mass system (manifests/two_mass.json) for 10 s at factor 1: the wall time
     against 10 s (target: within 20 ms), deadlines missed;
  2. results rows: the same run with results.csv at a 0.1-ms record interval (1000 rows per
     macro step), rows written by the writer thread ("results": "background") against rows
     written on the stepping path ("synchronous"): the compute time per macro step, median,
     99th percentile and largest;
  3. the log crane with its interface model (manifests/log_crane/log_crane_im.json, 16-ms
     crane step, 0.2-ms communication points) at factor 1 for its 8 s, one point per 16 ms held
     to the clock ("interval": 0.016) and every 0.2-ms point held: deadlines missed, the 99th
     percentile of the compute time per held point against 25 % of 16 ms, the batch wall time;
  4. manifests/real_time/log_crane_operator.json for 60 s at factor 1 (nobody sending: the
     valves hold 0; run examples/real_time/operator.py beside it to drive it).
  5. --factors: for each shipped seed system, the batch wall time and the largest real-time
     factor (1, 2, 4, ...) it holds with 0 deadlines missed, one communication point held to
     the clock per crane step (the "interval" of the real_time block; the manifest's macro step
     where it is longer), over the first SPAN s (default 4) of its run.
--quick runs 2 s instead of 10 s in 1 and 2, 10 s in 4, and only the 16-ms interval in 3.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(stride, manifest, args, out):
    cmd = [stride, "run", os.path.join(ROOT, manifest), "--quiet", "--out", out] + args
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    last = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""
    return s, wall, last, " ".join(cmd)


def ms(x):
    return f"{1e3 * x:.3f} ms"


def show(title, s, cmd):
    rt = s.get("real_time", {})
    c = rt.get("compute_time_per_macro_step_s", {})
    print(f"{title}\n  command: {cmd}\n  status {s['status']}, wall {rt.get('wall_time_s', 0):.4f} s, "
          f"{rt.get('deadline_misses')} of {rt.get('communication_points')} deadlines missed, largest lateness "
          f"{ms(rt.get('max_lateness_s', 0))}; compute per macro step median {ms(c.get('median', 0))}, "
          f"p99 {ms(c.get('p99', 0))}, max {ms(c.get('max', 0))}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stride", default=os.path.join(ROOT, "build", "bin", "stride"))
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    end = 2.0 if a.quick else 10.0
    tmp = tempfile.mkdtemp(prefix="stride_rt_bench_")

    s, wall, last, cmd = run(a.stride, "manifests/two_mass.json", ["--set", f"/coupling/end={end}", "--real-time", "1"],
                             os.path.join(tmp, "pacing"))
    show(f"1. two-mass, {end:g} s at factor 1", s, cmd)
    off = s["real_time"]["wall_time_s"] - end
    print(f"  wall time - {end:g} s = {ms(off)} (target |.| <= 20 ms: {'met' if abs(off) <= 0.02 else 'NOT met'}); "
          f"whole command {wall:.3f} s\n  last line: {last}")

    for mode in ("background", "synchronous"):
        s, _, _, cmd = run(a.stride, "manifests/two_mass.json",
                           ["--set", f"/coupling/end={end}", "--set", "/record/interval=0.0001", "--set",
                            f"/real_time={{\"factor\": 1, \"results\": \"{mode}\"}}"], os.path.join(tmp, "rows_" + mode))
        show(f"2. two-mass, {end:g} s at factor 1, {s['rows']} rows, results {mode}", s, cmd)

    manifest = "manifests/log_crane/log_crane_im.json"
    batch, _, _, _ = run(a.stride, manifest, [], os.path.join(tmp, "crane_batch"))
    for interval in ([0.016] if a.quick else [0.016, 0.0002]):
        s, _, last, cmd = run(a.stride, manifest, ["--set", f"/real_time={{\"factor\": 1, \"interval\": {interval}}}"],
                              os.path.join(tmp, "crane_rt"))
        show(f"3. log crane, interface model, 8 s at factor 1, every {1e3 * interval:g} ms held", s, cmd)
        p99 = s["real_time"]["compute_time_per_macro_step_s"]["p99"]
        print(f"  batch: status {batch['status']}, wall {batch['wall_time_s']:.3f} s for 8 s; real time: p99 {ms(p99)} "
              f"= {100 * p99 / 0.016:.2f} % of 16 ms (target < 25 %)\n  last line: {last}")
    end = 10.0 if a.quick else 60.0
    s, _, last, cmd = run(a.stride, "manifests/real_time/log_crane_operator.json", ["--set", f"/coupling/end={end}"],
                          os.path.join(tmp, "operator"))
    show(f"4. operator log crane (no operator sending: valves held at 0), {end:g} s at factor 1", s, cmd)
    p99 = s["real_time"]["compute_time_per_macro_step_s"]["p99"]
    print(f"  p99 {ms(p99)} = {100 * p99 / 0.016:.2f} % of 16 ms (target < 25 %, 0 misses)\n  last line: {last}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
