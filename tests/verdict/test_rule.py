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


def crossed_by_hand(d: np.ndarray) -> tuple[float, float, float]:
    """``(mean, se, df)`` of a (seeds x units) matrix from the two-way random-effects layout,
    computed from its sums of squares and variance components (independently of the code's
    residual matrix): ``SS_e = SS_total - SS_seeds - SS_units``, ``σ_a² = (MS_s - MS_e) / U``,
    ``σ_b² = max(MS_u - MS_e, 0) / S``, ``σ_e² = MS_e``, ``var(mean) = σ_a²/S + σ_b²/U +
    σ_e²/(S U)``; the degrees of freedom are the training seeds' ``S - 1`` (the seed is the
    unit: what is uncertain about the mean is first the seed mean square, from ``S`` models)."""
    d = np.asarray(d, float)
    s, u = d.shape
    g = d.mean()
    ss_tot = ((d - g) ** 2).sum()
    ss_s = u * ((d.mean(axis=1) - g) ** 2).sum()
    ss_u = s * ((d.mean(axis=0) - g) ** 2).sum()
    ss_e = ss_tot - ss_s - ss_u
    ms_s, ms_u, ms_e = ss_s / (s - 1), ss_u / (u - 1), ss_e / ((s - 1) * (u - 1))
    var_a, var_b = (ms_s - ms_e) / u, max(ms_u - ms_e, 0.0) / s
    var = var_a / s + var_b / u + ms_e / (s * u)
    return float(g), float(np.sqrt(var)), float(s - 1)


def test_paired_unit_evidence_is_the_crossed_t_interval_of_seeds_and_units():
    """Binary success, three seeds x 50 pairs: the interval is the Student t of the crossed
    layout (hand computation above), the test reads that t, and there are no bootstrap
    replicates any more (nor a bootstrap seed to pass)."""
    rng = np.random.default_rng(1)
    rows = []
    sa = rng.random((3, 50)) < 0.7
    sb = rng.random((3, 50)) < 0.5
    for m, s in (("x", sa), ("y", sb)):
        for seed in range(3):
            for ep in range(50):
                rows.append({"arm": m, "train_seed": seed, "episode": ep, "ok": float(s[seed, ep])})
    table = pd.DataFrame(rows)
    ev = V.paired_unit_evidence(table, "x", "y", "ok", "episode")
    d = sa.astype(float) - sb.astype(float)
    mean, se, df = crossed_by_hand(d)
    assert ev.effect == pytest.approx(mean) and ev.df == pytest.approx(df)
    assert (ev.low, ev.high) == pytest.approx(sps.t.interval(0.95, df, mean, se))
    assert ev.replicates is None and ev.models == 3
    assert df == 2.0 and ev.units == "3 seeds x 50 pairs (t, df 2)"
    p = sps.t.sf((mean - 0.1) / se, df)
    assert V.one_sided_p(_claim(min_effect=0.1), ev) == pytest.approx(p)
    with pytest.raises(TypeError):
        V.paired_unit_evidence(table, "x", "y", "ok", "episode", seed=0)


def test_the_crossed_interval_without_a_unit_component_is_the_t_over_seed_means():
    """Units that differ by nothing shared across seeds (every unit's mean over seeds equal):
    the unit component is estimated at zero, and the interval is the paired t over the three
    seeds' means, df 2."""
    rng = np.random.default_rng(3)
    noise = rng.normal(size=(3, 12))
    d = 0.2 + rng.normal(0, 0.1, (3, 1)) + noise - noise.mean(axis=0)  # equal column means
    mean, se, df, (v_seed, v_fixed) = V.crossed_t_interval(d)
    rows = d.mean(axis=1)
    assert df == 2.0 and v_fixed == 0.0
    assert se == pytest.approx(rows.std(ddof=1) / np.sqrt(3))
    assert se**2 == pytest.approx(v_seed / 3 + v_fixed)
    assert (mean, se, df) == pytest.approx(crossed_by_hand(d))


