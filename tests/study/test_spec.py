"""One study specification per task, validated before anything is planned."""

import dataclasses
from importlib.resources import files

import pytest
import yaml

from jepa_geometry.envs import task_class
from jepa_geometry.profiles import load_profile, with_overrides
from jepa_geometry.study.cells import (
    CEILING_BUDGET_S,
    CEILING_MIN_PAIRS,
    ceiling_rule_pairs,
    ceiling_seconds_per_pair,
)
from jepa_geometry.study.spec import (
    HeadlineSeeds,
    SpecError,
    available_studies,
    load_study,
    read_study,
)
from jepa_geometry.verdict.reference import paper_tasks


def test_the_tworoom_study_is_the_book_s_grid():
    spec = load_study("tworoom")
    assert spec.arms == ("lewm", "scale", "aux", "anisowm", "scale+anisowm", "dinowm")
    assert spec.main_protocol == "goal100_budget150"
    assert spec.protocols == ("goal100_budget150", "goal25_budget50")
    assert spec.seeds("solver_seeds", load_profile("laptop")) == [0]
    assert "tworoom" in available_studies()


def test_each_task_study_follows_its_gate():
    """The gates' outcomes at the laptop profile (study.decisions.gate; book: rec-protocol-gate)."""
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
    expected = plans * rollouts * task_class("tworoom").ceiling_rollout_ms / 1e3
    assert ceiling_seconds_per_pair(tworoom, laptop) == pytest.approx(expected)


# --------------------------------------------------------------------------------------
# The headline claims' seeds (issue #67)
# --------------------------------------------------------------------------------------

HEADLINE = HeadlineSeeds(("lewm", "scale", "anisowm"), {"laptop": (3, 4)})


@pytest.mark.parametrize(
    ("arms", "seeds", "message"),
    [
        (("scale", "anisowm"), {"laptop": (3,)}, r"must be arms of the study, 'lewm' among them"),
        (("lewm", "scale-halfq"), {"laptop": (3,)}, r"valid: lewm, scale, aux, anisowm, "),
        (("lewm", "nosuch"), {"laptop": (3,)}, "unknown arm component"),
        (("lewm", "lewm"), {"laptop": (3,)}, "duplicate"),
        (("lewm", "scale"), {"big": (3,)}, r"unknown profile 'big'; valid: smoke, laptop, paper"),
        (("lewm", "scale"), {"laptop": ()}, r"laptop seeds must be a non-empty list of distinct"),
        (("lewm", "scale"), {"laptop": (3, 3)}, r"distinct integers in \[0, 4294967295\], got"),
        (("lewm", "scale"), {"laptop": (True,)}, r"got \(True,\)"),
        (("lewm", "scale"), {"laptop": (-1,)}, r"got \(-1,\)"),
        (("lewm", "scale"), {"laptop": (2**32,)}, r"got \(4294967296,\)"),
        (("lewm", "scale"), {"laptop": ("3",)}, r"got \('3',\)"),
    ],
)
def test_bad_headline_seeds_stop_with_one_line(arms, seeds, message):
    with pytest.raises(SpecError, match=message) as stop:
        dataclasses.replace(load_study("tworoom"), headline_seeds=HeadlineSeeds(arms, seeds))
    assert str(stop.value).startswith("study 'tworoom': headline_seeds") and "\n" not in str(
        stop.value
    )


def planned_headline(task: str) -> HeadlineSeeds:
    """The headline seeds a task's study file plans: its field where the seeds are built, or
    the field it states commented out until their evidence is committed (book: Reconstructions,
    rec-headline-seeds)."""
    text = (files("jepa_geometry.study") / "specs" / f"{task}.yaml").read_text()
    line = next(ln.removeprefix("# ") for ln in text.splitlines() if "headline_seeds: {" in ln)
    raw = yaml.safe_load(line)["headline_seeds"]
    return HeadlineSeeds(tuple(raw["arms"]), {k: tuple(v) for k, v in raw["seeds"].items()})


