"""Tests of the Python module `stride` (ctest: python). Physics against the `stride` command's
own CSV and against the closed form of the two-mass test (González 2011 Eq. 3); errors against
what the command reports; a crashing plugin and Ctrl-C against a live interpreter.

Environment (set by ctest): PYTHONPATH (build/python), STRIDE_EXE, STRIDE_SOURCE_DIR,
STRIDE_TEST_RUNTIME_DIR (the test plugins that fail on purpose)."""

import ctypes
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np

import stride
from stride import plot

EXE = os.environ["STRIDE_EXE"]
SRC = os.environ["STRIDE_SOURCE_DIR"]
RUNTIME = os.environ["STRIDE_TEST_RUNTIME_DIR"]
TWO_MASS = os.path.join(SRC, "manifests", "two_mass.json")
TESTS = os.path.join(SRC, "tests", "manifests")


def cli(*args, env=None):
    return subprocess.run([EXE, *args], capture_output=True, text=True, env=env)


def two_mass_closed_form(t, FR=10.0, AR1=0.1, AR2=-1000.0, AR12=0.1):
    """González 2011 Eq. 3-5 (undamped, from rest): x1 = C11 cos(w1 t) + C13 cos(w2 t),
    x2 = C21 cos(w1 t) + C23 cos(w2 t), with C11 = 1 m, w1 = 2 pi rad/s (f1 = 1 Hz), w2 = w1/FR,
    C13 = C11/AR1, C23 = C11/AR12, C21 = C23/AR2."""
    w1 = 2 * math.pi
    w2 = w1 / FR
    C11, C13, C23 = 1.0, 1.0 / AR1, 1.0 / AR12
    C21 = C23 / AR2
    return C11 * np.cos(w1 * t) + C13 * np.cos(w2 * t), C21 * np.cos(w1 * t) + C23 * np.cos(w2 * t)


class Base(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="stride_python_")
        self.tmp = self._tmp.name
        os.environ.pop("STRIDE_PLUGIN_PATH", None)

    def tearDown(self):
        self._tmp.cleanup()


class Physics(Base):
    SETS = {"/coupling/end": 5, "/coupling/macro_step": 0.01, "/subsystems/slow/step": 0.01,
            "/connections/0/extrapolator/parameters/order": 2, "/connections/1/extrapolator/parameters/order": 2}

    def test_run_equals_cli_csv(self):
        """The arrays equal what `stride run --set ...` writes, number for number."""
        r = stride.run(TWO_MASS, set=self.SETS, out=os.path.join(self.tmp, "py"))
        args = ["run", TWO_MASS, "--quiet", "--out", os.path.join(self.tmp, "cli")]
        for k, v in self.SETS.items():
            args += ["--set", f"{k}={json.dumps(v)}"]
        p = cli(*args)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(self.tmp, "cli", "results.csv")) as f:
            header = f.readline().strip().split(",")
            rows = [[float(x) for x in line.split(",")] for line in f]
        self.assertEqual(["time"] + r.columns, header)
        self.assertEqual(r.columns, ["fast.x", "fast.v", "slow.x", "slow.v"])
        self.assertEqual(r.data.shape, (501, 5))
        self.assertTrue(np.array_equal(r.data, np.array(rows)))
        with open(os.path.join(self.tmp, "cli", "summary.json")) as f:
            s = json.load(f)
        self.assertEqual(r.summary["status"], "completed")
        # The same summary but for wall times and the folder names.
        for k in ("status", "start_time", "end_time", "end_time_reached", "rows", "coupling", "connections", "power_bonds"):
            self.assertEqual(r.summary[k], s[k], k)
        self.assertEqual(r.summary["subsystems"].keys(), s["subsystems"].keys())
        # The folder read back later gives the same.
        again = stride.load_results(os.path.join(self.tmp, "py"))
        self.assertTrue(np.array_equal(again["fast.x"], r["fast.x"]))

    def test_two_mass_closed_form(self):
        """Co-simulation against Eq. 3; the overrides (finer macro step, order-2 extrapolation)
        must reach the run: the manifest as written (H = 0.1 s, order 0) is far less accurate."""
        fine = stride.run(TWO_MASS, set=self.SETS, out=os.path.join(self.tmp, "fine"))
        x1, x2 = two_mass_closed_form(fine.time)
        e_fine = max(np.max(np.abs(fine["fast.x"] - x1)), np.max(np.abs(fine["slow.x"] - x2)))
        coarse = stride.run(TWO_MASS, set={"/coupling/end": 5}, out=os.path.join(self.tmp, "coarse"))
        x1c, _ = two_mass_closed_form(coarse.time)
        e_coarse = np.max(np.abs(coarse["fast.x"] - x1c))
        print(f"two-mass, 5 s: largest error against Eq. 3 {e_fine:.3g} m (H = 0.01 s, order 2), "
              f"{e_coarse:.3g} m (H = 0.1 s, order 0)", file=sys.stderr)
        self.assertLess(e_fine, FINE_TOLERANCE)
        self.assertGreater(e_coarse, 10 * e_fine)
        # Velocities: the derivative of Eq. 3.
        w1, w2 = 2 * math.pi, 2 * math.pi / 10
        v1 = -w1 * np.sin(w1 * fine.time) - 10 * w2 * np.sin(w2 * fine.time)
        self.assertLess(np.max(np.abs(fine["fast.v"] - v1)), w1 * FINE_TOLERANCE)