@pytest.mark.parametrize("seed", range(4))
def test_crossed_t_interval_against_the_anova_hand_computation(seed):
    rng = np.random.default_rng(seed)
    s, u = 3 + seed % 2, 15
    d = (
        rng.normal(0, 0.2, (s, 1))
        + rng.normal(0, 0.3 * seed, (1, u))  # seed 0: no unit component
        + rng.normal(0, 0.5, (s, u))
    )
    mean, se, df, (v_seed, v_fixed) = V.crossed_t_interval(d)
    assert (mean, se, df) == pytest.approx(crossed_by_hand(d))
    assert se**2 == pytest.approx(v_seed / s + v_fixed)  # the split seeds_to_decide scales
    one = V.crossed_t_interval(d[:1])  # one seed: the t over its units, df U - 1
    assert one[1:3] == pytest.approx((d[0].std(ddof=1) / np.sqrt(u), u - 1))


def test_the_crossed_interval_covers_at_three_seeds_where_a_normal_one_does_not():
    """Data from the crossed model with the seed component dominating, three seeds: the
    Student t interval with the seeds' df (2) covers the true mean at least about 95 % of the
    time (3,000 draws: Monte Carlo SE 0.004); the same standard error with a normal quantile
    (the tail a bootstrap of three seeds reads) covers far less."""
    rng = np.random.default_rng(0)
    n, t_cover, z_cover = 3000, 0, 0
    for _ in range(n):
        d = rng.normal(0, 0.3, (3, 1)) + rng.normal(0, 0.1, (1, 20)) + rng.normal(0, 0.3, (3, 20))
        mean, se, df, _ = V.crossed_t_interval(d)
        t_cover += abs(mean) <= sps.t.ppf(0.975, df) * se
        z_cover += abs(mean) <= 1.959964 * se
    assert 0.94 <= t_cover / n <= 0.98
    assert z_cover / n < 0.9


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


def test_only_dinowm_claims_require_something_and_premises_are_read_beside():
    """DINO-WM's claims need DINOv2's own features (the subject itself): absent, they are not
    tested. Λ selected and a near-isotropic LeWM are premises read beside the claims they
    inform (``claim_premises``), never requirements."""
    import types

    probes = pd.DataFrame({"arm": ["lewm", "dinowm"]})
    geo = types.SimpleNamespace(spectra=pd.DataFrame(columns=["arm"]), probes=probes)
    # the weights file itself decides where the encoder is dinov2 (test_verdict_assumptions)
    dw = types.SimpleNamespace(encoder="standin", dinov2_weights="", token_grid=2)
    pre = P.preconditions(geo, profile=types.SimpleNamespace(dinowm=dw))
    row = pre.set_index("precondition").loc[P.DINOV2_FEATURES]
    assert not bool(row["holds"]) and "standin" in row["measured"]
    assert P.claim_requires(("dinowm", "lewm")) == (P.DINOV2_FEATURES,)
    assert P.claim_requires(("scale+anisowm", "scale")) == ()
    assert P.claim_requires(("anisowm", "lewm")) == ()
    assert P.claim_requires(("scale", "lewm")) == ()
    assert P.claim_premises(("scale+anisowm", "scale")) == ("Λ selected (scale+anisowm)",)
    assert P.claim_premises(("anisowm", "lewm"), "AnisoWM") == (
        P.lambda_selected_name("anisowm"),
        P.LEWM_ISOTROPIC,
    )
    assert P.claim_premises(("dinowm", "lewm"), "SCALE") == ()
    no_dino = types.SimpleNamespace(spectra=geo.spectra, probes=probes.iloc[:1])
    assert P.preconditions(no_dino, profile=types.SimpleNamespace(dinowm=dw)).empty


def test_the_rule_table_lists_every_measure_with_its_minimum_effect():
    t = V.min_effects_table().set_index("key")
    col = "smallest effect that matters"
    assert list(t.index) == list(V.MIN_EFFECTS) and set(V.MEASURE_WORDS) == set(V.MIN_EFFECTS)
    assert set(V.RELATIVE_MIN_EFFECTS) <= set(V.MIN_EFFECTS)
    for key, text in t[col].items():
        if key in V.RELATIVE_MIN_EFFECTS:  # a share of the baseline's level, in words
            share, rest = text.split(" % ", 1)
            assert float(share) / 100 == pytest.approx(V.RELATIVE_MIN_EFFECTS[key])
            assert "baseline" in rest
        else:
            assert float(text) == pytest.approx(V.MIN_EFFECTS[key]), key
    assert t.loc["success", "measure"] == V.MEASURE_WORDS["success"]


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
    # the t interval over that model's 200 pairs, df 199
    se = d[0].std(ddof=1) / np.sqrt(200)
    assert (ev.low, ev.high) == pytest.approx(sps.t.interval(0.95, 199, 0.5, se))
    assert ev.low > 0.3 and ev.units == "1 seed x 200 pairs (t, df 199)"
    assert V.verdict(_claim(min_effect=0.03), ev) == "inconclusive"
    assert V.one_sided_p(_claim(), ev) == 1.0
    assert V.resolution(_claim(), ev) == np.inf and V.seeds_to_decide(_claim(), ev) is None
    row = V.verdict_table([(_claim(min_effect=0.03), ev)]).iloc[0]
    assert row["reason"] == "one trained model per arm" and row["resolution"] == "none"
    assert row["seeds to decide"] == ""
    ev3 = V.paired_unit_evidence(_units(np.tile(d, (3, 1))), "x", "y", "v", "episode")
    assert V.verdict(_claim(min_effect=0.03), ev3) == "reproduced"  # three models: judged


