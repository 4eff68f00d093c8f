#!/usr/bin/env python3
"""Every command the documentation shows runs (ctest `tutorials`).

README.md, docs/tutorials/*.md, docs/how-to/*.md, then every other page of docs/, block by block in page
order, in one scratch folder that looks like the checkout: `manifests/`, `examples/` and `tests/`
link to the sources, `build/` to the build tree, `./stride` and `stride` to the built command (the
checkout's `./stride` would build first). A page's later blocks see what its earlier ones wrote,
as a reader's shell would. Two kinds of page are run elsewhere: the plugin tutorial
(docs/plugin-tutorial.md) by ctest out_of_tree on a clean prefix, and the benchmark pages
(their commands time the release build for minutes) by ctest bench_commands, which builds their
programs and runs their Python scripts in smoke mode; here only their listings are checked.
- ```sh blocks run verbatim with bash -e and must exit 0. One line is not run: `./scripts/test`
  (the test suite itself). A block that starts with `mpirun` runs where ctest `sweep` runs its
  mpirun case (stride-mpi built and mpirun found: tests/CMakeLists.txt sets STRIDE_MPIRUN), and
  is skipped with the reason elsewhere.
- A ```text block right after a ```sh block is the output the page shows: each of its lines must
  be a line the commands printed (stdout or stderr, spaces at the ends aside), `...` standing
  for any text within a line; a line of only `...` marks lines left out.
- ```python blocks run with the build's module, as ctest `python` runs (PYTHONPATH=<build>/python,
  MPLBACKEND=Agg): an interpreter session (`>>>`) as a doctest, so what it prints must be what
  the page shows (`...` for any text), other blocks as a script.
- A plain ``` block with a `$ ` prompt is a command listing that nothing would run: refused.
At the end, the files the pages say the commands wrote must exist.

Usage: check_tutorials.py SOURCE_DIR BUILD_DIR STRIDE_EXE SCRATCH_DIR
"""
import os
import re
import shutil
import subprocess
import sys
import textwrap

NOT_RUN = {"./scripts/test": "the whole test suite, which runs this test"}
BENCH = "a benchmark: ctest bench_commands builds its programs and runs its Python scripts in smoke mode"
RUN_ELSEWHERE = {"plugin-tutorial.md": "ctest out_of_tree runs it on a clean prefix",
                 "benchmark.md": BENCH,
                 "two_mass_fr.md": BENCH,
                 "papers/kart.md": BENCH}
# A fenced block: its indentation (a block inside a list item is indented), language and body.
FENCE = re.compile(r"^( *)```(\w*)\n(.*?)^\1```[ \t]*$", re.S | re.M)
WRITTEN = ("out/two_mass/results.csv", "out/two_mass/summary.json", "out/two_mass/log.txt", "out/two_mass.png",
           "out/two_mass_gs/summary.json", "out/two_mass_multirate/summary.json", "out/two_mass_order2/summary.json",
           "out/sweeps/crane1_stability/sweep.csv", "out/sweeps/crane1_stability/stability.md",
           "out/fmu_two_mass/results.csv", "cylinder.fmu", "out/crane1_cylinder_fmu/results.csv",
           "out/two_mass_ssp/results.csv", "two_mass.ssp", "crane.ssp", "out/crane1_stability.png")


