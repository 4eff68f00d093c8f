#!/usr/bin/env python3
"""The JSON Schemas of docs/schema/ against the readers they describe (ctest `schemas`).

1. Every shipped manifest and sweep (manifests/, examples/) names its schema in "$schema" and
   validates against it; every key of every schema has a description.
2. A summary.json that `stride run` wrote (two_mass.json, 1 s) validates against
   summary.schema.json.
3. Mistakes the readers refuse (an unknown key, a wrong type, a missing required key) are
   refused by the schema too: each mistake is made in a shipped file, `stride validate` (or
   `stride sweep`, which reads the whole file before running) must exit 2 naming the pointer,
   and the schema must report an error.

Usage: check_schemas.py SOURCE_DIR STRIDE_EXE SCRATCH_DIR   (Debian: python3-jsonschema)
"""
import copy
import json
import os
import subprocess
import sys

from jsonschema import Draft202012Validator

root, stride, scratch = sys.argv[1:4]
os.makedirs(scratch, exist_ok=True)
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def schema(kind):
    with open(os.path.join(root, "docs", "schema", kind + ".schema.json")) as f:
        s = json.load(f)
    Draft202012Validator.check_schema(s)
    return s


def undescribed(node, where):
    """Keys under "properties" (and additionalProperties schemas) without a description."""
    out = []
    if isinstance(node, dict):
        for key, sub in node.get("properties", {}).items():
            if not isinstance(sub, dict) or "description" not in sub:
                out.append(where + "/properties/" + key)
        add = node.get("additionalProperties")
        if isinstance(add, dict) and "description" not in add and "$ref" not in add:
            out.append(where + "/additionalProperties")
        for key, sub in node.items():
            out += undescribed(sub, where + "/" + key)
    elif isinstance(node, list):
        for i, sub in enumerate(node):
            out += undescribed(sub, where + "/" + str(i))
    return out


schemas = {k: schema(k) for k in ("manifest", "sweep", "summary")}
for kind, s in schemas.items():
    for where in undescribed(s, ""):
        fail(f"{kind}.schema.json: no description at {where}")


def errors(kind, doc):
    return sorted(Draft202012Validator(schemas[kind]).iter_errors(doc), key=lambda e: list(e.absolute_path))


# 1. Every shipped manifest and sweep.
shipped = {"manifest": [], "sweep": []}
for top in ("manifests", "examples"):
    for folder, _, names in os.walk(os.path.join(root, top)):
        for name in sorted(names):
            if not name.endswith(".json"):
                continue
            path = os.path.join(folder, name)
            with open(path) as f:
                doc = json.load(f)
            kind = "sweep" if "axes" in doc else "manifest" if "subsystems" in doc else None
            if kind is None:
                continue  # a mechanism description or other data file
            shipped[kind].append(path)
            want = os.path.relpath(os.path.join(root, "docs", "schema", kind + ".schema.json"), folder)
            if doc.get("$schema") != want:
                fail(f"{path}: \"$schema\" should be \"{want}\", found {doc.get('$schema')!r}")
            for e in errors(kind, doc):
                fail(f"{path}: /{'/'.join(map(str, e.absolute_path))}: {e.message}")
print(f"{len(shipped['manifest'])} manifests and {len(shipped['sweep'])} sweeps checked")
if len(shipped["manifest"]) < 20 or len(shipped["sweep"]) < 5:
    fail("fewer shipped files than expected: is SOURCE_DIR right?")

# 2. A summary.json the command wrote.
out = os.path.join(scratch, "two_mass")
run = subprocess.run([stride, "run", os.path.join(root, "manifests", "two_mass.json"), "--set", "/coupling/end=1",
                      "--out", out, "--quiet"], capture_output=True, text=True)
if run.returncode != 0:
    fail(f"stride run two_mass.json: exit {run.returncode}: {run.stderr}")