# ------------------------------------------------------------------ issue 66: the rule's parts


def _t(effect: float, se: float, df: float, models: int = 3, v_fixed: float = 0.0) -> V.Evidence:
    """A Student t evidence ``effect ± t_{0.975, df} se`` on ``models`` seeds, its variance
    split as ``se² = v_seed / models + v_fixed``."""
    v_seed = (se**2 - v_fixed) * models
    return V.t_evidence(effect, se, df, (v_seed, v_fixed), "u", models)


def test_family_of_is_the_paper_and_the_kind_of_claim():
    assert V.family_of(_claim(paper="SCALE", primary=True)) == ("SCALE", V.PRIMARY)
    assert V.family_of(_claim(paper="SCALE")) == ("SCALE", V.SECONDARY)
    assert V.family_of(_claim(paper="AnisoWM", extension=True)) == ("AnisoWM", V.EXTENSION)
    # a headline claim on a task the paper never evaluated is ours, not its headline
    assert V.family_of(_claim(paper="AnisoWM", primary=True, extension=True))[1] == V.EXTENSION
    assert (V.PRIMARY, V.SECONDARY, V.EXTENSION) == ("primary", "secondary", "ours (extension)")


def test_holm_runs_within_each_family_so_a_primary_claim_is_not_diluted():
    """One primary claim at one-sided p ~ 0.022 beside twenty secondary claims at the same p:
    alone in its family its Holm p is its own and it reads "reproduced"; the twenty are
    corrected among themselves (twenty times), and another paper's family is apart."""
    ev = V.Evidence(0.041, 0.001, 0.081, "u", 3)
    p0 = V.one_sided_p(_claim(), ev)
    assert p0 < 0.025 and 2 * p0 > 0.025
    head = (_claim(paper="P", statement="head", primary=True), ev)
    rest = [(_claim(paper="P", statement=f"c{i}"), ev) for i in range(20)]
    other = [(_claim(paper="Q", statement=f"q{i}"), ev) for i in range(2)]
    table = V.verdict_table([head, *rest, *other])
    assert table.loc[0, "p (Holm)"] == pytest.approx(p0) and table.loc[0, "verdict"] == "reproduced"
    assert table.loc[0, "family"] == "primary" and (table.family.iloc[1:] == "secondary").all()
    np.testing.assert_allclose(table["p (Holm)"].iloc[1:21], V.holm([p0] * 20))
    assert (table.verdict.iloc[1:21] == "inconclusive").all()
    np.testing.assert_allclose(table["p (Holm)"].iloc[21:], V.holm([p0] * 2))  # Q's own two
    # the same claim among the secondary ones would have been diluted
    mixed = V.verdict_table([(replace_claim(head[0], primary=False), ev), *rest])
    assert mixed.loc[0, "verdict"] == "inconclusive"
    p, size = V.family_holm([head, *rest, *other], [True] * 23)
    assert size.tolist() == [1] + [20] * 20 + [2] * 2


def replace_claim(c: V.Claim, **kw) -> V.Claim:
    from dataclasses import replace

    return replace(c, **kw)


@pytest.mark.parametrize(("df", "m"), [(2.0, 1), (4.0, 3), (30.0, 10)])
def test_resolution_is_the_closed_form_of_the_first_holm_step_at_80_percent_power(df, m):
    ev = _t(0.01, 0.02, df)
    c = _claim(threshold=0.005, min_effect=0.03)
    want = 0.035 + (sps.t.ppf(1 - 0.05 / (2 * m), df) + sps.t.ppf(0.8, df)) * 0.02
    assert V.resolution(c, ev, m) == pytest.approx(want)
    assert V.resolution(c, ev, m + 1) > V.resolution(c, ev, m)  # a larger family asks more
    # a claim of a reduction: the same amount, in its own direction
    assert V.resolution(replace_claim(c, direction=-1), ev, m) == pytest.approx(want)


