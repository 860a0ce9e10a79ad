"""SCALE's geometry probes and AnisoWM's Figure-5 spectra against closed forms."""

from __future__ import annotations

import numpy as np
import pytest

from jepa_geometry.analysis.probes import (
    distance_ratio_dispersion,
    geometry_probe,
    lambda_spectrum,
    pca,
    pca_spectrum,
    ridge_probe_r2,
    ridge_r2_per_dim,
    ridge_weights,
)
from jepa_geometry.theory import leverage


def _rotation(d: int, rng: np.random.Generator) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(d, d)))
    return q * np.sign(np.diag(r))


def _standardized_gaussian(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    q = rng.normal(size=(n, d))
    return (q - q.mean(0)) / q.std(0)


def test_pca_spectrum_recovers_a_known_covariance():
    rng = np.random.default_rng(0)
    lam = np.array([5.0, 3.0, 1.0, 0.5, 0.1])
    z = rng.normal(size=(100_000, 5)) * np.sqrt(lam) @ _rotation(5, rng) + 7.0
    spec = pca_spectrum(z)
    np.testing.assert_allclose(spec, lam / lam.sum(), rtol=0.03)
    assert np.all(np.diff(spec) <= 0) and spec.sum() == pytest.approx(1.0)


def test_pca_spectrum_matches_double_centred_gram_when_d_exceeds_n():
    rng = np.random.default_rng(1)
    n, d = 40, 90
    z = rng.normal(size=(n, d)) * np.linspace(3, 0.1, d)
    j = np.eye(n) - np.ones((n, n)) / n
    ev = np.linalg.eigvalsh(j @ z @ z.T @ j)[::-1]
    ev = ev[ev > 1e-10 * ev[0]]  # SCALE's rank cut; the centred Gram has rank n - 1
    spec = pca_spectrum(z)
    assert spec.shape == (n,)
    np.testing.assert_allclose(spec[: len(ev)], ev / ev.sum(), rtol=1e-9)
    assert len(ev) == n - 1 and spec[n - 1] < 1e-12


@pytest.mark.parametrize("alpha", [0.0, 0.5])
def test_ridge_on_an_embedding_wider_than_the_frames_solves_the_dual(alpha):
    """D > N (DINO-WM's patch tokens): the N x N dual gives the primal's ridge vector, checked
    against the closed form (minimum-norm least squares when alpha = 0)."""
    rng = np.random.default_rng(4)
    x = rng.normal(size=(12, 40))
    x -= x.mean(0)
    y = rng.normal(size=(12, 2))
    w = ridge_weights(x, y, alpha)
    if alpha > 0:
        expect = np.linalg.solve(x.T @ x + alpha * np.eye(40), x.T @ y)
    else:
        expect = np.linalg.pinv(x) @ y
    np.testing.assert_allclose(w, expect, rtol=1e-8, atol=1e-10)
    narrow = x[:, :8]  # D < N takes the primal; the two agree where both apply
    np.testing.assert_allclose(
        ridge_weights(narrow, y, alpha),
        np.linalg.pinv(narrow) @ y
        if alpha == 0
        else np.linalg.solve(narrow.T @ narrow + alpha * np.eye(8), narrow.T @ y),
        rtol=1e-8,
    )


def test_ridge_r2_per_dim_equals_ordinary_least_squares_at_zero_alpha():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(400, 6)) * 3 + 1
    y = x @ rng.normal(size=(6, 2)) + rng.normal(size=(400, 2)) * [0.5, 4.0]
    a = np.c_[x[:200], np.ones(200)]
    w = np.linalg.lstsq(a, y[:200], rcond=None)[0]
    pred = np.c_[x[200:], np.ones(200)] @ w
    yt = y[200:]
    expected = 1 - ((yt - pred) ** 2).sum(0) / ((yt - yt.mean(0)) ** 2).sum(0)
    got = ridge_r2_per_dim(x[:200], y[:200], x[200:], y[200:], alpha=0.0)
    np.testing.assert_allclose(got, expected, rtol=1e-8)
    assert got[0] > got[1]  # the noisier output is less decodable


