"""AnisoWM's κ claims (extensions.kappa): each evaluator on results with known answers, judged
by the book's rule in one Holm family."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from jepa_geometry.extensions import kappa
from jepa_geometry.verdict import kappa_claims
from jepa_geometry.verdict.claims import KappaClaimSpec
from jepa_geometry.verdict.records import KAPPA_CLAIMS
from jepa_geometry.verdict.rule import BY_CONSTRUCTION, NOT_TESTED, VERDICTS, verdict


def _results(
    val: dict[float, float],
    ev: dict[float, float],
    n: int = 200,
    changes: tuple[float, ...] = (0.2,),
) -> kappa.KappaResults:
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
            {
                "task": "tworoom",
                "kappa": k,
                "D": 6,
                "cond": k,
                "departure": float(k > 1),
                "saturated": k > 1,
                "above_mean": 2,
                "first_saturated": 10.0,
                "allocation_change": 0.2,
            }
            for k in val
        ]
    )
    seed_changes = {("tworoom", s): c for s, c in enumerate(changes)}
    return kappa.KappaResults(models, pd.DataFrame(), success, {}, seed_changes)


def test_non_monotone_picked_on_validation_not_evaluation():
    # validation says κ = 1.5; evaluation alone would have picked κ = 4
    val = {1.0: 0.3, 1.5: 0.6, 2.0: 0.4, 4.0: 0.5, 8.0: 0.3}
    ev = {1.0: 0.3, 1.5: 0.5, 2.0: 0.4, 4.0: 0.7, 8.0: 0.2}
    res = _results(val, ev)
    ((task, claim, evidence),) = kappa_claims.non_monotone_items(res, ["tworoom"])
    assert claim.a == "κ=1.5" and claim.b == "κ=1 and κ=8"
    # both ends are beaten (by 0.2 and 0.3); the weaker comparison, against κ = 1, is shown
    assert evidence.effect == pytest.approx(0.5 - 0.3) and "κ = 1.5 vs κ = 1" in evidence.units
    assert evidence.low > 0 and evidence.models == 1
    rows = kappa_claims.kappa_verdicts(res, kappa.KappaSweep(tasks=("tworoom",)))
    row = rows[rows["claim"] == KAPPA_CLAIMS[3].statement].iloc[0]
    # an interval over the pairs of one model per κ, however clear, says nothing of κ itself
    assert row["verdict"] == "inconclusive"


def test_monotone_curve_is_not_reproduced():
    # success rises with κ on both splits: κ_best is κ_max, no interior optimum
    val = {1.0: 0.2, 1.5: 0.3, 2.0: 0.4, 4.0: 0.5, 8.0: 0.6}
    res = _results(val, val)
    ((_, claim, evidence),) = kappa_claims.non_monotone_items(res, ["tworoom"])
    assert claim.a == "κ=8" and evidence.effect == 0.0 and "κ = 8 vs κ = 8" in evidence.units
    rows = kappa_claims.kappa_verdicts(res, kappa.KappaSweep(tasks=("tworoom",)))
    assert rows[rows["claim"] == KAPPA_CLAIMS[3].statement]["verdict"].item() == "inconclusive"
    # an interior validation optimum that loses to κ_max on evaluation: one model per κ, so
    # not contradicted either, though its interval lies below zero
    val2 = {1.0: 0.2, 1.5: 0.3, 2.0: 0.7, 4.0: 0.5, 8.0: 0.6}
    ev2 = {1.0: 0.2, 1.5: 0.3, 2.0: 0.2, 4.0: 0.5, 8.0: 0.6}
    ((_, _, below),) = kappa_claims.non_monotone_items(_results(val2, ev2), ["tworoom"])
    assert below.high < 0
    rows2 = kappa_claims.kappa_verdicts(_results(val2, ev2), kappa.KappaSweep(tasks=("tworoom",)))
    label = rows2[rows2["claim"] == KAPPA_CLAIMS[3].statement]["verdict"].item()
    assert label == "inconclusive"


def test_kappa_constrains_holds_by_construction():
    """The clamp keeps cond Λ <= κ whatever the data: the row says so, never "reproduced"."""
    val = {1.0: 0.3, 1.5: 0.6, 2.0: 0.4, 4.0: 0.5, 8.0: 0.3}
    res = _results(val, val)
    rows = kappa_claims.kappa_verdicts(res, kappa.KappaSweep(tasks=("tworoom",)), KAPPA_CLAIMS[:1])
    assert rows["verdict"].item() == BY_CONSTRUCTION and "by construction" in rows["units"].item()
    res.models.loc[res.models["kappa"] == 8.0, "cond"] = 8.1  # the bound broken: our bug
    rows = kappa_claims.kappa_verdicts(res, kappa.KappaSweep(tasks=("tworoom",)), KAPPA_CLAIMS[:1])
    assert rows["verdict"].item() == "contradicted"


def _after_saturation(changes: tuple[float, ...]) -> pd.Series:
    val = {1.0: 0.3, 1.5: 0.6, 2.0: 0.4, 4.0: 0.5, 8.0: 0.3}
    res = _results(val, val, changes=changes)
    res.models.loc[res.models["kappa"] == 2.0, "allocation_change"] = changes[0]
    rows = kappa_claims.kappa_verdicts(res, kappa.KappaSweep(tasks=("tworoom",)), KAPPA_CLAIMS[1:2])
    return rows.iloc[0]


def test_after_saturation_rests_on_the_seeds_not_one_run():
    # one training run that moved far after saturation: no spread between models, no verdict
    assert _after_saturation((0.5,))["verdict"] == "inconclusive"
    # three seeds: the t-interval of their mean decides, computed here from its formula
    for changes in ((0.3, 0.35, 0.4), (0.02, 0.5, 0.9), (0.01, 0.02, 0.03)):
        x = np.array(changes)
        se = x.std(ddof=1) / np.sqrt(3)
        p = sps.t.sf((x.mean() - kappa_claims.EVOLVE_MIN) / se, 2)
        upper = x.mean() + sps.t.ppf(0.975, 2) * se
        want = (
            "reproduced"
            if p < 0.025
            else "contradicted"
            if upper < kappa_claims.EVOLVE_MIN
            else None
        )
        row = _after_saturation(changes)
        assert row["verdict"] == (want or "inconclusive"), changes
        assert row["units"] == "3 seeds (t-interval)"
    # a model that never reached κ: what the claim is about (after saturation) is absent
    gone = _after_saturation((0.3, np.nan, 0.4))
    assert gone["verdict"] == NOT_TESTED == "not tested (subject absent)"
    assert gone["ours"] == "a model never reached κ"


def test_an_unknown_kind_of_evidence_stops_in_one_line():
    bad = KappaClaimSpec("x", "telepathy")
    with pytest.raises(ValueError, match="unknown kind 'telepathy'"):
        kappa_claims.kappa_verdicts(_results({2.0: 0.5}, {2.0: 0.5}), kappa.KAPPA_SWEEP, [bad])


def test_the_best_kappas_of_single_runs_never_tell_tasks_apart():
    a = _results(
        {1.0: 0.1, 1.5: 0.6, 2.0: 0.4, 4.0: 0.5, 8.0: 0.3},
        {k: 0.5 for k in kappa.KAPPA_SWEEP.kappas},
    )
    b = _results(
        {1.0: 0.1, 1.5: 0.2, 2.0: 0.4, 4.0: 0.5, 8.0: 0.3},
        {k: 0.5 for k in kappa.KAPPA_SWEEP.kappas},
    )
    tied = _results(
        {1.0: 0.1, 1.5: 0.6, 2.0: 0.6, 4.0: 0.5, 8.0: 0.3},
        {k: 0.5 for k in kappa.KAPPA_SWEEP.kappas},
    )

    def both(x: kappa.KappaResults, y: kappa.KappaResults) -> str:
        success = {**x.success, **{("pusht", k, s): v for (_, k, s), v in y.success.items()}}
        models = pd.concat([x.models, y.models.assign(task="pusht")], ignore_index=True)
        res = kappa.KappaResults(models, pd.DataFrame(), success, {})
        rows = kappa_claims.kappa_verdicts(res, kappa.KAPPA_SWEEP, [KAPPA_CLAIMS[4]])
        return rows["verdict"].item()

    # one training run per κ: two argmaxes of single models are not a difference between tasks
    assert both(a, b) == "inconclusive"  # 1.5 vs 4
    assert both(a, a) == "inconclusive"  # 1.5 on both
    assert both(tied, b) == "inconclusive"  # Two-Room's 1.5 only by the tie-break


def test_lambda_selected_is_a_premise_read_beside_the_kappa_claims_never_a_gate():
    """Λ staying near the identity at one κ is read beside the claims about what κ does (its
    own column), and the claims are judged as the paper states them: the spectra claim still
    reads its verdict, the one-model claims still "inconclusive", never "not tested"."""
    val = {1.0: 0.3, 1.5: 0.6, 2.0: 0.4, 4.0: 0.5, 8.0: 0.2}
    one = _results(val, val)
    success = {**one.success, **{("pusht", k, s): v for (_, k, s), v in one.success.items()}}
    models = pd.concat([one.models, one.models.assign(task="pusht")], ignore_index=True)
    spectra = {
        ("tworoom", 0): np.array([1.4, 1.0, 0.6]),
        ("tworoom", 1): np.array([1.41, 1.0, 0.59]),
        ("pusht", 0): np.array([1.1, 1.0, 0.9]),
        ("pusht", 1): np.array([1.09, 1.0, 0.91]),
    }
    res = kappa.KappaResults(models, pd.DataFrame(), success, spectra, one.seed_changes)
    both = kappa.KappaSweep(tasks=("tworoom", "pusht"))
    specs = [KAPPA_CLAIMS[i] for i in (1, 2, 3, 4)]
    col = kappa_claims.LAMBDA_PREMISE
    before = kappa_claims.kappa_verdicts(res, both, specs).set_index("claim")
    assert kappa_claims.lambda_selected(res.models, "tworoom")
    at_4 = (res.models["task"] == "tworoom") & (res.models["kappa"] == 4.0)
    res.models.loc[at_4, "departure"] = 0.1  # Λ stayed near I at κ = 4 on Two-Room
    assert not kappa_claims.lambda_selected(res.models, "tworoom")
    assert kappa_claims.lambda_selected(res.models, "pusht")
    after = kappa_claims.kappa_verdicts(res, both, specs).set_index("claim")
    assert after["verdict"].to_list() == before["verdict"].to_list()
    assert set(after["verdict"]) <= set(VERDICTS)  # every row judged
    spectra = after.loc[KAPPA_CLAIMS[2].statement]
    assert spectra["verdict"] == "reproduced"  # between tasks 0.24 > within 0.01
    assert spectra[col] == "Two-Room: no; Push-T: yes"
    assert before.loc[KAPPA_CLAIMS[2].statement, col] == "Two-Room: yes; Push-T: yes"
    mono = after[after.index == KAPPA_CLAIMS[3].statement].set_index("task")
    assert (mono["verdict"] == "inconclusive").all()  # one model per κ, judged all the same
    assert mono[col].to_dict() == {"Two-Room": "Two-Room: no", "Push-T": "Push-T: yes"}
    assert after.loc[KAPPA_CLAIMS[4].statement, "verdict"] == "inconclusive"
    assert after.loc[KAPPA_CLAIMS[1].statement, col] == ""  # a claim no premise informs
    assert (
        kappa_claims.kappa_verdicts(res, both, [KAPPA_CLAIMS[0]])["verdict"].item()
        == BY_CONSTRUCTION
    )


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
    ((_, claim, evidence),) = kappa_claims.non_monotone_items(_results(curve, curve), ["tworoom"])
    best, weaker_end = want
    assert claim.a == f"κ={best:g}"
    assert evidence.effect == pytest.approx(curve[best] - curve[weaker_end])
    label = verdict(claim, replace(evidence, models=3))  # as if each κ had three models
    assert (label == "reproduced") == (want == (2.0, 8.0))


def test_spectra_are_compared_sorted_at_the_same_quantiles():
    a = np.array([1.5, 1.0, 0.5])
    assert kappa_claims.spectrum_distance(a, a[::-1]) == 0.0  # sorted first
    b = np.array([1.2, 1.0, 0.8])
    assert kappa_claims.spectrum_distance(a, b) == pytest.approx(np.sqrt((0.09 + 0 + 0.09) / 3))
    # different D: [1.5, 0.5] read at the quantiles 1/8, 3/8, 5/8, 7/8 (linear between its own
    # 1/4 and 3/4, constant beyond) is [1.5, 1.25, 0.75, 0.5]
    got = kappa_claims.spectrum_distance([1.5, 0.5], [1.5, 1.5, 0.5, 0.5])
    assert got == pytest.approx(np.sqrt(2 * 0.25**2 / 4))
    with pytest.raises(ValueError):
        kappa_claims.spectrum_distance([], a)


def test_the_separation_sets_the_closest_pair_across_tasks_against_the_widest_within():
    spectra = {
        ("tworoom", 0): np.array([1.4, 1.0, 0.6]),
        ("tworoom", 1): np.array([1.41, 1.0, 0.59]),
        ("pusht", 0): np.array([1.1, 1.0, 0.9]),
    }
    between, within = kappa_claims.spectra_separation(spectra, "tworoom", "pusht")
    assert within == pytest.approx(np.sqrt(2 * 0.01**2 / 3))
    assert between == pytest.approx(np.sqrt(2 * 0.3**2 / 3))
    _, none = kappa_claims.spectra_separation(
        {k: v for k, v in spectra.items() if k[1] == 0}, "tworoom", "pusht"
    )
    assert np.isnan(none)


def test_best_kappa_ignores_isotropic_and_breaks_ties_low():
    assert kappa_claims.best_kappa({1.0: 0.9, 1.5: 0.4, 2.0: 0.6, 4.0: 0.6, 8.0: 0.5}) == 2.0
    with pytest.raises(ValueError, match="no κ > 1"):
        kappa_claims.best_kappa({1.0: 0.5})