def test_at_the_resolution_a_normal_test_has_80_percent_power():
    """Infinite df: a true effect at the resolution puts the Bonferroni-level test's rejection
    probability at exactly 80 %, the meaning of the number."""
    se, m = 0.02, 4
    c = _claim(min_effect=0.03)
    res = V.resolution(c, V.Evidence(0.0, -1.959964 * se, 1.959964 * se, "u", 3), m)
    crit = sps.norm.ppf(1 - 0.05 / (2 * m))  # reject when (effect - 0.03) / se > crit
    assert sps.norm.sf(crit - (res - 0.03) / se) == pytest.approx(0.8)


def test_below_resolution_only_where_the_paper_s_own_effect_is_below_it():
    """An interval that cannot tell (crossing the minimum): a small paper effect, one the run
    could not have detected if it were true, reads "below this run's resolution"; a large one
    still reads "inconclusive"; an interval that rules out the minimum with a large paper
    effect reads "not detected at this scale". The labels of the data come first."""
    c = _claim(min_effect=0.03)
    wide = _t(0.03, 0.02, 4.0)  # [-0.026, +0.086]
    res = V.resolution(c, wide)
    small, large = (
        replace_claim(c, paper_effect=0.9 * res),
        replace_claim(c, paper_effect=1.1 * res),
    )
    assert V.verdict(small, wide) == V.BELOW_RESOLUTION
    assert V.verdict(large, wide) == V.verdict(c, wide) == "inconclusive"
    narrow = _t(0.0, 0.004, 4.0)  # rules out 0.03, does not show the opposite
    assert V.verdict(replace_claim(c, paper_effect=0.5), narrow) == "not detected at this scale"
    assert V.verdict(replace_claim(c, paper_effect=0.001), narrow) == V.BELOW_RESOLUTION
    # reproduced and contradicted are read before the resolution
    assert V.verdict(replace_claim(c, paper_effect=0.001), _t(0.2, 0.02, 4.0)) == "reproduced"
    assert V.verdict(replace_claim(c, paper_effect=0.001), _t(-0.2, 0.02, 4.0)) == "contradicted"
    # a claim of a reduction compares the paper's effect in its direction
    down = replace_claim(c, direction=-1, paper_effect=-0.9 * res)
    assert V.verdict(down, _t(-0.03, 0.02, 4.0)) == V.BELOW_RESOLUTION
    big_down = replace_claim(c, direction=-1, paper_effect=-1.1 * res)
    assert V.verdict(big_down, _t(-0.03, 0.02, 4.0)) == "inconclusive"
    # one model per arm: no resolution at all, the row is inconclusive
    assert V.verdict(small, _t(0.03, 0.02, 4.0, models=1)) == "inconclusive"
    row = V.verdict_table([(small, wide)]).iloc[0]
    assert row["verdict"] == V.BELOW_RESOLUTION and "80% power" in row["reason"]
    assert row["resolution"] == f"> {res:+.3g}"


def test_seeds_to_decide_meets_its_criterion_and_never_asks_more_for_a_larger_gap():
    c = _claim(min_effect=0.03)
    found = []
    for gap in (0.005, 0.01, 0.02, 0.03, 0.04, 0.06, 0.08, 0.12, 0.32):
        ev = _t(0.03 + gap, 0.03, 2.0, v_fixed=0.0001)
        n = V.seeds_to_decide(c, ev)
        found.append(n)
        if n is None:
            continue
        v_seed, v_fixed = ev.variance_parts

        def decides(k: int, v_seed=v_seed, v_fixed=v_fixed, gap=gap) -> bool:
            q = sps.t.ppf(0.975, k - 1) + sps.t.ppf(0.8, k - 1)
            return gap >= q * np.sqrt(v_seed / k + v_fixed)

        assert decides(n) and (n == 3 or not decides(n - 1)), gap
    numbers = [n for n in found if n is not None]
    assert numbers == sorted(numbers, reverse=True) and len(numbers) >= 3
    assert found[0] is None  # the unit component alone (0.01) swamps a gap of 0.005
    assert found[-1] == 3  # already decided at the seeds there are
    # a larger family needs at least as many seeds
    ev = _t(0.07, 0.03, 2.0)
    assert V.seeds_to_decide(c, ev, m=20) >= V.seeds_to_decide(c, ev, m=1)
    # one model per arm: nothing to scale
    assert V.seeds_to_decide(c, V.seed_mean_evidence([0.5])) is None
    one_seed = V.paired_unit_evidence(_units(np.eye(1, 50)), "x", "y", "v", "episode")
    assert V.seeds_to_decide(c, one_seed) is None
    assert V.seeds_to_decide(c, V.Evidence(0.5, 0.5, 0.5, "u", 3)) is None  # no width


