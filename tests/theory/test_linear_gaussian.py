"""AnisoWM's linear-Gaussian closed forms against Monte Carlo, brute force and optimisation.

Reference values quoted here ("script") come from an independent numpy implementation of the
same closed forms, kept outside this repository, not from this code; the book's
*Reconstructions* page, section rec-linear-gaussian (book/reconstructions.md), describes it.
"""

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from scipy.integrate import quad
from scipy.optimize import linprog, minimize

from jepa_geometry.book import plots
from jepa_geometry.theory import linear_gaussian
from jepa_geometry.wm.losses import sigreg

SIGMA45 = linear_gaussian.covariance_2d([4.0, 1.0], 45.0)  # [[2.5, 1.5], [1.5, 2.5]]
E1 = np.array([1.0, 0.0])


# ---------------------------------------------------------------- SIGReg closed forms


@pytest.mark.parametrize("s", [0.25, 0.5, 1.0, 2.0, 5.0])
def test_population_statistic_is_the_epps_pulley_integral(s):
    def integrand(t):
        return (math.exp(-s * t * t / 2) - math.exp(-t * t / 2)) ** 2 * math.exp(-t * t / 2)

    numeric = quad(integrand, -np.inf, np.inf)[0]
    assert linear_gaussian.epps_pulley_population(s) == pytest.approx(numeric, rel=1e-8, abs=1e-12)


def test_population_statistic_vanishes_only_at_one():
    s = np.linspace(0.01, 10, 2000)
    g = linear_gaussian.epps_pulley_population(s)
    assert g.min() >= 0 and s[np.argmin(g)] == pytest.approx(1.0, abs=0.01)
    assert linear_gaussian.epps_pulley_population(1.0) == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize("s", [0.5, 1.0, 2.0])
def test_expected_sigreg_matches_monte_carlo_of_the_implementation(s):
    gen = torch.Generator().manual_seed(int(10 * s))
    n, reps = 128, 600
    z = torch.randn(reps, n, 4, generator=gen, dtype=torch.float64) * math.sqrt(s)
    mc = sigreg(z, num_projections=8, generator=gen).item()  # mean over 600 batches
    closed = float(linear_gaussian.expected_sigreg(s, n))
    assert mc == pytest.approx(closed, rel=0.03, abs=0.03)
    # and the quadrature is within its truncation error of the continuum n g + h
    cont = n * linear_gaussian.epps_pulley_population(s) + linear_gaussian.epps_pulley_finite_bias(
        s
    )
    assert closed == pytest.approx(cont, abs=0.02)


def test_sliced_penalty_matches_sliced_sigreg_monte_carlo():
    gen = torch.Generator().manual_seed(0)
    c = np.array([1.5, 0.5])
    scale = torch.tensor(c).sqrt()
    # 30 calls, each 20 batches of 128 with 64 fresh directions: 1920 directions in all
    mc = np.mean(
        [
            sigreg(
                torch.randn(20, 128, 2, generator=gen, dtype=torch.float64) * scale,
                64,
                generator=gen,
            ).item()
            for _ in range(30)
        ]
    )
    assert mc == pytest.approx(linear_gaussian.sliced_penalty(np.diag(c), n=128), rel=0.03)
    assert linear_gaussian.sliced_penalty(np.diag(c), n=128) == pytest.approx(
        3.181, abs=2e-3
    )  # script


def test_finite_batch_scale_is_the_minimiser_near_one_minus_two_over_n():
    for n in (64, 128, 1024):
        grid = np.linspace(0.9, 1.0, 100_001)
        brute = grid[
            np.argmin(
                n * linear_gaussian.epps_pulley_population(grid)
                + linear_gaussian.epps_pulley_finite_bias(grid)
            )
        ]
        assert linear_gaussian.finite_batch_scale(n) == pytest.approx(brute, abs=2e-6)
        assert linear_gaussian.finite_batch_scale(n) == pytest.approx(1 - 2 / n, abs=3 / n**2)


# ---------------------------------------------------------------- Lemma 1, Proposition 1