def _tail_and_head(
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """q hidden in small directions (tail) versus q carried by the two largest ones (head)."""
    n = 1500
    q = rng.normal(size=(n, 2))
    sds = np.array([5.0, 4.0, 3.0, 2.5, 2.0, 1.5])
    noise = rng.normal(size=(n, 6)) * sds
    tail = np.c_[noise, 0.1 * q + 1e-3 * rng.normal(size=(n, 2))]
    head = np.c_[8.0 * q + 1e-2 * rng.normal(size=(n, 2)), noise] @ _rotation(8, rng)
    return q, tail, head, sds


def test_geometry_probe_sees_state_in_the_tail_only_with_the_full_embedding():
    q, tail, head, sds = _tail_and_head(np.random.default_rng(3))
    r = geometry_probe(tail, q, seed=0, ks=(2, 4), mlp=False)
    assert r["r2_top2"] < 0.05 and r["r2_top4"] < 0.05
    assert r["r2_full_ridge"] > 0.99
    var = sds**2
    total = var.sum() + 2 * 0.01
    assert r["var_top2"] == pytest.approx(var[:2].sum() / total, rel=0.1)
    assert r["n_fit"] == 750 and r["n_eval"] == 750 and "r2_full_mlp" not in r
    h = geometry_probe(head, q, seed=0, ks=(2,), mlp=False)
    assert h["r2_top2"] > 0.99 and h["var_top2"] == pytest.approx(128 / (128 + var.sum()), rel=0.1)


def test_geometry_probe_is_rotation_invariant_and_deterministic():
    rng = np.random.default_rng(4)
    q, tail, _, _ = _tail_and_head(rng)
    q, tail = q[:400], tail[:400]
    a = geometry_probe(tail, q, seed=5, ks=(2,))
    b = geometry_probe(tail @ _rotation(8, rng) + 3.0, q, seed=5, ks=(2,))
    for key in ("var_top2", "r2_top2", "r2_full_ridge"):
        assert a[key] == pytest.approx(b[key], abs=1e-8)
    assert geometry_probe(tail, q, seed=5, ks=(2,)) == a
    assert geometry_probe(tail, q, seed=6, ks=(2,))["r2_full_ridge"] != a["r2_full_ridge"]


def test_mlp_probe_decodes_an_invertible_nonlinear_map_better_than_ridge():
    # An angle on a circle (away from the branch cut) and a saturating coordinate: invertible,
    # so q is fully decodable, but not linearly.
    rng = np.random.default_rng(5)
    angle = rng.uniform(-0.8 * np.pi, 0.8 * np.pi, size=1500)
    x = rng.uniform(-1.5, 1.5, size=1500)
    z = np.c_[np.cos(angle), np.sin(angle), np.tanh(2 * x)] + 2e-3 * rng.normal(size=(1500, 3))
    r = geometry_probe(z, np.c_[angle, x], seed=0, ks=(1,))
    assert r["r2_full_mlp"] > 0.95
    assert r["r2_full_mlp"] > r["r2_full_ridge"] + 0.05


def test_distance_ratio_is_constant_for_a_scaled_isometry():
    rng = np.random.default_rng(6)
    q = _standardized_gaussian(2000, 3, rng)
    z = 2.5 * q @ _rotation(5, rng)[:3]  # embed R^3 isometrically in R^5, scaled by 2.5
    r = distance_ratio_dispersion(z, q, n_pairs=5000, seed=1)
    assert r["p90_over_p10"] == pytest.approx(1.0, abs=1e-9)
    assert r["median"] == pytest.approx(2.5, rel=1e-9)
    assert r["n_pairs"] == 5000 and r["n_dropped"] == 0


def test_distance_ratio_quantiles_of_an_anisotropic_stretch_match_the_arcsine_law():
    # z = q diag(a, b) with isotropic Gaussian q: dq has a uniform angle t and the ratio is
    # sqrt(a^2 cos^2 t + b^2 sin^2 t); P(cos^2 t <= u) = 1 - (2/pi) arccos(sqrt(u)).
    rng = np.random.default_rng(7)
    a, b = 3.0, 0.5
    q = _standardized_gaussian(5000, 2, rng)
    r = distance_ratio_dispersion(q * [a, b], q, n_pairs=20_000, seed=2)

    def quantile(p: float) -> float:
        u = np.cos(np.pi / 2 * (1 - p)) ** 2
        return float(np.sqrt(b**2 + (a**2 - b**2) * u))

    assert b <= r["p10"] < r["p90"] <= a
    assert r["p10"] == pytest.approx(quantile(0.1), rel=0.03)
    assert r["median"] == pytest.approx(quantile(0.5), rel=0.03)
    assert r["p90"] == pytest.approx(quantile(0.9), rel=0.03)
    assert r["p90_over_p10"] == pytest.approx(r["p90"] / r["p10"])


def test_distance_ratio_drops_pairs_of_identical_states():
    rng = np.random.default_rng(8)
    q = rng.normal(size=(50, 2))
    q = np.r_[q, q]  # frame i and i + 50 share a state: 1 of the 99 partners of each frame
    z = q @ np.diag([2.0, 1.0]) + np.r_[np.zeros((50, 2)), np.ones((50, 2))]
    r = distance_ratio_dispersion(z, q, n_pairs=20_000, seed=3)
    expected = 20_000 / 99
    assert abs(r["n_dropped"] - expected) < 5 * np.sqrt(expected)
    assert r["n_pairs"] + r["n_dropped"] == 20_000 and np.isfinite(r["p90_over_p10"])


def test_lambda_spectrum_reads_the_logged_targets():
    v0 = [1.0000001] * 4  # float32 noise around the isotropic start
    v1 = [1.2, 0.9, 1.1, 0.8]
    v2 = [0.7, 1.3, 0.6, 1.4]
    log = [{"step": 10, "loss": 1.0, "lambda_v": v0}, {"step": 20, "lambda_v": v1}]
    log.append({"step": 30, "lambda_v": v2})
    s = lambda_spectrum(log)
    assert s["steps"].tolist() == [10, 20, 30] and s["v"].shape == (3, 4)
    assert s["final_sorted"].tolist() == sorted(v2, reverse=True)
    assert s["above_mean"] == 2 and s["cond"] == pytest.approx(1.4 / 0.6)
    assert lambda_spectrum(log[:1])["above_mean"] == 0


def test_lambda_spectrum_names_the_arms_with_lambda_reg():
    with pytest.raises(ValueError, match=r"anisowm, scale\+anisowm"):
        lambda_spectrum([{"step": 1, "loss": 0.5}])
    with pytest.raises(ValueError, match="different lengths"):
        lambda_spectrum([{"step": 1, "lambda_v": [1.0, 1.0]}, {"step": 2, "lambda_v": [1.0]}])


def test_bad_inputs_fail_early_naming_the_value():
    rng = np.random.default_rng(9)
    z, q = rng.normal(size=(100, 6)), rng.normal(size=(100, 2))
    with pytest.raises(ValueError, match="z has 100 frames but q has 99"):
        geometry_probe(z, q[:99], seed=0)
    with pytest.raises(ValueError, match=r"ks=\(2, 6\).*bad: \[6\]"):
        geometry_probe(z, q, seed=0, ks=(2, 6))
    with pytest.raises(ValueError, match=r"shape \(N >= 2, D >= 1\), got \(100, 6, 1\)"):
        geometry_probe(z[..., None], q, seed=0)
    with pytest.raises(ValueError, match=r"q dimension\(s\) \[1\] are constant"):
        geometry_probe(z, np.c_[q[:, 0], np.ones(100)], seed=0, ks=(2,), mlp=False)
    with pytest.raises(ValueError, match="1 non-finite"):
        pca_spectrum(np.where(np.arange(600).reshape(100, 6) == 7, np.nan, z))
    with pytest.raises(ValueError, match="n_pairs must be a positive integer, got 0"):
        distance_ratio_dispersion(z, q, n_pairs=0)
    with pytest.raises(ValueError, match="z has 100 frames but q has 50"):
        distance_ratio_dispersion(z, q[:50])


def test_pca_rejects_bad_shapes():
    with pytest.raises(ValueError, match=r"shape \(N >= 2, D\)"):
        pca(np.zeros(5))


def test_ridge_probe_r2_matches_noise_level():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((40_000, 6))
    w = rng.standard_normal((6, 2))
    signal = x @ w
    y = signal + rng.standard_normal((40_000, 2)) * 0.5
    expected = 1 - 2 * 0.25 / y.var(0).sum()  # 1 - noise variance / total variance
    r2 = ridge_probe_r2(x[:20_000], y[:20_000], x[20_000:], y[20_000:], alpha=1e-6)
    assert r2 == pytest.approx(expected, abs=0.01)
    assert (
        ridge_probe_r2(
            x[:100], rng.standard_normal((100, 1)), x[100:200], rng.standard_normal((100, 1))
        )
        < 0.1
    )


def test_ridge_probe_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="must be"):
        ridge_probe_r2(np.zeros((5, 3)), np.zeros(5), np.zeros((5, 4)), np.zeros(5))


def test_geometry_probe_finds_state_in_the_tail():
    """SCALE's probe on an embedding whose state sits in its two smallest PCs (ch01's case)."""
    rng = np.random.default_rng(4)
    z, q = leverage.synthetic_embedding(6000, 12, 0.05, rng)  # state in the two smallest PCs
    out = geometry_probe(z, q, seed=0, ks=(2, 4), mlp=False)
    assert out["r2_full_ridge"] > 0.99  # decodable from the full embedding
    assert out["r2_top2"] < 0.05  # but not from the leading PCs
    # Independent check of the share: top-2 variances of the fit half over the total.
    fit = np.random.default_rng(0).permutation(len(z))[: len(z) // 2]
    lam = np.sort(np.linalg.eigvalsh(np.cov(z[fit], rowvar=False)))[::-1]
    assert out["var_top2"] == pytest.approx(lam[:2].sum() / lam.sum())
