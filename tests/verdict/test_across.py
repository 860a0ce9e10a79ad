"""The claims read across the tasks: the interaction contrast and its reading, the claim x
task matrix with its counts and prose, and the cross-lens questions where Λ was not selected,
checked against direct computations on synthetic data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jepa_geometry.verdict import across as verdicts
from jepa_geometry.verdict import rule as V
from jepa_geometry.verdict.claims import INTERACTION_ARM, interaction_table
from jepa_geometry.verdict.rule import (
    NOT_TESTED,
    Claim,
    Evidence,
    family_interval,
    paired_unit_evidence,
)


def test_interaction_contrast_is_the_departure_from_additivity():
    rng = np.random.default_rng(1)
    units = pd.MultiIndex.from_product([[0, 1, 2], range(30)], names=["train_seed", "start"])
    base = rng.normal(size=len(units))
    a_eff, b_eff = 0.3, 0.2
    delta = rng.normal(0.05, 0.01, size=len(units))  # the combination gains 0.05 beyond the sum
    values = {
        "lewm": base,
        "scale": base + a_eff,
        "anisowm": base + b_eff,
        "scale+anisowm": base + a_eff + b_eff + delta,
    }
    table = pd.concat(
        [pd.DataFrame({"arm": arm, "v": v}, index=units).reset_index() for arm, v in values.items()]
    )
    inter = interaction_table(table, "v", ["train_seed", "start"])
    ev = paired_unit_evidence(inter, INTERACTION_ARM, "a + b", "v", "start")
    assert ev.effect == pytest.approx(delta.mean())
    assert verdicts.additivity(ev, min_effect=0.01, m=1) == "reinforce"


@pytest.mark.parametrize(
    ("low", "high", "reading"),
    [
        (0.01, 0.03, "reinforce"),
        (-0.03, -0.01, "fight"),
        (-0.004, 0.004, "add up"),
        (-0.02, 0.005, "unclear"),
    ],
)
def test_additivity_reads_the_family_interval(low, high, reading):
    ev = Evidence((low + high) / 2, low, high, "units", 3)
    assert verdicts.additivity(ev, min_effect=0.01, m=1) == reading
    lo, hi = family_interval(ev, 40)  # wider with many questions: a clear reading can blur
    assert lo < low and hi > high


def test_verdict_matrix_is_claim_by_task_and_refuses_a_claim_twice():
    board = pd.DataFrame(
        {
            "task": ["Two-Room", "Reacher", "all tasks", "Reacher", "PointMaze", "Two-Room"],
            "paper": ["SCALE"] * 4 + ["AnisoWM"] * 2,
            "claim": ["x", "x", "y", "z", "w", "o"],
            "family": ["primary", "secondary", "secondary", "secondary", V.EXTENSION, "secondary"],
            "requires": ["", "", "", "DINOv2's own features", "", ""],
            "verdict": [
                "reproduced",
                "not detected at this scale",
                "inconclusive",
                NOT_TESTED,
                "reproduced",
                V.BY_CONSTRUCTION,
            ],
        }
    )
    m = verdicts.verdict_matrix(board).set_index("claim")
    # the book's task order, then the claims about all tasks together
    assert list(m.columns) == ["Two-Room", "Reacher", "PointMaze", "all tasks"]
    assert m.loc["SCALE: x", "Reacher"] == "not detected" and m.loc["SCALE: y", "Reacher"] == ""
    assert m.loc["SCALE: y", "all tasks"] == "inconclusive"
    assert m.loc["SCALE: z", "Reacher"] == "not tested"
    assert m.loc["AnisoWM: o", "Two-Room"] == "by construction"
    with pytest.raises(ValueError, match="claim tested twice on one task"):
        verdicts.verdict_matrix(pd.concat([board, board.iloc[:1]]))
    # rows per paper and family; the tested count leaves out the untested and the built
    counts = verdicts.verdict_counts(board).set_index("paper")
    assert counts.loc["SCALE, primary", "tested"] == 1
    assert counts.loc["SCALE, primary", "reproduced"] == 1
    assert counts.loc["SCALE, secondary", "tested"] == 2
    assert counts.loc["SCALE, secondary", NOT_TESTED] == 1
    assert counts.loc[f"AnisoWM, {V.EXTENSION}", "reproduced"] == 1  # apart from its own
    assert counts.loc["AnisoWM, secondary", "tested"] == 0
    assert counts.loc["AnisoWM, secondary", V.BY_CONSTRUCTION] == 1
    assert "SCALE" not in counts.index and counts.loc["all", "tested"] == 4
    assert counts.loc["all", NOT_TESTED] == 1 and counts.loc["all", V.BY_CONSTRUCTION] == 1
    prose = verdicts.verdict_prose(board, {})
    assert "Across 3 tasks the book tests 3 claim-task pairs" in prose
    assert "1 are not tested because their subject is absent" in prose
    assert "DINOv2's own features" in prose and "1 more hold by construction" in prose
    assert "SCALE: *x* (Two-Room)" in prose and "1 of 1 reproduced" in prose


def test_lens_questions_on_an_unselected_lambda_are_not_tested():
    ev = Evidence(0.2, 0.1, 0.3, "u", 3)
    q = [
        (
            "tworoom",
            Claim("ours", "q", "m", "anisowm", "lewm", requires=("Λ selected",), min_effect=0.02),
            ev,
        ),
        ("tworoom", Claim("ours", "r", "m", "scale", "lewm", min_effect=0.02), ev),
        (
            "reacher",
            Claim("ours", "q", "m", "anisowm", "lewm", requires=("Λ selected",), min_effect=0.02),
            ev,
        ),
    ]
    t = verdicts.lens_table(q, {"tworoom": {"Λ selected"}, "reacher": set()})
    assert list(t["reading"]) == [NOT_TESTED, "reproduced", "reproduced"]
    assert np.isnan(t["p (Holm)"].iloc[0]) and "family" not in t
    assert list(verdicts.lens_table(q)["reading"]) == ["reproduced"] * 3  # nothing failed


def test_one_trained_model_reads_no_interaction_either():
    """The cross-lens interaction reading follows the same rule: an interval above zero from
    one model per arm is 'unclear', from three it 'reinforces'."""
    one = V.Evidence(0.2, 0.1, 0.3, "1 seed x 50 pairs", 1)
    three = V.Evidence(0.2, 0.1, 0.3, "3 seeds x 50 pairs", 3)
    assert verdicts.additivity(one, 0.03, 1) == "unclear"
    assert verdicts.additivity(three, 0.03, 1) == "reinforce"