# Largest |x - Eq. 3| over 5 s with H = h = 0.01 s, order-2 extrapolation: measured 1.51e-4 m
# (1.03 m with the manifest's H = 0.1 s, order 0).
FINE_TOLERANCE = 5e-4


class Errors(Base):
    def test_invalid_manifest_reports_file_and_pointer(self):
        bad = os.path.join(TESTS, "unknown_key.json")
        with self.assertRaises(stride.ManifestError) as cm:
            stride.run(bad, out=os.path.join(self.tmp, "x"))
        e = cm.exception
        self.assertIsInstance(e, ValueError)
        # The same problems, file and pointers as `stride validate` prints.
        p = cli("validate", bad)
        self.assertEqual(p.returncode, 2)
        cli_lines = [l.strip() for l in p.stderr.splitlines()[1:] if l.strip()]
        self.assertEqual([f"{f}: {ptr or '(document)'}: {m}" for f, ptr, m in e.diagnostics], cli_lines)
        self.assertIn("/subsytems", str(e))
        self.assertIn(bad, str(e))
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "x")))  # nothing ran

    def test_missing_file(self):
        with self.assertRaises(stride.ManifestError) as cm:
            stride.validate(os.path.join(self.tmp, "nope.json"))
        self.assertIn("nope.json", str(cm.exception))

    def test_unknown_plugin(self):
        with self.assertRaises(stride.UnknownPluginError) as cm:
            stride.describe("rk44")
        self.assertIn('did you mean "rk4"', str(cm.exception))
        with self.assertRaises(stride.ManifestError) as cm:
            stride.validate(TWO_MASS, set={"/subsystems/fast/integrator/plugin": "rk44"})
        self.assertEqual([d[1] for d in cm.exception.diagnostics], ["/subsystems/fast/integrator"])
        self.assertIn('unknown integrator plugin "rk44" (did you mean "rk4"?)', str(cm.exception))

    def test_bad_overrides(self):
        # A string where a number belongs: the host's type check, at the pointer.
        with self.assertRaises(stride.ManifestError) as cm:
            stride.validate(TWO_MASS, set={"/coupling/end": "ten"})
        self.assertIn("/coupling/end", str(cm.exception))
        # Not a JSON pointer, and a pointer into nothing: the host's --set errors.
        for s in (["coupling/end=5"], ["/coupling/end"], ["/subsystems/nothing/step/x=1"]):
            with self.assertRaises(stride.ManifestError, msg=s) as cm:
                stride.validate(TWO_MASS, set=s)
            p = cli("validate", TWO_MASS, "--set", s[0])
            self.assertEqual(p.returncode, 2, s)
            self.assertIn(str(cm.exception).splitlines()[-1].strip(), p.stderr, s)
        # Values Python cannot write as JSON: refused here, naming the pointer.
        with self.assertRaisesRegex(ValueError, "/coupling/end"):
            stride.validate(TWO_MASS, set={"/coupling/end": float("nan")})
        with self.assertRaisesRegex(TypeError, "/coupling/end"):
            stride.validate(TWO_MASS, set={"/coupling/end": object()})
        with self.assertRaises(TypeError):
            stride.validate(TWO_MASS, set={5: 1})
        with self.assertRaises(TypeError):
            stride.run(42)
        # NumPy values are plain JSON numbers.
        v = stride.validate(TWO_MASS, set={"/coupling/end": np.float64(2.5), "/connections/0/extrapolator/parameters/order": np.int64(1)})
        self.assertEqual(v["document"]["coupling"]["end"], 2.5)
        self.assertEqual(v["columns"], ["fast.x", "fast.v", "slow.x", "slow.v"])

    def test_locked_output_folder(self):
        # Another process holds the folder (a run under way): OutputError, nothing runs.
        out = os.path.join(self.tmp, "busy")
        holder = subprocess.Popen([sys.executable, "-c", f"""
import fcntl, os, sys, time
os.makedirs({out!r}, exist_ok=True)
f = open(os.path.join({out!r}, '.stride.lock'), 'w'); fcntl.flock(f, fcntl.LOCK_EX)
print('locked', flush=True); time.sleep(30)"""], stdout=subprocess.PIPE, text=True)
        try:
            self.assertEqual(holder.stdout.readline().strip(), "locked")
            with self.assertRaises(stride.OutputError):
                stride.run(TWO_MASS, set={"/coupling/end": 1}, out=out)
        finally:
            holder.kill()
            holder.wait()
            holder.stdout.close()


