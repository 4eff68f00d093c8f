#!/usr/bin/env python3
"""Log crane (issue 25): real-time factor of the shipped manoeuvre (8 s) with the nonsmooth
interface model at h_M = 16 ms, against the other ways to run it: direct ZOH at its largest
stable step (2 ms), the interface model at the reference-grade 1 ms, and the same 16 ms run with
the mlcp formulation's dense linear algebra. Each `stride run` is repeated; prints the median
real-time factor from summary.json (wall time of the run / simulated time), the median CPU time
of the run's processes per simulated second (less sensitive to other load on the machine), and
the ratios to the first line.

    bench/log_crane.py [REPEATS]
"""
import json, os, resource, statistics, subprocess, sys, tempfile
from smoke import SMOKE

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
exe = os.environ.get("STRIDE", os.path.join(root, "build", "bin", "stride"))
reps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
reps = 1 if SMOKE else reps
work = tempfile.mkdtemp(prefix="stride_log_crane_bench.")
im, zoh = (os.path.join(root, "manifests", "log_crane", f"log_crane_{s}.json") for s in ("im", "zoh"))
cases = [
    ("interface model, h_M = 16 ms (shipped)", im, ["/variables/h_M=0.016"]),
    ("direct ZOH, h_M = 2 ms (its largest stable step)", zoh, ["/variables/h_M=0.002"]),
    ("interface model, h_M = 1 ms", im, ["/variables/h_M=0.001"]),
    ("interface model, h_M = 16 ms, dense mlcp", im, ["/variables/h_M=0.016", "/subsystems/crane/formulation/parameters/linear_algebra=dense"]),
]
rows = []
for name, manifest, sets in cases:
    rtf, cpu = [], []
    for k in range(reps if "dense" not in name and "1 ms" not in name else max(1, reps // 2)):
        out = os.path.join(work, f"run{len(rows)}_{k}")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        cmd = [exe, "run", manifest, "--out", out, "--quiet", "--in-process"] + sum((["--set", s] for s in sets), [])
        cmd += ["--set", "/coupling/end=0.5"] if SMOKE else []  # the first 0.5 s of the manoeuvre
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        s = json.load(open(os.path.join(out, "summary.json")))
        assert s["status"] == "completed", (name, s.get("message"))
        simulated = s["end_time_reached"] - s["start_time"]
        rtf.append(s["real_time_factor"])
        cpu.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / simulated)
    rows.append((name, statistics.median(rtf), statistics.median(cpu), len(rtf)))
base_rtf, base_cpu = rows[0][1], rows[0][2]
print(f"{'case':52} {'runs':>4} {'real-time factor':>17} {'CPU s per s':>12} {'RTF / first':>12}")
for name, r, c, n in rows:
    print(f"{name:52} {n:4d} {r:17.4f} {c:12.4f} {r / base_rtf:12.2f}")
la = os.getloadavg()
print(f"load average during the runs: {la[0]:.2f} {la[1]:.2f} {la[2]:.2f} (2 cores)")
