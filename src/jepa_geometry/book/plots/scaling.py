"""Chapter 9: toward the papers' scale (the claims' effects and the premises against
training FLOPs)."""

from __future__ import annotations

import textwrap
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from jepa_geometry.book.plots.shared import PAGE_WIDTH, legend_below
from jepa_geometry.book.style import NEUTRAL, label, task_colour


def _scaling_panels(n: int) -> tuple[plt.Figure, np.ndarray]:
    """``n`` panels in rows of two sharing the FLOPs axis, labelled under each column's lowest
    panel (with an odd ``n`` the panel above the hidden last one, whose ticks ``sharex`` would
    otherwise hide)."""
    cols = min(n, 2)
    rows = -(-n // cols)
    fig, axes = plt.subplots(
        rows, cols, figsize=(PAGE_WIDTH, 2.3 * rows + 0.6), squeeze=False, sharex=True
    )
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    for ax in _lowest(axes, n):  # above a hidden panel too, not only on the last row
        ax.tick_params(labelbottom=True)
        ax.set_xlabel("training FLOPs per model", fontsize=8)
    return fig, axes


def _lowest(axes: np.ndarray, n: int) -> list[plt.Axes]:
    """The lowest of the first ``n`` panels in each column (row-major order)."""
    rows, cols = axes.shape
    return [axes[max(r for r in range(rows) if r * cols + c < n), c] for c in range(min(n, cols))]


TWO_POINTS = "line through two points, not a trend"
"""The legend's words for a segment drawn through two points: two points fit no trend."""

MARGIN = 0.25
"""Decades of FLOPs left on each side of the points when the axis is zoomed to them."""


def _zoom_to_points(ax: plt.Axes, flops: pd.Series) -> tuple[float, float]:
    """The FLOPs axis (log scale) zoomed to ``flops`` with :data:`MARGIN` decades each side
    (the papers' budgets, decades beyond, would leave every point in a sliver at the left)."""
    logs = np.log10(flops[flops > 0].astype(float))
    lo, hi = 10 ** (logs.min() - MARGIN), 10 ** (logs.max() + MARGIN)
    ax.set_xscale("log")
    ax.set_xlim(lo, hi)
    return lo, hi


def _paper_budgets(
    ax: plt.Axes, budgets: pd.DataFrame, tasks: list[str], span: tuple[float, float]
) -> None:
    """The papers' training budget of each of ``tasks``: a dotted line of the task's colour
    where it lies within ``span`` (the zoomed FLOPs axis); beyond it, a small arrow of the
    task's colour just outside that edge of the axes (:func:`_budget_handles` says in the
    legend where it lies: words in every panel covered the data)."""
    lo, hi = span
    for i, b in enumerate(b for b in budgets.itertuples() if b.task in tasks):
        if lo <= b.flops <= hi:
            ax.axvline(b.flops, color=task_colour(b.task), ls=":", lw=1)
            continue
        right = b.flops > hi
        ax.annotate(
            "→" if right else "←",
            xy=(1.0 if right else 0.0, 1.0 - 0.08 * i),
            xycoords="axes fraction",
            ha="left" if right else "right",
            va="top",
            fontsize=9,
            color=task_colour(b.task),
            annotation_clip=False,
        )


def _budget_handles(budgets: pd.DataFrame, tasks: list[str], flops: pd.Series) -> list:
    """Legend entries for the papers' budgets of ``tasks`` beyond every point (``flops``):
    the arrow of :func:`_paper_budgets` and how many decades beyond the largest point."""
    largest = float(flops[flops > 0].max())
    return [
        plt.Line2D(
            [],
            [],
            color=task_colour(b.task),
            marker="$→$",
            ls="",
            label=f"{label(b.task)}: papers' budget {b.flops:.0e} FLOPs, "
            f"{np.log10(b.flops / largest):.1f} decades beyond",
        )
        for b in budgets.itertuples()
        if b.task in tasks and b.flops > largest
    ]


def _columns(labels: list[str]) -> int:
    """Legend columns that keep the legend within the page's width (:data:`PAGE_WIDTH`): four
    short labels to a row, one long one (a papers' budget, a note) beside another at most."""
    return 1 if not labels else min(len(labels), 2 if max(map(len, labels)) > 30 else 4)


def _two_point_handle() -> plt.Line2D:
    return plt.Line2D([], [], color=NEUTRAL, lw=1, label=TWO_POINTS)


def _interval_line(ax: plt.Axes, g: pd.DataFrame, y: str, **style: Any) -> None:
    """``g[y]`` against training FLOPs with its interval ``[low, high]`` as error bars."""
    err = [g[y] - g["low"], g["high"] - g[y]]
    ax.errorbar(g["flops"], g[y], yerr=err, ms=4, capsize=2, **style)


def plot_scaling_effects(
    effects: pd.DataFrame, claims: list[str], budgets: pd.DataFrame
) -> plt.Figure:
    """One panel per claim: our effect (dot, 95 % interval bar) against training FLOPs (log
    scale), one colour per task; open squares at the higher-resolution point; the paper's
    effect as a dashed line of the task's colour; the verdict's minimum effect in the claim's
    direction as a grey dotted line, zero as a thin line; the papers' training budget as a
    dotted vertical line per task.

    ``effects`` is :func:`jepa_geometry.extensions.scaling.results.claim_effects` output,
    ``budgets`` one :func:`~jepa_geometry.extensions.scaling.results.paper_budget` row per task.
    """
    tasks = list(dict.fromkeys(effects["task"]))
    fig, axes = _scaling_panels(len(claims))
    two_points = False
    for ax, claim in zip(axes.flat, claims, strict=False):
        sub = effects[effects["claim"] == claim]
        span = _zoom_to_points(ax, sub["flops"])
        for task, grp in sub.groupby("task", sort=False):
            for res, marker, mfc in ((1.0, "o", None), (None, "s", "none")):
                g = grp[grp["image"] == 1.0] if res else grp[grp["image"] != 1.0]
                if g.empty:
                    continue
                shown = label(task) if res else None
                two_points |= bool(res) and len(g) == 2
                style = {"fmt": marker + ("-" if res else ""), "mfc": mfc, "label": shown}
                colour = task_colour(task)
                _interval_line(ax, g.sort_values("flops"), "effect", color=colour, **style)
            paper = grp["paper_effect"].dropna()
            if not paper.empty:
                ax.axhline(float(paper.iloc[0]), color=task_colour(task), ls="--", lw=1)
        d, thr, m = (float(sub[c].iloc[0]) for c in ("direction", "threshold", "min_effect"))
        ax.axhline(d * (thr + m), color="0.5", ls=":", lw=1)
        ax.axhline(0.0, color="0.7", lw=0.6)
        _paper_budgets(ax, budgets, tasks, span)
        ax.set_title(textwrap.fill(claim, 48), fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in axes[:, 0]:
        ax.set_ylabel("effect (a - b)", fontsize=8)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    if handles and two_points:
        handles, labels = [*handles, _two_point_handle()], [*labels, TWO_POINTS]
    beyond = _budget_handles(budgets, tasks, effects["flops"]) if handles else []
    handles, labels = [*handles, *beyond], [*labels, *(h.get_label() for h in beyond)]
    if handles:
        legend_below(fig, handles, labels, ncol=_columns(labels), fontsize=8)
    else:
        fig.tight_layout()
    return fig


def plot_scaling_premises(premises: pd.DataFrame, budgets: pd.DataFrame) -> plt.Figure:
    """One panel per premise measure: each (task, arm)'s mean over seeds (dot, range bar over
    seeds) against training FLOPs (log scale), one colour per task, one marker per arm; the
    measure's reference (the isotropic share 8 / D, the bound κ, zero) as a grey dotted line;
    the papers' training budget as a dotted vertical line per task.

    ``premises`` is :func:`jepa_geometry.extensions.scaling.results.premise_table` output.
    """
    measures = list(dict.fromkeys(premises["measure"]))
    tasks = list(dict.fromkeys(premises["task"]))
    arms = list(dict.fromkeys(premises["arm"]))
    markers = dict(zip(arms, "o^sDvP<>", strict=False))
    fig, axes = _scaling_panels(len(measures))
    two_points = False
    for ax, measure in zip(axes.flat, measures, strict=False):
        sub = premises[premises["measure"] == measure]
        span = _zoom_to_points(ax, sub["flops"])
        for (task, arm), g in sub.groupby(["task", "arm"], sort=False):
            two_points |= g["flops"].nunique() == 2
            style = {"fmt": markers[arm] + "-", "color": task_colour(task), "lw": 0.8}
            _interval_line(ax, g.sort_values("flops"), "value", **style)
        ref = sub["reference"].dropna()
        if not ref.empty:
            ax.axhline(float(ref.mean()), color="0.5", ls=":", lw=1)
        _paper_budgets(ax, budgets, tasks, span)
        ax.set_title(measure, fontsize=8)
        ax.tick_params(labelsize=7)
    handles = [
        plt.Line2D([], [], color=task_colour(t), marker="o", ls="", label=label(t)) for t in tasks
    ] + [plt.Line2D([], [], color=NEUTRAL, marker=markers[a], ls="", label=label(a)) for a in arms]
    if two_points:
        handles.append(_two_point_handle())
    handles += _budget_handles(budgets, tasks, premises["flops"])
    labels = [h.get_label() for h in handles]
    legend_below(fig, handles, labels, ncol=_columns(labels), fontsize=8)
    return fig
