"""The ways the verdict rule could print "reproduced" where its own evidence does not support it
(issue 53): each test fails on the earlier rule and checks the new one against an independent
computation.

1. The label never contradicts the interval beside it: the test reads the interval's own
   distribution (the earlier rule read a normal approximation of an asymmetric bootstrap
   interval, at one-sided 5 %, i.e. a 90 % interval).
2. One trained model per arm judges no training method (the earlier rule let an interval over
   one model's pairs read "reproduced").
3. "In every cell" is the intersection-union test: the weakest cell decides on its own evidence
   (the earlier rule built one interval from the lowest bounds of different cells).
4. The across-task count names the cells tested, not the paper's count.
5. One claim, one test per task: SCALE's CEM claim is not tested under two protocols.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from jepa_geometry.study.grid import MPPI_SWM, PAPER_SOLVER
from jepa_geometry.verdict import rule as V
from jepa_geometry.verdict.claims import EVERY, Measurements, evaluate_across
from jepa_geometry.verdict.records import ACROSS_CLAIMS, across_claims, paper_claims
from jepa_geometry.verdict.reference import reference_numbers

CODE = "goal25_budget50"
MAIN = "goal100_budget150"


def _claim(**kw) -> V.Claim:
    base = dict(paper="P", statement="s", measure="m", a="x", b="y")
    return V.Claim(**{**base, **kw})


def _units(diffs: np.ndarray, unit: str = "episode") -> pd.DataFrame:
    """A per-unit table whose arm ``x`` minus arm ``y`` is ``diffs`` (seeds x units)."""
    diffs = np.atleast_2d(diffs)
    return pd.DataFrame(
        [
            {"arm": arm, "train_seed": s, unit: e, "v": float(diffs[s, e]) if arm == "x" else 0.0}
            for arm in ("x", "y")
            for s in range(diffs.shape[0])
            for e in range(diffs.shape[1])
        ]
    )


# ------------------------------------------------------------------ 1. the label and its interval


def _skewed(seed: int) -> np.ndarray:
    """Three seeds x 30 units of a skewed per-unit difference (mostly small, a few large)."""
    rng = np.random.default_rng(seed)
    return rng.exponential(0.05, (3, 30)) * rng.choice([-1.0, 1.0], (3, 30), p=[0.3, 0.7])


@pytest.mark.parametrize("seed", range(6))
def test_the_test_inverts_the_displayed_interval(seed):
    """For every threshold across the interval, the one-sided p is below 2.5 % exactly when the
    displayed 95 % interval lies above it: the page's interval is the test."""
    ev = V.paired_unit_evidence(_units(_skewed(seed)), "x", "y", "v", "episode")
    for h in np.linspace(ev.low - 0.02, ev.high, 41):
        below = V.one_sided_p(_claim(min_effect=max(h, 0.0), threshold=min(h, 0.0)), ev)
        assert (below < 0.025) == (ev.low > h), (h, ev.low, below)
        above = V.one_sided_p(_claim(direction=-1, threshold=-h), ev)
        assert (above < 0.025) == (ev.high < h), (h, ev.high, above)


def test_reproduced_never_beside_an_interval_that_reaches_the_threshold():
    """The earlier rule read 'reproduced' where the bootstrap interval beside it reached the
    smallest effect that matters (its normal approximation tested a 90 % interval). Searched
    over many small tables: every label agrees with the interval shown."""
    rng = np.random.default_rng(7)
    claim = _claim(min_effect=0.03)
    seen = set()
    for _ in range(60):
        d = (rng.random((3, 40)) < 0.25).astype(float) - (rng.random((3, 40)) < 0.1)
        ev = V.paired_unit_evidence(_units(d), "x", "y", "v", "episode")
        label = V.verdict(claim, ev)
        seen.add(label)
        if label == "reproduced":
            assert ev.low > 0.03, (ev.effect, ev.low, ev.high)
        if label == "contradicted":
            assert ev.high < 0.0
    assert "reproduced" in seen  # the search reaches the label it checks