def test_lemma1_isotropic_encoder_induces_inverse_covariance():
    rng = np.random.default_rng(0)
    g = rng.standard_normal((5, 5))
    sigma = g @ g.T + 0.1 * np.eye(5)
    u, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    a = linear_gaussian.isotropic_encoder(sigma, 0.7, u)
    np.testing.assert_allclose(a @ sigma @ a.T, 0.7 * np.eye(5), atol=1e-10)
    x, xg = rng.standard_normal(5), rng.standard_normal(5)
    lhs = np.sum((a @ (x - xg)) ** 2)
    assert lhs == pytest.approx(0.7 * (x - xg) @ np.linalg.solve(sigma, x - xg), rel=1e-10)
    with pytest.raises(ValueError, match="orthogonal"):
        linear_gaussian.isotropic_encoder(sigma, 1.0, 2 * u)


@pytest.mark.parametrize("eta", [0.3, 0.05])
def test_soft_minimizer_matches_direct_minimisation_over_encoders(eta):
    """No eigenbasis assumption: Nelder-Mead over all 2x2 encoders A from several starts."""
    sigma_w = np.array([[1.0, 0.3], [0.3, 0.6]])  # anisotropic physical noise
    sol = linear_gaussian.soft_minimizer(SIGMA45, sigma_w, eta, 1.0)
    rng = np.random.default_rng(1)
    best = min(
        (
            minimize(
                linear_gaussian.linear_objective,
                rng.standard_normal(4) * 0.7,
                args=(SIGMA45, sigma_w, eta, 1.0),
                method="Nelder-Mead",
                options={"xatol": 1e-8, "fatol": 1e-12, "maxiter": 8000},
            )
            for _ in range(6)
        ),
        key=lambda r: r.fun,
    )
    assert sol["objective"] == pytest.approx(best.fun, abs=1e-6)
    a = best.x.reshape(2, 2)
    np.testing.assert_allclose(sol["M"], a.T @ a, atol=2e-3)  # M is invariant to A -> UA
    assert sol["objective"] == pytest.approx(
        linear_gaussian.linear_objective(sol["A"], SIGMA45, sigma_w, eta, 1.0), abs=1e-9
    )


def test_proposition1_limit_inverse_covariance_and_vanishing_prediction_loss():
    inv = np.linalg.inv(SIGMA45)
    gaps, losses = [], []
    for eta in (0.1, 0.01, 0.001):
        sol = linear_gaussian.soft_minimizer(SIGMA45, np.eye(2), eta, 1.0)
        gaps.append(np.abs(sol["M"] - inv).max())
        losses.append(sol["pred_loss"])
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 4e-3
    assert losses[0] > losses[1] > losses[2] and losses[2] < 1e-3
    # script, Proposition-1 block: k(minor) at eta = 0.1 and 0.01
    k = np.sort(linear_gaussian.soft_minimizer(SIGMA45, np.eye(2), 0.1, 1.0)["k"])
    np.testing.assert_allclose(k, [0.63339, 1.01655], atol=2e-4)
    # finite batch: K -> q_N I
    sol = linear_gaussian.soft_minimizer(SIGMA45, np.eye(2), 1e-4, 1.0, n=128)
    np.testing.assert_allclose(sol["k"], linear_gaussian.finite_batch_scale(128), atol=5e-5)


def test_collapse_threshold_matches_reference():
    assert linear_gaussian.collapse_threshold(SIGMA45, np.eye(2), 1.0) == pytest.approx(
        0.9404, abs=2e-3
    )


# ---------------------------------------------------------------- Theorem 1: regret


def brute_box_argmin(metric, goal, w, points=801):
    axis = np.linspace(-w, w, points)
    pts = np.stack(np.meshgrid(axis, axis), -1).reshape(-1, 2)
    d = pts - goal
    return pts[np.argmin(np.einsum("ni,ij,nj->n", d, metric, d))]


def test_box_argmin_matches_brute_force_grid():
    rng = np.random.default_rng(2)
    for _ in range(20):
        g = rng.standard_normal((2, 2))
        metric = g @ g.T + 0.05 * np.eye(2)
        goal = rng.uniform(-3, 3, 2)
        exact = linear_gaussian.box_argmin(metric, goal, 1.0)
        brute = brute_box_argmin(metric, goal, 1.0)

        def f(x, goal=goal, metric=metric):
            return (x - goal) @ metric @ (x - goal)

        assert f(exact) <= f(brute) + 1e-12
        assert np.abs(exact - brute).max() < 0.02


