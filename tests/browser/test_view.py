#!/usr/bin/env python3
"""Browser test of `stride report` and `stride view` (ctest browser_view): Debian's headless
Chromium, driven over the DevTools protocol (cdp.py), loads the pages of a two-mass run, a sweep
of it and a triple pendulum (mechanism plugin), and the page served by `stride view`. Checked
against the files themselves, read here with Python's csv module: every page loads without a
console error or exception; the plotted series are the columns of each results.csv with its row
count and last value; the 3D scene holds one object per body of the description, standing where
results.csv puts it at the slider's time; the inertia box of a body without a shape has the
edges of the uniform box with its principal moments. `stride view` serves the page and the run
files, refuses a port in use with a clear error and stops on SIGINT. Screenshots are kept in
the artifacts folder.

usage: test_view.py STRIDE_EXE SOURCE_DIR ARTIFACTS_DIR"""
import csv
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

STRIDE, SOURCE, ART = (os.path.abspath(a) for a in sys.argv[1:4])
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAILED:", what)


def stride(*args, expect=0):
    r = subprocess.run([STRIDE, *args], capture_output=True, text=True, timeout=120)
    if r.returncode != expect:
        raise RuntimeError(f"stride {' '.join(args)}: exit {r.returncode}, expected {expect}\n{r.stdout}\n{r.stderr}")
    return r


def results(folder):
    with open(os.path.join(folder, "results.csv"), newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], [[float(x) for x in r] for r in rows[1:]]


def check_series(page, label, folder, what):
    """The page's series of run `label`: names, row counts and last values of results.csv."""
    header, rows = results(folder)
    series = {s["name"]: s for s in page["series"] if s["run"] == label}
    check(sorted(series) == sorted(header[1:]), f"{what}: plotted series {sorted(series)} != columns {header[1:]}")
    check(page["rowCounts"].get(label) == len(rows), f"{what}: {page['rowCounts'].get(label)} rows, results.csv has {len(rows)}")
    for k, name in enumerate(header[1:], start=1):
        s = series.get(name)
        if s is None:
            continue
        check(s["rows"] == len(rows), f"{what}: {name} has {s['rows']} rows, results.csv {len(rows)}")
        last = rows[-1][k]
        check(s["last"] == last or (math.isnan(last) and s["last"] is None),
              f"{what}: last value of {name} {s['last']} != results.csv {last}")


def open_page(browser, url, shot=None):
    before = len(browser.errors)
    browser.open(url)
    if shot:
        browser.screenshot(os.path.join(ART, shot))
    check(len(browser.errors) == before, f"{url}: console errors {browser.errors[before:]}")
    return browser.evaluate("window.strideView.describe()")


def make_runs():
    out = os.path.join(ART, "runs")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    two_mass, pendulum, sweep = (os.path.join(out, n) for n in ("two_mass", "pendulum", "sweep"))
    stride("run", os.path.join(SOURCE, "manifests/two_mass.json"), "--out", two_mass, "--quiet")
    stride("run", os.path.join(SOURCE, "tests/browser/pendulum.json"), "--out", pendulum, "--quiet")
    spec = {"format": 1, "title": "two masses, macro step", "manifest": os.path.join(SOURCE, "manifests/two_mass.json"),
            "reference": {"manifest": os.path.join(SOURCE, "manifests/two_mass.json"),
                          "set": {"/coupling/macro_step": 0.01, "/subsystems/slow/step": 0.01},
                          # one reference column compared with two run columns: drawn with both
                          "columns": {"fast.x": "fast.x", "slow.x": "slow.x",
                                      "fast.v": "slow.v", "slow.v": "slow.v"}},
            "axes": [{"name": "H", "pointers": ["/coupling/macro_step", "/subsystems/slow/step"], "values": [0.1, 0.2]}],
            "step_axis": "H", "usable_error": 1.0, "output": sweep}
    with open(os.path.join(out, "sweep.json"), "w") as f:
        json.dump(spec, f)
    stride("sweep", os.path.join(out, "sweep.json"), "--jobs", "2")
    # The crane against its monolithic reference, whose column has another name (reference.s).
    crane = os.path.join(out, "crane_sweep")
    spec = {"format": 1, "title": "crane, ZOH against the monolithic reference",
            "manifest": os.path.join(SOURCE, "manifests/crane1_zoh.json"),
            "reference": {"manifest": os.path.join(SOURCE, "manifests/crane1_monolithic.json"),
                          "columns": {"crane.s": "reference.s"}},
            "axes": [{"name": "h_M", "pointers": ["/variables/h_M"], "values": [0.002, 0.005]}],
            "step_axis": "h_M", "usable_error": 0.01, "output": crane}
    with open(os.path.join(out, "crane_sweep.json"), "w") as f:
        json.dump(spec, f)
    stride("sweep", os.path.join(out, "crane_sweep.json"), "--jobs", "2")
    return two_mass, pendulum, sweep, crane