def make_scratch(root, build, exe, scratch):
    """The scratch folder, and the environment its commands run in."""
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(os.path.join(scratch, "bin"))
    links = [("manifests", os.path.join(root, "manifests")), ("examples", os.path.join(root, "examples")),
             ("tests", os.path.join(root, "tests")), ("build", build), ("stride", exe), ("bin/stride", exe)]
    if os.environ.get("STRIDE_MPIRUN"):
        links.append(("bin/mpirun", os.environ["STRIDE_MPIRUN"]))  # the mpirun CMake found
    for name, target in links:
        os.symlink(target, os.path.join(scratch, name))
    python_path = os.path.join(build, "python")
    if os.environ.get("PYTHONPATH"):
        python_path += ":" + os.environ["PYTHONPATH"]
    return dict(os.environ, PATH=os.path.join(scratch, "bin") + ":" + os.environ.get("PATH", ""),
                PYTHONPATH=python_path, MPLBACKEND="Agg",
                # Containers run the tests as root, which Open MPI refuses unless told.
                OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def blocks(text):
    """The fenced blocks of a page in order: (language, body without the list's indentation)."""
    return [(lang, textwrap.dedent(body)) for _, lang, body in FENCE.findall(text)]


def shell_script(block, name):
    """The lines of a ```sh block that run (all but NOT_RUN, each named when left out)."""
    lines = []
    for line in block.splitlines():
        command = line.split("#")[0].strip() if line.lstrip().startswith("./scripts/") else line.strip()
        if command in NOT_RUN:
            print(f"{name}: not run: {command} ({NOT_RUN[command]})")
            continue
        lines.append(line)
    return "\n".join(lines)


def why_not_run(script):
    """Why a block cannot run on this build, or None."""
    if script.lstrip().startswith("mpirun") and not os.environ.get("STRIDE_MPIRUN"):
        return "MPI was not built (no stride-mpi, or no mpirun)"
    return None


def missing_lines(shown, printed):
    """The lines of a shown output that the commands did not print."""
    lines = [line.strip() for line in printed.splitlines()]
    missing = []
    for want in shown.splitlines():
        want = want.strip()
        if want in ("", "..."):
            continue
        pattern = re.compile(".*".join(re.escape(part) for part in want.split("...")))
        if not any(pattern.fullmatch(line) for line in lines):
            missing.append(want)
    return missing


def run(command, scratch, env):
    """Runs a command in the scratch folder: (exit code, stdout and stderr as one text)."""
    r = subprocess.run(command, cwd=scratch, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=300)
    return r.returncode, r.stdout


def run_python(block, name, scratch, env):
    """Runs a ```python block: a session as a doctest (its output checked), else as a script."""
    if not re.search(r"^>>> ", block, re.M):
        return run([sys.executable, "-c", block], scratch, env)
    # doctest reads a session from a text file; the file's name names the block in its report.
    session = os.path.join(scratch, re.sub(r"\W+", "_", name) + ".txt")
    with open(session, "w") as f:
        f.write(block)
    return run([sys.executable, "-m", "doctest", "-o", "ELLIPSIS", session], scratch, env)


def check_page(path, page, scratch, env):
    """Runs the blocks of one page (`page`: its name under docs/) in order; returns the number of failures."""
    elsewhere = RUN_ELSEWHERE.get(page)
    failures = 0
    printed = None  # the output of the last ```sh block, for a ```text block after it
    for k, (lang, body) in enumerate(blocks(open(path).read())):
        name = f"{page} block {k}"
        if lang == "text" and printed is not None:
            missing = missing_lines(body, printed)
            if missing:
                failures += 1
                print(f"{name}: FAILED: the commands did not print\n  " + "\n  ".join(missing) +
                      f"\n--- they printed:\n{printed[-3000:]}")
            else:
                print(f"{name}: printed as shown")
        printed = None
        if lang == "" and re.search(r"^\$ ", body, re.M):
            failures += 1
            print(f"{name}: FAILED: a command listing ($ prompt) in a plain block, which is not run: "
                  "write the commands in a ```sh block, the output in a ```text block after it")
        if lang not in ("sh", "python"):
            continue
        if elsewhere:
            print(f"{name}: not run here: {elsewhere}")
            continue
        script = shell_script(body, name) if lang == "sh" else body
        reason = why_not_run(script)
        if reason:
            print(f"{name}: skipped: {reason}")
            continue
        code, out = run(["bash", "-e", "-c", script], scratch, env) if lang == "sh" else \
            run_python(body, name, scratch, env)
        print(f"{name}: " + ("ok" if code == 0 else f"FAILED (exit {code})"))
        if code != 0:
            failures += 1
            print((script + "\n--- output:\n" if lang == "sh" else "") + out[-3000:])  # doctest names the line
        printed = out if lang == "sh" else None
    return failures


def main():
    root, build, exe, scratch = sys.argv[1:5]
    env = make_scratch(root, build, exe, scratch)
    docs = os.path.join(root, "docs")
    pages = sorted(os.path.relpath(os.path.join(d, f), docs) for d, _, files in os.walk(docs) for f in files
                   if f.endswith(".md"))
    first = ("tutorials/", "how-to/")  # the order a reader takes; later pages may use what they wrote
    pages.sort(key=lambda p: next((k for k, f in enumerate(first) if p.startswith(f)), len(first)))
    failures = check_page(os.path.join(root, "README.md"), "README.md", scratch, env)
    for page in pages:
        failures += check_page(os.path.join(docs, page), page, scratch, env)
    for path in WRITTEN:
        if not os.path.exists(os.path.join(scratch, path)):
            failures += 1
            print(f"FAIL: {path} was not written")
    if failures:
        sys.exit(1)
    print("every command of the documentation ran (benchmark pages: ctest bench_commands)")


if __name__ == "__main__":
    main()
