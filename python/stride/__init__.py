"""Stride from Python: run co-simulation experiments described by JSON manifests.

    import stride
    r = stride.run("manifests/two_mass.json", set={"/coupling/end": 5})
    r.time, r["fast.x"], r.summary["status"]

Everything goes through the host library the `stride` command uses (the compiled module
`stride._stride`): manifests are read, overridden and checked there, and every run is a child
process supervised by this one, as `stride run` does it, so a plugin that crashes ends its run,
not the interpreter. Results are read back from the run's folder (results.csv, summary.json):
the arrays are what the command line writes.
"""

import csv
import json
import math
import os
import signal
import sys


def _interpreter_hint():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return (f"Stride's module is built for Debian's /usr/bin/python3, which has NumPy and matplotlib "
            f"(python3-numpy, python3-matplotlib: scripts/setup installs them): "
            f"PYTHONPATH={here} /usr/bin/python3")


try:
    import numpy as np
except ImportError as e:
    raise ImportError(f"stride needs NumPy, which this interpreter ({sys.executable}) cannot import. "
                      + _interpreter_hint()) from e
try:
    from . import _stride
except ImportError as e:
    raise ImportError(f"stride's compiled module does not load into this interpreter ({sys.executable}, "
                      f"Python {sys.version_info.major}.{sys.version_info.minor}): {e}. " + _interpreter_hint()) from e
from ._layout import PLUGIN_FOLDER

__all__ = ["run", "validate", "sweep", "plugins", "describe", "view", "stop_view", "load_results", "load_sweep",
           "Result", "SweepResult", "ManifestError", "UnknownPluginError", "OutputError", "Interrupted"]

# The plugins installed (or built) with this module; STRIDE_PLUGIN_PATH adds folders.
_stride.set_home_plugin_folder(os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), PLUGIN_FOLDER)))

ManifestError = _stride.ManifestError
ManifestError.__doc__ = ("A manifest or sweep file is not valid, cannot be read, or an override is bad. "
                         "str(e) is the host's report; e.diagnostics is a list of (file, pointer, message).")
UnknownPluginError = _stride.UnknownPluginError
OutputError = _stride.OutputError


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM/SIGHUP) stopped a run or a sweep. `result` holds what was written."""

    def __init__(self, message, result):
        super().__init__(message)
        self.result = result


def _json_value(pointer, value):
    """An override's value as JSON text; numpy scalars and arrays become plain JSON."""
    if isinstance(value, np.generic):
        value = value.item()
    elif isinstance(value, np.ndarray):
        value = value.tolist()
    try:
        return json.dumps(value, allow_nan=False)
    except ValueError:
        raise ValueError(f"override {pointer}: NaN and infinity are not JSON values") from None
    except TypeError:
        raise TypeError(f"override {pointer}: a value of type {type(value).__name__} cannot be written as JSON") from None


def _overrides(set):
    """`set` as the host's "POINTER=VALUE" list: a dict {pointer: value} (values are Python
    objects written as JSON) or an iterable of "POINTER=VALUE" strings as for `--set`."""
    if set is None:
        return []
    if isinstance(set, dict):
        out = []
        for pointer, value in set.items():
            if not isinstance(pointer, str):
                raise TypeError(f"override pointer {pointer!r}: expected a JSON pointer string such as '/coupling/end'")
            out.append(f"{pointer}={_json_value(pointer, value)}")
        return out
    if isinstance(set, str):
        return [set]
    try:
        out = list(set)
    except TypeError:
        raise TypeError(f"overrides: expected a dict {{pointer: value}} or a list of 'POINTER=VALUE' strings, "
                        f"found {type(set).__name__}") from None
    for s in out:
        if not isinstance(s, str):
            raise TypeError(f"override {s!r}: expected a string 'POINTER=VALUE' or a dict {{pointer: value}}")
    return out


def _path(p, what):
    if not isinstance(p, (str, os.PathLike)):
        raise TypeError(f"{what}: expected a file name, found {type(p).__name__}")
    return os.fspath(p)