def check_sweep_series(page, sweep, what):
    """Every run of a sweep's page plots its results.csv."""
    for label in page["runs"]:
        sub = "reference" if label == "reference" else "run_%04d" % int(re.match(r"run (\d+)", label).group(1))
        check_series(page, label, os.path.join(sweep, sub), f"{what}, {label}")


def check_compared_columns(page, compared):
    """A reference column is drawn in the plot of each run column it is compared with
    (reference_columns.json), once per run column, even where the names differ."""
    for run_column, ref_column in compared.items():
        ref = [s for s in page["series"] if s["run"] == "reference" and s["name"] == ref_column]
        runs = [s for s in page["series"] if s["run"] != "reference" and s["name"] == run_column]
        mine = [s for s in ref if s["plottedAs"] == run_column]
        want = sum(1 for r in compared.values() if r == ref_column)
        check(len(ref) == want and len(mine) == 1,
              f"reference {ref_column}: plotted as {[s['plottedAs'] for s in ref]}, expected {run_column} once "
              f"among {want}")
        check(runs and all(mine and s["plot"] == mine[0]["plot"] for s in runs),
              f"reference {ref_column} and the runs' {run_column} are in different plots")


def check_difference(browser, page, sweep, compared=None):
    """"difference to reference": each run's last value minus the reference's at the same time
    (the reference's column compared with it, when reference.columns names another)."""
    k = page["runs"].index("reference")
    browser.evaluate(f"(() => {{ const s = document.getElementById('difference'); s.value = '{k}'; "
                     "s.dispatchEvent(new Event('change')); })()")
    shown = browser.evaluate("window.strideView.describe()")
    ref_header, ref_rows = results(os.path.join(sweep, "reference"))
    ref_time = {r[0]: r for r in ref_rows}
    check(all(s["run"] != "reference" for s in shown["series"]), "difference: the reference itself is still plotted")
    check(shown["series"], "difference: nothing plotted")
    for s in shown["series"]:
        folder = os.path.join(sweep, "run_%04d" % int(re.match(r"run (\d+)", s["run"]).group(1)))
        header, rows = results(folder)
        last = rows[-1]
        ref_column = (compared or {}).get(s["name"], s["name"])
        if ref_column not in ref_header:
            check(False, f"difference of {s['run']} {s['name']}: plotted, but the reference has no {ref_column}")
            continue
        want = last[header.index(s["name"])] - ref_time[last[0]][ref_header.index(ref_column)]
        check(s["last"] == want, f"difference of {s['run']} {s['name']}: {s['last']} != {want}")


