"""Figure style and the one place figures are saved.

Every figure of the book goes through :func:`savefig` with a stable id (``scale_fig3``,
``aniso_fig1``, ``ours_...``), so regenerated figures land at a predictable path,
``data/figures/<profile>/<fig_id>.png``, next to the other artifacts of the run.
"""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from jepa_geometry.artifacts import atomic_path, data_root

_FIG_ID = re.compile(r"^[a-z][a-z0-9_]*$")


def set_theme(inline: bool = False) -> None:
    """The book's seaborn style: white grid, readable at print width.

    With ``inline=True`` inside a Jupyter kernel, figures are also shown inline (even when
    ``MPLBACKEND=Agg`` is set in the environment the kernel inherited).
    """
    if inline:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is not None and shell.__class__.__name__ == "ZMQInteractiveShell":
            shell.run_line_magic("matplotlib", "inline")
    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind")
    plt.rcParams.update({"figure.dpi": 110, "savefig.dpi": 150, "figure.figsize": (6.4, 4.0)})


def figure_path(fig_id: str, profile: str) -> Path:
    if not _FIG_ID.match(fig_id):
        raise ValueError(f"bad figure id {fig_id!r}: lowercase snake_case, e.g. 'scale_fig3'")
    return data_root() / "figures" / profile / f"{fig_id}.png"


def savefig(fig: plt.Figure, fig_id: str, profile: str) -> Path:
    """Save ``fig`` atomically as ``data/figures/<profile>/<fig_id>.png`` and return the path."""
    path = figure_path(fig_id, profile)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", bbox_inches="tight")
    return path


def plot_success_cells(table, protocol: str, arms: list[str]) -> plt.Figure:
    """Success (95 % CI bars) per solver cell for each arm, one panel per solver.

    ``table`` is :func:`jepa_geometry.study.grid.success_table` output; the random floor
    (``arm == "random"``) is drawn as a grey band when present.
    """
    t = table[table["protocol"] == protocol]
    solvers = [s for s in ("cem", "icem", "mppi") if s in set(t["solver"])]
    widths = [len(set(t[t.solver == s].budget)) for s in solvers]
    fig, axes = plt.subplots(
        1, len(solvers), figsize=(3.2 + 1.1 * sum(widths), 3.8), sharey=True,
        gridspec_kw={"width_ratios": widths}, squeeze=False,
    )  # fmt: skip
    palette = dict(zip(arms, sns.color_palette("colorblind", len(arms)), strict=True))
    for ax, solver in zip(axes[0], solvers, strict=True):
        s = t[t["solver"] == solver]
        budgets = sorted(set(s["budget"]))
        x = {b: i for i, b in enumerate(budgets)}
        rnd = s[s["arm"] == "random"]
        if not rnd.empty:
            ax.axhspan(100 * rnd.low.min(), 100 * rnd.high.max(), color="0.85", label="random")
        for j, m in enumerate(arms):
            r = s[s["arm"] == m].sort_values("budget")
            if r.empty:
                continue
            off = (j - (len(arms) - 1) / 2) * 0.12
            xs = [x[b] + off for b in r.budget]
            err = [100 * (r.rate - r.low), 100 * (r.high - r.rate)]
            ax.errorbar(xs, 100 * r.rate, yerr=err, fmt="o-", ms=4, lw=1, capsize=2,
                        color=palette[m], label=m)  # fmt: skip
        ax.set_xticks(range(len(budgets)), budgets)
        ax.set_title(solver.upper() if solver != "icem" else "iCEM")
        ax.set_xlabel("budget tier")
    axes[0, 0].set_ylabel("success (%)")
    axes[0, -1].legend(fontsize=8, loc="lower left", frameon=True)
    fig.tight_layout()
    return fig


def plot_paired(paired, protocol: str, arms: list[str]) -> plt.Figure:
    """Forest plot: each arm minus the baseline per cell, with paired 95 % CIs."""
    t = paired[paired["protocol"] == protocol].copy()
    t["cell"] = t["solver"].str.upper().str.replace("ICEM", "iCEM") + " " + t["budget"]
    cells = list(dict.fromkeys(t.sort_values(["solver", "budget"])["cell"]))
    arms = [m for m in arms if m in set(t["arm"])]
    fig, ax = plt.subplots(figsize=(6.4, 0.35 * len(cells) * len(arms) / 2 + 1.5))
    palette = dict(zip(arms, sns.color_palette("colorblind", len(arms)), strict=True))
    for j, m in enumerate(arms):
        r = t[t["arm"] == m].set_index("cell").loc[[c for c in cells if c in set(t.cell)]]
        y = [cells.index(c) + (j - (len(arms) - 1) / 2) * 0.18 for c in r.index]
        d = 100 * r["diff"]
        err = [d - 100 * r.low, 100 * r.high - d]
        ax.errorbar(d, y, xerr=err, fmt="o", ms=4, capsize=2, color=palette[m], label=f"{m} - lewm")
    ax.axvline(0, color="k", lw=0.8)
    ax.set_yticks(range(len(cells)), cells)
    ax.invert_yaxis()
    ax.set_xlabel("success difference vs lewm (percentage points)")
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    return fig


def quadratic_form_grid(metric, center, half_width: float, n: int = 300):
    """``(X, Y, C)`` with ``C = (p - c)ᵀ M (p - c)`` on an n x n grid of half-width ``half_width``
    around ``center``: the level sets of a quadratic planning cost, for ``plt.contour``."""
    import numpy as np

    axis = np.linspace(-half_width, half_width, n)
    x, y = np.meshgrid(axis + center[0], axis + center[1])
    p = np.stack([x - center[0], y - center[1]], -1)
    return x, y, np.einsum("...i,ij,...j->...", p, np.asarray(metric), p)


def plot_lambda_spectra(lambda_spectra: dict) -> plt.Figure:
    """AnisoWM Figure 5's analogue: the final learned ΛReg target variances of every
    (arm, seed), sorted, beside the first model's sorted spectrum over training (a heat map).

    ``lambda_spectra`` is :attr:`jepa_geometry.analysis.measurements.Geometry.lambda_spectra`.
    """
    if not lambda_spectra:
        raise ValueError("no ΛReg spectra: none of the measured arms has a ΛReg term")
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
    for (m, s), sp in sorted(lambda_spectra.items()):
        axes[0].plot(
            np.arange(1, len(sp["final_sorted"]) + 1), sp["final_sorted"], label=f"{m} seed {s}"
        )
    axes[0].axhline(1.0, color="0.5", lw=0.8, ls="--")
    axes[0].set(
        xlabel="coordinate (sorted)", ylabel="target variance $v_i$", title="final learned spectrum"
    )
    axes[0].legend(fontsize=7)
    (m, s), sp = sorted(lambda_spectra.items())[0]
    v = np.sort(sp["v"], axis=1)[:, ::-1]
    im = axes[1].imshow(v.T, aspect="auto", cmap="viridis", origin="upper",
                        extent=[sp["steps"][0], sp["steps"][-1], v.shape[1], 0])  # fmt: skip
    fig.colorbar(im, ax=axes[1], label="$v_i$ (sorted)")
    axes[1].set(xlabel="training step", ylabel="coordinate (sorted)",
                title=f"spectrum over training ({m}, seed {s})")  # fmt: skip
    fig.tight_layout()
    return fig
