#!/usr/bin/env python3
"""Every shell command the tutorials show runs (ctest `tutorials`).

The ```sh blocks of docs/tutorials/*.md run verbatim, block by block in page order, with bash
-e in a scratch folder that looks like the checkout: `manifests/` and `examples/` link to the
sources, `build/` to the build tree, `./stride` and `stride` to the built command (the checkout's
`./stride` would build first). The plugin tutorial (docs/plugin-tutorial.md) is run by the
out_of_tree test. One line is not run: `./scripts/test` (the test suite itself).
Each block must exit 0; a tutorial's output files are checked to exist where the page says.

Usage: check_tutorials.py SOURCE_DIR BUILD_DIR STRIDE_EXE SCRATCH_DIR
"""
import os
import re
import shutil
import subprocess
import sys

root, build, exe, scratch = sys.argv[1:5]
NOT_RUN = {"./scripts/test": "the whole test suite, which runs this test"}

shutil.rmtree(scratch, ignore_errors=True)
os.makedirs(os.path.join(scratch, "bin"))
for name, target in (("manifests", os.path.join(root, "manifests")), ("examples", os.path.join(root, "examples")),
                     ("build", build), ("stride", exe), ("bin/stride", exe)):
    os.symlink(target, os.path.join(scratch, name))
env = dict(os.environ, PATH=os.path.join(scratch, "bin") + ":" + os.environ.get("PATH", ""), MPLBACKEND="Agg")

failures = 0
folder = os.path.join(root, "docs", "tutorials")
for page in sorted(os.listdir(folder)):
    if not page.endswith(".md"):
        continue
    text = open(os.path.join(folder, page)).read()
    for k, block in enumerate(re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M)):
        lines = []
        for line in block.splitlines():
            command = line.split("#")[0].strip() if line.lstrip().startswith("./scripts/") else line.strip()
            if command in NOT_RUN:
                print(f"{page} block {k}: not run: {command} ({NOT_RUN[command]})")
                continue
            lines.append(line)
        script = "\n".join(lines)
        r = subprocess.run(["bash", "-e", "-c", script], cwd=scratch, env=env, capture_output=True, text=True,
                           timeout=300)
        status = "ok" if r.returncode == 0 else f"FAILED (exit {r.returncode})"
        print(f"{page} block {k}: {status}")
        if r.returncode != 0:
            failures += 1
            print(script, "\n--- stdout:\n", r.stdout[-2000:], "\n--- stderr:\n", r.stderr[-2000:])

# What the pages say the commands wrote.
for path in ("out/two_mass/results.csv", "out/two_mass/summary.json", "out/two_mass/log.txt", "out/two_mass.png",
             "out/two_mass_gs/summary.json", "out/two_mass_multirate/summary.json", "out/two_mass_order2/summary.json",
             "out/sweeps/crane1_stability/sweep.csv", "out/sweeps/crane1_stability/stability.md",
             "out/fmu_two_mass/results.csv"):
    if not os.path.exists(os.path.join(scratch, path)):
        failures += 1
        print(f"FAIL: {path} was not written")
if failures:
    sys.exit(1)
print("every tutorial command ran")
