"""Smoke mode of the benchmark scripts (ctest bench_commands, scripts/check-bench-commands): with
STRIDE_BENCH_SMOKE set to anything but empty or 0, each script takes its usual arguments and runs
its usual code path (starts `stride`, reads summary.json, prints its tables and ratios) with the
least work: one repeat, the shortest runs, the fewest sweep points. Its figures then mean nothing;
a broken benchmark still fails. Unset, nothing changes."""
import os

VARIABLE = "STRIDE_BENCH_SMOKE"
SMOKE = os.environ.get(VARIABLE, "") not in ("", "0")
