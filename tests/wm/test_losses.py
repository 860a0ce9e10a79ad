"""SIGReg, ΛReg, SCALE's loss and pair sampler, Aux -- against closed forms."""

import math

import numpy as np
import pytest
import torch

from jepa_geometry.wm.losses import AuxHead, LambdaReg, sample_pairs, scale_loss, sigreg

SQ2PI = math.sqrt(2 * math.pi)


def g(s):  # population Epps-Pulley statistic of N(0, s) against N(0, 1)
    return SQ2PI * ((1 + 2 * s) ** -0.5 - 2 * (2 + s) ** -0.5 + 3**-0.5)


def h(s):  # finite-sample ECF variance term
    return SQ2PI * (1 - (1 + 2 * s) ** -0.5)


def numpy_sigreg(z: np.ndarray, a: np.ndarray) -> float:
    """Independent port: explicit loops over knots, trapezoid weights built by hand."""
    n = z.shape[0]
    y = z @ a
    total = 0.0
    for m in range(a.shape[1]):
        ep = 0.0
        for k in range(17):
            t = 3.0 * k / 16
            wk = (3.0 / 16) * (1.0 if k in (0, 16) else 2.0) * math.exp(-t * t / 2)
            c = np.cos(t * y[:, m]).mean() - math.exp(-t * t / 2)
            s = np.sin(t * y[:, m]).mean()
            ep += wk * (c * c + s * s)
        total += n * ep
    return total / a.shape[1]


@pytest.mark.parametrize("s", [0.5, 1.0, 2.0])
def test_sigreg_expectation_matches_closed_form(s):
    gen = torch.Generator().manual_seed(0)
    n, reps = 128, 400
    z = torch.randn(reps, n, 8, generator=gen, dtype=torch.float64) * math.sqrt(s)
    # (T, N, D) form: the mean over 400 independent "time steps" estimates E[stat].
    val = sigreg(z, num_projections=16, generator=gen).item()
    expected = n * g(s) + h(s)
    assert val == pytest.approx(expected, rel=0.06, abs=0.06)
    if s == 1.0:
        assert expected == pytest.approx(1.06, abs=0.005)


def test_sigreg_minimum_is_near_one_minus_two_over_n():
    n = 128
    grid = np.linspace(0.9, 1.05, 3001)
    s_star = grid[np.argmin([n * g(s) + h(s) for s in grid])]
    assert s_star == pytest.approx(1 - 2 / n, abs=2e-3)


def test_sigreg_is_large_for_collapsed_z():
    gen = torch.Generator().manual_seed(1)
    healthy = sigreg(torch.randn(256, 16, generator=gen), 256, generator=gen)
    collapsed = sigreg(torch.ones(256, 16) * 0.3 + 1e-3 * torch.randn(256, 16, generator=gen), 256)
    assert healthy.item() < 3 and collapsed.item() > 30 * healthy.item()


def test_sigreg_agrees_with_independent_numpy_port():
    gen = torch.Generator().manual_seed(2)
    z = torch.randn(64, 5, generator=gen, dtype=torch.float64) * 1.3 + 0.2
    a = torch.randn(5, 7, generator=gen, dtype=torch.float64)
    a = a / a.norm(dim=0, keepdim=True)
    ours = sigreg(z, directions=a).item()
    assert ours == pytest.approx(numpy_sigreg(z.numpy(), a.numpy()), rel=1e-10)


def test_sigreg_generator_makes_it_reproducible_and_rejects_bad_shapes():
    z = torch.randn(32, 6)
    a = sigreg(z, 64, generator=torch.Generator().manual_seed(5))
    b = sigreg(z, 64, generator=torch.Generator().manual_seed(5))
    assert a.item() == b.item()
    with pytest.raises(ValueError, match=r"\(N, D\) or \(T, N, D\)"):
        sigreg(torch.randn(3, 4, 5, 6))


def test_lambdareg_trace_and_condition_bound():
    torch.manual_seed(3)
    for kappa in (1.5, 2.0, 10.0):
        reg = LambdaReg(32, kappa)
        with torch.no_grad():
            reg.alpha.copy_(torch.randn(32) * 3)
        v = reg.variances
        assert v.sum().item() == pytest.approx(32.0, rel=1e-6)
        assert (v.max() / v.min()).item() <= kappa * (1 + 1e-6)
    assert torch.allclose(LambdaReg(8, 3.0).variances, torch.ones(8))  # α = 0 -> Λ = I


def test_lambdareg_kappa_one_is_exactly_sigreg():
    reg = LambdaReg(6, 1.0)
    with torch.no_grad():
        reg.alpha.copy_(torch.randn(6) * 5)
    z = torch.randn(40, 6)
    a = reg(z, 32, generator=torch.Generator().manual_seed(9))
    b = sigreg(z, 32, generator=torch.Generator().manual_seed(9))
    assert a.item() == b.item()


