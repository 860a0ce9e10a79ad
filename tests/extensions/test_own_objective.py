"""Chapter 10's study (``extensions.own``): lewm's and scale's units are the task study's own (so a
cache holding that study builds only the new arm's), the claims judge the reader's arm against
LeWM and SCALE per task and solver on the evidence recomputed here, in the claim's direction,
and bad parameters stop in one line."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pandas as pd
import pytest

from jepa_geometry import cluster
from jepa_geometry.extensions import own_objective
from jepa_geometry.profiles import load_profile
from jepa_geometry.study.spec import SpecError, load_study
from jepa_geometry.verdict import rule
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
    spec = own_objective.own_spec("tworoom", EXAMPLE)
    cfg = spec.profile(load_profile(profile))
    study = load_study("tworoom")
    grid = _outputs(
        u
        for stage in ("collect", "train", "plan")
        for u in cluster.stage_units(stage, [study], cfg)
    )
    units = own_objective.own_units(spec, cfg)
    arm = own_objective.user_arm(spec)
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
    spec = own_objective.own_spec("tworoom", EXAMPLE)
    assert spec.arms == ("lewm", "scale", EXAMPLE)
    assert (
        own_objective.user_arm(spec) == EXAMPLE
        and own_objective.term_name(EXAMPLE) == "variance_match"
    )
    assert own_objective.own_arm(str(REPO / EXAMPLE)) == EXAMPLE  # the same arm from any spelling
    assert {c.solver for c in own_objective.own_cells(spec)} == {"cem"}
    assert {c.protocol for c in own_objective.own_cells(spec)} == {spec.main_protocol}
    assert len(own_objective.own_cells(spec)) == 5  # every budget tier
    with pytest.raises(SpecError, match="objective must be the path of a Python file"):
        own_objective.own_spec("tworoom", "mine.txt")
    with pytest.raises(SpecError, match="seeds must be null or distinct"):
        own_objective.with_seeds(SMOKE, [1, 1])
    with pytest.raises(SpecError, match=r"in a list, such as \[0\].*got 0"):
        own_objective.with_seeds(SMOKE, 0)  # not one seed nor no seeds: ambiguous, so refused
    assert own_objective.with_seeds(SMOKE, [4, 2]).seeds.train == (4, 2)
    laptop = spec.profile(load_profile("laptop"))
    fewer = own_objective.with_seeds(laptop, [2])
    for arm in spec.arms:  # a page run on fewer seeds reuses the models and cells of those seeds
        mine = [u for u in own_objective.own_units(spec, fewer) if f" {arm} seed 2" in u.label]
        theirs = [u for u in own_objective.own_units(spec, laptop) if f" {arm} seed 2" in u.label]
        assert _outputs(mine) == _outputs(theirs) and len(mine) == 3


def _as_arm(study: tuple[pd.DataFrame, Any], old: str, new: str) -> tuple[pd.DataFrame, Any]:
    """A synthetic study with arm ``old`` renamed ``new`` in every table."""
    episodes, geo = study
    tables = {k: getattr(geo, k).replace({"arm": {old: new}}) for k in vars(geo)}
    return episodes.replace({"arm": {old: new}}), type(geo)(**tables)


def _reader_wins(task: str = "tworoom") -> tuple[Any, pd.DataFrame, Any]:
    """The study of ``task`` and a synthetic study where the reader's arm is clearly better
    than LeWM and SCALE (equal to each other) on every measure, planned with CEM, iCEM and
    MPPI."""
    spec = own_objective.own_spec(task, EXAMPLE)
    episodes, geo = _as_arm(synthetic_study("anisowm"), "anisowm", own_objective.user_arm(spec))
    return spec, episodes, geo


def test_the_claims_judge_the_reader_s_arm_against_lewm_and_scale_on_recomputed_evidence():
    """The reader's arm, clearly better than LeWM and SCALE on every measure: every claim
    against each holds, success with every solver planned; LeWM clearly better: every claim
    against LeWM is contradicted (a flipped direction fails one of the two). The success
    effect is the mean over (seed, pair) of the tier-mean difference, recomputed."""
    spec, episodes, geo = _reader_wins()
    arm = own_objective.user_arm(spec)
    items = own_objective.own_claims(spec, episodes, geo)
    solvers = ["cem", "icem", "mppi"]  # the solvers the episodes planned, in the book's order
    assert own_objective.planned_solvers(spec, episodes) == solvers
    per_baseline = len(own_objective.own_claim_specs(arm, "lewm", solvers))
    assert per_baseline == len(solvers) + 7 and len(items) == 2 * per_baseline
    for b in own_objective.BESIDE:
        mine = [j for j in items if j.claim.b == b]
        assert {j.solver for j in mine} == {*solvers, ""}  # "": the geometry claims
        assert all(
            j.task == "tworoom" and j.claim.a == arm and j.claim.paper == own_objective.own_paper(b)
            for j in mine
        )
    table = verdict_table([(j.claim, j.evidence) for j in items])
    assert (table.verdict == "reproduced").all(), table[["claim", "verdict"]]
    assert set(table["family"]) == {"secondary"} and table["p (Holm)"].notna().all()
    main = episodes[(episodes.protocol == spec.main_protocol) & (episodes.solver == "cem")]
    t = main.groupby(["arm", "train_seed", "episode"])["success"].mean().unstack("arm")
    cem = next(j for j in items if j.solver == "cem" and j.claim.b == "lewm")
    assert cem.evidence.effect == pytest.approx(float((t[arm] - t["lewm"]).mean()))
    episodes, geo = _as_arm(synthetic_study("lewm"), "anisowm", arm)
    lewm = [(j.claim, j.evidence) for j in own_objective.own_claims(spec, episodes, geo)]
    table = verdict_table([(c, e) for c, e in lewm if c.b == "lewm"])
    assert (table.verdict == "contradicted").all(), table[["claim", "verdict"]]


def test_one_family_per_baseline_so_scale_s_claims_leave_lewm_s_numbers_alone():
    """Holm runs within the claims against one baseline: the claims against LeWM read the
    same p-values, labels and seeds to decide with SCALE's beside them as alone (the book's
    page added SCALE's claims without changing LeWM's numbers)."""
    spec, episodes, geo = _reader_wins()
    items = own_objective.own_claims(spec, episodes, geo)
    both = own_objective.own_verdict(items)
    alone = own_objective.own_verdict([j for j in items if j.claim.b == "lewm"])
    assert both[both["against"] == "LeWM"].reset_index(drop=True).equals(alone)


def test_the_verdict_table_per_task_and_solver_reads_in_the_claim_s_direction():
    """Two tasks, three solvers, two baselines: one row per (task, solver, baseline, claim),
    with every label's reason, what would flip it and the seeds to decide, no empty cell and
    no paper's column; the dispersion (lower is better) reads positive where the arm's is
    lower, its minimum +0.1."""
    judged = []
    for task in ("tworoom", "reacher"):
        spec, episodes, geo = _reader_wins(task)
        judged += own_objective.own_claims(spec, episodes, geo)
    table = own_objective.own_verdict(judged)
    assert list(table.columns) == [
        "task",
        "solver",
        "against",
        "claim",
        "verdict",
        "why this label",
        "ours [95% CI]",
        "minimum effect",
        "what would flip it",
        "seeds to decide",
        "p (Holm)",
        "units",
    ]
    assert not (table.astype(str).map(str.strip) == "").any().any()
    assert set(table["task"]) == {"Two-Room", "Reacher"} and set(table["against"]) == {
        "LeWM",
        "SCALE",
    }
    success = table[table["claim"].str.contains(" plans better ")]
    assert len(success) == 2 * 2 * 3  # tasks x baselines x solvers
    assert set(success["solver"]) == {"CEM", "iCEM", "MPPI"}
    assert (table.loc[table["solver"] == "none (geometry)", "claim"].str.len() > 0).all()
    disp = table[table["claim"].str.contains("lower distance-ratio dispersion")]
    assert len(disp) == 4 and (disp["minimum effect"] == "+0.1").all()
    assert disp["ours [95% CI]"].str.match(r"\+0\.\d+ \[\+0\.\d+, \+0\.\d+\]$").all()
    raw = next(j for j in judged if j.claim.measure == "ratio_p90_over_p10")
    assert raw.evidence.effect < 0  # the arm's dispersion is lower: a negative difference
    assert table["what would flip it"].str.startswith("no longer holds if the 95 % low end").all()
    assert table["why this label"].str.contains("family of 20").all()  # 2 tasks x 10 a baseline


def test_what_would_flip_an_undecided_claim_names_its_bound_and_the_seeds_it_lacks():
    """One training seed: every claim inconclusive, the flip asks for a second model; a claim
    whose interval crosses its minimum names the low end to pass and the family-wise high end
    to fall below."""
    spec, episodes, geo = _reader_wins()
    one = own_objective.own_claims(
        spec,
        episodes[episodes.train_seed == 0],
        type(geo)(**{k: getattr(geo, k)[getattr(geo, k).train_seed == 0] for k in vars(geo)}),
    )
    table = own_objective.own_verdict(one)
    assert (table.verdict == "inconclusive").all()
    assert table["what would flip it"].str.startswith("at least 2 trained models per arm").all()
    assert table["seeds to decide"].str.startswith("not estimable").all()
    claim = replace(one[0].claim, min_effect=abs(one[0].evidence.effect))  # at the minimum
    flip = rule.what_would_flip(claim, replace(one[0].evidence, models=3), 1.0, 1, "inconclusive")
    assert flip.startswith("holds if the 95 % low end") and "not detected if" in flip


def test_solvers_and_tasks_are_checked_in_one_line():
    spec = own_objective.own_spec("tworoom", EXAMPLE)
    assert [c.solver for c in own_objective.own_cells(spec, ["cem", "icem"])][::5] == [
        "cem",
        "icem",
    ]
    with pytest.raises(SpecError, match="solvers must be a non-empty list of distinct solvers"):
        own_objective.own_cells(spec, ["mppi"])
    with pytest.raises(SpecError, match="list of distinct tasks"):
        own_objective.own_tasks(["tworoom", "tworoom"])
    studies = own_objective.own_studies(["tworoom", "reacher"], EXAMPLE, SMOKE, [0, 1])
    assert [s.task for s, _ in studies] == ["tworoom", "reacher"]
    assert all(p.seeds.train == (0, 1) for _, p in studies)
    one = own_objective.cost_sentence(studies[:1])
    assert not one.startswith("Two-Room") and own_objective.cost_sentence(studies).startswith(
        "Two-Room: its "
    )
    cem = _outputs(own_objective.own_units(*studies[0]))
    more = _outputs(own_objective.own_units(*studies[0], ["cem", "icem"]))
    assert cem < more and len(more - cem) == 3 * 2 * 5  # iCEM's cells: arms x seeds x tiers