@pytest.mark.parametrize(
    "written",
    [
        "headline_seeds: [3, 4]",
        "headline_seeds: {arms: [lewm, scale]}",
        "headline_seeds: {arms: lewm, seeds: {laptop: [3]}}",
        "headline_seeds: {arms: [lewm, scale], seeds: [3, 4]}",
        "headline_seeds: {arms: [lewm, scale], seeds: {laptop: 3}}",
        "headline_seeds: {arms: [lewm, scale], seeds: {laptop: [3]}, tasks: [tworoom]}",
    ],
)
def test_a_headline_seeds_field_of_the_wrong_shape_stops_naming_the_file(written, tmp_path):
    text = (files("jepa_geometry.study") / "specs" / "reacher.yaml").read_text()
    old = next(line for line in text.splitlines() if line.startswith("headline_seeds:"))
    path = tmp_path / "reacher.yaml"
    path.write_text(text.replace(old, written))
    with pytest.raises(SpecError) as stop:
        read_study(path, "reacher")
    line = str(stop.value)
    assert line.startswith(f"study file {path}: headline_seeds must be null or {{arms: ")
    assert "\n" not in line
    path.write_text(text.replace(old, "headline_seeds: null"))
    assert read_study(path, "reacher").headline_seeds is None


def test_the_headline_arms_are_those_the_papers_headline_claims_compare():
    """On every task the book plans, the two arms of SCALE's headline claims (``scale``, the
    arm of its per-solver table, and ``lewm``), and ``anisowm`` where AnisoWM reports the task;
    two more seeds at the laptop profile, none at smoke or paper; Cube (not planned) none."""
    laptop, smoke, paper = (load_profile(p) for p in ("laptop", "smoke", "paper"))
    for task in ("tworoom", "reacher", "pointmaze", "pusht"):
        spec = dataclasses.replace(load_study(task), headline_seeds=planned_headline(task))
        aniso = ("anisowm",) if task in paper_tasks("AnisoWM") else ()
        assert spec.headline_seeds.arms == ("lewm", "scale", *aniso)
        assert spec.added_seeds(spec.profile(laptop)) == [3, 4]
        assert spec.added_seeds(smoke) == spec.added_seeds(paper) == []
    assert load_study("cube").headline_seeds is None


def test_the_headline_seeds_add_models_after_the_profile_s_own():
    spec = dataclasses.replace(load_study("tworoom"), headline_seeds=HEADLINE)
    laptop = load_profile("laptop")
    every = [(a, s) for s in (0, 1, 2) for a in spec.arms]
    added = [(a, s) for s in (3, 4) for a in ("lewm", "scale", "anisowm")]
    assert spec.models(laptop) == every + added and spec.headline_models(laptop) == added
    assert spec.seeds_label(laptop) == "3; 5 for lewm, scale, anisowm"
    assert "seeds 3 and 4" in spec.headline_sentence(laptop)
    smoke = load_profile("smoke")  # a profile the field does not name adds nothing
    assert spec.models(smoke) == [(a, 0) for a in spec.arms] and spec.seeds_label(smoke) == "1"
    assert spec.headline_sentence(smoke) == ""
    five = with_overrides(laptop, {"seeds.train": [0, 1, 2, 3, 4]})  # trains every arm anyway
    assert spec.added_seeds(five) == [] and spec.models(five) == [
        (a, s) for s in range(5) for a in spec.arms
    ]
    # the arms in the study's order, whatever the file's
    shuffled = HeadlineSeeds(("anisowm", "lewm", "scale"), {"laptop": (4, 3)})
    spec = dataclasses.replace(spec, headline_seeds=shuffled)
    assert spec.headline_models(laptop) == [
        (a, s) for s in (4, 3) for a in ("lewm", "scale", "anisowm")
    ]


def test_a_study_with_other_arms_keeps_the_headline_seeds_of_the_arms_it_has():
    spec = dataclasses.replace(load_study("tworoom"), headline_seeds=HEADLINE)
    assert spec.with_arms(["lewm", "scale", "aux"]).headline_seeds.arms == ("lewm", "scale")
    assert spec.with_arms(["lewm", "aux"]).headline_seeds is None  # the baseline alone
    assert spec.with_arms(["lewm", "anisowm"]).arms == ("lewm", "anisowm")
    with pytest.raises(SpecError, match=r"study 'tworoom': .*unknown arm component"):
        spec.with_arms(["lewm", "nosuch"])
