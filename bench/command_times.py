#!/usr/bin/env python3
"""Start-up cost of short `stride` commands with the plugin index and with every plugin loaded
(STRIDE_PLUGIN_INDEX=0): median wall time of 21 runs each (issue 12, item 3; docs/benchmark.md).

    bench/command_times.py [RUNS]
"""
import os, statistics, subprocess, sys, tempfile, time
from smoke import SMOKE

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
exe = os.environ.get("STRIDE", os.path.join(root, "build", "bin", "stride"))
runs = int(sys.argv[1]) if len(sys.argv) > 1 else 21
runs = 1 if SMOKE else runs
out = tempfile.mkdtemp(prefix="stride_command_times.")


def median_ms(cmd, env=None):
    e = dict(os.environ)
    e.update(env or {})
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, env=e, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ts.append(time.perf_counter() - t)
    return 1e3 * statistics.median(ts)


cases = [
    ("stride validate manifests/crane1_rim.json", [exe, "validate", "manifests/crane1_rim.json"]),
    ("stride validate manifests/two_mass.json", [exe, "validate", "manifests/two_mass.json"]),
    ("stride run manifests/crane1_rim.json --set /coupling/end=0.1 --quiet",
     [exe, "run", "manifests/crane1_rim.json", "--set", "/coupling/end=0.1", "--out", out + "/run", "--quiet"]),
]
print(f"median of {runs} runs, load average {os.getloadavg()[0]:.1f}")
print(f"{'command':70s} {'index ms':>9s} {'all ms':>9s} {'all/index':>9s}")
for label, cmd in cases:
    a, b = median_ms(cmd), median_ms(cmd, {"STRIDE_PLUGIN_INDEX": "0"})
    print(f"{label:70s} {a:9.2f} {b:9.2f} {b / a:8.2f}x")
print(f"{'stride plugins (always every plugin)':70s} {median_ms([exe, 'plugins']):9.2f}")
subprocess.run(["rm", "-rf", out])