class Result:
    """One run: `time` and the recorded columns as NumPy arrays (`r["fast.x"]`, `r.columns`,
    `r.data` with time in column 0), `summary` (summary.json as a dict), `status`, `output`.
    An FMU's String and Binary columns are NaN in `data`; `r["s.name"]` gives their texts (a
    Binary as hexadecimal digits), `r.texts` all of them by column."""

    def __init__(self, output, summary):
        self.output = output
        self.summary = summary
        self.status = summary.get("status", "failed")
        self.columns, self.data, self.texts = _read_results(os.path.join(output, "results.csv"))

    @property
    def time(self):
        return self.data[:, 0]

    def __getitem__(self, column):
        if column == "time":
            return self.time
        if column in self.texts:
            return self.texts[column]
        try:
            return self.data[:, 1 + self.columns.index(column)]
        except ValueError:
            raise KeyError(f"no column {column!r} in {self.output}/results.csv; the columns are {self.columns}") from None

    def __contains__(self, column):
        return column == "time" or column in self.columns

    def __repr__(self):
        return (f"<stride.Result {self.status}, t = {self.summary.get('end_time_reached')} s, "
                f"{len(self.data)} rows x {len(self.columns)} columns, in {self.output}>")


def _read_results(file):
    """results.csv as (column names after "time", 2-D float array with time first, the text
    columns' values by name)."""
    if not os.path.exists(file):
        return [], np.empty((0, 1)), {}
    with open(file, newline="") as f:
        header = f.readline().rstrip("\n").split(",")
        text = '"' in f.read()
    if header[:1] != ["time"]:
        raise ValueError(f"{file}: expected a header starting with 'time', found {header[:1]}")
    if text:
        return _read_text_results(file)
    data = np.loadtxt(file, delimiter=",", skiprows=1, ndmin=2)
    if data.size == 0:
        data = np.empty((0, len(header)))
    return header[1:], data, {}


def _read_text_results(file):
    """results.csv with quoted String or Binary columns (commas, quotes and line breaks inside):
    the quoted fields are text, the others numbers."""
    with open(file, newline="") as f:
        header = f.readline().rstrip("\n").split(",")
        rows = [r for r in csv.reader(f, quoting=csv.QUOTE_NONNUMERIC) if len(r) == len(header)]
    is_text = [any(isinstance(r[j], str) for r in rows) for j in range(len(header))]
    data = np.array([[math.nan if is_text[j] else r[j] for j in range(len(header))] for r in rows],
                    dtype=float).reshape(len(rows), len(header))
    texts = {header[j]: np.array([r[j] for r in rows], dtype=object) for j in range(1, len(header)) if is_text[j]}
    return header[1:], data, texts


def load_results(folder):
    """The results of a run written earlier (by Python or `stride run`) in `folder`."""
    folder = _path(folder, "load_results")
    with open(os.path.join(folder, "summary.json")) as f:
        summary = json.load(f)
    return Result(folder, summary)


def validate(manifest, set=None):
    """Checks a manifest (with overrides) as `stride validate` does, without running it.
    Returns a dict: subsystems, connections, columns, unit_conversions, converted_values (every
    value written with a unit: pointer, written, value, unit), feedthrough, output, document (the
    manifest after the overrides). Raises ManifestError."""
    return json.loads(_stride.validate(_path(manifest, "manifest"), _overrides(set)))


def run(manifest, set=None, out=None, progress=False, grace=3.0):
    """Runs a manifest as `stride run MANIFEST --set ... --out OUT` does and returns a Result.

    set: {"/json/pointer": value} (or a list of "POINTER=VALUE" strings). out: the output folder
    (default: the manifest's "output", relative to the working folder). A run that diverges,
    fails or ends "inaccurate" (a subsystem's answer outside the accuracy bounds it checks, the
    reason in summary["message"]) returns a Result with that status and the rows written so
    far: check `status == "completed"` before trusting the numbers; an invalid manifest
    raises ManifestError before anything runs; Ctrl-C raises Interrupted (a KeyboardInterrupt)
    carrying the Result."""
    if not isinstance(grace, (int, float)) or not (0 <= grace <= 3600):
        raise ValueError(f"grace: expected seconds in [0, 3600], found {grace!r}")
    r = json.loads(_stride.run(_path(manifest, "manifest"), _overrides(set),
                               "" if out is None else _path(out, "out"), bool(progress), float(grace)))
    result = Result(r["output"], r["summary"])
    if r["stop_signal"]:
        raise Interrupted(f"the run was stopped by {signal.Signals(r['stop_signal']).name}; "
                          f"results so far in {r['output']}", result)
    return result