class Faults(Base):
    def test_inaccurate_run_is_not_completed(self):
        """A run past its constraint-residual bounds (ali1 drifting on Andrews' squeezer) comes
        back with status "inaccurate", its reason and all its rows, as `stride run` ends it."""
        r = stride.run(os.path.join(TESTS, "squeezer.json"), set={"/subsystems/squeezer/formulation": "ali1"},
                       out=os.path.join(self.tmp, "squeezer"))
        self.assertEqual(r.status, "inaccurate")
        self.assertIn("normalization constraint residual reached", r.summary["message"])
        self.assertFalse(r.summary["subsystems"]["squeezer"]["accuracy"]["within"])
        self.assertAlmostEqual(r.time[-1], 0.03)

    def test_crashing_plugin_leaves_the_interpreter(self):
        os.environ["STRIDE_PLUGIN_PATH"] = RUNTIME
        fault = os.path.join(TESTS, "fault.json")
        for kind, words in (("segfault", "SIGSEGV"), ("abort", "SIGABRT"), ("exit0", "exit")):
            r = stride.run(fault, set={"/subsystems/src/parameters/fault": kind}, out=os.path.join(self.tmp, kind))
            self.assertEqual(r.status, "failed", kind)
            self.assertIn(words, r.summary.get("message", ""), kind)
            # The rows before the fault (t = 0.555 s, recorded every 0.1 s) stay readable.
            self.assertEqual(list(r.time), [0.0, 0.1, 0.2, 0.3, 0.4, 0.5], kind)
            self.assertTrue(np.allclose(r["amp.y"], 3 * 2 * r.time), kind)  # gain 3 of a ramp of slope 2
        r = stride.run(fault, set={"/subsystems/src/parameters/fault": "bad_utf8"}, out=os.path.join(self.tmp, "utf8"))
        self.assertEqual(r.status, "failed")

    def test_ctrl_c(self):
        """SIGINT during a run: the run stops with status "interrupted", Python gets
        stride.Interrupted (a KeyboardInterrupt) with the rows written so far."""
        script = f"""
import os, sys, stride
os.environ["STRIDE_PLUGIN_PATH"] = {RUNTIME!r}
try:
    stride.run({os.path.join(TESTS, 'long_run.json')!r}, out={os.path.join(self.tmp, 'long')!r}, progress=True)
    print("not interrupted")
except stride.Interrupted as e:
    assert isinstance(e, KeyboardInterrupt)
    r = e.result
    print("interrupted", r.status, len(r.time), r.time[-1] > 0, flush=True)
print("alive")
"""
        p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # Wait until the run is stepping (progress on stderr), then Ctrl-C.
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not os.path.exists(os.path.join(self.tmp, "long", "results.csv")):
            time.sleep(0.05)
        time.sleep(0.3)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 0, err)
        words = out.split()
        self.assertEqual(len(words), 5, out)
        self.assertEqual(words[:2], ["interrupted", "interrupted"], out)
        self.assertGreater(int(words[2]), 1, out)  # rows written before the signal
        self.assertEqual(words[3:], ["True", "alive"], out)

    def test_killed_interpreter_ends_its_run(self):
        """kill -9 of the interpreter running stride.run: its run process stops too (status
        "interrupted", whole rows) instead of running on as an orphan to its end time."""
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_CHILD_SUBREAPER = 36  # orphans come to this process, which can wait for them
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        out = os.path.join(self.tmp, "orphan")
        script = f"""
import os, stride
os.environ["STRIDE_PLUGIN_PATH"] = {RUNTIME!r}
stride.run({os.path.join(TESTS, 'long_run.json')!r}, out={out!r})
"""
        p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        run = None
        try:
            deadline = time.monotonic() + 20
            csv = os.path.join(out, "results.csv")
            while time.monotonic() < deadline and not (os.path.exists(csv) and os.path.getsize(csv) > 1000):
                time.sleep(0.05)
            children = [int(c) for c in open(f"/proc/{p.pid}/task/{p.pid}/children").read().split()]
            self.assertEqual(len(children), 1)
            run = children[0]
            p.kill()
            p.wait()
            deadline = time.monotonic() + 10
            status = None
            while time.monotonic() < deadline and status is None:
                pid, st = os.waitpid(run, os.WNOHANG)
                status = st if pid == run else None
                time.sleep(0.01)
            self.assertIsNotNone(status, "the run process outlived the interpreter")
            run = None
            summary = json.load(open(os.path.join(out, "summary.json")))
            self.assertEqual(summary["status"], "interrupted")
            self.assertIn("SIGTERM", summary["message"])
            self.assertIn(f"pid {p.pid}, ended", summary["message"])
            r = stride.load_results(out)
            self.assertGreater(len(r.time), 10)
            self.assertTrue(np.allclose(r["amp.y"], 6 * r.time))
        finally:
            if run is not None:
                os.kill(run, signal.SIGKILL)
                os.waitpid(run, 0)
            libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


