#!/usr/bin/env python3
"""The shipped CVODE monolithic crane in Stride against the same model as a plain SUNDIALS
program (bench/crane_cvode; docs/benchmark.md, issue 26 item 2). Wall time: median
`wall_time_s` of REPEATS runs of manifests/crane1_monolithic_cvode.json and median of the plain
program's solve, alternated so that load changes hit both alike; stepping alone (one record
every 10 s) and with a row every 10 ms.

    bench/cvode_alone.py [REPEATS] [--rtol R] [--before DIR]

--before DIR: a second build (DIR/bin/stride) timed alongside, e.g. the commit before.
Needs build/bin/stride and build/bin/crane_cvode.
"""
import argparse, json, os, statistics, subprocess, tempfile
from smoke import SMOKE

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap = argparse.ArgumentParser()
ap.add_argument("repeats", nargs="?", type=int, default=9)
ap.add_argument("--rtol", default="1e-3")
ap.add_argument("--before")
a = ap.parse_args()
if SMOKE:
    a.repeats = 1
work = tempfile.mkdtemp(prefix="stride_cvode_alone.")


def stride(build, record):
    out = os.path.join(work, "run")
    subprocess.run([os.path.join(build, "bin", "stride"), "run", os.path.join(root, "manifests", "crane1_monolithic_cvode.json"),
                    "--quiet", "--out", out, "--set", f"/variables/rtol={a.rtol}", "--set", f"/variables/atol={a.rtol}",
                    "--set", f"/record/interval={record}"], check=True, capture_output=True)
    s = json.load(open(os.path.join(out, "summary.json")))
    return s["wall_time_s"] * 1e3, s["subsystems"]["reference"]["statistics"]["steps"]


def plain(rows):
    r = subprocess.run([os.path.join(root, "build", "bin", "crane_cvode"), "--rtol", a.rtol, "--rows", str(rows), "--repeat", "1"],
                       check=True, capture_output=True, text=True).stdout
    return float(r.split("median ")[1].split()[0]), int(r.split("steps ")[1].split()[0])


print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, rtol = atol = {a.rtol}, medians of {a.repeats}")
for label, record, rows in (("stepping alone", 10, 0), ("a row every 10 ms", 0.01, 0.01)):
    after, base, alone = [], [], []
    for _ in range(a.repeats):
        if a.before:
            base.append(stride(a.before, record))
        after.append(stride(os.path.join(root, "build"), record))
        alone.append(plain(rows))
    m = lambda v: statistics.median(x[0] for x in v)
    line = f"{label}: Stride {m(after):.3f} ms ({after[0][1]} steps), plain CVODE {m(alone):.3f} ms ({alone[0][1]} steps): {m(after) / m(alone):.2f}x"
    if base:
        line += f"; before {m(base):.3f} ms ({base[0][1]} steps): {m(base) / m(alone):.2f}x"
    print(line)
