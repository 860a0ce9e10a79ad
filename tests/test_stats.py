"""Statistics checked against closed forms and scipy's independent implementations."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from jepa_geometry import stats


@pytest.mark.parametrize("k,n", [(0, 10), (3, 10), (10, 10), (48, 50), (96, 200), (1, 1)])
def test_wilson_matches_scipy(k: int, n: int) -> None:
    ref = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    lo, hi = stats.wilson_interval(k, n)
    assert lo == pytest.approx(ref.low, abs=1e-12)
    assert hi == pytest.approx(ref.high, abs=1e-12)


@pytest.mark.parametrize("n", [20, 200, 600, 1000])
def test_wilson_closed_form_at_zero_successes(n: int) -> None:
    # k = 0: the upper limit is z^2 / (n + z^2), the lower exactly 0 (at n = 200 the formula's
    # floating point gave 1.7e-18, an interval that excluded the rate 0 itself); k = n mirrors.
    z = 1.959963984540054
    lo, hi = stats.wilson_interval(0, n)
    assert lo == 0.0
    assert hi == pytest.approx(z * z / (n + z * z), rel=1e-12)
    lo, hi = stats.wilson_interval(n, n)
    assert hi == 1.0 and lo == pytest.approx(n / (n + z * z), rel=1e-12)


def test_wilson_refuses_more_successes_than_trials_and_a_bad_level() -> None:
    with pytest.raises(ValueError, match="k <= n"):
        stats.wilson_interval(5, 3)
    with pytest.raises(ValueError, match="level"):
        stats.wilson_interval(1, 3, level=1.5)


@pytest.mark.parametrize("a_only,b_only", [(0, 0), (0, 6), (3, 9), (7, 7), (12, 30)])
def test_mcnemar_matches_scipy_binomtest(a_only: int, b_only: int) -> None:
    a = np.r_[np.ones(a_only), np.zeros(b_only), np.ones(5), np.zeros(4)].astype(bool)
    b = np.r_[np.zeros(a_only), np.ones(b_only), np.ones(5), np.zeros(4)].astype(bool)
    m = a_only + b_only
    ref = 1.0 if m == 0 else binomtest(a_only, m, 0.5).pvalue
    assert stats.paired_difference(a, b).p_mcnemar == pytest.approx(ref, rel=1e-12)


def test_mcnemar_p_equals_its_closed_form() -> None:
    # 0 vs 6 discordant pairs: p = 2 * 0.5^6.
    a = np.array([0] * 6 + [1] * 10)
    b = np.array([1] * 6 + [1] * 10)
    assert stats.paired_difference(a, b).p_mcnemar == pytest.approx(2 * 0.5**6)


def test_bootstrap_interval_close_to_normal_theory() -> None:
    rng = np.random.default_rng(1)
    x = rng.random(2000) < 0.3
    lo, hi = stats.bootstrap_interval(x, n_boot=4000, seed=3)
    p = x.mean()
    half = 1.959964 * math.sqrt(p * (1 - p) / x.size)
    assert lo == pytest.approx(p - half, abs=0.005)
    assert hi == pytest.approx(p + half, abs=0.005)


def test_bootstrap_same_seed_same_interval_and_rate_wraps() -> None:
    x = np.r_[np.ones(30), np.zeros(70)]
    r1 = stats.success_rate(x, method="bootstrap", seed=5, n_boot=2000)
    r2 = stats.success_rate(x, method="bootstrap", seed=5, n_boot=2000)
    assert (r1.low, r1.high) == (r2.low, r2.high)
    assert r1.rate == 0.3 and r1.k == 30 and r1.n == 100
    w = stats.success_rate(x)
    assert (w.low, w.high) == stats.wilson_interval(30, 100)
    assert "30.0%" in str(w)


def test_paired_difference_of_identical_arms_is_exactly_zero() -> None:
    x = np.random.default_rng(0).random(100) < 0.5
    d = stats.paired_difference(x, x, n_boot=1000)
    assert (d.diff, d.low, d.high, d.a_only, d.b_only, d.p_mcnemar) == (0, 0, 0, 0, 0, 1.0)


def test_paired_interval_matches_paired_normal_theory() -> None:
    rng = np.random.default_rng(2)
    n = 3000
    b = rng.random(n) < 0.5
    a = b.copy()
    flip = rng.random(n) < 0.2  # a differs from b on 20 % of pairs, mostly in a's favour
    a[flip] = rng.random(flip.sum()) < 0.75
    d = a.astype(float) - b.astype(float)
    half = 1.959964 * d.std() / math.sqrt(n)
    res = stats.paired_difference(a, b, n_boot=4000, seed=1)
    assert res.diff == pytest.approx(d.mean())
    assert res.low == pytest.approx(d.mean() - half, abs=0.004)
    assert res.high == pytest.approx(d.mean() + half, abs=0.004)
    # the paired interval is narrower than the sum of two independent Wilson half-widths
    wa = stats.wilson_interval(int(a.sum()), n)
    wb = stats.wilson_interval(int(b.sum()), n)
    assert res.high - res.low < (wa[1] - wa[0]) / 2 + (wb[1] - wb[0]) / 2


def test_paired_difference_rejects_unpaired_shapes() -> None:
    with pytest.raises(ValueError, match="same pairs"):
        stats.paired_difference(np.ones(5), np.ones(6))
    with pytest.raises(ValueError, match="0/1"):
        stats.success_rate(np.array([0, 2, 1]))
    with pytest.raises(ValueError, match="valid: wilson, bootstrap"):
        stats.success_rate(np.ones(4), method="wald")


def test_pooling_over_seeds_widens_with_seed_variance() -> None:
    rng = np.random.default_rng(4)
    n = 400
    # three seeds with very different rates on the same pairs vs three identical seeds
    varied = np.stack([rng.random(n) < p for p in (0.2, 0.5, 0.8)])
    same = np.stack([varied[1]] * 3)
    r_varied = stats.success_rate(varied, n_boot=3000)
    r_same = stats.success_rate(same, n_boot=3000)
    assert r_varied.rate == pytest.approx(varied.mean())
    assert r_varied.k == pytest.approx(varied.sum(axis=1).mean())
    assert "3 seeds" in r_varied.interval
    assert (r_varied.high - r_varied.low) > 3 * (r_same.high - r_same.low)
    # identical seeds: the pooled interval equals the one-model episode bootstrap
    one = stats.bootstrap_interval(varied[1], n_boot=3000, seed=0)
    assert r_same.low == pytest.approx(one[0], abs=0.01)
    assert r_same.high == pytest.approx(one[1], abs=0.01)


def test_rate_table_pools_seeds_per_arm_and_the_success_matrix_needs_equal_episodes() -> None:
    rows = []
    for arm, p in (("lewm", [1, 0, 1, 1]), ("scale", [1, 1, 1, 1])):
        for seed in (0, 1):
            for ep, s in enumerate(p):
                rows.append({"arm": arm, "train_seed": seed, "episode": ep, "success": s})
    df = pd.DataFrame(rows)
    tab = stats.rate_table(df, by=["arm"], n_boot=500)
    assert list(tab["arm"]) == ["lewm", "scale"]
    assert list(tab["rate"]) == [0.75, 1.0]
    assert list(tab["seeds"]) == [2, 2]
    m = stats.success_matrix(df[df.arm == "lewm"])
    assert m.shape == (2, 4)
    with pytest.raises(ValueError, match="different episodes"):
        stats.success_matrix(df[(df.arm == "lewm") & ~((df.train_seed == 1) & (df.episode == 0))])


def test_power_matches_a_simulated_two_proportion_test():
    """The closed-form power against the rejection rate of the same pooled z-test simulated
    on 4,000 drawn studies (binomial counts), at the laptop gate's n and threshold."""
    n = 600
    p = stats.min_rate_for_power(n, 1.5)
    assert stats.two_proportion_power(p, 1.5 * p, n) == pytest.approx(0.8, abs=1e-4)
    rng = np.random.default_rng(0)
    a, b = rng.binomial(n, p, 4000) / n, rng.binomial(n, 1.5 * p, 4000) / n
    pool = (a + b) / 2
    z = (b - a) / np.sqrt(2 * pool * (1 - pool) / n)
    assert np.mean(np.abs(z) > 1.959964) == pytest.approx(0.8, abs=0.025)


