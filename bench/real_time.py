#!/usr/bin/env python3
"""Real-time runs measured on this machine (docs/real-time.md); not run by CI.

  python3 bench/real_time.py [--stride build/bin/stride] [--quick] [--factors [SPAN]]

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
--factors runs part 5 only. Under STRIDE_BENCH_SMOKE (bench/smoke.py) every run is 0.5 s of
simulated time (part 5: 0.1 s, factors 1 and 2).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from smoke import SMOKE

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


# The seed papers' systems as shipped (one manifest each; the interface-model variant where
# there are several).
SEED_SYSTEMS = [
    ("two-mass multirate test", "manifests/two_mass.json"),
    ("single crane, interface model", "manifests/crane1_rim.json"),
    ("single crane, monolithic", "manifests/crane1_monolithic.json"),
    ("double crane, interface model", "manifests/crane2_rim.json"),
    ("Juno rover, interface model", "manifests/mechanism/juno_rim.json"),
    ("kart with its engine", "manifests/kart/kart_engine.json"),
    ("18-body log crane, interface model", "manifests/log_crane/log_crane_im.json"),
    ("gripping crane, nonsmooth interface model", "manifests/nonsmooth_gripping_crane_rim.json"),
    ("four-bar with impacts (nonsmooth)", "manifests/nonsmooth_four_bar.json"),
]
FRAME = 0.016  # s: one held point per 16-ms operator frame
MAX_FACTOR = 2 if SMOKE else 1024


def factors(stride, span, tmp):
    """Part 5: the largest factor 1, 2, 4, ... each seed system holds with no deadline missed."""
    print(f"5. the largest real-time factor held with 0 deadline misses, first {span:g} s of each run, "
          f"one point per {1e3 * FRAME:g}-ms frame held (\"interval\": {FRAME}), factors 1, 2, 4, ... {MAX_FACTOR}")
    print("| system (manifest) | simulated | batch wall time | batch real-time factor | largest factor held "
          "| first factor missed (misses) | p99 compute per frame at factor 1 |")
    print("|---|---|---|---|---|---|---|")
    for name, manifest in SEED_SYSTEMS:
        batch, _, _, _ = run(stride, manifest, [], os.path.join(tmp, "f_batch"))
        start, end = batch["start_time"], batch["end_time"]
        stop = min(end, start + span)
        held, missed, p99 = 0, "none", None
        f = 1
        while f <= MAX_FACTOR:
            s, _, _, _ = run(stride, manifest, ["--set", f"/coupling/end={stop}", "--set",
                                                f"/real_time={{\"factor\": {f}, \"interval\": {FRAME}}}"],
                             os.path.join(tmp, "f_rt"))
            rt = s["real_time"]
            if f == 1:
                p99 = rt["compute_time_per_macro_step_s"]["p99"]
            if s["status"] != "completed" or rt["deadline_misses"] > 0:
                missed = f"{f} ({rt['deadline_misses']} of {rt['communication_points']})"
                break
            held = f
            f *= 2
        print(f"| {name} (`{manifest}`) | {end - start:g} s | {batch['wall_time_s']:.3f} s | "
              f"{(end - start) / batch['wall_time_s']:.0f} | {held if held else 'below 1'} | {missed} | "
              f"{ms(p99) if p99 is not None else '-'} |", flush=True)
    print(f"  (each factor run: stride run MANIFEST --set /coupling/end=START+{span:g} "
          f"--set '/real_time={{\"factor\": F, \"interval\": {FRAME}}}')")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stride", default=os.path.join(ROOT, "build", "bin", "stride"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--factors", nargs="?", type=float, const=4.0, metavar="SPAN")
    a = ap.parse_args()
    end = 0.5 if SMOKE else 2.0 if a.quick else 10.0
    tmp = tempfile.mkdtemp(prefix="stride_rt_bench_")
    if a.factors is not None:
        factors(a.stride, 0.1 if SMOKE else a.factors, tmp)
        return 0

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
    short = ["--set", "/coupling/end=0.5"] if SMOKE else []
    for interval in ([0.016] if a.quick else [0.016, 0.0002]):
        s, _, last, cmd = run(a.stride, manifest,
                              short + ["--set", f"/real_time={{\"factor\": 1, \"interval\": {interval}}}"],
                              os.path.join(tmp, "crane_rt"))
        show(f"3. log crane, interface model, 8 s at factor 1, every {1e3 * interval:g} ms held", s, cmd)
        p99 = s["real_time"]["compute_time_per_macro_step_s"]["p99"]
        print(f"  batch: status {batch['status']}, wall {batch['wall_time_s']:.3f} s for 8 s; real time: p99 {ms(p99)} "
              f"= {100 * p99 / 0.016:.2f} % of 16 ms (target < 25 %)\n  last line: {last}")
    end = 0.5 if SMOKE else 10.0 if a.quick else 60.0
    s, _, last, cmd = run(a.stride, "manifests/real_time/log_crane_operator.json", ["--set", f"/coupling/end={end}"],
                          os.path.join(tmp, "operator"))
    show(f"4. operator log crane (no operator sending: valves held at 0), {end:g} s at factor 1", s, cmd)
    p99 = s["real_time"]["compute_time_per_macro_step_s"]["p99"]
    print(f"  p99 {ms(p99)} = {100 * p99 / 0.016:.2f} % of 16 ms (target < 25 %, 0 misses)\n  last line: {last}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
