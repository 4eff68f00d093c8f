"""Plots of Stride results with matplotlib (the Agg backend when no display is set, so it works
headless; a figure is returned and, with `file`, written).

    from stride import plot
    plot.results(r, ["fast.x", "slow.x"], file="two_mass.png")
    plot.sweep(s, file="error.png")
"""

import os

import matplotlib

if not os.environ.get("DISPLAY") and not os.environ.get("MPLBACKEND"):
    matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def results(result, columns=None, file=None, title=None):
    """Recorded columns of a stride.Result against time, one axis per column (default: all)."""
    columns = list(result.columns if columns is None else ([columns] if isinstance(columns, str) else columns))
    if not columns:
        raise ValueError(f"no columns to plot in {result.output}")
    for c in columns:
        if c not in result:
            raise KeyError(f"no column {c!r} in {result.output}/results.csv; the columns are {result.columns}")
    fig, axes = plt.subplots(len(columns), 1, sharex=True, squeeze=False, figsize=(8, 1.2 + 1.8 * len(columns)))
    for ax, c in zip(axes[:, 0], columns):
        ax.plot(result.time, result[c], lw=1)
        ax.set_ylabel(c)
        ax.grid(True, alpha=0.3)
    axes[-1, 0].set_xlabel("time [s]")
    fig.suptitle(title or f"{result.output} ({result.status})")
    fig.tight_layout()
    if file:
        fig.savefig(file, dpi=100)
    return fig


def sweep(sweep_result, x=None, y="error", file=None, title=None):
    """Error against the step axis of a stride.SweepResult, one line per configuration (the
    other axes' labels), runs that reached their end only (completed, or inaccurate: their own
    accuracy bounds passed, drawn with open markers); log-log like `stride sweep`'s error.png."""
    table = sweep_result.table
    fixed = {"run", "status", "end_time_reached", "error", "energy_residual_J", "coupling_error_max_relative",
             "coupling_error_rms_relative", "energy_residual_relative", "wall_time_s", "message"}
    axes_names = [k for k in table if k not in fixed]
    if not axes_names:
        raise ValueError(f"{sweep_result.output}/sweep.csv has no axis columns")
    x = x or axes_names[0]
    if x not in table or y not in table:
        raise KeyError(f"sweep.csv has no column {x if x not in table else y!r}; the columns are {list(table)}")
    xs = np.array([float(v) for v in table[x]])
    ys = np.asarray(table[y], dtype=float)
    others = [k for k in axes_names if k != x]
    configs = {}
    for i, row in enumerate(sweep_result.rows):
        if row["status"] not in ("completed", "inaccurate") or not np.isfinite(ys[i]):
            continue
        label = ", ".join(f"{k} = {row[k]}" for k in others) or y
        configs.setdefault(label, []).append((xs[i], ys[i], row["status"] == "inaccurate"))
    fig, ax = plt.subplots(figsize=(8, 5))
    for label, pts in configs.items():
        pts.sort()
        line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", ms=3, label=label)
        bad = [p for p in pts if p[2]]
        if bad:
            ax.plot([p[0] for p in bad], [p[1] for p in bad], "o", ms=7, mfc="none", color=line.get_color())
    positive = all(p[1] > 0 for pts in configs.values() for p in pts)
    if configs and positive:
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.grid(True, which="both", alpha=0.3)
    if configs:
        ax.legend(fontsize=7)
    ax.set_title(title or sweep_result.output)
    fig.tight_layout()
    if file:
        fig.savefig(file, dpi=100)
    return fig
