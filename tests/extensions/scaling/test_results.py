"""What the scaling study measured (extensions.scaling.results): a page at laptop builds nothing,
and the success table beside the ceiling."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jepa_geometry.analysis.measurements import Geometry
from jepa_geometry.book import tables
from jepa_geometry.extensions import scaling
from jepa_geometry.extensions.scaling import results
from jepa_geometry.extensions.scaling.spec import Point
from jepa_geometry.profiles import load_profile


def test_the_page_builds_nothing_at_laptop_and_says_what_to_run(tmp_path, monkeypatch):
    from jepa_geometry.artifacts import NotCached

    monkeypatch.setenv("JEPA_GEOMETRY_DATA", str(tmp_path))
    with pytest.raises(NotCached, match="`jepa-geometry scaling --profile laptop`") as e:
        results.scaling_results(scaling.load_scaling(), load_profile("laptop"))
    assert "\n" not in str(e.value)
    assert not (tmp_path / "checkpoints").exists() and not (tmp_path / "datasets").exists()


def test_success_by_point_is_the_tier_mean_beside_the_task_s_ceiling():
    smoke = load_profile("smoke")
    protocol = scaling.main_protocol("tworoom")
    rng = np.random.default_rng(4)

    def frame(arm, seeds, pairs):
        return pd.DataFrame(
            [
                (arm, s, "cem", b, e, bool(rng.random() < 0.5), protocol)
                for s in seeds
                for b in ("T1", "T2")
                for e in pairs
            ],
            columns=["arm", "train_seed", "solver", "budget", "episode", "success", "protocol"],
        )

    eps = pd.concat([frame("lewm", (0, 1), range(6)), frame("scale", (0, 1), range(6))])
    geo = Geometry(pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), pd.DataFrame())
    result = results.PointResult(
        Point(2.0), "tworoom", smoke, ("lewm", "scale"), True, "", eps, geo, pd.DataFrame(), 10
    )
    top = frame("ceiling", (-1,), (1, 3, 4))
    out = results.success_by_point([result], {"tworoom": top}).set_index("arm")
    for arm in ("lewm", "scale"):
        direct = eps[eps.arm == arm].success.mean()  # equal tiers per (seed, pair)
        assert out.loc[arm, "rate"] == pytest.approx(direct)
        assert out.loc[arm, "low"] <= direct <= out.loc[arm, "high"]
        assert (out.loc[arm, "seeds"], out.loc[arm, "pairs"]) == (2, 6)
    assert out.loc["ceiling", "rate"] == pytest.approx(top.success.mean())
    assert (out.loc["ceiling", "pairs"], out.loc["ceiling", "point"]) == (3, "any")
    shown = tables.scaling.success_display(out.reset_index())
    assert list(shown.columns) == [
        "task",
        "point",
        "steps",
        "LeWM (%)",
        "SCALE (%)",
        "ceiling, 3 pairs (%)",
    ]
    assert shown.loc[0, "steps"] == smoke.train.steps