def test_power_threshold_is_the_smallest_rate_with_the_power():
    p = stats.min_rate_for_power(600, 1.5)
    assert 0.10 < p < 0.12
    rates = np.linspace(0.001, 1 / 1.5, 400)
    power = [stats.two_proportion_power(r, 1.5 * r, 600) for r in rates]
    assert np.all(np.diff(power) >= 0)  # monotone (1 once saturated): bisection applies
    assert rates[np.argmax(np.array(power) >= 0.8)] == pytest.approx(p, abs=2e-3)
    assert stats.min_rate_for_power(200, 1.5) > p  # fewer outcomes need a larger rate
    assert np.isnan(stats.min_rate_for_power(4, 1.5))  # smoke: no rate has the power
    with pytest.raises(ValueError, match="ratio must be > 1"):
        stats.min_rate_for_power(600, 1.0)
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        stats.two_proportion_power(0.1, 0.2, 0)


def test_matrix_rate_is_the_pooled_mean_with_the_bootstrap_interval():
    m = np.array([[1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 0.5]])
    r = stats.matrix_rate(m)
    assert r["rate"] == pytest.approx(4.5 / 8) and (r["seeds"], r["pairs"]) == (2, 4)
    assert (r["low"], r["high"]) == stats.bootstrap_interval(m)
    one = stats.matrix_rate(m[:1])  # one seed: pairs resampled, as for a 1-D sample
    assert (one["low"], one["high"]) == stats.bootstrap_interval(m[0])
    with pytest.raises(ValueError, match=r"shape \(seeds, pairs\), got \(4,\)"):
        stats.matrix_rate(m[0])
