"""Chapter 10's study (``study.own``): lewm's and scale's units are the task study's own (so a
cache holding that study builds only the new arm's), the claims judge the reader's arm against
LeWM on the evidence recomputed here, and bad parameters stop in one line."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jepa_geometry.analysis.measurements import Geometry
from jepa_geometry.profiles import load_profile
from jepa_geometry.study import cluster, own
from jepa_geometry.study.spec import SpecError, load_study
from tests.conftest import REPO

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
    assert own.with_seeds(SMOKE, [4, 2]).seeds.train == (4, 2)


def _synthetic(arm: str, rng: np.random.Generator):
    """Episodes and geometry of lewm and ``arm`` (and scale) on 3 seeds, with known effects."""
    seeds, pairs, starts = (0, 1, 2), range(40), range(6)
    eps = [
        {
            "protocol": "goal100_budget150",
            "solver": "cem",
            "budget": b,
            "arm": a,
            "train_seed": s,
            "episode": e,
            "success": bool(rng.random() < {"lewm": 0.4, "scale": 0.5}.get(a, 0.8)),
        }
        for a in ("lewm", "scale", arm)
        for s in seeds
        for b in ("T1", "T2")
        for e in pairs
    ]
    probes = pd.DataFrame(
        [
            {"arm": a, "train_seed": s, "r2_top2": rng.random(), "ratio_p90_over_p10": 2 + s}
            for a in ("lewm", "scale", arm)
            for s in seeds
        ]
    )
    ranking = pd.DataFrame(
        [
            {
                "arm": a,
                "train_seed": s,
                "source": src,
                "start": i,
                **{c: rng.random() for c in cols},
            }
            for a in ("lewm", "scale", arm)
            for s in seeds
            for i in starts
            for src, cols in (
                ("gaussian", ("tau_geom", "tau_pred")),
                ("dataset", ("agree_enc", "agree_pred")),
            )
        ]
    )
    land = pd.DataFrame(
        [
            {"arm": a, "train_seed": s, "goal_index": g, "spearman": rng.random()}
            for a in ("lewm", "scale", arm)
            for s in seeds
            for g in range(5)
        ]
    )
    return pd.DataFrame(eps), Geometry(probes, pd.DataFrame(), ranking, land)


def test_the_claims_judge_the_reader_s_arm_against_lewm_on_recomputed_evidence():
    spec = own.own_spec("tworoom", EXAMPLE)
    arm = own.user_arm(spec)
    episodes, geo = _synthetic(arm, np.random.default_rng(0))
    items = own.own_claims(spec, episodes, geo)
    assert len(items) == len(own.own_claim_specs(arm)) == 8
    assert all(c.paper == own.YOURS and c.a == arm and c.b == "lewm" for c, _ in items)
    by = {c.measure.split(",")[0]: (c, e) for c, e in items}
    # success: the mean over (seed, pair) of the tier-mean difference, computed here
    t = episodes.groupby(["arm", "train_seed", "episode"])["success"].mean().unstack("arm")
    claim, ev = by["success"]
    assert ev.effect == pytest.approx(float((t[arm] - t["lewm"]).mean()))
    assert claim.direction == 1 and claim.min_effect == 0.03 and ev.low <= ev.effect <= ev.high
    # dispersion: smaller is better, one number per seed (equal here: no difference)
    claim, ev = by["ratio_p90_over_p10"]
    assert claim.direction == -1 and ev.effect == pytest.approx(0.0)
    # a per-start measure: the mean paired difference over (seed, start)
    r = geo.ranking[geo.ranking.source == "dataset"].pivot_table(
        index=["train_seed", "start"], columns="arm", values="agree_pred"
    )
    assert by["agree_pred"][1].effect == pytest.approx(float((r[arm] - r["lewm"]).mean()))
