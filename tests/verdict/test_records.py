"""Claims the book did not encode, and labels that said more than was tested (issue 53, "claims
and numbers still missing or mis-scoped"): each test reads the claim as the paper states it
(its tasks, its direction, its scope) and fails on the earlier claim set.

* SCALE reaches DINO-WM-like geometry: parity of the top-2 PCs' R² within a margin, not a gain;
* AnisoWM adds no planning-time overhead (Λ is discarded after training): true by our
  construction, its wall times shown but judged by no rule;
* AnisoWM's "all four" environments: every task it evaluated, by the intersection-union test
  of the sign, the tasks not tested named in the label, each task's premises read beside it;
* SCALE's budget claim for every solver of its per-tier table, on the cells it reports;
* τ's geometry channel: SCALE's claim on Two-Room, our extension elsewhere.
"""

from __future__ import annotations

import types

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from jepa_geometry.book.tables.geometry import dashboard
from jepa_geometry.planning.solver import MPPI_SWM, PAPER_SOLVER, SOLVER_NAMES
from jepa_geometry.verdict import preconditions as P
from jepa_geometry.verdict import rule as V
from jepa_geometry.verdict.claims import (
    ALL_TASKS,
    POOLED,
    Measurements,
    evaluate,
    evaluate_across,
    evaluate_every,
    on_task,
)
from jepa_geometry.verdict.records import ACROSS_CLAIMS, EVERY_CLAIMS, across_claims, paper_claims
from jepa_geometry.verdict.reference import paper_tasks, reference_numbers
from tests.verdict.test_claims import SEEDS, plan_timing, synthetic_study

CODE = "goal25_budget50"
MAIN = "goal100_budget150"


def _with_dinowm(gap: float, noise: float = 0.005) -> tuple[pd.DataFrame, object]:
    """The synthetic study with a DINO-WM arm whose top-2 R² is SCALE's plus ``gap``."""
    episodes, geo = synthetic_study("scale")
    rng = np.random.default_rng(7)
    scale = geo.probes[geo.probes.arm == "scale"]
    dino = scale.assign(
        arm="dinowm", r2_top2=scale.r2_top2 + gap + noise * rng.standard_normal(len(scale))
    )
    probes = pd.concat([geo.probes, dino], ignore_index=True)
    geo = types.SimpleNamespace(**{**vars(geo), "probes": probes})
    return episodes, geo


@pytest.mark.parametrize(
    ("gap", "expected"),
    [(0.0, "reproduced"), (0.03, "reproduced"), (0.15, "contradicted")],
)
def test_dinowm_like_geometry_is_parity_within_a_margin(gap, expected):
    """SCALE's top-2 R² equal to DINO-WM's, or 0.03 below, is DINO-WM-like (margin 0.05); 0.15
    below is not. A claim of a gain (the measure's smallest effect added to the margin) would
    read the equal case 'inconclusive'. The interval is recomputed here as a paired t."""
    episodes, geo = _with_dinowm(gap)
    items = paper_claims("tworoom", episodes, geo)
    ((claim, ev),) = [(c, e) for c, e in items if c.b == "dinowm" and "DINO-WM-like" in c.statement]
    assert claim.threshold + claim.min_effect == pytest.approx(-V.MIN_EFFECTS["r2_top2"])
    p = geo.probes.set_index(["arm", "train_seed"]).r2_top2
    d = np.array([p["scale", s] - p["dinowm", s] for s in SEEDS])
    half = sps.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
    assert (ev.low, ev.high) == pytest.approx((d.mean() - half, d.mean() + half))
    assert V.verdict(claim, ev) == expected
    assert P.DINOV2_FEATURES in claim.requires  # SCALE's claim is about DINOv2's own features


@pytest.mark.parametrize(("slower", "within"), [(1.03, True), (1.5, False)])
def test_anisowm_no_planning_overhead_holds_by_construction_whatever_the_wall_time(slower, within):
    """AnisoWM plans with LeWM's encoder and predictor (Λ is discarded): our planner runs the
    same networks for every arm, so the claim holds by construction. Its wall times are shown
    (3 % slower lies within the 10 % tolerance, 50 % slower beyond it), but neither reads a
    verdict: a shared machine's timing noise would decide it. It requires nothing and is
    informed by no premise (the wall time does not depend on what Λ learned)."""
    episodes, geo = synthetic_study("anisowm")
    items = paper_claims("tworoom", episodes, geo, timing=plan_timing("anisowm", slower, seed=5))
    ((claim, ev),) = [
        (c, e) for c, e in items if c.paper == "AnisoWM" and "overhead" in c.statement
    ]
    assert ev.effect == pytest.approx(np.log(slower), abs=0.01)
    assert bool(ev.high < np.log(1.1)) == within and bool(ev.low > np.log(1.1)) == (not within)
    assert claim.by_construction and V.verdict(claim, ev) == V.BY_CONSTRUCTION
    assert claim.requires == () and claim.informs == () and not claim.extension
    failed = {"tworoom": {P.lambda_selected_name("anisowm"), P.LEWM_ISOTROPIC}}
    board = dashboard([("tworoom", claim, ev)], failed)
    assert board.verdict.iloc[0] == V.BY_CONSTRUCTION and np.isnan(board["p (Holm)"].iloc[0])
    assert "the planner runs the same networks" in board.reason.iloc[0]