else:
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    for e in errors("summary", summary):
        fail(f"summary.json: /{'/'.join(map(str, e.absolute_path))}: {e.message}")
    # The schema is not vacuous: a summary without its status, or with a status it does not know, is refused.
    for mistake in ({k: v for k, v in summary.items() if k != "status"}, dict(summary, status="finished")):
        if not errors("summary", mistake):
            fail("summary.schema.json accepts a summary without a known status")


# 3. Mistakes refused by both.
def mistake(kind, path, pointer, value, delete=False):
    """Writes the file at `path` with `value` at `pointer` (or the key deleted) next to it."""
    with open(path) as f:
        doc = json.load(f)
    bad = copy.deepcopy(doc)
    parts = pointer.strip("/").split("/")
    at = bad
    for p in parts[:-1]:
        at = at[int(p)] if isinstance(at, list) else at.setdefault(p, {})
    if delete:
        del at[parts[-1]]
    else:
        at[int(parts[-1]) if isinstance(at, list) else parts[-1]] = value
    if kind == "sweep" and isinstance(bad.get("manifest"), str):  # the copy reads the same manifest
        bad["manifest"] = os.path.join(os.path.dirname(path), bad["manifest"])
    bad_path = os.path.join(scratch, "mistake_" + os.path.basename(path))
    with open(bad_path, "w") as f:
        json.dump(bad, f)
    cmd = [stride, "validate", bad_path] if kind == "manifest" else [stride, "sweep", bad_path, "--jobs", "1"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    what = f"{os.path.relpath(path, root)} with {pointer} " + ("removed" if delete else f"= {json.dumps(value)}")
    if r.returncode != 2 or pointer.rsplit("/", 1)[0] not in r.stderr:
        fail(f"{what}: the reader should refuse it (exit 2 naming the pointer), got exit {r.returncode}: {r.stderr[-400:]}")
    if not errors(kind, bad):
        fail(f"{what}: refused by the reader, accepted by {kind}.schema.json")
    print("refused by both:", what)


two_mass = os.path.join(root, "manifests", "two_mass.json")
crane = os.path.join(root, "manifests", "crane1_rim.json")
# The files the mistakes are made in are valid as shipped: a refusal below is the mistake's.
for path in (two_mass, crane):
    r = subprocess.run([stride, "validate", path], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail(f"stride validate {path}: exit {r.returncode} as shipped: {r.stderr[-400:]}")
sweep = os.path.join(root, "manifests", "sweeps", "crane1_stability.json")
mistake("manifest", two_mass, "/colupling", {})                                 # unknown key at the top
mistake("manifest", two_mass, "/coupling/macro_stepp", 0.1)                     # unknown key inside
mistake("manifest", two_mass, "/coupling/macro_step", True)                     # wrong type
mistake("manifest", two_mass, "/coupling/scheme", "seidel")                     # a value not allowed
mistake("manifest", two_mass, "/coupling/macro_step", -0.1)                     # a step that is not positive
mistake("manifest", two_mass, "/subsystems/fast/fmu", "x.fmu")                  # both plugin and fmu
mistake("manifest", two_mass, "/subsystems", [])                                # wrong type of a section
mistake("manifest", two_mass, "/connections/0/extrapolator", 3)                 # neither name nor object
mistake("manifest", two_mass, "/record/variables", "fast.x")                    # not an array
mistake("manifest", two_mass, "/format", 2)                                     # an unknown format
mistake("manifest", two_mass, "/coupling/end", None, delete=True)               # required key missing
mistake("manifest", crane, "/monitor/coupling_error", "yes")                    # wrong type
mistake("manifest", crane, "/log/level", "verbose")                             # a level not allowed
mistake("manifest", two_mass, "/$schema", 1)                                    # $schema not a string
mistake("sweep", sweep, "/axess", [])                                           # unknown key
mistake("sweep", sweep, "/axes", {})                                            # wrong type
mistake("sweep", sweep, "/axes/0/valuess", [1])                                 # unknown key of an axis
mistake("sweep", sweep, "/usable_error", "small")                               # wrong type
mistake("sweep", sweep, "/manifest", None, delete=True)                         # required key missing

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("all schema checks passed")