@pytest.mark.parametrize("angle", [15.0, 30.0, 45.0, 60.0])
def test_face_regret_formula_matches_grid_search_over_the_box(angle):
    sigma = linear_gaussian.covariance_2d([4.0, 1.0], angle)
    w = 1.0
    d = 0.9 * min(0.5, linear_gaussian.face_offset_limit(sigma, 0, w))
    goal = np.array([w + d, 0.0])
    x_hat = brute_box_argmin(np.linalg.inv(sigma), goal, w, points=2001)
    brute = np.sum((x_hat - goal) ** 2) - d**2
    rho = linear_gaussian.normalized_regret(sigma, E1)
    assert d**2 * rho == pytest.approx(brute, abs=2e-3 * d)
    assert linear_gaussian.planning_regret(np.linalg.inv(sigma), goal, w)[
        "regret"
    ] == pytest.approx(d**2 * rho, rel=1e-9)
    assert rho == pytest.approx((sigma[0, 1] / sigma[0, 0]) ** 2, rel=1e-12)


def test_worked_example_and_eigenvector_faces():
    reg = linear_gaussian.planning_regret(np.linalg.inv(SIGMA45), np.array([1.5, 0.0]), 1.0)
    np.testing.assert_allclose(reg["x_hat"], [1.0, -0.3], atol=1e-12)
    assert reg["regret"] == pytest.approx(0.09) and reg["c_star"] == pytest.approx(0.25)
    assert linear_gaussian.normalized_regret(SIGMA45, E1) == pytest.approx(0.36)
    # a face normal along an eigenvector of Σ: no regret
    v = np.array([1.0, 1.0]) / math.sqrt(2)
    assert linear_gaussian.normalized_regret(SIGMA45, v) == pytest.approx(0.0, abs=1e-12)
    assert linear_gaussian.normalized_regret(
        linear_gaussian.covariance_2d([4, 1], 30), E1
    ) == pytest.approx(0.15976, abs=1e-5)


def test_regret_approaches_delta_h_from_below_as_noise_vanishes():
    table = linear_gaussian.regret_vs_noise(
        SIGMA45, np.eye(2), [0.3, 0.1, 0.01, 0.001], 1.0, np.array([1.5, 0.0]), 1.0
    )
    r = table.regret.to_numpy()
    assert np.all(np.diff(r) > 0) and np.all(r < 0.09) and r[-1] == pytest.approx(0.09, abs=1e-3)
    # the independent script's regret along the noise levels
    np.testing.assert_allclose(r, [0.0051, 0.0457, 0.0842, 0.0894], atol=2e-4)


# ---------------------------------------------------------------- ΛReg


def test_select_target_spectrum_solves_the_linear_program():
    rng = np.random.default_rng(3)
    for d, kappa in [(2, 4.0), (5, 2.0), (6, 3.5)]:
        r = rng.uniform(0.1, 3.0, d)
        v = linear_gaussian.select_target_spectrum(r, kappa)
        # LP over (v, m): min r.v  s.t. sum v = d, m <= v_i <= kappa m
        c = np.append(r, 0.0)
        a_ub = np.zeros((2 * d, d + 1))
        for i in range(d):
            a_ub[i, i], a_ub[i, d] = -1.0, 1.0  # m - v_i <= 0
            a_ub[d + i, i], a_ub[d + i, d] = 1.0, -kappa  # v_i - kappa m <= 0
        lp = linprog(c, A_ub=a_ub, b_ub=np.zeros(2 * d), A_eq=[np.append(np.ones(d), 0)], b_eq=[d])
        assert lp.status == 0 and v @ r == pytest.approx(lp.fun, abs=1e-8)
        assert v.sum() == pytest.approx(d) and v.max() / v.min() <= kappa + 1e-9


