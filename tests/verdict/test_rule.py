"""The verdict rule and its evidence builders, against direct computations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from jepa_geometry.verdict import preconditions as P
from jepa_geometry.verdict import rule as V
from jepa_geometry.verdict.claims import PaperNumber, paper_value
from jepa_geometry.verdict.records import paper_claims
from jepa_geometry.verdict.reference import reference_numbers


def _claim(**kw):
    base = dict(paper="P", statement="s", measure="m", a="x", b="y")
    return V.Claim(**{**base, **kw})


@pytest.mark.parametrize(
    ("low", "high", "direction", "min_effect", "expected"),
    [
        (0.01, 0.2, 1, 0.0, "reproduced"),
        (0.01, 0.2, 1, 0.05, "inconclusive"),  # above 0, but not surely above what matters
        (0.06, 0.3, 1, 0.03, "reproduced"),
        (-0.2, -0.01, 1, 0.0, "contradicted"),
        (-0.02, 0.02, 1, 0.03, "not detected at this scale"),  # rules out 3 points
        (-0.05, 0.05, 1, 0.03, "inconclusive"),
        (-0.2, -0.01, -1, 0.0, "reproduced"),  # "a smaller" claims
        (0.01, 0.2, -1, 0.0, "contradicted"),
        (-0.02, 0.02, -1, 0.03, "not detected at this scale"),
    ],
)
def test_the_label_follows_where_the_interval_lies(low, high, direction, min_effect, expected):
    ev = V.Evidence((low + high) / 2, low, high, "u", 3)
    assert V.verdict(_claim(direction=direction, min_effect=min_effect), ev) == expected


def test_the_paper_s_magnitude_decides_nothing():
    ev = V.Evidence(0.0, -0.05, 0.05, "u", 3)
    assert V.verdict(_claim(paper_effect=0.10), ev) == V.verdict(_claim(), ev) == "inconclusive"


def test_a_non_inferiority_claim_is_judged_against_its_margin():
    c = _claim(threshold=-0.01)
    assert V.verdict(c, V.Evidence(-0.002, -0.005, 0.001, "u", 3)) == "reproduced"
    assert V.verdict(c, V.Evidence(-0.03, -0.04, -0.02, "u", 3)) == "contradicted"


def test_one_sided_p_is_the_normal_tail_beyond_what_matters():
    ev = V.Evidence(0.1, 0.1 - 1.959964 * 0.02, 0.1 + 1.959964 * 0.02, "u", 3)  # se 0.02
    assert V.one_sided_p(_claim(min_effect=0.06), ev) == pytest.approx(sps.norm.sf(2.0))
    assert V.one_sided_p(_claim(direction=-1), ev) == pytest.approx(sps.norm.sf(-5.0))
    assert V.one_sided_p(_claim(), V.Evidence(0.1, -np.inf, np.inf, "u", 3)) == 1.0


def test_holm_against_the_step_down_definition():
    p = np.array([0.01, 0.04, 0.03, 0.005])
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 -> 0.02, 0.03, 0.06, 0.04 -> running max
    np.testing.assert_allclose(V.holm(p), [0.03, 0.06, 0.06, 0.02])
    assert V.holm([0.5]).tolist() == [0.5] and (V.holm([0.4, 0.6]) <= 1).all()


def test_many_claims_need_more_than_a_single_interval_excluding_zero():
    """Twenty claims each with p ~ 0.02 alone: 'reproduced' one by one, not as a family."""
    ev = V.Evidence(0.041, 0.001, 0.081, "u", 3)  # p one-sided ~ 0.022
    items = [(_claim(statement=f"c{i}"), ev) for i in range(20)]
    assert V.verdict(*items[0]) == "reproduced"
    table = V.verdict_table(items)
    assert set(table.verdict) == {"inconclusive"} and (table["p (Holm)"] > 0.05).all()


def test_preconditions_are_measured_from_the_models():
    import types

    spectra = pd.DataFrame(
        {"arm": "lewm", "train_seed": 0, "pc": np.arange(1, 65), "share": np.full(64, 1 / 64)}
    )
    lam = {("anisowm", 0): {"v": np.ones((2, 8))}, ("anisowm", 1): {"v": np.ones((2, 8))}}
    profile = types.SimpleNamespace(
        geometry=types.SimpleNamespace(probe_frames=1500), model=types.SimpleNamespace(embed_dim=64)
    )
    geo = types.SimpleNamespace(
        spectra=spectra, lambda_spectra=lam, probes=pd.DataFrame({"arm": []})
    )
    rows = P.preconditions(geo, kappa=2.0, profile=profile).set_index("precondition")
    assert bool(rows.loc[P.LEWM_ISOTROPIC, "holds"])  # exactly isotropic: below any sample's
    assert not bool(rows.loc["Λ selected (anisowm)", "holds"])  # Λ = I: no departure
    assert "0.000 [0.000, 0.000], 2 seeds" in rows.loc["Λ selected (anisowm)", "measured"]
    assert "Λ follows the prediction error" not in rows.index  # only with diagnostics
    diag = pd.DataFrame(
        {
            "arm": "anisowm",
            "train_seed": [0] * 4 + [1] * 4,
            "step": [50, 100, 150, 200] * 2,
            "diagnostic": "corr_v_rel_err",
            "value": [-0.9, 0.1, 0.2, 0.3, -0.9, 0.2, 0.3, 0.4],
        }
    )
    with_diag = P.preconditions(geo, kappa=2.0, diagnostics=diag).set_index("precondition")
    row = with_diag.loc["Λ follows the prediction error"]
    assert not bool(row["holds"]) and "+0.25" in row["measured"]  # last 3 steps: step 50 dropped


def test_a_bad_direction_or_an_effect_outside_its_interval_is_refused():
    with pytest.raises(ValueError, match="direction"):
        _claim(direction=2)
    with pytest.raises(ValueError, match="outside"):
        V.Evidence(0.5, 0.0, 0.1, "u", 3)


def test_seed_level_evidence_is_a_paired_t_interval():
    rng = np.random.default_rng(0)
    a, b = rng.normal(1.0, 0.3, 4), rng.normal(0.5, 0.3, 4)
    t = pd.DataFrame({"arm": ["x"] * 4 + ["y"] * 4, "train_seed": [0, 1, 2, 3] * 2, "v": [*a, *b]})
    ev = V.seed_level_evidence(t, "x", "y", "v")
    d = a - b
    lo, hi = sps.t.interval(0.95, 3, loc=d.mean(), scale=sps.sem(d))
    assert ev.effect == pytest.approx(d.mean())
    assert (ev.low, ev.high) == pytest.approx((lo, hi))
    greater = sps.ttest_rel(a, b, alternative="greater").pvalue
    assert V.one_sided_p(_claim(), ev) == pytest.approx(greater)  # the paired t-test
    one = V.seed_level_evidence(t[t.train_seed == 0], "x", "y", "v")
    assert V.verdict(_claim(), one) == "inconclusive" and one.effect == pytest.approx(d[0])


def test_paired_unit_evidence_tests_on_its_bootstrap_replicates():
    """Binary success: the interval and the test both read the two-stage bootstrap replicates
    (seeds x pairs, computed here by hand with the same generator), not McNemar's test, which
    pools (seed, pair) units as if independent."""
    rng = np.random.default_rng(1)
    rows = []
    sa = rng.random((3, 50)) < 0.7
    sb = rng.random((3, 50)) < 0.5
    for m, s in (("x", sa), ("y", sb)):
        for seed in range(3):
            for ep in range(50):
                rows.append({"arm": m, "train_seed": seed, "episode": ep, "ok": float(s[seed, ep])})
    ev = V.paired_unit_evidence(pd.DataFrame(rows), "x", "y", "ok", "episode")
    d = sa.astype(float) - sb.astype(float)
    assert ev.effect == pytest.approx(d.mean())
    g = np.random.default_rng(0)
    reps = []
    for _ in range(10):  # the bootstrap's chunks: pairs, then seeds
        ep = g.integers(0, 50, size=(1000, 50))
        sd = g.integers(0, 3, size=(1000, 3))
        reps.append(d[sd[:, :, None], ep[:, None, :]].mean(axis=(1, 2)))
    reps = np.sort(np.concatenate(reps))
    assert (ev.low, ev.high) == (reps[249], reps[-250])  # 2.5 % of 10,000 from each end
    assert V.one_sided_p(_claim(min_effect=0.1), ev) == pytest.approx(np.mean(reps <= 0.1))
    assert ev.low < ev.effect < ev.high and ev.models == 3


def test_tier_mean_success_averages_tiers_per_episode_and_paper_tables_agree():
    eps = pd.DataFrame(
        {
            "protocol": "goal25_budget50",
            "solver": "cem",
            "arm": "x",
            "train_seed": 0,
            "budget": ["T1", "T2", "T1", "T2"],
            "episode": [0, 0, 1, 1],
            "success": [True, False, True, True],
        }
    )
    out = V.tier_mean_success(eps, "goal25_budget50", "cem", ["T1", "T2"])
    assert out.set_index("episode")["success"].to_dict() == {0: 0.5, 1: 1.0}
    with pytest.raises(ValueError, match="not every arm"):
        V.tier_mean_success(eps.iloc[:3], "goal25_budget50", "cem", ["T1", "T2"])
    # SCALE's per-solver table is the mean of its per-tier table: two independent entries agree.
    cem = (("solver", "cem"),)
    per_tier = paper_value(PaperNumber("scale_success_per_tier", cem), "tworoom", "scale", "lewm")
    per_solver = paper_value(
        PaperNumber("scale_success_per_solver", cem), "tworoom", "scale", "lewm"
    )
    assert per_tier == pytest.approx(per_solver, abs=0.05)


@pytest.mark.parametrize(("task", "sign"), [("pusht", -1), ("tworoom", 1)])
def test_dinowm_claims_take_scale_s_direction_for_the_task(task, sign):
    from types import SimpleNamespace

    rng = np.random.default_rng(0)
    eps = pd.DataFrame(
        [
            {
                "protocol": "goal25_budget50",
                "solver": "cem",
                "budget": b,
                "arm": m,
                "train_seed": 0,
                "episode": e,
                "success": bool(rng.random() < 0.5),
            }
            for m in ("lewm", "scale", "dinowm")
            for b in ("T1", "T2", "T3", "T4", "T5")
            for e in range(20)
        ]
    )
    empty = SimpleNamespace(
        probes=pd.DataFrame(columns=["arm"]),
        ranking=pd.DataFrame(columns=["arm", "source"]),
        landscape=pd.DataFrame(columns=["arm"]),
    )
    claims = paper_claims(task, eps, empty, "goal25_budget50", "goal25_budget50")
    dino = [c for c, _ in claims if c.a == "dinowm"]
    assert sorted(c.b for c in dino) == ["lewm", "scale"]
    per_solver = {
        r.arm: r.value
        for r in reference_numbers(
            table="scale_success_per_solver", task=task, solver="cem"
        ).itertuples()
    }
    for c in dino:
        assert c.direction == sign
        assert ("better" if sign > 0 else "worse") in c.statement
        assert c.paper_effect == pytest.approx((per_solver["dinowm"] - per_solver[c.b]) / 100)


def test_a_degenerate_interval_is_inconclusive():
    """Both arms at 0 of n pairs: every difference is 0, the bootstrap interval is [0, 0], and
    that is no evidence that the effect is below what matters."""
    rows = [
        {"arm": m, "train_seed": s, "episode": e, "ok": 0.0}
        for m in ("x", "y")
        for s in range(3)
        for e in range(40)
    ]
    ev = V.paired_unit_evidence(pd.DataFrame(rows), "x", "y", "ok", "episode")
    assert (ev.low, ev.effect, ev.high) == (0.0, 0.0, 0.0) and V.degenerate(ev)
    assert V.verdict(_claim(min_effect=0.03), ev) == "inconclusive"
    assert V.one_sided_p(_claim(), V.Evidence(0.5, 0.5, 0.5, "u", 3)) == 1.0
    assert V.verdict(_claim(), V.Evidence(0.5, 0.5, 0.5, "u", 3)) == "inconclusive"


def test_an_untested_claim_keeps_its_numbers_but_leaves_the_family():
    strong = V.Evidence(0.1, 0.06, 0.14, "u", 3)
    weak = V.Evidence(0.041, 0.001, 0.081, "u", 3)
    items = [
        (_claim(statement="a", requires=("Λ selected",)), strong),
        (_claim(statement="b"), weak),
        (_claim(statement="c"), strong),
    ]
    mask = V.tested([c for c, _ in items], {"Λ selected"})
    assert mask == [False, True, True]
    table = V.verdict_table(items, mask)
    assert table.loc[0, "verdict"] == V.NOT_TESTED and np.isnan(table.loc[0, "p (Holm)"])
    assert table.loc[0, "our effect [95% CI]"].startswith("+0.1")  # the numbers stay
    p = [V.one_sided_p(c, e) for c, e in items[1:]]
    np.testing.assert_allclose(table["p (Holm)"].iloc[1:], V.holm(p))  # a family of two
    assert V.verdict_table(items).loc[0, "verdict"] == "reproduced"  # tested by default
    with pytest.raises(ValueError, match="tested_mask has 2 entries for 3 claims"):
        V.verdict_table(items, [True, True])


def test_extensions_are_a_family_of_their_own():
    ev = V.Evidence(0.041, 0.001, 0.081, "u", 3)  # p one-sided ~ 0.022
    own = [(_claim(statement=f"c{i}"), ev) for i in range(5)]
    ext = [(_claim(statement="e", extension=True), ev)]
    table = V.verdict_table(own + ext)
    assert table["p (Holm)"].iloc[-1] == pytest.approx(V.one_sided_p(*ext[0]))  # alone
    assert table["p (Holm)"].iloc[0] == pytest.approx(min(1.0, 5 * V.one_sided_p(*own[0])))
    assert table["verdict"].iloc[-1] == "reproduced" and table["family"].iloc[-1] != "paper"


def test_dinowm_claims_require_dinov2_features():
    import types

    probes = pd.DataFrame({"arm": ["lewm", "dinowm"]})
    geo = types.SimpleNamespace(spectra=pd.DataFrame(columns=["arm"]), probes=probes)
    # the weights file itself decides where the encoder is dinov2 (test_verdict_assumptions)
    dw = types.SimpleNamespace(encoder="standin", dinov2_weights="", token_grid=2)
    pre = P.preconditions(geo, profile=types.SimpleNamespace(dinowm=dw))
    row = pre.set_index("precondition").loc[P.DINOV2_FEATURES]
    assert not bool(row["holds"]) and "standin" in row["measured"]
    assert P.claim_requires(("dinowm", "lewm"), "SCALE") == (P.DINOV2_FEATURES,)
    assert P.claim_requires(("scale+anisowm", "scale")) == ("Λ selected (scale+anisowm)",)
    assert P.claim_requires(("scale", "lewm"), "SCALE") == ()
    no_dino = types.SimpleNamespace(spectra=geo.spectra, probes=probes.iloc[:1])
    assert P.preconditions(no_dino, profile=types.SimpleNamespace(dinowm=dw)).empty


def test_the_rule_table_lists_every_measure_with_its_minimum_effect():
    t = V.min_effects_table().set_index("key")
    assert list(t.index) == list(V.MIN_EFFECTS) and set(V.MEASURE_WORDS) == set(V.MIN_EFFECTS)
    assert t.loc["success", "smallest effect that matters"] == V.MIN_EFFECTS["success"]


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


def test_one_trained_model_per_arm_judges_no_arm():
    """An effect of 50 points on one model's 200 pairs: its interval is narrow and far from
    zero, but it measures that model, not the arm (the training objective) that trained it."""
    d = np.zeros((1, 200))
    d[0, :100] = 1.0
    ev = V.paired_unit_evidence(_units(d), "x", "y", "v", "episode")
    assert ev.low > 0.3 and ev.units == "1 seed x 200 pairs"
    assert V.verdict(_claim(min_effect=0.03), ev) == "inconclusive"
    assert V.one_sided_p(_claim(), ev) == 1.0
    ev3 = V.paired_unit_evidence(_units(np.tile(d, (3, 1))), "x", "y", "v", "episode")
    assert V.verdict(_claim(min_effect=0.03), ev3) == "reproduced"  # three models: judged