class Plugins(Base):
    def test_list_equals_cli(self):
        names = sorted(p["name"] for p in stride.plugins())
        p = cli("plugins", "--json")
        self.assertEqual(names, sorted(q["name"] for q in json.loads(p.stdout)["plugins"]))
        self.assertIn("rk4", names)

    def test_describe_equals_cli(self):
        d = stride.describe("two_mass_fast")
        p = cli("plugins", "describe", "two_mass_fast", "--json")
        self.assertEqual(d, json.loads(p.stdout))
        self.assertIn("FR", [q["name"] for q in d["parameters"]])

    def test_describe_with_parameters_gives_their_ports(self):
        one = stride.describe("crane_independent")
        two = stride.describe("crane_independent", actuators=2)
        p = cli("plugins", "describe", "crane_independent", "--set", "actuators=2", "--json")
        self.assertEqual(two, json.loads(p.stdout))
        size = lambda d, port: next(q["size"] for q in d["ports"] if q["name"] == port)
        self.assertEqual((size(one, "s"), size(two, "s")), (1, 2))
        with self.assertRaises(ValueError):
            stride.describe("crane_independent", actuator=2)
        with self.assertRaises(ValueError):
            stride.describe("crane_independent", actuators="two")


class Interpreter(Base):
    def _import_in_child(self, prelude):
        code = prelude + "\nimport stride\n"
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)

    def test_without_numpy_names_the_interpreter_to_use(self):
        # sys.modules[name] = None makes "import name" fail as it does where the package is missing.
        p = self._import_in_child("import sys; sys.modules['numpy'] = None")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("stride needs NumPy", p.stderr)
        self.assertIn(sys.executable, p.stderr)
        self.assertIn("/usr/bin/python3", p.stderr)
        self.assertIn("PYTHONPATH=" + os.path.dirname(os.path.dirname(os.path.abspath(stride.__file__))), p.stderr)

    def test_a_compiled_module_that_does_not_load_is_explained(self):
        p = self._import_in_child("import sys; sys.modules['stride._stride'] = None")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("compiled module does not load into this interpreter", p.stderr)