def test_the_t_interval_p_against_its_formula():
    """Per-model evidence: the p the verdict reads is the Student t tail of the interval shown,
    computed here by hand from the three seeds' differences."""
    a, b = np.array([0.30, 0.22, 0.41]), np.array([0.10, 0.15, 0.12])
    t = pd.DataFrame({"arm": ["x"] * 3 + ["y"] * 3, "train_seed": [0, 1, 2] * 2, "v": [*a, *b]})
    ev = V.seed_level_evidence(t, "x", "y", "v")
    d = a - b
    se = d.std(ddof=1) / np.sqrt(3)
    assert (ev.low, ev.high) == pytest.approx(sps.t.interval(0.95, 2, d.mean(), se))
    p = sps.t.sf((d.mean() - 0.02) / se, 2)
    assert V.one_sided_p(_claim(min_effect=0.02), ev) == pytest.approx(p)
    assert V.verdict(_claim(min_effect=0.02), ev) == (
        "reproduced" if ev.low > 0.02 else "inconclusive"
    )


# ------------------------------------------------------------------ 2. one trained model


def test_one_trained_model_judges_no_method():
    """An effect of 50 points on one model's 200 pairs: its interval is narrow and far from
    zero, but it measures that model, not the method that trained it."""
    d = np.zeros((1, 200))
    d[0, :100] = 1.0
    ev = V.paired_unit_evidence(_units(d), "x", "y", "v", "episode")
    assert ev.low > 0.3 and ev.units == "1 seed x 200 pairs"
    assert V.verdict(_claim(min_effect=0.03), ev) == "inconclusive"
    assert V.one_sided_p(_claim(), ev) == 1.0
    ev3 = V.paired_unit_evidence(_units(np.tile(d, (3, 1))), "x", "y", "v", "episode")
    assert V.verdict(_claim(min_effect=0.03), ev3) == "reproduced"  # three models: judged


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
                        {"protocol": CODE, "solver": solver, "budget": b, "arm": arm,
                         "train_seed": s, "episode": e, "success": float(e < n)}
                        for e in range(pairs)
                    ]  # fmt: skip
    return pd.DataFrame(rows)


def test_a_mean_over_tasks_of_one_model_each_judges_no_method():
    """SCALE beats Aux by 40 points on both tasks, each with one trained model: the pooled
    interval over pairs excludes zero, the verdict is inconclusive; with three models each it
    is reproduced."""
    for seeds, want in ((1, "inconclusive"), (3, "reproduced")):
        eps = _across_study({"scale": (0.4,), "aux": (0.0,), "lewm": (0.0,)}, seeds)
        studies = {t: Measurements(t, eps, None, CODE, CODE) for t in ("tworoom", "pusht")}
        items = {c.statement: (c, e) for c, e in across_claims(studies)}
        claim, ev = items["Aux does not plan as well as SCALE, across the tasks (CEM)"]
        assert ev.low > 0.3 and V.verdict(claim, ev) == want


# ------------------------------------------------------------------ 3. every cell on its own


def _two_cells() -> dict[str, Measurements]:
    """One task, SCALE's protocol, T1: CEM with a narrow 20-point gain (3 seeds x 2000 pairs, the
    same on every seed), iCEM with a wide 25-point one (3 seeds x 20 pairs, seeds disagreeing:
    +60, +25, -10 points)."""
    rows = []

    def add(solver: str, s: int, e: int, scale: float) -> None:
        for arm, ok in (("scale", scale), ("lewm", 0.0)):
            rows.append({"protocol": CODE, "solver": solver, "budget": "T1", "arm": arm,
                         "train_seed": s, "episode": e, "success": ok})  # fmt: skip

    for s in range(3):
        for e in range(2000):
            add("cem", s, e, float(e < 400))
    icem = {0: (12, 0), 1: (5, 0), 2: (0, 2)}  # (pairs scale wins, pairs lewm wins) per seed
    for s, (win, lose) in icem.items():
        for e in range(20):
            if e < win:
                add("icem", s, e, 1.0)
            elif e >= 20 - lose:
                rows += [{"protocol": CODE, "solver": "icem", "budget": "T1", "arm": arm,
                          "train_seed": s, "episode": e, "success": float(arm == "lewm")}
                         for arm in ("scale", "lewm")]  # fmt: skip
            else:
                add("icem", s, e, 0.0)
    eps = pd.DataFrame(rows)
    return {"tworoom": Measurements("tworoom", eps, None, CODE, CODE)}