def test_kappa_sweep_matches_closed_form_and_brute_force():
    kappas = [1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 16.0]
    sweep = linear_gaussian.kappa_sweep(SIGMA45, np.eye(2), kappas, E1)
    np.testing.assert_allclose(
        sweep.normalized_regret, linear_gaussian.kappa_regret_45(np.array(kappas), 4.0), atol=1e-10
    )
    np.testing.assert_allclose(sweep.normalized_regret[:3], [0.36, 0.20661, 0.11111], atol=1e-5)
    # brute force over every target L = Rot(phi) diag(v, 2 - v) Rot(phi)^T with cond <= kappa
    r_mat = np.linalg.inv(SIGMA45)  # R = Σ^{-1} for isotropic physical noise
    kappa = 2.0
    best = (np.inf, None)
    for phi in np.linspace(0, 180, 361):
        for v in np.linspace(2 / (1 + kappa), 2 * kappa / (1 + kappa), 201):
            rot = linear_gaussian.rotation(phi)
            target = rot @ np.diag([v, 2 - v]) @ rot.T
            best = min(best, (np.trace(target @ r_mat), target), key=lambda b: b[0])
    metric = linear_gaussian.lambdareg_metric(SIGMA45, best[1])
    goal = np.array([1.0 + 0.5, 0.0])
    reg = linear_gaussian.planning_regret(metric, goal, 1.0)
    assert reg["regret"] / reg["c_star"] == pytest.approx(sweep.normalized_regret[2], abs=2e-3)


def test_aligned_target_is_euclidean():
    target = linear_gaussian.selected_target(SIGMA45, np.eye(2), 4.0)  # kappa = cond Σ
    np.testing.assert_allclose(target, 2 * SIGMA45 / np.trace(SIGMA45), atol=1e-12)
    metric = linear_gaussian.lambdareg_metric(SIGMA45, target)
    np.testing.assert_allclose(metric, 0.4 * np.eye(2), atol=1e-12)


def test_cost_distance_agreement_reference_values():
    sig = linear_gaussian.cost_distance_agreement(np.linalg.inv(SIGMA45))
    assert sig["spearman"] == pytest.approx(0.7886, abs=1e-3) and sig["iou"] == pytest.approx(
        0.649, abs=2e-3
    )
    eu = linear_gaussian.cost_distance_agreement(np.eye(2))
    assert eu["spearman"] > 0.9999 and eu["iou"] == 1.0


# ---------------------------------------------------------------- chapter 2's checks


def test_sigreg_check_table_closed_forms_and_monte_carlo():
    scales = [0.5, 1.0, 2.0]
    table = linear_gaussian.sigreg_check_table(scales, n_batch=128, reps=300, seed=1)
    assert list(table.s) == scales
    for _, row in table.iterrows():
        s = row.s

        def integrand(t, s=s):
            return (math.exp(-s * t * t / 2) - math.exp(-t * t / 2)) ** 2 * math.exp(-t * t / 2)

        g = quad(integrand, -np.inf, np.inf)[0]
        h = math.sqrt(2 * math.pi) * (1 - (1 + 2 * s) ** -0.5)
        assert row["g(s)"] == pytest.approx(g, rel=1e-8, abs=1e-12)
        assert row["N g + h"] == pytest.approx(128 * g + h, rel=1e-8)
        assert row["closed form (17 knots)"] == pytest.approx(128 * g + h, abs=0.02)
        assert row["Monte Carlo sigreg"] == pytest.approx(row["closed form (17 knots)"], rel=0.05)


def test_lemma1_check_against_an_independent_inverse():
    out = linear_gaussian.lemma1_check(np.random.default_rng(7), dim=4, s=0.3)
    rng = np.random.default_rng(7)  # the same draws, in the documented order
    g = rng.standard_normal((4, 4))
    sigma = g @ g.T + 0.1 * np.eye(4)
    rng.standard_normal((4, 4))  # U
    x, xg = rng.standard_normal(4), rng.standard_normal(4)
    s_vals, vecs = np.linalg.eigh(sigma)
    expected = 0.3 * np.sum(((x - xg) @ vecs) ** 2 / s_vals)  # s (x - x_g)ᵀ Σ⁻¹ (x - x_g)
    assert out["latent_cost"] == pytest.approx(expected, rel=1e-9)
    assert out["metric_cost"] == pytest.approx(expected, rel=1e-9)
    assert out["max_deviation"] < 1e-12