def test_lambdareg_gradients_reach_alpha_and_z():
    reg = LambdaReg(4, 4.0)
    z = (torch.randn(64, 4) * torch.tensor([2.0, 1.0, 0.5, 0.5])).requires_grad_()
    reg(z, 64, generator=torch.Generator().manual_seed(0)).backward()
    assert reg.alpha.grad is not None and reg.alpha.grad.abs().sum() > 0
    assert z.grad is not None and z.grad.abs().sum() > 0


def test_lambdareg_matches_sigreg_of_whitened_z():
    reg = LambdaReg(5, 4.0)
    with torch.no_grad():
        reg.alpha.copy_(torch.tensor([0.5, -0.5, 0.2, 0.0, 0.1]))
    z = torch.randn(50, 5)
    v = 5 * torch.softmax(reg.alpha.detach().clamp(-math.log(4) / 2, math.log(4) / 2), 0)
    a = reg(z, 16, generator=torch.Generator().manual_seed(1))
    b = sigreg(z / v.sqrt(), 16, generator=torch.Generator().manual_seed(1))
    assert a.item() == pytest.approx(b.item(), rel=1e-6)


@pytest.mark.parametrize("kappa", [0.5, float("nan"), float("inf")])
def test_lambdareg_refuses_a_kappa_below_one_or_not_finite(kappa):
    with pytest.raises(ValueError, match="kappa must be"):
        LambdaReg(4, kappa)


def test_scale_loss_is_one_minus_pearson():
    gen = torch.Generator().manual_seed(4)
    zi, zj = torch.randn(300, 8, generator=gen), torch.randn(300, 8, generator=gen)
    qi, qj = torch.randn(300, 3, generator=gen), torch.randn(300, 3, generator=gen)
    qj = qj + 0.3 * (zj[:, :3] - qi)  # some correlation
    x = ((zi - zj) ** 2).sum(1).numpy()
    y = ((qi - qj) ** 2).sum(1).numpy()
    r = np.corrcoef(x, y)[0, 1]
    assert scale_loss(zi, zj, qi, qj).item() == pytest.approx(1 - r, abs=1e-5)


def test_scale_loss_invariances_and_affine_zero():
    gen = torch.Generator().manual_seed(5)
    qi, qj = torch.randn(200, 2, generator=gen), torch.randn(200, 2, generator=gen)
    zi, zj = torch.randn(200, 6, generator=gen), torch.randn(200, 6, generator=gen)
    base = scale_loss(zi, zj, qi, qj).item()
    assert scale_loss(7 * zi, 7 * zj, qi, qj).item() == pytest.approx(base, abs=1e-5)
    assert scale_loss(zi, zj, 0.2 * qi, 0.2 * qj).item() == pytest.approx(base, abs=1e-5)
    # z = 3 q embedded in a larger space: ||dz||^2 = 9 ||dq||^2, an increasing affine map.
    pad = torch.zeros(200, 4)
    zq_i, zq_j = torch.cat([3 * qi, pad], 1), torch.cat([3 * qj, pad], 1)
    assert scale_loss(zq_i, zq_j, qi, qj).item() == pytest.approx(0.0, abs=1e-5)
    assert scale_loss(zq_i, zq_j, qj, qi).item() == pytest.approx(0.0, abs=1e-5)


def test_scale_loss_degenerate_batch_is_connected_zero():
    zi = torch.randn(10, 4, requires_grad=True)
    q = torch.ones(10, 2)
    loss = scale_loss(zi, zi.detach() + 1.0, q, q)  # constant state distances
    assert loss.item() == 0.0 and loss.requires_grad
    loss.backward()
    assert torch.equal(zi.grad, torch.zeros_like(zi))
    with pytest.raises(ValueError, match=r"q_i and q_j must both be \(K, q_dim\)"):
        scale_loss(zi, zi, q[:5], q[:5])


