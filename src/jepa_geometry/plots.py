"""Figure style and the one place figures are saved.

Every figure of the book goes through :func:`savefig` with a stable id (``scale_fig3``,
``aniso_fig1``, ``ours_...``), so regenerated figures land at a predictable path,
``data/figures/<profile>/<fig_id>.png``, next to the other artifacts of the run.
"""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib.pyplot as plt
import seaborn as sns

from .artifacts import atomic_path, data_root

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