def test_direct_search_check_agrees_with_the_reduced_problem():
    out = linear_gaussian.direct_search_check(
        SIGMA45, np.eye(2), 0.3, 1.0, np.random.default_rng(0), starts=3
    )
    assert out["direct_objective"] == pytest.approx(out["reduced_objective"], abs=1e-7)
    assert out["metric_gap"] < 1e-3
    # the reduced minimiser is no worse than the direct objective at the reduced encoder
    sol = linear_gaussian.soft_minimizer(SIGMA45, np.eye(2), 0.3, 1.0)
    f_at_a = linear_gaussian.linear_objective(sol["A"], SIGMA45, np.eye(2), 0.3, 1.0)
    assert out["reduced_objective"] == pytest.approx(f_at_a, abs=1e-9)


def test_grid_box_argmin_matches_the_exact_minimiser():
    rng = np.random.default_rng(5)
    for _ in range(10):
        g = rng.standard_normal((2, 2))
        metric = g @ g.T + 0.05 * np.eye(2)
        goal = rng.uniform(-3, 3, 2)
        grid = linear_gaussian.grid_box_argmin(metric, goal, 1.0, points=801)
        assert np.abs(grid - linear_gaussian.box_argmin(metric, goal, 1.0)).max() < 0.02


def test_face_regret_check_worked_example():
    out = linear_gaussian.face_regret_check(SIGMA45, 1.0, 0.5)
    np.testing.assert_allclose(out["goal"], [1.5, 0.0])
    np.testing.assert_allclose(out["x_hat"], [1.0, -0.3], atol=1e-12)  # x_g - d Σn / nᵀΣn
    np.testing.assert_allclose(out["x_grid"], [1.0, -0.3], atol=2e-3)
    np.testing.assert_allclose(out["x_star"], [1.0, 0.0])
    assert out["rho"] == pytest.approx(((4 - 1) / (4 + 1)) ** 2)  # 45°: ((c - 1)/(c + 1))²
    for key in ("regret_formula", "regret_exact", "regret_grid"):
        assert out[key] == pytest.approx(0.09, abs=1e-4)
    assert out["d_max"] == pytest.approx(2.5 / 1.5)  # w Σ₁₁ / |Σ₁₂|


def test_regret_vs_angle_is_the_off_diagonal_ratio():
    angles = [0, 20, 45, 70, 90]
    table = linear_gaussian.regret_vs_angle([4.0, 1.0], angles, 1.0, 0.5)
    assert list(table.angle) == angles
    for ang, formula, exact in zip(
        table.angle, table["rho formula"], table["rho exact QP"], strict=True
    ):
        a = math.radians(ang)
        s11 = 4 * math.cos(a) ** 2 + math.sin(a) ** 2
        s12 = 3 * math.cos(a) * math.sin(a)
        assert formula == pytest.approx((s12 / s11) ** 2, abs=1e-12)  # 2-D: ρ = Σ₁₂²/Σ₁₁²
        assert exact == pytest.approx(formula, abs=1e-9)
    assert table["rho formula"][2] == pytest.approx(0.36)


@pytest.mark.parametrize("kappa", [1.0, 2.5, 7.0])
def test_target_spectrum_lp_is_the_two_level_closed_form(kappa):
    r = np.array([0.4, 1.9])
    # D = 2: κ m on the smaller r, m on the other, m = 2 / (1 + κ)
    expected = (2 * kappa * r.min() + 2 * r.max()) / (1 + kappa)
    assert linear_gaussian.target_spectrum_lp(r, kappa) == pytest.approx(expected, abs=1e-8)


def test_kappa_sweep_table_checks_agree():
    kappas = [1.0, 1.5, 4.0, 16.0]
    t = linear_gaussian.kappa_sweep_table(SIGMA45, np.eye(2), kappas, E1, 4.0)
    np.testing.assert_allclose(t["tr(L*R) two-level"], t["tr(L*R) linprog"], atol=1e-8)
    np.testing.assert_allclose(t["tr(L*R) two-level"], t.pred_term_tr_LR, atol=1e-12)
    np.testing.assert_allclose(t["rho formula ((κ-c)/(κ+c))²"], t.normalized_regret, atol=1e-10)
    np.testing.assert_allclose(t.normalized_regret, [0.36, 0.20661, 0.0, 0.36], atol=1e-5)