def test_half_the_pairs_are_ordered_within_a_clip_and_half_across_episodes():
    episode = torch.tensor([0, 0, 1, 2, 3, 3, 4, 5])
    frames = 4
    i, j = sample_pairs(episode, frames, 512, generator=torch.Generator().manual_seed(0))
    assert len(i) == len(j) == 512
    within_i, within_j = i[:256], j[:256]
    assert torch.equal(within_i // frames, within_j // frames)  # same clip
    assert (within_i % frames < within_j % frames).all()  # t < t'
    across_i, across_j = i[256:], j[256:]
    ep_row = episode.repeat_interleave(frames)
    assert (ep_row[across_i] != ep_row[across_j]).all()


def test_sample_pairs_can_come_up_short_without_episode_diversity():
    i, j = sample_pairs(torch.zeros(6, dtype=torch.long), 4, 100, torch.Generator().manual_seed(0))
    assert len(i) == 50  # only the within-clip half exists


def test_aux_head_loss_is_the_mean_squared_error_and_refuses_a_wrong_q_shape():
    head = AuxHead(8, 3)
    z, q = torch.randn(5, 4, 8), torch.randn(5, 4, 3)
    loss = head.loss(z, q)
    assert loss.item() == pytest.approx(((head(z) - q) ** 2).mean().item())
    with pytest.raises(ValueError, match=r"q must have shape \(5, 4, 3\)"):
        head.loss(z, torch.randn(5, 4, 2))


# ------------------------------------------------------------------ the book's small checks


def test_sigreg_vs_variance_is_the_documented_draws_and_near_the_closed_form():
    from jepa_geometry.theory.linear_gaussian import expected_sigreg
    from jepa_geometry.wm.losses import sigreg_vs_variance

    scales, n, dim, reps = [0.25, 0.8, 1.0, 2.0], 64, 8, 200
    gen = torch.Generator().manual_seed(3)
    table = sigreg_vs_variance(scales, n, dim, gen, reps=reps, closed_form=expected_sigreg)
    assert list(table.columns) == ["variance s", "SIGReg (mean of 200 batches)", "closed form"]
    # Monte Carlo against the exact expectation of the implemented statistic
    mc, exact = table["SIGReg (mean of 200 batches)"], table["closed form"]
    np.testing.assert_allclose(mc, exact, rtol=0.06)
    np.testing.assert_allclose(exact, [float(expected_sigreg(s, n)) for s in scales])
    # and exactly the draws the docstring states: batches then directions, per variance
    again = torch.Generator().manual_seed(3)
    for s, value in zip(scales, mc, strict=True):
        z = torch.randn(reps, n, dim, generator=again) * math.sqrt(s)
        a = torch.randn(dim, 64, generator=again)
        assert value == pytest.approx(sigreg(z, directions=a / a.norm(dim=0)).item(), rel=1e-6)
    assert "closed form" not in sigreg_vs_variance([1.0], 8, 2, gen, reps=2)


def test_collapsed_batch_scores_the_closed_form_at_zero_variance():
    """z -> 0: every ECF is 1, so SIGReg -> n Σ_k w_k (1 - e^{-t_k²/2})² (weights by hand)."""
    from jepa_geometry.wm.losses import collapsed_sigreg

    n = 64
    t = [3.0 * k / 16 for k in range(17)]
    w = [
        (3.0 / 16) * (1.0 if k in (0, 16) else 2.0) * math.exp(-(t[k] ** 2) / 2) for k in range(17)
    ]
    exact = n * sum(wk * (1 - math.exp(-(tk**2) / 2)) ** 2 for wk, tk in zip(w, t, strict=True))
    gen = torch.Generator().manual_seed(0)
    assert collapsed_sigreg(n, 16, gen, jitter=1e-6) == pytest.approx(exact, rel=1e-5)
    assert collapsed_sigreg(2 * n, 16, gen, jitter=1e-6) == pytest.approx(2 * exact, rel=1e-5)
    assert collapsed_sigreg(n, 16, gen) == pytest.approx(exact, rel=0.02)  # jitter 0.01


def test_lambda_reg_check_keeps_trace_and_condition_and_equals_sigreg_of_whitened_z():
    from jepa_geometry.wm.losses import lambda_reg_check

    dim, kappa = 32, 2.0
    chk = lambda_reg_check(dim, kappa, torch.Generator().manual_seed(5))
    # independent: v = D softmax(clip(α, ±½ log κ)) from the same first draw, in numpy
    alpha = torch.randn(dim, generator=torch.Generator().manual_seed(5)).double().numpy()
    a = np.clip(alpha, -0.5 * math.log(kappa), 0.5 * math.log(kappa))
    v = dim * np.exp(a) / np.exp(a).sum()
    assert chk["trace"] == pytest.approx(v.sum(), rel=1e-5) and v.sum() == pytest.approx(dim)
    assert chk["cond"] == pytest.approx(v.max() / v.min(), rel=1e-5)
    assert chk["cond"] == pytest.approx(kappa, rel=1e-5)  # 32 normals spread beyond log 2
    assert chk["lambda_reg"] == pytest.approx(chk["sigreg_whitened"], rel=1e-6)
    assert chk["kappa1_lambda_reg"] == pytest.approx(chk["kappa1_sigreg"], rel=1e-6)
    assert chk["lambda_reg"] != pytest.approx(chk["kappa1_sigreg"], rel=1e-3)


def test_scale_loss_cases_against_numpy_pearson():
    from jepa_geometry.wm.losses import scale_loss_cases

    dim, k = 16, 256
    cases = scale_loss_cases(dim, torch.Generator().manual_seed(2), k=k)
    assert cases.name == "1 - ρ" and len(cases) == 4
    assert abs(cases["z = q A (distances equal)"]) < 1e-5
    assert abs(cases["z = 10 q A + 3 (rescaled, shifted)"]) < 1e-5
    # the noisy case, redrawn in the documented order and scored with numpy's Pearson r
    g = torch.Generator().manual_seed(2)
    q_i, q_j = torch.randn(k, 2, generator=g).numpy(), torch.randn(k, 2, generator=g).numpy()
    a = torch.linalg.qr(torch.randn(dim, 2, generator=g)).Q.T.numpy()
    np.testing.assert_allclose(a @ a.T, np.eye(2), atol=1e-6)  # orthonormal rows
    e_i = 0.3 * torch.randn(k, dim, generator=g).numpy()
    e_j = 0.3 * torch.randn(k, dim, generator=g).numpy()
    x = (((q_i @ a + e_i) - (q_j @ a + e_j)) ** 2).sum(1)
    y = ((q_i - q_j) ** 2).sum(1)
    assert cases["z = q A + noise"] == pytest.approx(1 - np.corrcoef(x, y)[0, 1], abs=1e-4)
    assert 0.02 < cases["z = q A + noise"] < 0.5
    assert abs(cases["z unrelated to q"] - 1) < 0.25  # ρ ≈ 0 up to sampling error (~0.06)


@pytest.mark.parametrize("bound", ["clamp", "tanh", "project"])
def test_lambdareg_bounds_keep_trace_and_condition(bound):
    torch.manual_seed(4)
    reg = LambdaReg(16, 3.0, bound)
    with torch.no_grad():
        reg.alpha.copy_(torch.randn(16) * 4)
    reg.project_()
    v = reg.variances
    assert v.sum().item() == pytest.approx(16.0, rel=1e-6)
    assert (v.max() / v.min()).item() <= 3.0 * (1 + 1e-6)
    one = LambdaReg(5, 1.0, bound)
    with torch.no_grad():
        one.alpha.copy_(torch.randn(5))
    assert torch.allclose(one.variances, torch.ones(5))  # κ = 1 is isotropic for every bound


def test_tanh_bound_keeps_a_gradient_where_the_clamp_has_none():
    half = 0.5 * math.log(2.0)
    grads = {}
    for bound in ("clamp", "tanh"):
        reg = LambdaReg(2, 2.0, bound)
        with torch.no_grad():
            reg.alpha.copy_(torch.tensor([3 * half, -3 * half]))  # both outside the box
        reg.variances[0].backward()
        grads[bound] = reg.alpha.grad
    assert torch.equal(grads["clamp"], torch.zeros(2))
    # closed form: v_0 = 2 σ(b_0 - b_1), b = h tanh(α / h): dv_0/dα_0 = 2 σ(1-σ) sech²(3)
    b = half * math.tanh(3.0)
    s = 1 / (1 + math.exp(-2 * b))
    expected = 2 * s * (1 - s) / math.cosh(3.0) ** 2
    assert grads["tanh"][0].item() == pytest.approx(expected, rel=1e-5)
    assert grads["tanh"][1].item() == pytest.approx(-expected, rel=1e-5)


def test_projection_recentres_without_changing_v_inside_the_box():
    reg = LambdaReg(4, 4.0, "project")
    with torch.no_grad():
        reg.alpha.copy_(torch.tensor([0.3, 0.1, -0.2, 0.2]) + 0.25)  # shifted, inside after
    before = reg.variances.detach().clone()
    reg.project_()
    assert reg.alpha.mean().abs().item() < 1e-7
    assert torch.allclose(reg.variances, before, atol=1e-6)  # softmax is shift-invariant
    with torch.no_grad():
        reg.alpha.copy_(torch.tensor([5.0, -5.0, 0.0, 0.0]))
    reg.project_()
    assert reg.alpha.abs().max().item() == pytest.approx(0.5 * math.log(4.0))
    with pytest.raises(ValueError, match="bound must be one of clamp, tanh, project"):
        LambdaReg(4, 2.0, "soft")


def test_sigreg_gaussian_floor_is_the_expected_statistic_of_gaussian_samples():
    from jepa_geometry.wm.losses import sigreg_gaussian_floor

    floor = sigreg_gaussian_floor()
    g = torch.Generator().manual_seed(0)
    for n in (32, 256):  # the expectation does not depend on the batch
        draws = [
            sigreg(torch.randn(4, n, 16, generator=g, dtype=torch.float64), 64, generator=g)
            for _ in range(60)
        ]
        mc = torch.stack(draws)
        assert mc.mean().item() == pytest.approx(floor, abs=4 * mc.std().item() / 60**0.5)
    wide = sigreg(2 * torch.randn(4, 256, 16, generator=g, dtype=torch.float64), 64, generator=g)
    assert wide.item() > 5 * floor  # a non-standard Gaussian sits far above the floor