def test_reasons_name_what_decided_the_label():
    # one trained model per arm: with or without an interval over its units
    one = V.seed_mean_evidence([0.4])
    assert V.reason(_claim(), one, 1.0, 1, "inconclusive") == "one trained model per arm"
    # twenty claims each with its 95 % interval beyond the minimum, none after Holm
    ev = V.Evidence(0.041, 0.001, 0.081, "u", 3)
    table = V.verdict_table([(_claim(statement=f"c{i}"), ev) for i in range(20)])
    p = float(table.loc[0, "p (Holm)"])
    assert table.loc[0, "verdict"] == "inconclusive"
    assert table.loc[0, "reason"] == (
        f"95 % interval beyond the minimum, not after Holm over 20 (p = {p:.2g})"
    )
    # an interval crossing the minimum is not "beyond the minimum"
    crossing = V.verdict_table([(_claim(min_effect=0.03), ev)] * 2).loc[0, "reason"]
    assert crossing == "interval crosses the minimum effect"
    assert V.reason(_claim(), V.Evidence(0.0, 0.0, 0.0, "u", 3), 1.0, 1, "inconclusive") == (
        "no spread measured"
    )


def test_a_claim_true_by_construction_is_out_of_every_family():
    """The no-overhead claims: whatever the evidence (here one contradicting the claim), the row
    reads "holds by construction", has no Holm p, and leaves the other claims' Holm p as it
    was without it."""
    ev = V.Evidence(0.041, 0.001, 0.081, "u", 3)
    others = [(_claim(statement=f"c{i}"), ev) for i in range(3)]
    built = (_claim(statement="free", by_construction=True), V.Evidence(-0.5, -0.6, -0.4, "u", 3))
    assert V.verdict(*built) == V.BY_CONSTRUCTION
    with_it = V.verdict_table([built, *others])
    without = V.verdict_table(others)
    assert with_it.loc[0, "verdict"] == V.BY_CONSTRUCTION
    assert np.isnan(with_it.loc[0, "p (Holm)"]) and with_it.loc[0, "seeds to decide"] == ""
    np.testing.assert_allclose(with_it["p (Holm)"].iloc[1:], without["p (Holm)"])
    assert with_it.verdict.iloc[1:].tolist() == without.verdict.tolist()
    # even where it is marked untested, it reads by construction, never NOT_TESTED
    assert V.verdict_table([built], [False]).loc[0, "verdict"] == V.BY_CONSTRUCTION
    assert V.BY_CONSTRUCTION not in V.VERDICTS and V.NOT_TESTED not in V.VERDICTS
    assert V.NOT_TESTED == "not tested (subject absent)"


def test_relative_min_effect_is_a_share_of_the_baseline_s_level():
    assert V.relative_min_effect("rollout_error", 0.4) == pytest.approx(0.05 * 0.4)
    assert V.relative_min_effect("rollout_error", -0.4) == pytest.approx(0.05 * 0.4)
    assert V.relative_min_effect("success", 0.4) == V.MIN_EFFECTS["success"]
    with pytest.raises(KeyError):
        V.relative_min_effect("no such measure", 1.0)


def test_the_rollout_error_claim_asks_five_percent_of_lewm_s_level():
    from tests.verdict.test_claims import synthetic_study

    episodes, geo = synthetic_study("scale")
    geo.ranking.loc[geo.ranking.arm == "lewm", "rollout_error"] *= 3.0  # lewm's level ~ 3
    ((claim, _),) = [
        (c, e) for c, e in paper_claims("tworoom", episodes, geo) if "rollout error" in c.statement
    ]
    r = geo.ranking
    level = r[(r.arm == "lewm") & (r.source == "gaussian")].rollout_error.mean()
    assert level == pytest.approx(3.0, rel=0.05)
    assert claim.b == "lewm" and claim.min_effect == pytest.approx(0.05 * level)
    row = V.verdict_table([(claim, _)]).iloc[0]
    assert row["min effect"] == f"< {-0.05 * level:+.3g}"  # a reduction by at least that much


