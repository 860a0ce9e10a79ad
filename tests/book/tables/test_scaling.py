"""Chapter 9's tables (jepa_geometry.book.tables.scaling): the claims the page draws, its
table of every point, and the answer its opening gives."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from jepa_geometry.book import tables
from jepa_geometry.extensions.scaling.spec import Point


def test_the_page_draws_the_most_measured_claims_and_tabulates_every_point():
    rows = [
        {
            "task": t,
            "paper": "SCALE",
            "claim": c,
            "point": p,
            "image": im,
            "flops": f,
            "effect": 0.1,
            "low": 0.0,
            "high": 0.2,
            "paper_effect": 0.05 if c == "a" else np.nan,
        }
        for c, tasks in (("a", ["pusht"]), ("b", ["pusht", "cube"]))
        for t in tasks
        for p, im, f in (("1x steps", 1.0, 1e12), ("3x steps", 1.0, 3e12), ("hi", 1.5, 2e12))
    ]
    effects = pd.DataFrame(rows)
    assert tables.scaling.headline_claims(effects, 1) == ["b"]
    assert tables.scaling.headline_claims(effects) == ["b", "a"]
    with pytest.raises(ValueError, match="n must be >= 1"):
        tables.scaling.headline_claims(effects, 0)
    shown = tables.scaling.effects_display(effects)
    assert list(shown.columns[3:]) == ["1x steps", "3x steps", "hi", "paper's effect"]
    assert len(shown) == 3 and set(shown["task"]) == {"Push-T", "Cube"}
    assert (shown["1x steps"] == "+0.100 [+0.000, +0.200]").all()


def _result(task: str, steps: float, flops: float, image: float = 1.0) -> SimpleNamespace:
    """What :func:`tables.scaling.scaling_answer` reads of a point's result."""
    return SimpleNamespace(task=task, point=Point(steps, image), train_flops=flops)


def test_the_opening_answer_counts_the_readings_and_says_what_an_extrapolation_is_worth():
    results = [
        _result(t, s, f) for t in ("tworoom", "pusht") for s, f in ((1.0, 1e12), (3.0, 3e12))
    ] + [_result("pusht", 1.0, 2.2e12, image=1.5)]  # the resolution point: not a budget
    budgets = pd.DataFrame({"task": ["tworoom", "pusht"], "flops": [1e16, 1e17]})
    trends = pd.DataFrame(
        {
            "task": ["tworoom", "tworoom", "pusht", "pusht"],
            "claim": ["c1", "c2", "c1", "c2"],
            "reading": ["grows", "stays", "stays", "unclear"],
            "crossing": ["1.0e+14 FLOPs [2.0e+13, 9.0e+15]"] + ["not estimable"] * 3,
        }
    )
    text = tables.scaling.scaling_answer(results, trends, budgets)
    assert "trained at 2 budgets, 1×, 3× the task studies' optimizer steps" in text
    assert "lies 4.0 to 5.0 decades of training FLOPs beyond" in text  # log10(1e16 / 1e12)
    assert (
        "Of the 4 claim effects measured at two or more of them, 1 grow with compute, 0 shrink, "
        "2 stay within the smallest effect that matters and 1 are unclear (“c1” on Two-Room "
        "grows)." in text
    )
    assert "at most 0.5 decades of FLOPs apart" in text  # log10(3e12 / 1e12)
    assert "estimable for 1 of them, and none is a forecast" in text
    none = trends.assign(crossing="not estimable", reading="unclear")
    assert "no crossing of the smallest effect that matters is estimable" in (
        tables.scaling.scaling_answer(results, none, budgets)
    )
    one = [r for r in results if r.point.steps == 1.0]
    assert "built one training budget (1× the task studies' optimizer steps), so it cannot say" in (
        tables.scaling.scaling_answer(one, trends.iloc[:0], budgets)
    )
