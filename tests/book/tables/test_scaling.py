"""Chapter 9's tables (jepa_geometry.book.tables.scaling): the claims the page draws and its
table of every point."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jepa_geometry.book import tables


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
