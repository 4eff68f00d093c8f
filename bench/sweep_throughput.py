#!/usr/bin/env python3
"""Sweep throughput (issue 12, item 1; docs/benchmark.md): `stride sweep SWEEP --jobs 1` and
`--jobs 2` (long-lived workers), the same with `--process-per-run` (a fresh process forked for
every point, as before the workers), against one `stride run` process per point of the same
grid, run in sequence (with every plugin loaded, STRIDE_PLUGIN_INDEX=0, and through the plugin
index). Prints the median wall time, points per second and CPU time of all processes per point,
and the ratios.

    bench/sweep_throughput.py manifests/sweeps/crane1_stability.json [REPEATS] [--sweep-only]
"""
import json, os, resource, statistics, subprocess, sys, tempfile, time
from smoke import SMOKE

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
exe = os.environ.get("STRIDE", os.path.join(root, "build", "bin", "stride"))
args = [a for a in sys.argv[1:] if not a.startswith("--")]
sweep = os.path.abspath(args[0])
reps = int(args[1]) if len(args) > 1 else 5
reps = 1 if SMOKE else reps
sweep_only = "--sweep-only" in sys.argv
spec = json.load(open(sweep))
base = os.path.dirname(sweep)
work = tempfile.mkdtemp(prefix="stride_sweep_throughput.")


def absolute(x):
    if isinstance(x, dict):
        return {k: os.path.join(base, v) if k == "manifest" else absolute(v) for k, v in x.items()}
    return [absolute(v) for v in x] if isinstance(x, list) else x


if SMOKE:  # a copy of the sweep with two values of its step axis and the first of every other axis
    for ax in spec["axes"]:
        ax["values"] = ax["values"][:2 if ax["name"] == spec.get("step_axis") else 1]
    spec = absolute(spec)
    sweep = os.path.join(work, os.path.basename(sweep))
    json.dump(spec, open(sweep, "w"))

# The grid as the sweep builds it: every combination of axis values.
points = [({}, spec["manifest"])]
for ax in spec["axes"]:
    grown = []
    for sets, man in points:
        for v in ax["values"]:
            s, m = dict(sets), man
            if isinstance(v, dict):
                s.update(v.get("set", {}))
                m = v.get("manifest", m)
            else:
                for p in ax["pointers"]:
                    s[p] = v
            grown.append((s, m))
    points = grown


def run_commands():
    out = []
    for i, (s, m) in enumerate(points):
        sets = dict(spec.get("set", {}))
        sets.update(s)
        a = [exe, "run", os.path.join(base, m), "--out", os.path.join(work, "runs", str(i)), "--quiet"]
        for k, v in sets.items():
            a += ["--set", f"{k}={json.dumps(v)}"]
        out.append(a)
    return out


def timed(fn, env):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    fn(env)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def sweep_jobs(j, *extra):
    def fn(env):
        subprocess.run([exe, "sweep", sweep, "--jobs", str(j), *extra], cwd=work, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
    return fn


def per_process(env):
    e = dict(os.environ)
    e.update(env or {})
    for a in run_commands():
        subprocess.run(a, env=e, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


cases = [("sweep --jobs 1", sweep_jobs(1), None), ("sweep --jobs 2", sweep_jobs(2), None),
         ("sweep --jobs 1 --process-per-run", sweep_jobs(1, "--process-per-run"), None),
         ("sweep --jobs 2 --process-per-run", sweep_jobs(2, "--process-per-run"), None)]
if not sweep_only:
    cases += [("one `stride run` per point, all plugins (STRIDE_PLUGIN_INDEX=0)", per_process, {"STRIDE_PLUGIN_INDEX": "0"}),
              ("one `stride run` per point, plugin index", per_process, None)]
res = {label: [] for label, _, _ in cases}
for _ in range(reps):
    for label, fn, env in cases:  # interleaved, so that a change in the machine's load hits all
        res[label].append(timed(fn, env))
n = len(points)
med = {label: (statistics.median(x[0] for x in r), statistics.median(x[1] for x in r)) for label, r in res.items()}
print(f"{os.path.basename(sweep)}: {n} points (the sweep also runs its reference once), median of {reps}, "
      f"load average {os.getloadavg()[0]:.1f}")
print(f"{'case':66s} {'wall s':>8s} {'runs/s':>8s} {'CPU ms/run':>11s}")
for label, _, _ in cases:
    w, c = med[label]
    print(f"{label:66s} {w:8.3f} {n / w:8.1f} {1e3 * c / n:11.1f}")
w1, w2 = med["sweep --jobs 1"][0], med["sweep --jobs 2"][0]
print(f"jobs 2 / jobs 1 speed-up: {w1 / w2:.2f}x (target >= 1.8x)")
for j in (1, 2):
    f, w = med[f"sweep --jobs {j} --process-per-run"], med[f"sweep --jobs {j}"]
    print(f"jobs {j}: workers against a process per run: wall {f[0] / w[0]:.2f}x, CPU per run {f[1] / w[1]:.2f}x")
if not sweep_only:
    wp = med[cases[4][0]][0]
    print(f"runs per second, sweep --jobs 2 / one process per run with every plugin: {wp / w2:.2f}x (target >= 3x)")
subprocess.run(["rm", "-rf", work])
