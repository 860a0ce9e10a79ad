"""The trend of an effect against compute (extensions.scaling.trend): the weighted line, the
crossing and the reading."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from jepa_geometry.extensions.scaling import trend
from jepa_geometry.extensions.scaling.spec import ScalingError


def test_the_weighted_line_is_numpys_weighted_fit():
    rng = np.random.default_rng(1)
    x, y, w = rng.normal(size=6), rng.normal(size=6), rng.uniform(0.5, 2.0, size=6)
    a, b = trend.wls_line(x, y, w)
    slope, intercept = np.polyfit(x, y, 1, w=np.sqrt(w))  # polyfit weights are 1 / sigma
    assert (a, b) == pytest.approx((intercept, slope))
    with pytest.raises(ScalingError, match="two distinct compute points"):
        trend.wls_line(np.ones(3), y[:3], w[:3])


def test_a_known_slope_and_its_crossing_are_recovered():
    flops = np.array([1e12, 3e12, 1e13])
    effect = 0.01 + 0.05 * np.log10(flops / 1e12)
    se = 0.01
    t = trend.trend(flops, effect, [se] * 3, target=0.2)
    assert t["slope"] == pytest.approx(0.05)
    assert t["slope_low"] < 0.05 < t["slope_high"]
    cross = 1e12 * 10 ** ((0.2 - 0.01) / 0.05)  # log10 F* = 12 + 3.8
    assert t["cross"] == pytest.approx(cross, rel=1e-9)
    assert t["estimable"] and t["cross_low"] < cross < t["cross_high"] < math.inf
    assert trend.reading(t, 1, 0.03, 1.0) == "grows"
    assert trend.reading(t, -1, 0.03, 1.0) == "shrinks"
    assert "FLOPs [" in trend.crossing_words(t) and not t["reached"]
    # the same line read for a claim of the opposite direction moves away: never
    away = trend.trend(flops, effect, [se] * 3, target=-0.03, direction=-1)
    assert math.isnan(away["cross"]) and not away["estimable"]
    # a target the line has passed already is reached, at the largest budget
    passed = trend.trend(flops, effect, [se] * 3, target=0.03)
    assert passed["reached"] and passed["cross"] == pytest.approx(1e13)
    assert trend.crossing_words(passed) == "reached within the studied budgets"
    with pytest.raises(ScalingError, match="direction must be"):
        trend.trend(flops, effect, [se] * 3, 0.2, direction=0)


def test_a_flat_or_noisy_effect_has_no_crossing():
    flops = [1e12, 3e12, 1e13]
    flat = trend.trend(flops, [0.0, 0.0, 0.0], [0.0005] * 3, target=0.03)
    assert not flat["estimable"] and trend.crossing_words(flat) == "not estimable"
    assert trend.reading(flat, 1, 0.03, 1.0) == "stays"
    noisy = trend.trend(flops, [0.0, 0.05, -0.02], [0.1] * 3, 0.03)
    assert trend.reading(noisy, 1, 0.03, 1.0) == "unclear" and not noisy["estimable"]
    again = trend.trend(flops, [0.0, 0.05, -0.02], [0.1] * 3, 0.03)
    assert again == noisy  # seeded: the same inputs give the same reading


def test_the_trend_table_fits_step_points_only():

    rows = []
    for image, flops, eff in (
        (1.0, 1e12, 0.0),
        (1.0, 1e13, 0.05),
        (1.0, 1e14, 0.1),
        (1.5, 2e12, 0.5),
    ):
        rows.append(
            {
                "task": "pusht",
                "paper": "SCALE",
                "claim": "c",
                "image": image,
                "flops": flops,
                "effect": eff,
                "low": eff - 0.01,
                "high": eff + 0.01,
                "se": 0.005,
                "df": np.inf,
                "direction": 1,
                "threshold": 0.0,
                "min_effect": 0.03,
            }
        )
    unbounded = {
        **rows[0],
        "claim": "d",
        "low": -np.inf,
        "high": np.inf,
        "se": np.nan,
        "df": np.inf,
    }
    rows += [unbounded, {**unbounded, "flops": 1e13}]
    # both arms at 0 of n: a degenerate interval, inconclusive, not a very precise point
    degenerate = {**rows[0], "claim": "e", "effect": 0.0, "low": 0.0, "high": 0.0}
    rows += [degenerate, {**rows[1], "claim": "e"}, {**rows[2], "claim": "e"}]
    table = trend.trend_table(pd.DataFrame(rows)).set_index("claim")
    assert table.loc["d", "reading"] == "unclear" and table.loc["d", "points"] == 0
    assert table.loc["d", "crossing"] == "not estimable"
    assert table.loc["e", "points"] == 2  # the degenerate point is left out
    assert table.loc["e", "slope per decade"] == pytest.approx(0.05)
    table = table.loc[["c"]]
    assert table["points"].iloc[0] == 3
    assert table["slope per decade"].iloc[0] == pytest.approx(0.05)
    assert table["reading"].iloc[0] == "grows"


def test_a_mean_over_three_seeds_draws_its_t_tail():
    """Points whose standard errors rest on three seeds (df = 2) give the slope a wider
    interval than the same standard errors taken as normal: the trend reads each point's tail."""
    flops = np.array([1e12, 3e12, 1e13])
    effect = 0.01 + 0.05 * np.log10(flops / 1e12)
    normal = trend.trend(flops, effect, [0.01] * 3, target=0.2)
    seeds3 = trend.trend(flops, effect, [0.01] * 3, target=0.2, df=[2.0] * 3)
    assert seeds3["slope"] == normal["slope"]
    width = lambda t: t["slope_high"] - t["slope_low"]  # noqa: E731
    assert width(seeds3) > 1.3 * width(normal)
