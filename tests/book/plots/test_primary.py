"""The headline claims' figure: one panel per claim, ours filled with its label's colour, the
paper's difference solid where comparable and hollow where it comes from another setting."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import to_rgba

from jepa_geometry.book.plots.primary import plot_primary
from jepa_geometry.book.tables.shared import VERDICT_COLOURS
from jepa_geometry.verdict.rule import BELOW_RESOLUTION


def _primary() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "claim": ["A plans better", "A plans better", "A's PCs carry q"],
            "task": ["Two-Room", "Push-T", "Two-Room"],
            "verdict": ["inconclusive", BELOW_RESOLUTION, "reproduced"],
            "effect": [7.0, 1.7, 0.52],
            "low": [1.6, 0.5, 0.46],
            "high": [12.5, 2.9, 0.58],
            "paper value": [11.3, np.nan, 0.64],
            "comparable": [False, True, True],
            "bound": [3.0, 3.0, 0.05],
            "unit": ["pp", "pp", ""],
        }
    )


def test_each_claim_has_its_panel_with_ours_beside_the_papers():
    fig = plot_primary(_primary())
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == 2
    first = axes[0]
    assert [t.get_text() for t in first.get_yticklabels()] == ["Two-Room", "Push-T"]
    dots = [ln for ln in first.lines if ln.get_marker() == "o"]
    assert {to_rgba(ln.get_markerfacecolor()) for ln in dots} == {
        to_rgba(VERDICT_COLOURS["inconclusive"]),
        to_rgba(VERDICT_COLOURS[BELOW_RESOLUTION]),
    }
    diamonds = [ln for ln in first.lines if ln.get_marker() == "D"]
    assert len(diamonds) == 1  # Push-T publishes nothing
    assert diamonds[0].get_markerfacecolor() == "none"  # Two-Room's is another setting
    assert diamonds[0].get_xdata()[0] == 11.3
    bound = [ln for ln in first.lines if ln.get_linestyle() == "--"]
    assert bound[0].get_xdata()[0] == 3.0
    solid = [ln for ln in axes[1].lines if ln.get_marker() == "D"]
    assert to_rgba(solid[0].get_markerfacecolor()) == to_rgba("black")
    assert axes[1].get_xlabel() == "difference"
    plt.close(fig)
