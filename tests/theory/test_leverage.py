"""Metric leverage (SCALE), against closed forms."""

import numpy as np
import pytest

from jepa_geometry.theory import leverage


def test_expected_cost_contribution_is_twice_the_variance():
    rng = np.random.default_rng(0)
    lam = np.array([4.0, 2.0, 1.0, 0.5, 0.1])
    rot, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    z = (rng.standard_normal((200_000, 5)) * np.sqrt(lam)) @ rot.T + 3.0  # offset is irrelevant
    lev = leverage.metric_leverage(z, n_pairs=200_000, rng=rng)
    np.testing.assert_allclose(lev.variance, lam, rtol=0.02)
    # Independent check: 2 * the *true* variances, not the code's own PCA.
    np.testing.assert_allclose(lev.measured_contribution, 2 * lam, rtol=0.03)
    np.testing.assert_allclose(lev.leverage_share.sum(), 1.0)
    # Total expected cost E||z_a - z_b||^2 = 2 tr C.
    a, b = rng.integers(0, len(z), 50_000), rng.integers(0, len(z), 50_000)
    keep = a != b
    total = ((z[a[keep]] - z[b[keep]]) ** 2).sum(1).mean()
    assert total == pytest.approx(2 * lam.sum(), rel=0.03)


def test_state_leverage_share_matches_construction():
    rng = np.random.default_rng(1)
    dim, scale, decay = 12, 0.5, 0.85
    z, q = leverage.synthetic_embedding(100_000, dim, scale, rng, nuisance_decay=decay)
    state_var = 2 * scale**2 / 3  # two coordinates of scale * U[-1, 1]
    nuisance_var = (decay ** (2 * np.arange(dim - 2))).sum()
    expected = state_var / (state_var + nuisance_var)
    assert leverage.state_leverage_share(z, q) == pytest.approx(expected, rel=0.03)


def test_leverage_sweep_decodable_but_not_influential():
    rng = np.random.default_rng(2)
    sweep = leverage.leverage_sweep([2.0, 0.02], 4000, 16, rng)
    big, small = sweep.iloc[0], sweep.iloc[1]
    assert small.probe_r2 > 0.99 and big.probe_r2 > 0.99
    assert small.state_leverage_share < 5e-3 < 0.3 < big.state_leverage_share
    assert abs(small.cost_state_spearman) < 0.1 < big.cost_state_spearman