def test_pooled_evidence_uses_welch_satterthwaite_degrees_of_freedom():
    a, b = _t(0.10, 0.03, 2.0), _t(0.02, 0.05, 4.0)
    p = V.pooled_evidence([a, b])
    se = np.sqrt(0.03**2 + 0.05**2) / 2
    df = (0.03**2 + 0.05**2) ** 2 / (0.03**4 / 2 + 0.05**4 / 4)
    assert p.effect == pytest.approx(0.06) and p.df == pytest.approx(df)
    assert (p.low, p.high) == pytest.approx(sps.t.interval(0.95, df, 0.06, se))
    assert 2 < df < 6  # between the parts' and their sum: not a normal interval
    assert V.one_sided_p(_claim(), p) == pytest.approx(sps.t.sf(0.06 / se, df))
    # a part with a normal interval adds its variance but no term to the df's denominator
    n = V.Evidence(0.0, -1.959964 * 0.05, 1.959964 * 0.05, "u", 3)
    q = V.pooled_evidence([a, n])
    assert q.df == pytest.approx((0.03**2 + 0.05**2) ** 2 / (0.03**4 / 2))


def test_every_cell_claims_test_the_sign():
    """ "On all task-solver averages" is the sign in each cell (min effect 0), as SCALE counts
    it: cells each about 2 points above LeWM (seeds +2.0, +2.2, +2.4, 1000 pairs) reproduce it,
    though not one of them shows the 3 points a mean over the tasks must show."""
    from jepa_geometry.planning.solver import MPPI_SWM
    from jepa_geometry.verdict.claims import EVERY, POOLED, Measurements, evaluate_across
    from jepa_geometry.verdict.records import ACROSS_CLAIMS

    code = "goal25_budget50"
    rows = [
        {
            "protocol": code,
            "solver": solver,
            "budget": "T1",
            "arm": arm,
            "train_seed": s,
            "episode": e,
            "success": float(arm == "scale" and (e - 300 * s - 50 * k) % 1000 < 20 + 2 * s),
        }
        for k, solver in enumerate(("cem", "icem", MPPI_SWM))
        for arm in ("scale", "lewm")
        for s in range(3)
        for e in range(1000)
    ]
    studies = {
        t: Measurements(t, pd.DataFrame(rows), None, code, code) for t in ("tworoom", "pusht")
    }
    spec = next(s for s in ACROSS_CLAIMS if s.combine == EVERY)
    claim, ev = evaluate_across(spec, studies)
    assert claim.min_effect == 0.0 and ev.effect == pytest.approx(0.022)
    assert 0.0 < ev.low and ev.high < V.MIN_EFFECTS["success"]
    assert V.verdict(claim, ev) == "reproduced"
    assert V.verdict(replace_claim(claim, min_effect=V.MIN_EFFECTS["success"]), ev) != "reproduced"
    pooled = next(
        s
        for s in ACROSS_CLAIMS
        if s.combine == POOLED and s.b == "lewm" and s.tier == "T1" and s.solvers == ("cem",)
    )
    assert evaluate_across(pooled, studies)[0].min_effect == V.MIN_EFFECTS["success"]


@pytest.mark.parametrize(
    ("direction", "threshold", "min_effect", "scale", "unit", "want"),
    [
        (1, 0.0, 0.03, 100.0, "pp", "> +3 pp"),
        (-1, -np.log(1.1), 0.0, 1.0, "", f"< +{np.log(1.1):.3g}"),
        (-1, 0.0, 0.02, 1.0, "", "< -0.02"),
    ],
)
def test_min_effect_column_carries_the_claim_s_direction(
    direction, threshold, min_effect, scale, unit, want
):
    c = _claim(
        direction=direction,
        threshold=threshold,
        min_effect=min_effect,
        display_scale=scale,
        unit=unit,
    )
    table = V.verdict_table([(c, V.Evidence(0.0, -0.1, 0.1, "u", 3))])
    assert table.loc[0, "min effect"] == want
    for col in ("resolution", "informed by", "reason", "seeds to decide"):
        assert col in table.columns
