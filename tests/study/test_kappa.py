"""AnisoWM's κ sweep (study.kappa): its rules on inputs with known answers, its bad input, the
reuse of the study's κ = 2 model, and one smoke build end to end."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from jepa_geometry.planning.evaluator import PlanningCell
from jepa_geometry.profiles import load_profile
from jepa_geometry.study import kappa as K
from jepa_geometry.study.spec import load_study
from jepa_geometry.verdict import kappa_claims as KC
from jepa_geometry.verdict.claims import KappaClaimSpec
from jepa_geometry.verdict.records import KAPPA_CLAIMS
from jepa_geometry.verdict.rule import BY_CONSTRUCTION, LABELS, verdict
from jepa_geometry.wm.arms import arm_weights
from jepa_geometry.wm.training import world_model_artifact


def _v_log(kappa: float, d: int = 6, steps: int = 5, drift: float = 0.0) -> np.ndarray:
    """A (steps, d) log of target variances with tr = d: cond grows to κ by step 3, then the
    top coordinate moves by ``drift`` (swapping mass between coordinates 0 and 1)."""
    rows = []
    for t in range(steps):
        c = min(kappa, 1 + (kappa - 1) * t / 2)  # cond reached at t = 2
        b = np.zeros(d)
        b[0], b[-1] = 0.5 * np.log(c), -0.5 * np.log(c)
        if t > 2:
            b[1] = drift * (t - 2) * 0.5 * np.log(c)
            b[1] = min(b[1], 0.5 * np.log(c))
        v = d * np.exp(b) / np.exp(b).sum()
        rows.append(v)
    return np.array(rows)


def test_default_kappa_is_arm_weights_default():
    assert arm_weights("anisowm", "tworoom").kappa == KC.DEFAULT_KAPPA


def test_kappa_two_reuses_the_study_model_and_cell():
    base = load_profile("smoke")
    for task in K.KAPPA_SWEEP.tasks:
        p = load_study(task).profile(base)
        w = K.KAPPA_SWEEP.weights(2.0)
        assert w is None
        # an explicit override at the default would also give the study's model key
        explicit = world_model_artifact(task, "anisowm", 0, p, {"kappa": 2.0}).key
        assert world_model_artifact(task, "anisowm", 0, p, w).key == explicit
        study_cell = PlanningCell(
            task, "anisowm", 0, p, solver="cem", budget="T1",
            protocol=load_study(task).main_protocol,
        )  # fmt: skip
        mine = K.KAPPA_SWEEP.cell(task, 2.0, base, "evaluation")
        assert [a.key for a in mine.artifacts()] == [a.key for a in study_cell.artifacts()]
        other = K.KAPPA_SWEEP.cell(task, 4.0, base, "evaluation")
        assert other.artifacts()[0].key != study_cell.artifacts()[0].key
        val = K.KAPPA_SWEEP.cell(task, 2.0, base, "validation")
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
    with pytest.raises(K.KappaError, match=match) as e:
        K.KappaSweep(**kwargs)
    assert "\n" not in str(e.value)


def test_bad_split():
    with pytest.raises(K.KappaError, match="valid: evaluation, validation"):
        K.KAPPA_SWEEP.cell("tworoom", 2.0, load_profile("smoke"), "test")


def test_bound_and_saturation_on_known_spectra():
    v = _v_log(2.0)
    conds = v.max(axis=1) / v.min(axis=1)
    assert np.allclose(conds[2:], 2.0)
    assert K.saturation_step([10, 20, 30, 40, 50], v, 2.0) == 30
    assert KC.within_bound(conds[-1], 2.0) and not KC.within_bound(2.01, 2.0)
    assert K.saturated(2.0 * (1 - 1e-4), 2.0) and not K.saturated(1.9, 2.0)
    assert not K.saturated(1.0, 1.0)  # κ = 1 has nothing to reach
    unsat = _v_log(2.0)[:2]  # stops before reaching the bound
    assert K.saturation_step([10, 20], unsat, 2.0) is None
    assert np.isnan(K.allocation_change([10, 20], unsat, 2.0))


def test_allocation_change_closed_form():
    v = _v_log(2.0, drift=1.0)
    v_sat, v_end = v[2], v[-1]
    want = np.linalg.norm(v_end - v_sat) / np.linalg.norm(v_sat - 1)
    got = K.allocation_change(range(5), v, 2.0)
    assert got == pytest.approx(want) and got > KC.EVOLVE_MIN
    assert K.allocation_change(range(5), _v_log(2.0, drift=0.0), 2.0) == pytest.approx(0.0)


def test_spectrum_distance():
    a = np.array([1.5, 1.0, 0.5])
    assert KC.spectrum_distance(a, a[::-1]) == 0.0  # sorted first
    b = np.array([1.2, 1.0, 0.8])
    assert KC.spectrum_distance(a, b) == pytest.approx(np.sqrt((0.09 + 0 + 0.09) / 3))
    # different D: [1.5, 0.5] read at the quantiles 1/8, 3/8, 5/8, 7/8 (linear between its own
    # 1/4 and 3/4, constant beyond) is [1.5, 1.25, 0.75, 0.5]
    got = KC.spectrum_distance([1.5, 0.5], [1.5, 1.5, 0.5, 0.5])
    assert got == pytest.approx(np.sqrt(2 * 0.25**2 / 4))
    with pytest.raises(ValueError):
        KC.spectrum_distance([], a)


def test_spectra_separation():
    spectra = {
        ("tworoom", 0): np.array([1.4, 1.0, 0.6]),
        ("tworoom", 1): np.array([1.41, 1.0, 0.59]),
        ("pusht", 0): np.array([1.1, 1.0, 0.9]),
    }
    between, within = KC.spectra_separation(spectra, "tworoom", "pusht")
    assert within == pytest.approx(np.sqrt(2 * 0.01**2 / 3))
    assert between == pytest.approx(np.sqrt(2 * 0.3**2 / 3))
    _, none = KC.spectra_separation(
        {k: v for k, v in spectra.items() if k[1] == 0}, "tworoom", "pusht"
    )
    assert np.isnan(none)


def test_best_kappa_ignores_isotropic_and_breaks_ties_low():
    assert KC.best_kappa({1.0: 0.9, 1.5: 0.4, 2.0: 0.6, 4.0: 0.6, 8.0: 0.5}) == 2.0
    with pytest.raises(ValueError, match="no κ > 1"):
        KC.best_kappa({1.0: 0.5})


def _results(
    val: dict[float, float],
    ev: dict[float, float],
    n: int = 200,
    changes: tuple[float, ...] = (0.2,),
) -> K.KappaResults:
    """Results of one task with success patterns of exact rates on nested pairs (each κ's
    successes are the first ``rate * n`` pairs, so the paired differences are known), and the
    allocation change after saturation of each training seed at κ = 2 (``changes``)."""

    def outcomes(rate: float) -> np.ndarray:
        x = np.zeros(n)
        x[: int(round(rate * n))] = 1
        return x

    success = {}
    for k in val:
        success[("tworoom", k, "validation")] = outcomes(val[k])
        success[("tworoom", k, "evaluation")] = outcomes(ev[k])
    models = pd.DataFrame(
        [
            {"task": "tworoom", "kappa": k, "D": 6, "cond": k, "departure": float(k > 1),
             "saturated": k > 1,
             "above_mean": 2, "first_saturated": 10.0, "allocation_change": 0.2}
            for k in val
        ]
    )  # fmt: skip
    seed_changes = {("tworoom", s): c for s, c in enumerate(changes)}
    return K.KappaResults(models, pd.DataFrame(), success, {}, seed_changes)


def test_non_monotone_picked_on_validation_not_evaluation():
    # validation says κ = 1.5; evaluation alone would have picked κ = 4
    val = {1.0: 0.3, 1.5: 0.6, 2.0: 0.4, 4.0: 0.5, 8.0: 0.3}
    ev = {1.0: 0.3, 1.5: 0.5, 2.0: 0.4, 4.0: 0.7, 8.0: 0.2}
    res = _results(val, ev)
    ((task, claim, evidence),) = KC.non_monotone_items(res, ["tworoom"])
    assert claim.a == "κ=1.5" and claim.b == "κ=1 and κ=8"
    # both ends are beaten (by 0.2 and 0.3); the weaker comparison, against κ = 1, is shown
    assert evidence.effect == pytest.approx(0.5 - 0.3) and "κ = 1.5 vs κ = 1" in evidence.units
    assert evidence.low > 0 and evidence.models == 1
    rows = KC.kappa_verdicts(res, K.KappaSweep(tasks=("tworoom",)))
    row = rows[rows["claim"] == KAPPA_CLAIMS[3].statement].iloc[0]
    # an interval over the pairs of one model per κ, however clear, says nothing of κ itself
    assert row["verdict"] == "inconclusive"


def test_monotone_curve_is_not_reproduced():
    # success rises with κ on both splits: κ_best is κ_max, no interior optimum
    val = {1.0: 0.2, 1.5: 0.3, 2.0: 0.4, 4.0: 0.5, 8.0: 0.6}
    res = _results(val, val)
    ((_, claim, evidence),) = KC.non_monotone_items(res, ["tworoom"])
    assert claim.a == "κ=8" and evidence.effect == 0.0 and "κ = 8 vs κ = 8" in evidence.units
    rows = KC.kappa_verdicts(res, K.KappaSweep(tasks=("tworoom",)))
    assert rows[rows["claim"] == KAPPA_CLAIMS[3].statement]["verdict"].item() == "inconclusive"
    # an interior validation optimum that loses to κ_max on evaluation: one model per κ, so
    # not contradicted either, though its interval lies below zero
    val2 = {1.0: 0.2, 1.5: 0.3, 2.0: 0.7, 4.0: 0.5, 8.0: 0.6}
    ev2 = {1.0: 0.2, 1.5: 0.3, 2.0: 0.2, 4.0: 0.5, 8.0: 0.6}
    ((_, _, below),) = KC.non_monotone_items(_results(val2, ev2), ["tworoom"])
    assert below.high < 0
    rows2 = KC.kappa_verdicts(_results(val2, ev2), K.KappaSweep(tasks=("tworoom",)))
    label = rows2[rows2["claim"] == KAPPA_CLAIMS[3].statement]["verdict"].item()
    assert label == "inconclusive"


def test_kappa_constrains_holds_by_construction():
    """The clamp keeps cond Λ <= κ whatever the data: the row says so, never "reproduced"."""
    val = {1.0: 0.3, 1.5: 0.6, 2.0: 0.4, 4.0: 0.5, 8.0: 0.3}
    res = _results(val, val)
    rows = KC.kappa_verdicts(res, K.KappaSweep(tasks=("tworoom",)), KAPPA_CLAIMS[:1])
    assert rows["verdict"].item() == BY_CONSTRUCTION and "by construction" in rows["units"].item()
    res.models.loc[res.models["kappa"] == 8.0, "cond"] = 8.1  # the bound broken: our bug
    rows = KC.kappa_verdicts(res, K.KappaSweep(tasks=("tworoom",)), KAPPA_CLAIMS[:1])
    assert rows["verdict"].item() == "contradicted"


def _after_saturation(changes: tuple[float, ...]) -> pd.Series:
    val = {1.0: 0.3, 1.5: 0.6, 2.0: 0.4, 4.0: 0.5, 8.0: 0.3}
    res = _results(val, val, changes=changes)
    res.models.loc[res.models["kappa"] == 2.0, "allocation_change"] = changes[0]
    rows = KC.kappa_verdicts(res, K.KappaSweep(tasks=("tworoom",)), KAPPA_CLAIMS[1:2])
    return rows.iloc[0]


def test_after_saturation_rests_on_the_seeds_not_one_run():
    # one training run that moved far after saturation: no spread between models, no verdict
    assert _after_saturation((0.5,))["verdict"] == "inconclusive"
    # three seeds: the t-interval of their mean decides, computed here from its formula
    for changes in ((0.3, 0.35, 0.4), (0.02, 0.5, 0.9), (0.01, 0.02, 0.03)):
        x = np.array(changes)
        se = x.std(ddof=1) / np.sqrt(3)
        p = sps.t.sf((x.mean() - KC.EVOLVE_MIN) / se, 2)
        upper = x.mean() + sps.t.ppf(0.975, 2) * se
        want = "reproduced" if p < 0.025 else "contradicted" if upper < KC.EVOLVE_MIN else None
        row = _after_saturation(changes)
        assert row["verdict"] == (want or "inconclusive"), changes
        assert row["units"] == "3 seeds (t-interval)"
    assert _after_saturation((0.3, np.nan, 0.4))["verdict"] == "not tested (precondition failed)"


def test_unknown_kind():
    bad = KappaClaimSpec("x", "telepathy")
    with pytest.raises(ValueError, match="unknown kind 'telepathy'"):
        KC.kappa_verdicts(_results({2.0: 0.5}, {2.0: 0.5}), K.KAPPA_SWEEP, [bad])


@pytest.mark.slow
def test_smoke_sweep_end_to_end():
    """The smoke sweep (10 tiny models, 20 cells; about 50 s on one core) built, read back and
    judged; a second read finds everything cached and gives the same outcomes."""
    base = load_profile("smoke")
    said = []
    K.build_sweep(base, workers=1, progress=False, say=said.append)
    assert said and said[0].startswith("κ sweep cost estimate")
    assert K.missing(K.KAPPA_SWEEP, base) == []
    res = K.load_results(base)
    assert len(res.models) == 10
    table = K.sweep_table(res)
    assert list(table["κ"][:5]) == [1.0, 1.5, 2.0, 4.0, 8.0]
    rows = KC.kappa_verdicts(res, K.KAPPA_SWEEP)
    assert set(rows["verdict"]) <= {*LABELS, BY_CONSTRUCTION} and len(rows) == 6
    # a rerun is cached: nothing left to build, same numbers
    assert K.estimate_cost(K.KAPPA_SWEEP, base)["estimated seconds"].sum() == 0
    again = K.load_results(base)
    assert all(np.array_equal(res.success[k], again.success[k]) for k in res.success)


def test_best_kappa_differs_by_task():
    a = _results(
        {1.0: 0.1, 1.5: 0.6, 2.0: 0.4, 4.0: 0.5, 8.0: 0.3}, {k: 0.5 for k in K.KAPPA_SWEEP.kappas}
    )
    b = _results(
        {1.0: 0.1, 1.5: 0.2, 2.0: 0.4, 4.0: 0.5, 8.0: 0.3}, {k: 0.5 for k in K.KAPPA_SWEEP.kappas}
    )
    tied = _results(
        {1.0: 0.1, 1.5: 0.6, 2.0: 0.6, 4.0: 0.5, 8.0: 0.3}, {k: 0.5 for k in K.KAPPA_SWEEP.kappas}
    )

    def both(x: K.KappaResults, y: K.KappaResults) -> str:
        success = {**x.success, **{("pusht", k, s): v for (_, k, s), v in y.success.items()}}
        models = pd.concat([x.models, y.models.assign(task="pusht")], ignore_index=True)
        res = K.KappaResults(models, pd.DataFrame(), success, {})
        rows = KC.kappa_verdicts(res, K.KAPPA_SWEEP, [KAPPA_CLAIMS[4]])
        return rows["verdict"].item()

    # one training run per κ: two argmaxes of single models are not a difference between tasks
    assert both(a, b) == "inconclusive"  # 1.5 vs 4
    assert both(a, a) == "inconclusive"  # 1.5 on both
    assert both(tied, b) == "inconclusive"  # Two-Room's 1.5 only by the tie-break


def test_claims_about_kappa_need_lambda_selected():
    val = {1.0: 0.3, 1.5: 0.6, 2.0: 0.4, 4.0: 0.5, 8.0: 0.2}
    res = _results(val, val)
    one = K.KappaSweep(tasks=("tworoom",))
    assert KC.lambda_selected(res.models, "tworoom")
    assert KC.kappa_verdicts(res, one, [KAPPA_CLAIMS[3]])["verdict"].item() == "inconclusive"
    res.models.loc[res.models["kappa"] == 4.0, "departure"] = 0.1  # Λ stayed near I at κ = 4
    assert not KC.lambda_selected(res.models, "tworoom")
    row = KC.kappa_verdicts(res, one, [KAPPA_CLAIMS[3]])
    assert row["verdict"].item() == "not tested (precondition failed)"
    assert KC.kappa_verdicts(res, one, [KAPPA_CLAIMS[0]])["verdict"].item() == BY_CONSTRUCTION


@pytest.mark.parametrize(
    ("curve", "want"),
    [
        ({1.0: 0.6, 1.5: 0.5, 2.0: 0.4, 4.0: 0.3, 8.0: 0.2}, (1.5, 1.0)),  # falling from κ = 1
        ({1.0: 0.2, 1.5: 0.3, 2.0: 0.4, 4.0: 0.5, 8.0: 0.6}, (8.0, 8.0)),  # rising to κ_max
        ({1.0: 0.3, 1.5: 0.4, 2.0: 0.7, 4.0: 0.5, 8.0: 0.4}, (2.0, 8.0)),  # an interior peak
    ],
)
def test_not_monotone_compares_the_whole_curve(curve, want):
    """A monotone curve never reads "reproduced", even with as many trained models as the rule
    asks for: κ_best is compared with both ends, κ = 1 included, and the weaker comparison
    decides (here by the rates of the nested outcomes, exactly)."""
    ((_, claim, evidence),) = KC.non_monotone_items(_results(curve, curve), ["tworoom"])
    best, weaker_end = want
    assert claim.a == f"κ={best:g}"
    assert evidence.effect == pytest.approx(curve[best] - curve[weaker_end])
    label = verdict(claim, replace(evidence, models=3))  # as if each κ had three models
    assert (label == "reproduced") == (want == (2.0, 8.0))
