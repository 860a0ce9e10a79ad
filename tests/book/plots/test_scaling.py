"""Chapter 9's figures: each point, reference line and budget where the tables put it."""

import numpy as np
import pandas as pd
import pytest

from jepa_geometry.book.plots.scaling import plot_scaling_effects, plot_scaling_premises
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
    assert vertical == set()  # the budgets lie decades beyond the points: arrows, not lines
    lo, hi = ax.get_xlim()  # the axis is zoomed to the points, with a margin
    assert 1e12 / 10 < lo < 1e12 and 1e13 < hi < 1e14
    assert [t.get_text() for t in ax.texts] == ["→", "→"]  # at the right edge, no words
    assert all(t.get_position()[0] == 1.0 for t in ax.texts)
    said = [t.get_text() for t in fig.legends[0].get_texts()][-2:]  # the words, once
    assert said == [  # decades beyond the largest point, 1e13
        "Two-Room: papers' budget 3e+17 FLOPs, 4.5 decades beyond",
        "Push-T: papers' budget 7e+17 FLOPs, 4.8 decades beyond",
    ]
    inside = pd.DataFrame({"task": ["tworoom"], "flops": [5e12]})  # a budget within the points
    fig = plot_scaling_effects(_scaling_effects(), ["c"], inside)
    lines = [line for line in fig.axes[0].lines if len(line.get_xdata()) == 2]
    vertical = [line.get_xdata()[0] for line in lines if _constant(line.get_xdata())]
    assert vertical == [5e12] and not fig.axes[0].texts
    assert png(fig)


def test_a_line_through_two_points_is_not_called_a_trend():
    budgets = pd.DataFrame({"task": ["tworoom"], "flops": [3e17]})
    two = _scaling_effects().query("flops != 1e13")  # two step points per task
    fig = plot_scaling_effects(two, ["c"], budgets)
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert texts[:3] == ["Two-Room", "Push-T", "line through two points, not a trend"]
    assert texts[3:] == ["Two-Room: papers' budget 3e+17 FLOPs, 5.0 decades beyond"]


def _premises() -> pd.DataFrame:
    rows = []
    for measure, reference in (("top-8 share", 0.125), ("cond Λ", 10.0), ("gap", np.nan)):
        for task in ("tworoom", "pusht", "cube"):
            for arm in ("lewm", "scale"):
                for flops in (1e12, 3e12):
                    v = 0.3 + 0.1 * np.log10(flops / 1e12)
                    rows.append({"measure": measure, "task": task, "arm": arm, "flops": flops})
                    rows[-1].update(value=v, low=v - 0.05, high=v + 0.05, reference=reference)
    return pd.DataFrame(rows)


def _legend_gap(fig) -> float:
    """Inches between the lowest visible panel (ticks and x label) and the legend's top."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legend = fig.legends[0].get_window_extent(renderer)
    lowest = min(ax.get_tightbbox(renderer).y0 for ax in fig.axes if ax.get_visible())
    return (lowest - legend.y1) / fig.dpi


@pytest.mark.parametrize("n_claims", [1, 3])
def test_the_effects_legend_sits_just_below_the_panels(n_claims):
    budgets = pd.DataFrame({"task": ["tworoom"], "flops": [3e17]})
    claims = [f"c{i}" for i in range(n_claims)]
    effects = pd.concat([_scaling_effects().assign(claim=c) for c in claims])
    fig = plot_scaling_effects(effects, claims, budgets)
    gap = _legend_gap(fig)
    beyond = "Two-Room: papers' budget 3e+17 FLOPs, 4.5 decades beyond"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["Two-Room", "Push-T", beyond]
    assert 0 < gap < 0.25, f"{gap:.2f} in between the last panels' labels and the legend"


def test_the_premises_legend_names_every_task_and_arm_just_below_the_panels():
    budgets = pd.DataFrame({"task": ["tworoom"], "flops": [3e17]})
    fig = plot_scaling_premises(_premises(), budgets)
    gap = _legend_gap(fig)
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    two = "line through two points, not a trend"  # each line of _premises has two points
    assert texts[:6] == ["Two-Room", "Push-T", "Cube", "LeWM", "SCALE", two]
    assert texts[6:] == ["Two-Room: papers' budget 3e+17 FLOPs, 5.0 decades beyond"]
    assert 0 < gap < 0.25, f"{gap:.2f} in between the last panels' labels and the legend"


def test_each_columns_lowest_panel_reads_the_flops_axis_above_a_hidden_panel_too():
    budgets = pd.DataFrame({"task": ["tworoom"], "flops": [3e17]})
    fig = plot_scaling_premises(_premises(), budgets)  # three panels: the fourth is hidden
    fig.canvas.draw()
    shown = [ax for ax in fig.axes if ax.get_visible()]
    labelled = [ax for ax in shown if ax.get_xlabel() == "training FLOPs per model"]
    ticks = [
        ax for ax in shown if any(t.get_visible() and t.get_text() for t in ax.get_xticklabels())
    ]
    assert len(shown) == 3
    assert labelled == ticks == shown[1:]  # the top right above the hidden panel, the bottom left
