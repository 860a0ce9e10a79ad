"""What every figure of the book shares: the style (:func:`set_theme`), the sizes
(:data:`INLINE_DPI`, :data:`PAGE_WIDTH`) and the one place figures are saved (:func:`savefig`);
an arm's or a task's colour and a code name's display name are the book's, in
:mod:`jepa_geometry.book.style`.

Every figure of the book goes through :func:`savefig` with a stable id (``scale_fig3``,
``aniso_fig1``, ``ours_...``), so regenerated figures land at a predictable path,
``data/figures/<profile>/<fig_id>.png``, next to the other artifacts of the run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from jepa_geometry.artifacts import atomic_path, figure_folder
from jepa_geometry.book.style import arm_colour, label

_FIG_ID = re.compile(r"^[a-z][a-z0-9_]*$")

INLINE_DPI = 110
"""Pixels per inch of the figures the pages show (the kernel's inline PNGs)."""
PAGE_WIDTH = 6.4
"""Inches of the widest figure's axes: at :data:`INLINE_DPI` it is 704 px, which a 1280-px
browser window's text column (660 CSS px) shows at about its native size (CSS draws 96 px per
inch), leaving room for a legend beside the axes, so 8-pt tick labels stay about 11 px high.
Wider content is stacked in rows of panels."""


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
    plt.rcParams.update(
        {"figure.dpi": INLINE_DPI, "savefig.dpi": 150, "figure.figsize": (6.4, 4.0)}
    )


def figure_path(fig_id: str, profile: str) -> Path:
    """Where figure ``fig_id`` of ``profile`` is saved: ``data/figures/<profile>/<fig_id>.png``.
    An id is lowercase snake_case (``scale_fig3``), so every path is predictable."""
    if not _FIG_ID.match(fig_id):
        raise ValueError(f"bad figure id {fig_id!r}: lowercase snake_case, e.g. 'scale_fig3'")
    return figure_folder(profile) / f"{fig_id}.png"


def savefig(fig: plt.Figure, fig_id: str, profile: str) -> Path:
    """Save ``fig`` atomically as ``data/figures/<profile>/<fig_id>.png`` and return the path."""
    path = figure_path(fig_id, profile)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", bbox_inches="tight")
    return path


def legend_below(
    fig: plt.Figure, handles: list, labels: list[str], ncol: int, fontsize: float
) -> None:
    """Put the legend under the panels, centred, and lay the panels out above it.

    The band kept for it is ``0.06 + rows * 1.7 * fontsize / 72`` inches (the legend's distance
    from the figure's edge, then a row of text and its spacing at about 1.7 times the font's
    height; ``tight_layout`` adds its own pad above), given to ``tight_layout(rect=...)`` as a
    fraction of the figure's height: a fixed fraction leaves a tall figure an empty band above
    its legend and a short one too little room under its axes."""
    fig.legend(handles, labels, loc="lower center", ncol=ncol, fontsize=fontsize)
    rows = -(-len(labels) // ncol)
    band = 0.06 + rows * 1.7 * fontsize / 72
    fig.tight_layout(rect=(0, band / fig.get_figheight(), 1, 1))


def by_arm(data: pd.DataFrame, arms: Sequence[str]) -> dict[str, Any]:
    """seaborn's arguments for one hue per arm: ``data`` with its ``arm`` column shown by the
    arms' display names (seaborn writes the hue's values into the legend), ``arms`` in their
    order and each in the book's colour, whichever arms the figure shows."""
    return {
        "data": data.assign(arm=data["arm"].map(label)),
        "hue": "arm",
        "hue_order": [label(a) for a in arms],
        "palette": {label(a): arm_colour(a) for a in arms},
    }


def axes_legend_below(fig: plt.Figure, ax: plt.Axes, fontsize: float = 8) -> None:
    """Move ``ax``'s legend entries (seaborn's hue, the labels drawn) under the panels with
    :func:`legend_below`, at most four to a row, so that no legend sits over the data."""
    handles, labels = ax.get_legend_handles_labels()
    if ax.get_legend() is not None:
        ax.get_legend().remove()
    if handles:
        legend_below(fig, handles, labels, ncol=min(len(labels), 4), fontsize=fontsize)
    else:
        fig.tight_layout()
