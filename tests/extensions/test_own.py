"""Chapter 10's study (``extensions.own``): lewm's and scale's units are the task study's own (so a
cache holding that study builds only the new arm's), the claims judge the reader's arm against
LeWM on the evidence recomputed here, and bad parameters stop in one line."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from jepa_geometry import cluster
from jepa_geometry.extensions import own
from jepa_geometry.profiles import load_profile
from jepa_geometry.study.spec import SpecError, load_study
from jepa_geometry.verdict.rule import verdict_table
from tests.conftest import REPO
from tests.verdict.test_claims import synthetic_study

EXAMPLE = "examples/objectives/variance_match.py"
SMOKE = load_profile("smoke")


def _outputs(units) -> set[str]:
    return {f"{a.kind}/{a.name}/{a.key}" for u in units for a in u.outputs}


@pytest.mark.parametrize("profile", ["smoke", "laptop"])
def test_lewm_and_scale_are_the_task_study_s_own_units(profile):
    """Every output of the page's lewm and scale units (models, CEM cells, geometry) is an
    output of the Two-Room study's grid, key for key; the new arm's are none of them (the
    random floor of a cell's pairs, which every arm planned on them shares, aside)."""
    spec = own.own_spec("tworoom", EXAMPLE)
    cfg = spec.profile(load_profile(profile))
    study = load_study("tworoom")
    grid = _outputs(
        u
        for stage in ("collect", "train", "plan")
        for u in cluster.stage_units(stage, [study], cfg)
    )
    units = own.own_units(spec, cfg)
    arm = own.user_arm(spec)
    theirs = [u for u in units if arm not in u.label]
    mine = [u for u in units if arm in u.label]
    assert _outputs(theirs) <= grid
    new = {o for o in _outputs(mine) if not o.startswith("results/random-")}  # floors: shared
    assert new and not new & grid
    seeds = len(cfg.seeds.train)
    assert [u.kind for u in mine].count("train") == seeds  # one model per seed, planned,
    assert [u.kind for u in mine].count("plan") == seeds  # measured: nothing else is new
    assert [u.kind for u in mine].count("measure") == seeds


def test_the_arm_and_its_spec(tmp_path):
    spec = own.own_spec("tworoom", EXAMPLE)
    assert spec.arms == ("lewm", "scale", EXAMPLE)
    assert own.user_arm(spec) == EXAMPLE and own.term_name(EXAMPLE) == "variance_match"
    assert own.own_arm(str(REPO / EXAMPLE)) == EXAMPLE  # the same arm from any spelling
    assert {c.solver for c in own.own_cells(spec)} == {"cem"}
    assert {c.protocol for c in own.own_cells(spec)} == {spec.main_protocol}
    assert len(own.own_cells(spec)) == 5  # every budget tier
    with pytest.raises(SpecError, match="objective must be the path of a Python file"):
        own.own_spec("tworoom", "mine.txt")
    with pytest.raises(SpecError, match="seeds must be null or distinct"):
        own.with_seeds(SMOKE, [1, 1])
    with pytest.raises(SpecError, match=r"in a list, such as \[0\].*got 0"):
        own.with_seeds(SMOKE, 0)  # not one seed nor no seeds: ambiguous, so refused
    assert own.with_seeds(SMOKE, [4, 2]).seeds.train == (4, 2)
    laptop = spec.profile(load_profile("laptop"))
    fewer = own.with_seeds(laptop, [2])
    for arm in spec.arms:  # a page run on fewer seeds reuses the models and cells of those seeds
        mine = [u for u in own.own_units(spec, fewer) if f" {arm} seed 2" in u.label]
        theirs = [u for u in own.own_units(spec, laptop) if f" {arm} seed 2" in u.label]
        assert _outputs(mine) == _outputs(theirs) and len(mine) == 3


def _as_arm(study: tuple[pd.DataFrame, Any], old: str, new: str) -> tuple[pd.DataFrame, Any]:
    """A synthetic study with arm ``old`` renamed ``new`` in every table."""
    episodes, geo = study
    tables = {k: getattr(geo, k).replace({"arm": {old: new}}) for k in vars(geo)}
    return episodes.replace({"arm": {old: new}}), type(geo)(**tables)


def test_the_claims_judge_the_reader_s_arm_against_lewm_on_recomputed_evidence():
    """The reader's arm, clearly better than LeWM on every measure: every claim holds; LeWM
    clearly better: every claim is contradicted (a flipped direction fails one of the two).
    The success effect is the mean over (seed, pair) of the tier-mean difference, recomputed."""
    spec = own.own_spec("tworoom", EXAMPLE)
    arm = own.user_arm(spec)
    episodes, geo = _as_arm(synthetic_study("scale"), "scale", arm)
    items = own.own_claims(spec, episodes, geo)
    assert len(items) == len(own.own_claim_specs(arm)) == 8
    assert all(c.paper == own.YOURS and c.a == arm and c.b == "lewm" for c, _ in items)
    table = verdict_table(items)
    assert (table.verdict == "reproduced").all(), table[["claim", "verdict"]]
    main = episodes[(episodes.protocol == spec.main_protocol) & (episodes.solver == "cem")]
    t = main.groupby(["arm", "train_seed", "episode"])["success"].mean().unstack("arm")
    claim, ev = next((c, e) for c, e in items if c.measure.startswith("success"))
    assert ev.effect == pytest.approx(float((t[arm] - t["lewm"]).mean()))
    episodes, geo = _as_arm(synthetic_study("lewm"), "scale", arm)
    table = verdict_table(own.own_claims(spec, episodes, geo))
    assert (table.verdict == "contradicted").all(), table[["claim", "verdict"]]
