"""The papers' headline claims at a glance: ours beside the papers', one panel per claim (the
landing page's teaser and chapter 8's first figure)."""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.lines import Line2D

from jepa_geometry.book.plots.shared import PAGE_WIDTH, legend_below
from jepa_geometry.book.tables.shared import VERDICT_COLOURS
from jepa_geometry.verdict.rule import VERDICTS

EDGE = "0.2"
"""The outline of our markers and the colour of our intervals: the label's pale fill alone
would vanish on the white grid."""


def plot_primary(primary: pd.DataFrame) -> plt.Figure:
    """One panel per headline claim (:func:`~jepa_geometry.verdict.across.primary_table` rows),
    a row per task: our effect with its 95 % interval, the marker filled with its label's
    colour (the verdict tables' colours); the paper's difference as a black diamond, hollow
    where it comes from another setting than ours; the claim's bound (its minimum effect in
    its direction) dashed, zero solid. Every panel keeps its own x scale (pp of success, R²,
    ordering agreement)."""
    claims = list(dict.fromkeys(primary["claim"]))
    ncol = 2 if len(claims) > 1 else 1
    nrow = -(-len(claims) // ncol)
    rows_per = [int((primary["claim"] == c).sum()) for c in claims]
    height = sum(0.32 * max(rows_per[i : i + ncol]) + 0.9 for i in range(0, len(claims), ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(PAGE_WIDTH, height + 0.6), squeeze=False)
    for ax, claim in zip(axes.flat, claims, strict=False):
        g = primary[primary["claim"] == claim].reset_index(drop=True)
        y = range(len(g))[::-1]
        ax.axvline(0.0, color="0.5", lw=0.8)
        ax.axvline(g["bound"].iloc[0], color="0.3", lw=0.9, ls="--")
        for yi, r in zip(y, g.to_dict("records"), strict=True):
            ax.plot([r["low"], r["high"]], [yi, yi], color=EDGE, lw=1.2)
            ax.plot(r["effect"], yi, "o", ms=7, mfc=VERDICT_COLOURS[r["verdict"]], mec=EDGE)
            if pd.notna(r["paper value"]):
                fill = "black" if r["comparable"] else "none"
                ax.plot(r["paper value"], yi, "D", ms=5, mfc=fill, mec="black")
        ax.set_yticks(list(y), list(g["task"]), fontsize=8)
        ax.set_ylim(-0.6, len(g) - 0.4)
        ax.tick_params(axis="x", labelsize=8)
        unit = g["unit"].iloc[0]
        ax.set_xlabel(f"difference ({unit})" if unit else "difference", fontsize=8)
        ax.set_title("\n".join(textwrap.wrap(claim, 34)), fontsize=9)
    for ax in list(axes.flat)[len(claims) :]:
        ax.set_visible(False)
    shown = [v for v in VERDICTS if v in set(primary["verdict"])]
    handles = [
        Line2D([], [], marker="o", ls="", ms=7, mfc=VERDICT_COLOURS[v], mec=EDGE) for v in shown
    ]
    handles += [
        Line2D([], [], marker="D", ls="", ms=5, mfc="black", mec="black"),
        Line2D([], [], marker="D", ls="", ms=5, mfc="none", mec="black"),
        Line2D([], [], color="0.3", lw=0.9, ls="--"),
    ]
    labels = [f"ours: {v}" for v in shown] + [
        "the paper's",
        "the paper's (another setting)",
        "the claim's minimum effect",
    ]
    legend_below(fig, handles, labels, ncol=2, fontsize=8)
    return fig
