"""Chapter 6: planning success per solver cell, and each arm against the baseline."""

from __future__ import annotations

import matplotlib.pyplot as plt

from jepa_geometry.book.plots.shared import PAGE_WIDTH, legend_below
from jepa_geometry.book.style import arm_colour, label
from jepa_geometry.planning.solver import STUDY_SOLVERS
from jepa_geometry.study.spec import BASELINE


def plot_success_cells(table, protocol: str, arms: list[str]) -> plt.Figure:
    """Success (95 % CI bars) per solver cell for each arm, one panel per solver.

    ``table`` is :func:`jepa_geometry.study.cells.success_table` output; the random floor
    (``arm == "random"``) is drawn as a translucent band of its colour when present.
    """
    t = table[table["protocol"] == protocol]
    solvers = [s for s in STUDY_SOLVERS if s in set(t["solver"])]
    fig, axes = plt.subplots(
        len(solvers),
        1,
        figsize=(PAGE_WIDTH, 2.4 * len(solvers) + 0.8),
        sharey=True,
        squeeze=False,
    )
    for ax, solver in zip(axes[:, 0], solvers, strict=True):
        s = t[t["solver"] == solver]
        budgets = sorted(set(s["budget"]))
        x = {b: i for i, b in enumerate(budgets)}
        rnd = s[s["arm"] == "random"]
        if not rnd.empty:
            band = (100 * rnd.low.min(), 100 * rnd.high.max())
            ax.axhspan(*band, color=arm_colour("random"), alpha=0.35, lw=0, label=label("random"))
        for j, m in enumerate(arms):
            r = s[s["arm"] == m].sort_values("budget")
            if r.empty:
                continue
            off = (j - (len(arms) - 1) / 2) * 0.12
            xs = [x[b] + off for b in r.budget]
            err = [100 * (r.rate - r.low), 100 * (r.high - r.rate)]
            ax.errorbar(
                xs,
                100 * r.rate,
                yerr=err,
                fmt="o-",
                ms=4,
                lw=1,
                capsize=2,
                color=arm_colour(m),
                label=label(m),
            )
        ax.set_xticks(range(len(budgets)), budgets)
        ax.set_title(label(solver), fontsize=10)
        ax.set_ylabel("success (%)")
    axes[-1, 0].set_xlabel("budget tier")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    legend_below(fig, handles, labels, ncol=min(len(labels), 4), fontsize=8)
    return fig


def plot_paired(paired, protocol: str, arms: list[str]) -> plt.Figure:
    """Forest plot: each arm minus the baseline per cell, with paired 95 % CIs."""
    t = paired[paired["protocol"] == protocol].copy()
    t["cell"] = t["solver"].map(label) + " " + t["budget"]
    order = {s: i for i, s in enumerate(STUDY_SOLVERS)}
    t = t.sort_values(["solver", "budget"], key=lambda c: c.map(order) if c.name == "solver" else c)
    cells = list(dict.fromkeys(t["cell"]))
    arms = [m for m in arms if m in set(t["arm"])]
    fig, ax = plt.subplots(figsize=(6.4, 0.35 * len(cells) * len(arms) / 2 + 1.5))
    base = label(BASELINE)
    for j, m in enumerate(arms):
        r = t[t["arm"] == m].set_index("cell").loc[[c for c in cells if c in set(t.cell)]]
        y = [cells.index(c) + (j - (len(arms) - 1) / 2) * 0.18 for c in r.index]
        d = 100 * r["diff"]
        err = [d - 100 * r.low, 100 * r.high - d]
        style = {"color": arm_colour(m), "label": f"{label(m)} − {base}"}
        ax.errorbar(d, y, xerr=err, fmt="o", ms=4, capsize=2, **style)
    ax.axvline(0, color="k", lw=0.8)
    ax.set_yticks(range(len(cells)), cells)
    ax.invert_yaxis()
    ax.set_xlabel(f"success difference vs {base} (percentage points)")
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    return fig
