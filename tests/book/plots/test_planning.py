"""Chapter 6's success figure: its legend sits just below the panels, at any number of panels."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from jepa_geometry.book.plots.planning import plot_success_cells

ARMS = ["lewm", "scale", "aux", "anisowm", "scale-halfq", "dinowm"]


def _table(solvers: list[str]) -> pd.DataFrame:
    rows = []
    for s in solvers:
        for b in range(1, 6):
            for i, arm in enumerate([*ARMS, "random"]):
                r = 0.1 + 0.02 * i + 0.01 * b
                rows.append(dict(protocol="p", solver=s, budget=f"T{b}", arm=arm, rate=r))
                rows[-1].update(low=r - 0.05, high=r + 0.05)
    return pd.DataFrame(rows)


@pytest.mark.parametrize("solvers", [["cem"], ["cem", "icem", "mppi", "mppi_swm"]])
def test_the_legend_sits_below_the_lowest_axis_labels_without_an_empty_band(solvers):
    fig = plot_success_cells(_table(solvers), "p", ARMS)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    inch = fig.dpi
    legend = fig.legends[0].get_window_extent(renderer)
    lowest = fig.axes[-1].get_tightbbox(renderer)  # the last panel with its ticks and x label
    gap = (lowest.y0 - legend.y1) / inch
    plt.close(fig)
    assert len(fig.legends[0].get_texts()) == len(ARMS) + 1  # every arm and the random band
    assert 0 < gap < 0.25, f"{gap:.2f} in between the last panel's labels and the legend"