class Sweep(Base):
    def test_sweep_table(self):
        ref = os.path.join(self.tmp, "reference.json")
        with open(TWO_MASS) as f:
            m = json.load(f)
        # Reference: every step 1 ms, order-2 extrapolation (its own error is below 1e-5 m).
        m["coupling"].update({"end": 2, "macro_step": 0.001})
        m["subsystems"]["slow"]["step"] = m["subsystems"]["fast"]["step"] = 0.001
        for c in m["connections"]:
            c["extrapolator"]["parameters"]["order"] = 2
        with open(ref, "w") as f:
            json.dump(m, f)
        order = "/connections/{}/extrapolator/parameters/order"
        spec = {"format": 1, "manifest": TWO_MASS,
                "reference": {"manifest": ref, "columns": {"fast.x": "fast.x"}},
                "axes": [{"name": "H", "pointers": ["/coupling/macro_step", "/subsystems/slow/step"], "values": [0.01, 0.02, 0.05]},
                         {"name": "order", "values": [{"label": f"order {k}", "set": {order.format(0): k, order.format(1): k}} for k in (0, 1)]}],
                "step_axis": "H", "set": {"/coupling/end": 2}, "output": os.path.join(self.tmp, "sweep")}
        file = os.path.join(self.tmp, "sweep.json")
        with open(file, "w") as f:
            json.dump(spec, f)
        s = stride.sweep(file, jobs=2)
        self.assertEqual(list(s.table["run"]), [0, 1, 2, 3, 4, 5])
        self.assertEqual(s.table["status"], ["completed"] * 6)
        self.assertEqual(s.table["H"].tolist(), [0.01, 0.02, 0.05] * 2)
        self.assertEqual(s.table["order"], ["order 0"] * 3 + ["order 1"] * 3)
        # The error column is the largest |x1 - reference x1| over common times, from the runs' own CSVs.
        r_ref = stride.load_results(os.path.join(s.output, "reference"))
        ref_x = dict(zip(np.round(r_ref.time, 9), r_ref["fast.x"]))
        for i in range(6):
            r = s.run(i)
            e = max(abs(x - ref_x[t]) for t, x in zip(np.round(r.time, 9), r["fast.x"]) if t in ref_x)
            self.assertAlmostEqual(s.table["error"][i], e, delta=1e-5 * e)  # sweep.csv has 6 digits
        # Convergence in the macro step H: global order p + 1 for Lagrange extrapolation of
        # order p (zero-order hold first order, linear second). Measured from H = 0.01 to 0.02 s:
        # 0.996 (order 0), 2.003 (order 1).
        e = s.table["error"]
        self.assertAlmostEqual(math.log2(e[1] / e[0]), 1.0, delta=0.15)
        self.assertAlmostEqual(math.log2(e[4] / e[3]), 2.0, delta=0.15)
        self.assertIn("H", s.stability)
        # A fresh process per run gives the same errors (the plugins keep no state between runs).
        fresh = stride.sweep(file, jobs=2, process_per_run=True)
        self.assertEqual(fresh.table["status"], ["completed"] * 6)
        self.assertEqual(list(fresh.table["error"]), list(e))
        with self.assertRaises(TypeError):
            stride.sweep(file, jobs=1, process_per_run="yes")
        png = os.path.join(self.tmp, "sweep.png")
        plot.sweep(s, file=png)
        self.assertGreater(os.path.getsize(png), 1000)
        # A bad sweep file: ManifestError with the pointer.
        spec["axes"][0]["pointers"] = ["coupling/macro_step"]
        with open(file, "w") as f:
            json.dump(spec, f)
        with self.assertRaises(stride.ManifestError) as cm:
            stride.sweep(file, jobs=1)
        self.assertIn("/axes/0/pointers/0", str(cm.exception))