def test_tau_geom_is_scales_claim_on_two_room_only():
    """SCALE gives τ's geometry channel for Two-Room alone: elsewhere the claim is ours."""
    assert set(reference_numbers(table="scale_rollout_ranking", channel="geometry").task) == {
        "tworoom"
    }
    episodes, geo = synthetic_study("scale")
    for task, ext in (("tworoom", False), ("pusht", True), ("reacher", True)):
        items = paper_claims(task, episodes, geo, CODE, CODE)
        (claim,) = [c for c, _ in items if c.measure.startswith("Kendall τ (tau_geom)")]
        assert claim.extension is ext, task
        (pred,) = [c for c, _ in items if c.measure.startswith("Kendall τ (tau_pred)")]
        assert pred.extension is False  # SCALE reports the predictor channel on every task


def _measured(rates: dict[str, float], seeds=SEEDS) -> dict[str, Measurements]:
    """Per task, a study where AnisoWM succeeds at ``rates[task]`` and LeWM at 0.3, CEM T1 under
    each task's main protocol (the LeWM paper's)."""
    rng = np.random.default_rng(11)
    out = {}
    for task, rate in rates.items():
        main = "goal100_budget150" if task == "tworoom" else CODE
        rows = [
            {
                "protocol": main,
                "solver": "cem",
                "budget": "T1",
                "arm": arm,
                "train_seed": s,
                "episode": e,
                "success": float(rng.random() < (rate if arm == "anisowm" else 0.3)),
            }
            for arm in ("lewm", "anisowm")
            for s in seeds
            for e in range(150)
        ]
        geo = types.SimpleNamespace(probes=pd.DataFrame({"arm": ["lewm", "anisowm"]}))
        out[task] = Measurements(task, pd.DataFrame(rows), geo, main, CODE)
    return out


def test_all_four_is_every_task_and_names_what_was_not_tested():
    """AnisoWM's "all four": with a clear gain on three of its tasks and none on the fourth, the
    claim is not reproduced (an average over the four would be); with Cube unplanned the label
    says three of four were tested; PointMaze, not AnisoWM's, is never a cell."""
    spec = next(s for s in EVERY_CLAIMS if "plans better" in s.statement)
    rates = {"tworoom": 0.9, "reacher": 0.9, "pusht": 0.3, "pointmaze": 0.9}
    claim, ev = evaluate_every(spec, _measured(rates))
    assert paper_tasks("AnisoWM") == ("tworoom", "reacher", "pusht", "cube")
    assert "3 of AnisoWM's 4 tasks tested; not tested: Cube" in claim.statement
    assert "Push-T" in ev.units and "PointMaze" not in claim.measure
    assert V.verdict(claim, ev) != "reproduced"
    pooled = V.pooled_evidence(
        [evaluate_every(spec, _measured({t: r}))[1] for t, r in rates.items() if t != "pointmaze"]
    )
    assert V.verdict(claim, pooled) == "reproduced"  # what an average would have said
    claim, ev = evaluate_every(spec, _measured({t: 0.9 for t in rates}))
    assert V.verdict(claim, ev) == "reproduced"


def test_all_four_reads_each_tasks_premises_and_tests_the_sign():
    """The premises on each task (Λ selected, LeWM near-isotropic) are read beside the claim
    about all of them, never gates: failing on one task leaves it judged. "In all four" is the
    sign on each task (min effect 0), as the paper counts it: its p is the largest of the
    cells' p of a positive effect, not of one beyond 3 points; it is no headline of its own."""
    spec = next(s for s in EVERY_CLAIMS if "plans better" in s.statement)
    studies = _measured({"tworoom": 0.9, "reacher": 0.9})
    claim, ev = evaluate_every(spec, studies)
    lam = P.lambda_selected_name("anisowm")
    assert claim.requires == ()
    assert on_task(lam, "reacher") in claim.informs
    assert on_task(P.LEWM_ISOTROPIC, "tworoom") in claim.informs
    assert claim.min_effect == 0.0 and claim.threshold == 0.0 and not claim.primary
    cells = [evaluate(spec.claim, m) for m in studies.values()]
    assert all(c.min_effect == V.MIN_EFFECTS["success"] for c, _ in cells)  # each cell's own
    assert V.one_sided_p(claim, ev) == pytest.approx(max(e.p_beyond(0.0, 1) for _, e in cells))
    ok = dashboard([(ALL_TASKS, claim, ev)], {ALL_TASKS: {on_task(lam, "pusht")}})
    assert ok.verdict.iloc[0] == "reproduced"
    bad = dashboard([(ALL_TASKS, claim, ev)], {ALL_TASKS: {on_task(lam, "reacher")}})
    assert bad.verdict.iloc[0] == "reproduced" and bad.family.iloc[0] == "secondary"
    assert on_task(lam, "reacher") in bad["informed by"].iloc[0]


