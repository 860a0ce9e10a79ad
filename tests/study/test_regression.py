"""A new build against the previous one (jepa_geometry.study.regression)."""

import numpy as np
import pandas as pd
import pytest


def _cell_table(rates: dict[str, float], seeds: int = 3, pairs: int = 200, seed: int = 0):
    """A tidy per-episode table of the recorded Two-Room cell with given success rates."""
    rng = np.random.default_rng(seed)
    rows = []
    for arm, p in rates.items():
        for s in range(seeds):
            ok = rng.random(pairs) < p
            rows += [
                {
                    "protocol": "goal100_budget150",
                    "solver": "cem",
                    "budget": "T1",
                    "arm": arm,
                    "train_seed": s,
                    "episode": e,
                    "success": bool(ok[e]),
                }
                for e in range(pairs)
            ]
    return pd.DataFrame(rows)


def test_the_check_recomputes_the_chapters_intervals_and_flags_those_outside():
    from jepa_geometry.study import cells
    from jepa_geometry.study.regression import previous_build_check

    eps = _cell_table({"lewm": 0.71, "scale": 0.85})
    check = previous_build_check(eps, "tworoom", "laptop").set_index("quantity")
    # independent route: the chapter's own success and paired tables
    rate = cells.success_table(eps).set_index("arm")
    paired = cells.paired_table(eps).set_index("arm")
    for arm in ("lewm", "scale"):
        row = check.loc[f"{arm} success"]
        assert (row["this build"], row["low"], row["high"]) == pytest.approx(
            (rate.loc[arm, "rate"], rate.loc[arm, "low"], rate.loc[arm, "high"])
        )
    d = check.loc["scale - lewm"]
    assert (d["this build"], d["low"], d["high"]) == pytest.approx(
        (paired.loc["scale", "diff"], paired.loc["scale", "low"], paired.loc["scale", "high"])
    )
    assert check["inside"].all()  # 0.71 / 0.85 / +0.14 sit inside the recorded intervals
    moved = previous_build_check(_cell_table({"lewm": 0.5, "scale": 0.85}), "tworoom", "laptop")
    assert list(moved["inside"]) == [False, True, False]
    assert previous_build_check(eps, "tworoom", "smoke").empty  # no record for that profile


def test_a_build_of_another_size_is_refused():
    from jepa_geometry.study.regression import (
        RegressionError,
        previous_build_check,
        previous_builds,
    )

    with pytest.raises(RegressionError, match="3 seeds x 200 pairs"):
        previous_build_check(_cell_table({"lewm": 0.7, "scale": 0.8}, seeds=1), "tworoom", "laptop")
    with pytest.raises(RegressionError, match=r"arms \['scale'\]"):
        previous_build_check(_cell_table({"lewm": 0.7}), "tworoom", "laptop")
    with pytest.raises(RegressionError, match="no previous build recorded for task 'reacher'"):
        previous_builds("reacher")  # the records refuse an unrecorded task; the check is empty


def test_no_recorded_build_of_a_task_is_an_empty_check():
    from jepa_geometry.study.regression import COLUMNS, previous_build_check

    out = previous_build_check(pd.DataFrame(), "reacher", "laptop")
    assert out.empty and list(out.columns) == list(COLUMNS)


def test_a_build_with_headline_seeds_is_checked_on_the_recorded_seeds():
    """The headline seeds (3 and 4 at laptop) came after the recorded build: the check reads
    its first three seeds, the same numbers as a build without them."""
    from jepa_geometry.study.regression import previous_build_check

    three = _cell_table({"lewm": 0.71, "scale": 0.85})
    five = _cell_table({"lewm": 0.6, "scale": 0.6}, seeds=5, seed=1)
    five = pd.concat([three, five[five.train_seed >= 3]], ignore_index=True)
    pd.testing.assert_frame_equal(
        previous_build_check(five, "tworoom", "laptop"),
        previous_build_check(three, "tworoom", "laptop"),
    )