def rotated(q, v):
    """v turned by the Euler parameters q = (e0, e1, e2, e3): v + 2 e0 (e x v) + 2 e x (e x v)."""
    e0, e = q[0], q[1:]
    cross = lambda a, b: [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
    ev = cross(e, v)
    eev = cross(e, ev)
    return [v[i] + 2 * e0 * ev[i] + 2 * eev[i] for i in range(3)]


def check_mechanism(browser, page, folder):
    manifest = json.load(open(os.path.join(SOURCE, "tests/browser/pendulum.json")))
    bodies = manifest["subsystems"]["pendulum"]["parameters"]["description"]["bodies"]
    check(page["bodyCount"] == len(bodies), f"3D scene: {page['bodyCount']} objects, the description has {len(bodies)} bodies")
    header, rows = results(folder)
    row = rows[len(rows) // 2]
    browser.evaluate(f"window.strideView.setTime({row[0]!r})")
    page = browser.evaluate("window.strideView.describe()")
    check(page["time"] == row[0], f"slider time {page['time']} != {row[0]}")
    for b in page["bodies"]:
        want = [row[header.index(f"pendulum.poses.{b['name']}_{c}")] for c in "xyz"]
        check(all(abs(p - w) <= 1e-12 * max(1.0, abs(w)) for p, w in zip(b["position"], want)),
              f"body {b['name']} at t = {row[0]}: {b['position']} != results.csv {want}")
    # The body without a shape: the uniform box of its inertia, edge_i² = 6 (I_j + I_k − I_i) / m.
    geo = json.load(open(os.path.join(folder, "summary.json")))["subsystems"]["pendulum"]["report"]["geometry"]
    # The contact sphere on the bob, where the bob's pose in results.csv puts its body point.
    check([c["name"] for c in page["contacts"]] == ["bob_tip"], f"contact marks {page['contacts']}")
    pose = [row[header.index(f"pendulum.poses.bob_{c}")] for c in ("x", "y", "z", "e0", "e1", "e2", "e3")]
    point = next(c for c in geo["contacts"] if c["name"] == "bob_tip")["point"]
    want = [p + r for p, r in zip(pose[:3], rotated(pose[3:], point))]
    got = page["contacts"][0]["position"]
    check(all(abs(g - w) <= 1e-6 for g, w in zip(got, want)), f"contact bob_tip at t = {row[0]}: {got} != {want}")
    bob = next(g for g in geo["bodies"] if g["name"] == "bob")
    I, m = bodies[2]["inertia"], bodies[2]["mass"]
    edges = sorted(math.sqrt(6 * (sum(I) - 2 * i) / m) for i in I)
    check(bob["from"] == "inertia" and all(abs(a - b) < 1e-12 for a, b in zip(sorted(bob["size"]), edges)),
          f"inertia box of bob {bob} != edges {edges}")
    check([g["shape"] for g in geo["bodies"]] == ["mesh", "cylinder", "box"], f"shapes {geo['bodies']}")
    # The link drawn from tests/browser/link.stl: its 12 triangles as the file writes them.
    stl = [float(w) for line in open(os.path.join(SOURCE, "tests/browser/link.stl")) if line.split()[:1] == ["vertex"]
           for w in line.split()[1:]]
    link = next(g for g in geo["bodies"] if g["name"] == "link")
    check(link["triangles"] == stl and len(stl) == 12 * 9, f"link mesh: {len(link['triangles'])} numbers, the file {len(stl)}")
    drawn = next(b for b in page["bodies"] if b["name"] == "link")
    check(drawn["triangles"] == 12, f"link drawn with {drawn['triangles']} triangles, the file has 12")
    browser.screenshot(os.path.join(ART, "pendulum_at_half_time.png"))


def check_view_server(browser, two_mass):
    proc = subprocess.Popen([STRIDE, "view", two_mass, "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        line = proc.stdout.readline()
        m = re.search(r"(http://127\.0\.0\.1:(\d+)/)", line)
        check(m is not None, f"stride view printed {line!r}, expected its URL")
        if not m:
            return
        url, port = m.group(1), m.group(2)
        page = urllib.request.urlopen(url, timeout=10).read().decode()
        check('id="stride-data"' in page and "files/0/" in page, "stride view: / is not the page")
        served = urllib.request.urlopen(url + "files/0/results.csv", timeout=10).read()
        check(served == open(os.path.join(two_mass, "results.csv"), "rb").read(), "stride view: results.csv differs")
        try:
            urllib.request.urlopen(url + "files/0/../../etc/passwd", timeout=10)
            check(False, "stride view served a path outside the run files")
        except urllib.error.HTTPError as e:
            check(e.code == 404, f"stride view: outside path answered {e.code}")
        shown = open_page(browser, url, "view_two_mass.png")
        check_series(shown, "two_mass", two_mass, "stride view")
        busy = subprocess.run([STRIDE, "view", two_mass, "--port", port], capture_output=True, text=True, timeout=20)
        check(busy.returncode == 2 and "in use" in busy.stderr, f"port in use: exit {busy.returncode}, {busy.stderr!r}")
    finally:
        stop_with_sigint(proc, "stride view")


def stop_with_sigint(proc, what):
    """Ctrl-C to a serving `stride`: it must end with exit 0 within 5 s."""
    proc.send_signal(signal.SIGINT)
    try:
        code = proc.wait(timeout=5)
        check(code == 0, f"{what} after SIGINT: exit {code}, {proc.stderr.read() if proc.stderr else ''}")
    except subprocess.TimeoutExpired:
        proc.kill()
        check(False, f"{what} did not stop within 5 s of SIGINT")


def main():
    os.makedirs(ART, exist_ok=True)
    started = time.time()
    two_mass, pendulum, sweep, crane = make_runs()
    reports = {}
    for name, folder in (("two_mass", two_mass), ("sweep", sweep), ("pendulum", pendulum), ("crane", crane)):
        reports[name] = os.path.join(ART, name + ".html")
        stride("report", folder, "-o", reports[name])
    try:
        browser = cdp.Browser()
    except cdp.BrowserMissing as e:
        print("error:", e)
        return 1
    try:
        page = open_page(browser, "file://" + reports["two_mass"], "two_mass.png")
        check_series(page, "two_mass", two_mass, "two-mass report")
        page = open_page(browser, "file://" + reports["sweep"], "sweep.png")
        check_sweep_series(page, sweep, "sweep report")
        check(len(page["runs"]) == 3, f"sweep report: runs {page['runs']}, expected the reference and 2 runs")
        compared = json.load(open(os.path.join(sweep, "reference_columns.json")))
        check_compared_columns(page, compared)
        check_difference(browser, page, sweep, compared)
        page = open_page(browser, "file://" + reports["crane"], "crane_sweep.png")
        compared = json.load(open(os.path.join(crane, "reference_columns.json")))
        check(compared == {"crane.s": "reference.s"}, f"crane sweep: reference_columns.json is {compared}")
        check_sweep_series(page, crane, "crane sweep report")
        check_compared_columns(page, compared)
        check_difference(browser, page, crane, compared)
        page = open_page(browser, "file://" + reports["pendulum"])
        check_series(page, "pendulum", pendulum, "pendulum report")
        check_mechanism(browser, page, pendulum)
        check_view_server(browser, two_mass)
    finally:
        browser.close()
    print(f"browser_view: {len(failures)} failure(s), {time.time() - started:.1f} s; screenshots in {ART}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