def test_the_budget_claim_covers_every_solver_of_the_per_tier_table():
    """SCALE states that its gain persists across budgets for its grid, not for CEM alone: one
    pooled claim per solver of its per-tier table and tier, each on that solver's cells, its
    paper number the mean of that solver's cells in the table (recomputed here)."""
    budget = [s for s in ACROSS_CLAIMS if s.combine == POOLED and s.tier]
    ref = reference_numbers(table="scale_success_per_tier")
    assert {(s.solvers[0], s.tier) for s in budget} == {
        (solver, tier)
        for solver, paper in PAPER_SOLVER.items()
        for tier in set(ref[ref.solver == paper].tier)
    }
    rng = np.random.default_rng(2)
    rows = [
        {
            "protocol": CODE,
            "solver": solver,
            "budget": t,
            "arm": arm,
            "train_seed": s,
            "episode": e,
            "success": float(rng.random() < (0.8 if arm == "scale" else 0.3)),
        }
        for solver in ("cem", "icem", MPPI_SWM)
        for t in ("T1", "T4")
        for arm in ("scale", "lewm")
        for s in SEEDS
        for e in range(40)
    ]
    studies = {
        task: Measurements(task, pd.DataFrame(rows), None, CODE, CODE)
        for task in ("tworoom", "reacher")
    }
    for solver in ("icem", MPPI_SWM):
        spec = next(s for s in budget if s.solvers == (solver,) and s.tier == "T4")
        claim, ev = evaluate_across(spec, studies)
        cell = pd.DataFrame([r for r in rows if r["solver"] == solver and r["budget"] == "T4"])
        d = cell.pivot_table(index=["train_seed", "episode"], columns="arm", values="success")
        assert ev.effect == pytest.approx(float((d.scale - d.lewm).mean()))  # same per task
        paper = ref[(ref.solver == PAPER_SOLVER[solver]) & (ref.tier == "T4")]
        wide = paper[paper.task.isin(["tworoom", "reacher"])].pivot(
            index="task", columns="arm", values="value"
        )
        assert f"{(wide.scale - wide.lewm).mean():+.2f} pp" in claim.paper_note
        assert claim.measure.startswith(f"success, SCALE's protocol, {SOLVER_NAMES[solver]} (T4)")
        assert V.verdict(claim, ev) == "reproduced"


def _across_study(
    rates: dict[str, tuple[float, ...]], seeds: int, pairs: int = 200
) -> pd.DataFrame:
    """SCALE's protocol, CEM at T1 and T2: scale succeeds on the first ``rate`` of the pairs on
    each seed, lewm and aux on none."""
    rows = []
    for solver, budgets in (("cem", ("T1", "T2")),):
        for b in budgets:
            for arm, per_seed in rates.items():
                for s in range(seeds):
                    n = int(round(per_seed[s % len(per_seed)] * pairs))
                    rows += [
                        {
                            "protocol": CODE,
                            "solver": solver,
                            "budget": b,
                            "arm": arm,
                            "train_seed": s,
                            "episode": e,
                            "success": float(e < n),
                        }
                        for e in range(pairs)
                    ]
    return pd.DataFrame(rows)


def test_a_mean_over_tasks_of_one_model_each_judges_no_arm():
    """SCALE beats Aux by 40 points on both tasks, each with one trained model: the pooled
    interval over pairs excludes zero, the verdict is inconclusive; with three models each it
    is reproduced."""
    for seeds, want in ((1, "inconclusive"), (3, "reproduced")):
        eps = _across_study({"scale": (0.4,), "aux": (0.0,), "lewm": (0.0,)}, seeds)
        studies = {t: Measurements(t, eps, None, CODE, CODE) for t in ("tworoom", "pusht")}
        items = {c.statement: (c, e) for c, e in across_claims(studies)}
        claim, ev = items["Aux does not plan as well as SCALE, across the tasks (CEM)"]
        assert ev.low > 0.3 and V.verdict(claim, ev) == want


@pytest.mark.parametrize(("main", "want"), [(MAIN, MAIN), (CODE, CODE)])
def test_one_claim_one_protocol(main, want):
    """Where the study's main protocol is not SCALE's, SCALE's CEM claim is tested under the
    main one only (fixed in the study spec before any result), not under both."""
    episodes, geo = synthetic_study("scale")
    items = paper_claims("tworoom", episodes, geo, main, CODE)
    cem = [c for c, _ in items if c.statement == "SCALE plans better than LeWM (CEM)"]
    assert len(cem) == 1 and want in cem[0].measure
