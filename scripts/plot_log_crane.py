#!/usr/bin/env python3
"""Fig. 1 of Peiret's nonsmooth interface model abstract for the log crane: the velocity and force
of the first actuator (the lift cylinder) with the interface model at several multibody steps
h_M, h_S = 0.2 ms, against the small-step reference. Runs the manifests with build/bin/stride
(run from the repository root) and writes docs/log_crane_fig1.png:

    python3 scripts/plot_log_crane.py [--steps 0.001 0.004 0.008 0.016] [--out docs/log_crane_fig1.png]

Needs matplotlib (Debian python3-matplotlib, scripts/debian-packages).
"""
import argparse
import csv
import os
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def run(manifest, h_M, out):
    cmd = ["build/bin/stride", "run", manifest, "--out", out, "--quiet", "--set", f"/variables/h_M={h_M}"]
    subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = list(csv.DictReader(open(os.path.join(out, "results.csv"))))
    t = [float(r["time"]) for r in rows]
    return t, [float(r["crane.s_dot.s1_dot"]) for r in rows], [float(r["cylinder1.f_h"]) / 1e3 for r in rows]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=float, nargs="+", default=[0.001, 0.004, 0.008, 0.016])
    ap.add_argument("--reference", type=float, default=0.0005, help="h_M of the direct ZOH reference (s)")
    ap.add_argument("--out", default="docs/log_crane_fig1.png")
    args = ap.parse_args()
    fig, (ax_v, ax_f) = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True)
    t, v, f = run("manifests/log_crane/log_crane_zoh.json", args.reference, "out/log_crane_fig1/reference")
    ax_v.plot(t, v, "k", lw=2.5, alpha=0.35, label=f"reference (direct ZOH, h_M = {args.reference * 1e3:g} ms)")
    ax_f.plot(t, f, "k", lw=2.5, alpha=0.35)
    for h in args.steps:
        t, v, f = run("manifests/log_crane/log_crane_im.json", h, f"out/log_crane_fig1/im_{h * 1e3:g}ms")
        ax_v.plot(t, v, lw=1, label=f"interface model, h_M = {h * 1e3:g} ms")
        ax_f.plot(t, f, lw=1)
    ax_v.set_ylabel("actuator 1 velocity (m/s)")
    ax_f.set_ylabel("actuator 1 force (kN)")
    ax_f.set_xlabel("time (s)")
    ax_v.legend(fontsize=8, loc="upper right")
    ax_v.set_title("Log crane: lift cylinder with the nonsmooth interface model, h_S = 0.2 ms", fontsize=10)
    for ax in (ax_v, ax_f):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print("wrote", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
