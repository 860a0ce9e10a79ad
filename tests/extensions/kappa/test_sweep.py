"""AnisoWM's κ sweep as data (extensions.kappa.sweep): κ = 2 is the study's own model and cell,
and a bad sweep or split stops in one line."""

from __future__ import annotations

import pytest

from jepa_geometry.extensions import kappa
from jepa_geometry.planning.evaluator import PlanningCell
from jepa_geometry.profiles import load_profile
from jepa_geometry.study.spec import load_study
from jepa_geometry.wm.arms import arm_weights
from jepa_geometry.wm.training import world_model_artifact


def test_the_sweeps_default_kappa_is_the_anisowm_arms_own():
    assert arm_weights("anisowm", "tworoom").kappa == kappa.DEFAULT_KAPPA


def test_kappa_two_reuses_the_study_model_and_cell():
    base = load_profile("smoke")
    for task in kappa.KAPPA_SWEEP.tasks:
        p = load_study(task).profile(base)
        w = kappa.KAPPA_SWEEP.weights(2.0)
        assert w is None
        # an explicit override at the default would also give the study's model key
        explicit = world_model_artifact(task, "anisowm", 0, p, {"kappa": 2.0}).key
        assert world_model_artifact(task, "anisowm", 0, p, w).key == explicit
        study_cell = PlanningCell(
            task,
            "anisowm",
            0,
            p,
            solver="cem",
            tier="T1",
            protocol=load_study(task).main_protocol,
        )
        mine = kappa.KAPPA_SWEEP.cell(task, 2.0, base, "evaluation")
        assert [a.key for a in mine.artifacts()] == [a.key for a in study_cell.artifacts()]
        other = kappa.KAPPA_SWEEP.cell(task, 4.0, base, "evaluation")
        assert other.artifacts()[0].key != study_cell.artifacts()[0].key
        val = kappa.KAPPA_SWEEP.cell(task, 2.0, base, "validation")
        assert val.profile.seeds.eval != mine.profile.seeds.eval


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"tasks": ("mars",)}, "valid: distinct tasks"),
        ({"tasks": ()}, "non-empty list of tasks"),
        ({"kappas": ()}, "non-empty list"),
        ({"kappas": (0.5, 2.0)}, "κ must be a finite number >= 1"),
        ({"kappas": (2.0, 1.0)}, "distinct and increasing"),
        ({"kappas": (1.0,)}, "no anisotropic"),
        ({"arm": "lewm"}, "has no ΛReg"),
    ],
)
def test_bad_sweeps_stop_with_one_line(kwargs, match):
    with pytest.raises(kappa.KappaError, match=match) as e:
        kappa.KappaSweep(**kwargs)
    assert "\n" not in str(e.value)


def test_an_unknown_split_stops_in_one_line():
    with pytest.raises(kappa.KappaError, match="valid: evaluation, validation"):
        kappa.KAPPA_SWEEP.cell("tworoom", 2.0, load_profile("smoke"), "test")