class SweepResult:
    """A sweep: `table` (sweep.csv as a dict of columns: numbers as float arrays, labels and
    statuses as lists of strings), `rows` (one dict per run), `stability` (stability.md),
    `output`, `finished`, and `run(i)` (the Result of run i)."""

    def __init__(self, output, finished):
        self.output = output
        self.finished = finished
        self.rows, self.table = load_sweep(output)
        md = os.path.join(output, "stability.md")
        self.stability = ""
        if os.path.exists(md):
            with open(md) as f:
                self.stability = f.read()

    def run(self, index):
        return load_results(os.path.join(self.output, f"run_{int(index):04d}"))

    def __repr__(self):
        return f"<stride.SweepResult {len(self.rows)} runs{'' if self.finished else ' (interrupted)'}, in {self.output}>"


def _number(text):
    try:
        return float(text)
    except ValueError:
        return None


def load_sweep(folder):
    """sweep.csv of a sweep written earlier: (rows as dicts, table as a dict of columns)."""
    folder = _path(folder, "load_sweep")
    with open(os.path.join(folder, "sweep.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    table = {}
    for name in (rows[0].keys() if rows else []):
        values = [r[name] for r in rows]
        numbers = [_number(v) for v in values]
        # A column is numeric when every entry is a number ("nan" included); labels stay strings.
        if name != "message" and all(x is not None for x in numbers):
            table[name] = np.array(numbers)
        else:
            table[name] = values
    for r in rows:
        for k, v in r.items():
            if isinstance(table.get(k), np.ndarray):
                r[k] = _number(v)
    return rows, table


def sweep(file, jobs=None, max_runs=10000, grace=3.0, process_per_run=False):
    """Runs a sweep file as `stride sweep FILE --jobs J` does and returns a SweepResult
    (process_per_run=True: a fresh process for every run, as `--process-per-run`).
    Raises ManifestError for a bad sweep file or manifest of its grid, Interrupted on Ctrl-C
    (with the table of the runs that finished), RuntimeError when the reference run fails."""
    if jobs is None:
        jobs = os.cpu_count() or 1
    if isinstance(jobs, bool) or not isinstance(jobs, int):
        raise TypeError(f"jobs: expected an integer, found {type(jobs).__name__}")
    if not isinstance(process_per_run, bool):
        raise TypeError(f"process_per_run: expected True or False, found {type(process_per_run).__name__}")
    r = json.loads(_stride.sweep(_path(file, "sweep file"), jobs, float(max_runs), float(grace), process_per_run))
    if r["error"]:
        raise RuntimeError(f"sweep {file}: {r['error']}")
    result = SweepResult(r["output"], r["finished"])
    if not r["finished"]:
        raise Interrupted(f"the sweep was interrupted; the table of the runs that finished is in {r['output']}", result)
    return result


def plugins():
    """The plugins on the search path: a list of dicts (name, kind, version, description, file).
    Libraries that were refused are in stride.plugins.refused after a call."""
    j = json.loads(_stride.plugins())
    plugins.refused = j["refused"]
    return j["plugins"]


plugins.refused = []


def describe(name, **parameters):
    """Parameters and ports of one plugin (or an FMU file), as `stride plugins describe NAME
    --json`; keyword arguments give parameter values, and the ports are those the plugin has
    with them (as `--set NAME=VALUE`), e.g. describe("crane_independent", actuators=2).
    Raises UnknownPluginError naming the closest plugin, ValueError for an unknown parameter or
    a value of the wrong type."""
    if not isinstance(name, str):
        raise TypeError(f"describe: expected a plugin name, found {type(name).__name__}")
    sets = [f"{k}={json.dumps(v)}" for k, v in parameters.items()]
    return json.loads(_stride.describe(name, sets))


_view_servers = {}


def view(*folders, port=0):
    """Serves run and sweep folders to the browser as `stride view FOLDER... --port PORT` does
    (127.0.0.1 only; port 0: any free port) and returns the page's URL. The server runs on a
    thread of its own while the interpreter goes on, until stop_view(url) or the interpreter
    ends. Results (r.output) and sweeps (s.output) may be given as well as paths. Raises
    ValueError for a folder that is neither a run nor a sweep, RuntimeError for a port in use."""
    if not folders:
        raise ValueError("give at least one run or sweep folder")
    paths = [_path(getattr(f, "output", f), "folder") for f in folders]
    if not isinstance(port, int) or not (0 <= port <= 65535):
        raise ValueError(f"port: expected 0 to 65535, found {port!r}")
    server = _stride.view(paths, port)
    _view_servers[server.url] = server
    return server.url


def stop_view(url):
    """Stops the server stride.view() started at `url`."""
    _view_servers.pop(url, None)