class Plot(Base):
    def test_results_png(self):
        r = stride.run(TWO_MASS, set={"/coupling/end": 2}, out=os.path.join(self.tmp, "p"))
        png = os.path.join(self.tmp, "r.png")
        fig = plot.results(r, ["fast.x", "slow.x"], file=png)
        self.assertEqual(len(fig.axes), 2)
        with open(png, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        self.assertGreater(os.path.getsize(png), 1000)
        with self.assertRaises(KeyError):
            plot.results(r, ["fast.nothing"])


class Text(Base):
    def test_string_and_binary_columns(self):
        """String and Binary columns (quoted, with commas, quotes and line breaks) come back as
        texts, the numbers beside them as numbers; the types3 test FMU's s_t is "tick k, "q"
        <newline>end" with k = floor(4 t), b_t the bytes k, 0, 34, 10, 44, 255."""
        fmu = os.path.join(os.path.dirname(os.path.dirname(EXE)), "tests", "fmus", "types3.fmu")
        manifest = {"format": 1, "subsystems": {"a": {"fmu": fmu, "step": 0.1}}, "connections": [],
                    "coupling": {"scheme": "jacobi", "macro_step": 0.1, "start": 0, "end": 1},
                    "record": {"interval": 0.1, "variables": ["a.s_t", "a.q_f64", "a.b_t"]}}
        path = os.path.join(self.tmp, "text.json")
        with open(path, "w") as f:
            json.dump(manifest, f)
        r = stride.run(path, out=os.path.join(self.tmp, "out"))
        self.assertEqual(r.status, "completed")
        self.assertEqual(r.columns, ["a.s_t", "a.q_f64.0", "a.q_f64.1", "a.b_t"])
        self.assertEqual(len(r.time), 11)
        k = [int(4 * t + 1e-9) for t in r.time]
        self.assertEqual(list(r["a.s_t"]), [f'tick {n}, "q"\nend' for n in k])
        self.assertEqual(list(r["a.b_t"]), [f"{n:02x}00220a2cff" for n in k])
        self.assertTrue(np.all(r["a.q_f64.0"] == 1.5))
        self.assertTrue(np.all(np.isnan(r.data[:, 1])))


class View(Base):
    def test_view_serves_a_run_folder(self):
        """stride.view() serves the page and the run's results.csv, byte for byte, as `stride view`
        does, on a free port, and stops when asked; a folder that is no run is a ValueError."""
        import urllib.request
        r = stride.run(TWO_MASS, set={"/coupling/end": 1}, out=os.path.join(self.tmp, "out"))
        url = stride.view(r, port=0)
        self.assertRegex(url, r"^http://127\.0\.0\.1:\d+/$")
        page = urllib.request.urlopen(url, timeout=10).read().decode()
        self.assertIn('id="stride-data"', page)
        served = urllib.request.urlopen(url + "files/0/results.csv", timeout=10).read()
        with open(os.path.join(r.output, "results.csv"), "rb") as f:
            self.assertEqual(served, f.read())
        stride.stop_view(url)
        with self.assertRaises(OSError):
            urllib.request.urlopen(url, timeout=2)
        with self.assertRaises(ValueError):
            stride.view(self.tmp)


if __name__ == "__main__":
    unittest.main(verbosity=2)
