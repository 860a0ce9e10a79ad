"""Chapter 9's figures: each point, reference line and budget where the tables put it."""

import numpy as np
import pandas as pd

from jepa_geometry.book.plots.scaling import plot_scaling_effects
from tests.book.plots import png


def _scaling_effects() -> pd.DataFrame:
    rows = []
    for task, paper in (("tworoom", 0.1), ("pusht", np.nan)):
        for image, flops in ((1.0, 1e12), (1.0, 3e12), (1.0, 1e13), (1.5, 2e12)):
            e = 0.05 * np.log10(flops / 1e12)
            interval = {"effect": e, "low": e - 0.02, "high": e + 0.02}
            rule = {"direction": 1, "threshold": 0.0, "min_effect": 0.03, "paper_effect": paper}
            rows.append({"task": task, "claim": "c", "image": image, "flops": flops})
            rows[-1].update(interval | rule)
    return pd.DataFrame(rows)


def _constant(values) -> bool:
    return len(set(values)) == 1


def test_the_scaling_figure_draws_each_point_the_references_and_the_papers_budget():
    budgets = pd.DataFrame({"task": ["tworoom", "pusht"], "flops": [3e17, 7e17]})
    fig = plot_scaling_effects(_scaling_effects(), ["c"], budgets)
    ax = fig.axes[0]
    # per task, one line through its step points and one marker at its resolution point
    xs = sorted(tuple(c.lines[0].get_xdata()) for c in ax.containers)
    assert xs == [(1e12, 3e12, 1e13)] * 2 + [(2e12,)] * 2
    segments = [line for line in ax.lines if len(line.get_xdata()) == 2]
    horizontal = {round(float(s.get_ydata()[0]), 6) for s in segments if _constant(s.get_ydata())}
    assert {0.1, 0.03, 0.0} <= horizontal  # the paper's effect, the minimum effect, zero
    vertical = {float(s.get_xdata()[0]) for s in segments if _constant(s.get_xdata())}
    assert vertical == {3e17, 7e17}
    assert png(fig)
