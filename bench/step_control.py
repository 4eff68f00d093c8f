#!/usr/bin/env python3
"""Adaptive macro step against fixed macro steps (issue 12, item 6; docs/benchmark.md): direct
ZOH co-simulation of the single and double cranes (Peiret 2018 Algorithm 1), every run's
largest |s - s_monolithic| over both actuators against the monolithic reference (Eq. 42), its
macro steps and its run time (median of REPEATS `stride run` wall times from summary.json).
The crane steps once per macro step in both: its step is the fixed macro step, or max_step
under control.

    bench/step_control.py [REPEATS]
"""
import csv, json, os, statistics, subprocess, sys, tempfile
from smoke import SMOKE

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
exe = os.environ.get("STRIDE", os.path.join(root, "build", "bin", "stride"))
reps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
reps = 1 if SMOKE else reps
work = tempfile.mkdtemp(prefix="stride_step_control.")


def run(manifest, sets, tag):
    out = os.path.join(work, tag)
    walls, summary = [], None
    for _ in range(reps):
        cmd = [exe, "run", os.path.join(root, manifest), "--quiet", "--out", out]
        for s in sets:
            cmd += ["--set", s]
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        summary = json.load(open(os.path.join(out, "summary.json")))
        walls.append(summary["wall_time_s"])
    with open(os.path.join(out, "results.csv")) as f:
        rows = list(csv.DictReader(f))
    return summary, rows, statistics.median(walls)


def error(rows, ref, actuators):
    by_time = {round(float(r["time"]) * 1e6): r for r in ref}
    e = 0.0
    for r in rows:
        q = by_time.get(round(float(r["time"]) * 1e6))
        if q is None:
            continue
        for i in range(1, actuators + 1):
            a = f"crane.s.s{i}" if actuators > 1 else "crane.s"
            b = f"reference.s.{i}" if actuators > 1 else "reference.s"
            e = max(e, abs(float(r[a]) - float(q[b])))
    return e


for actuators in (1, 2):
    _, ref, mono_wall = run(f"manifests/crane{actuators}_monolithic.json", [], f"mono{actuators}")
    zoh = f"manifests/crane{actuators}_zoh.json"
    print(f"\n{'single' if actuators == 1 else 'double'} crane, direct ZOH, 10 s "
          f"(monolithic reference: {mono_wall * 1e3:.1f} ms)")
    print(f"{'configuration':58s} {'status':>10s} {'steps':>6s} {'max|ds| mm':>10s} {'wall ms':>8s}")
    for h in (0.002, 0.02) if SMOKE else (0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.0125, 0.015, 0.02):
        s, rows, wall = run(zoh, [f"/variables/h_M={h}"], f"fixed{actuators}_{h}")
        steps = round(10 / h)
        err = f"{error(rows, ref, actuators) * 1e3:10.2f}" if s["status"] == "completed" else f"{'-':>10s}"
        print(f"{'fixed H = %g ms' % (h * 1e3):58s} {s['status']:>10s} {steps:6d} {err} {wall * 1e3:8.1f}")
    for reject in (False, True):
        tolerances = ((0.01, 1), (0.003, 0.3), (0.001, 0.1), (0.001, 0.03), (0.001, 0.01))
        for tol, atol in tolerances[:1] if SMOKE else tolerances:
            control = json.dumps({"tolerance": tol, "absolute_tolerance": atol, "max_step": 0.05, "reject": reject})
            s, rows, wall = run(zoh, ["/coupling/macro_step=0.02", "/subsystems/crane/step=0.05",
                                      f"/coupling/step_control={control}"], f"ctl{actuators}_{tol}_{atol}_{reject}")
            sc = s.get("step_control", {})
            err = f"{error(rows, ref, actuators) * 1e3:10.2f}" if s["status"] == "completed" else f"{'-':>10s}"
            label = (f"{'rejecting' if reject else 'non-iterative'} tol {tol:g}, atol {atol:g} J"
                     f" (+{sc.get('rejected_steps', 0)} repeated)")
            print(f"{label:58s} {s['status']:>10s} {sc.get('macro_steps', 0):6d} {err} {wall * 1e3:8.1f}")
subprocess.run(["rm", "-rf", work])