def test_cost_distance_table_rows():
    from scipy.stats import spearmanr

    metric = np.diag([1.0, 4.0])
    t = linear_gaussian.cost_distance_table({"euclid": np.eye(2), "diag": metric})
    assert list(t.model) == ["euclid", "diag"]
    assert t.spearman[0] > 0.9999 and t.iou[0] == 1.0  # ties in float rounding only
    axis = np.linspace(-1, 1, 41)  # the documented window, computed here independently
    x, y = np.meshgrid(axis, axis)
    rho = spearmanr((x**2 + 4 * y**2).ravel(), np.hypot(x, y).ravel()).statistic
    assert t.spearman[1] == pytest.approx(rho, abs=1e-4) and t.iou[1] < 1.0


# ---------------------------------------------------------------- chapter 2's figures


def test_plot_box_planning_marks_the_two_optima():
    out = linear_gaussian.face_regret_check(SIGMA45, 1.0, 0.5)
    fig = plots.plot_box_planning(
        np.linalg.inv(SIGMA45), out["goal"], 1.0, out["x_star"], out["x_hat"], title="t"
    )
    ax = fig.axes[0]
    pts = {ln.get_label(): np.c_[ln.get_xdata(), ln.get_ydata()] for ln in ax.lines}
    np.testing.assert_allclose(pts["task-optimal $x^*$"], [[1.0, 0.0]])
    np.testing.assert_allclose(pts[r"latent-optimal $\hat x$ ($\Sigma^{-1}$)"], [[1.0, -0.3]])
    box = ax.patches[0]
    assert box.get_xy() == (-1.0, -1.0) and box.get_width() == 2.0
    plt.close(fig)


def test_regret_and_kappa_plots_draw_their_tables():
    table = linear_gaussian.regret_vs_noise(
        SIGMA45, np.eye(2), [3.0, 0.1, 0.01], 1.0, np.array([1.5, 0.0]), 1.0
    )
    fig = plots.plot_regret_vs_eta(table, 0.09, 0.94)
    line = fig.axes[0].lines[0]
    kept = table.dropna().sort_values("eta")  # collapsed row dropped; drawn in η order
    np.testing.assert_allclose(line.get_ydata(), kept.regret)
    assert fig.axes[0].lines[1].get_ydata()[0] == 0.09
    plt.close(fig)
    sweep = linear_gaussian.kappa_sweep(SIGMA45, np.eye(2), [1.0, 4.0, 16.0], E1)
    fig = plots.plot_kappa_sweep(sweep, 0.36, 4.0)
    np.testing.assert_allclose(fig.axes[0].lines[0].get_ydata(), [0.36, 0.0, 0.36], atol=1e-10)
    plt.close(fig)


def test_plot_lowest_cost_sets_shades_the_lowest_decile():
    metrics = {"euclid": np.eye(2), "Σ⁻¹": np.linalg.inv(SIGMA45)}
    table = linear_gaussian.cost_distance_table(metrics)
    fig = plots.plot_lowest_cost_sets(metrics, table)
    assert len(fig.axes) == 2
    for ax, iou in zip(fig.axes, table.iou, strict=True):
        low = ax.images[0].get_array()
        assert 0.1 <= low.mean() < 0.12  # ≥ 10 % of the 41² points (ties at the quantile)
        assert f"IoU = {iou:.2f}" in ax.get_title()
    plt.close(fig)


def test_quadratic_form_grid_is_the_quadratic_form():
    m = np.array([[2.0, 0.5], [0.5, 1.0]])
    x, y, c = linear_gaussian.quadratic_form_grid(m, (1.0, -2.0), 3.0, n=7)
    assert x.shape == y.shape == c.shape == (7, 7)
    i, j = 2, 5
    p = np.array([x[i, j] - 1.0, y[i, j] + 2.0])
    assert c[i, j] == pytest.approx(p @ m @ p)
    assert c[3, 3] == pytest.approx(0.0)  # the centre