def test_every_cell_is_judged_on_its_own_evidence():
    """The earlier rule joined the wide cell's low bound to the narrow cell's high bound into an
    interval narrower than the wide cell's own, and read 'reproduced'. Intersection-union: the
    weakest cell decides, with its own interval and p-value."""
    studies = _two_cells()
    spec = next(s for s in ACROSS_CLAIMS if s.combine == EVERY)
    claim, ev = evaluate_across(spec, studies)
    eps = studies["tworoom"].episodes
    cell = V.paired_unit_evidence(eps[eps.solver == "icem"], "scale", "lewm", "success", "episode")
    assert V.verdict(claim, cell) != "reproduced"  # the weak cell, alone
    assert V.verdict(claim, ev) != "reproduced"  # so not every cell
    assert ev.effect == pytest.approx(0.25) and (ev.low, ev.high) == (cell.low, cell.high)
    cem = V.paired_unit_evidence(eps[eps.solver == "cem"], "scale", "lewm", "success", "episode")
    p = max(V.one_sided_p(claim, cell), V.one_sided_p(claim, cem))
    assert V.one_sided_p(claim, ev) == pytest.approx(p)
    assert V.verdict(claim, ev) == "inconclusive" and "iCEM" in ev.units


# ------------------------------------------------------------------ 4. what was tested


def test_the_every_cell_claim_names_the_cells_it_tests():
    """SCALE reports 15 task x solver cells; a book that plans one task tests three of them, and
    its statement says so (counted here from the reference file)."""
    rng = np.random.default_rng(0)
    rows = [
        {"protocol": CODE, "solver": solver, "budget": "T1", "arm": arm, "train_seed": s,
         "episode": e, "success": float(rng.random() < (0.9 if arm == "scale" else 0.2))}
        for solver in ("cem", "icem", MPPI_SWM)
        for arm in ("scale", "lewm")
        for s in range(3)
        for e in range(60)
    ]  # fmt: skip
    studies = {"tworoom": Measurements("tworoom", pd.DataFrame(rows), None, CODE, CODE)}
    spec = next(s for s in ACROSS_CLAIMS if s.combine == EVERY)
    claim, _ = evaluate_across(spec, studies)
    ref = reference_numbers(table="scale_success_per_solver")
    ref = ref[ref.solver.isin([PAPER_SOLVER[s] for s in spec.solvers])]
    both = ref.pivot_table(index=["task", "solver"], columns="arm", values="value")
    paper_cells = both[["scale", "lewm"]].dropna()
    assert f"3 of SCALE's {len(paper_cells)} cells tested" in claim.statement
    others = paper_cells.reset_index().query("task != 'tworoom'").groupby("task").size()
    assert len(others) and all(f"({n})" in claim.statement for n in others)
    assert "15 of 15" not in claim.statement


# ------------------------------------------------------------------ 5. one test per claim


@pytest.mark.parametrize(("main", "want"), [(MAIN, MAIN), (CODE, CODE)])
def test_one_claim_one_protocol(main, want):
    """Where the study's main protocol is not SCALE's, SCALE's CEM claim is tested under the
    main one only (fixed in the study spec before any result), not under both."""
    from tests.verdict.test_claims import synthetic_study

    episodes, geo = synthetic_study("scale")
    items = paper_claims("tworoom", episodes, geo, main, CODE)
    cem = [c for c, _ in items if c.statement == "SCALE plans better than LeWM (CEM)"]
    assert len(cem) == 1 and want in cem[0].measure


def test_one_trained_model_reads_no_interaction_either():
    """The cross-lens interaction reading follows the same rule: an interval above zero from
    one model per arm is 'unclear', from three it 'reinforces'."""
    from jepa_geometry.verdict.across import additivity

    assert additivity(V.Evidence(0.2, 0.1, 0.3, "1 seed x 50 pairs", 1), 0.03, 1) == "unclear"
    assert additivity(V.Evidence(0.2, 0.1, 0.3, "3 seeds x 50 pairs", 3), 0.03, 1) == "reinforce"
