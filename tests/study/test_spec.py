"""One study specification per task, validated before anything is planned."""

import dataclasses

import pytest

from jepa_geometry.profiles import load_profile
from jepa_geometry.study.grid import (
    CEILING_BUDGET_S,
    CEILING_MIN_PAIRS,
    StudyError,
    ceiling_rule_pairs,
    ceiling_seconds_per_pair,
)
from jepa_geometry.study.spec import SpecError, available_studies, load_study


def test_the_tworoom_study_is_the_book_s_grid():
    spec = load_study("tworoom")
    assert spec.arms == ("lewm", "scale", "aux", "anisowm", "scale+anisowm", "dinowm")
    assert spec.main_protocol == "goal100_budget150"
    assert spec.protocols == ("goal100_budget150", "goal25_budget50")
    assert spec.seeds("solver_seeds", load_profile("laptop")) == [0]
    assert "tworoom" in available_studies()


def test_each_task_study_follows_its_gate():
    """The gates' outcomes at the laptop profile (study.rules.gate; book: rec-protocol-gate)."""
    assert load_study("reacher").protocols == ("goal25_budget50",)
    assert load_study("pointmaze").protocols == ("goal50_budget100", "goal25_budget50")
    pusht = load_study("pusht")
    assert pusht.protocols == ("goal25_budget50",) and pusht.settings == {"laptop": "96 px"}
    assert pusht.arms == ("lewm", "scale", "aux", "anisowm", "scale-halfq", "dinowm")
    cube = load_study("cube")  # no rung of its ladder passed: trained and measured, not planned
    assert not cube.plans and cube.settings == {"laptop": "moving pairs"}
    assert cube.protocols == ("goal25_budget50_moving",)
    assert all(load_study(t).plans for t in ("pointmaze", "pusht", "reacher", "tworoom"))
    assert available_studies() == ["cube", "pointmaze", "pusht", "reacher", "tworoom"]


def test_unknown_task_lists_the_valid_studies():
    with pytest.raises(
        SpecError, match=r"no study specification for task 'nosuch'; valid: .*tworoom"
    ):
        load_study("nosuch")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"arms": ("scale",)}, "must include 'lewm'"),
        ({"arms": ("lewm", "lewm")}, "duplicate"),
        ({"arms": ("lewm", "nosuch")}, "unknown arm component"),
        ({"protocols": ("goal100_budget150", "nosuch")}, "valid: a non-empty list of"),
        ({"protocols": ()}, "valid: a non-empty list of"),
        ({"protocols": ("goal100_budget150", "goal100_budget150")}, "list of distinct protocols"),
        ({"solver_seeds": ()}, "solver_seeds must be null or distinct integers"),
        (
            {"solver_seeds": (0, 0)},
            r"solver_seeds must be null or distinct integers >= 0, got \(0, 0\)",
        ),
        ({"secondary_seeds": (-1,)}, "secondary_seeds must be null or distinct integers"),
        ({"ceiling": 0}, r"ceiling must be null or a number of pairs >= 1, got 0"),
        ({"ceiling": True}, r"ceiling must be null or a number of pairs >= 1, got True"),
    ],
)
def test_bad_specifications_stop_with_one_line(change, message):
    base = load_study("tworoom")
    with pytest.raises((SpecError, ValueError), match=message):
        dataclasses.replace(base, **change)


def test_seeds_outside_the_profile_are_refused():
    spec = dataclasses.replace(load_study("tworoom"), solver_seeds=(5,))
    with pytest.raises(SpecError, match=r"solver_seeds \[5\] are not all training seeds"):
        spec.seeds("solver_seeds", load_profile("smoke"))
    assert dataclasses.replace(spec, solver_seeds=None).seeds(
        "solver_seeds", load_profile("smoke")
    ) == [0]


def test_every_study_plans_the_ceiling_on_the_pairs_its_rule_gives_at_laptop():
    """The study files' pairs are the rule's (cost within the budget, at least the minimum),
    recomputed here from the cost model: 15 min of one core over the ceiling's CEM cells."""
    laptop = load_profile("laptop")
    for task in available_studies():
        spec = load_study(task)
        p = spec.profile(laptop)
        per_pair = ceiling_seconds_per_pair(spec, p)
        assert spec.ceiling == ceiling_rule_pairs(spec, p)
        assert spec.ceiling == CEILING_MIN_PAIRS or spec.ceiling * per_pair <= CEILING_BUDGET_S
        assert spec.ceiling == CEILING_MIN_PAIRS or (spec.ceiling + 1) * per_pair > CEILING_BUDGET_S
    # per pair: plans x (samples x iterations) summed over the five CEM tiers x ms per rollout
    tworoom = load_study("tworoom")
    rollouts = sum(s * i for s, i in laptop.plan.tiers.values())
    plans = 150 // 25  # Two-Room's main protocol: budget 150 steps, a plan every 25 (5 x 5)
    expected = plans * rollouts * laptop.cluster.ceiling_rollout_ms["tworoom"] / 1e3
    assert ceiling_seconds_per_pair(tworoom, laptop) == pytest.approx(expected)


def test_a_ceiling_cost_without_the_task_s_measurement_stops_with_one_line():
    laptop = load_profile("laptop")
    cluster = dataclasses.replace(laptop.cluster, ceiling_rollout_ms={"cube": 79.5})
    bad = dataclasses.replace(laptop, cluster=cluster)
    with pytest.raises(StudyError, match=r"no entry for 'tworoom'; it has: cube$"):
        ceiling_seconds_per_pair(load_study("tworoom"), bad)
