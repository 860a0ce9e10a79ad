"""Isotropy and the inverse-covariance metric (AnisoWM, linear-Gaussian model).

AnisoWM's Lemma 1, Proposition 1 and Theorem 1 in a model small enough to solve: the SIGReg
objective of a linear encoder, its minimiser, the planning metric it induces, and ΛReg's
selection of an anisotropic target. Chapter 2 of the book; our reading of the paper's
statements is explained in the book's page *Reconstructions* (``book/reconstructions.md``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from jepa_geometry.wm.losses import epps_pulley_weights, sigreg

# ======================================================================================
# Isotropy and the inverse-covariance metric (AnisoWM, linear-Gaussian model)
# ======================================================================================
#
# Reconstruction (see the book's *Reconstructions* page, sections rec-linear-gaussian,
# rec-regret-box and rec-lambdareg, book/reconstructions.md): the paper's full text is not
# public, so the model below is one self-consistent reading of its stated results.
#
#   state        x ~ N(0, Σ),                 Σ ≻ 0 in R^D
#   dynamics     x' = x + B u + w,             w ~ N(0, η Σ_w)
#   encoder      z = A x,   predictor  ẑ' = P z + G u
#   whitened     K = Σ^{1/2} AᵀA Σ^{1/2},      R = Σ^{-1/2} Σ_w Σ^{-1/2}
#   metric       M = AᵀA = Σ^{-1/2} K Σ^{-1/2}
#   objective    F_η(A) = min_{P,G} ½ E||A x' - P A x - G u||² + λ Φ(K)
#                       = (η/2) tr(K R) + λ Φ(K),
#
# with Φ(K) the SIGReg statistic of z averaged over projection directions, which depends
# on spec(A Σ Aᵀ) = spec(K) only. The functions below are written for D = 2 where a direction
# average is a one-dimensional integral; the closed forms in D dimensions are noted where
# they hold.

SQRT_2PI = float(np.sqrt(2.0 * np.pi))


def rotation(angle_deg: float) -> np.ndarray:
    """The 2-D rotation by ``angle_deg`` degrees (counter-clockwise)."""
    a = np.radians(angle_deg)
    return np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])


def covariance_2d(eigenvalues: tuple[float, float] | list[float], angle_deg: float) -> np.ndarray:
    """``Σ = Rot(θ) diag(s_1, s_2) Rot(θ)ᵀ``: major axis (eigenvalue ``s_1``) at angle θ."""
    s = np.asarray(eigenvalues, dtype=np.float64)
    if s.shape != (2,) or not np.all(s > 0):
        raise ValueError(f"eigenvalues must be two positive numbers, got {eigenvalues!r}")
    rot = rotation(angle_deg)
    return rot @ np.diag(s) @ rot.T


def _check_spd(sigma: np.ndarray, name: str = "sigma") -> np.ndarray:
    sigma = np.asarray(sigma, dtype=np.float64)
    if sigma.ndim != 2 or sigma.shape[0] != sigma.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {sigma.shape}")
    if not np.allclose(sigma, sigma.T, atol=1e-10) or np.linalg.eigvalsh(sigma).min() <= 0:
        raise ValueError(f"{name} must be symmetric positive definite, got {sigma.tolist()}")
    return sigma


def spd_power(sigma: np.ndarray, p: float) -> np.ndarray:
    """``Σ^p`` of a symmetric positive-definite matrix, through its eigendecomposition."""
    s, v = np.linalg.eigh(_check_spd(sigma))
    return (v * s**p) @ v.T


# --------------------------------------------------------------------------------------
# SIGReg in closed form
# --------------------------------------------------------------------------------------


def epps_pulley_population(s: float | np.ndarray) -> float | np.ndarray:
    """SIGReg's population statistic for one projection ``y ~ N(0, s)``:

        g(s) = ∫ |e^{-s t²/2} - e^{-t²/2}|² e^{-t²/2} dt
             = √(2π) [ (1+2s)^{-1/2} - 2 (2+s)^{-1/2} + 3^{-1/2} ],

    three Gaussian integrals. ``g ≥ 0`` with equality iff ``s = 1``; ``g(0)`` and ``g(∞)`` are
    finite, so collapsing a direction costs only a bounded amount.
    """
    s = np.asarray(s, dtype=np.float64)
    return SQRT_2PI * ((1 + 2 * s) ** -0.5 - 2 * (2 + s) ** -0.5 + 3**-0.5)


def epps_pulley_finite_bias(s: float | np.ndarray) -> float | np.ndarray:
    """The finite-batch term ``h(s) = √(2π) [1 - (1+2s)^{-1/2}]``.

    For N samples the empirical characteristic function has ``E|φ_N(t)|² = |φ(t)|² +
    (1 - |φ(t)|²)/N``, so ``E[N ∫|φ_N - φ_0|² e^{-t²/2}] = N g(s) + h(s)``.
    """
    s = np.asarray(s, dtype=np.float64)
    return SQRT_2PI * (1 - (1 + 2 * s) ** -0.5)


def expected_sigreg(s: float | np.ndarray, n: int, knots: int = 17) -> float | np.ndarray:
    """Exact expectation of the *implemented* statistic (17-knot quadrature on [0, 3]) for one
    projection ``y ~ N(0, s)`` and a batch of ``n``:

        E[stat] = Σ_k w_k [ n (e^{-s t_k²/2} - e^{-t_k²/2})² + 1 - e^{-s t_k²} ],

    the quadrature of ``n g(s) + h(s)``. For ``z ~ N(0, s I)`` every projection has variance
    ``s``, so this is also the expectation of ``sigreg(z)`` in any dimension.
    """

    t, w = (x.numpy() for x in epps_pulley_weights(knots))
    s = np.asarray(s, dtype=np.float64)[..., None]
    phi_s, phi_0 = np.exp(-s * t**2 / 2), np.exp(-(t**2) / 2)
    return ((n * (phi_s - phi_0) ** 2 + 1 - phi_s**2) * w).sum(-1)


def _penalty(n: int | None):
    """``g`` (population) or ``n g + h`` (expected statistic of a batch of n)."""
    if n is None:
        return epps_pulley_population
    if not isinstance(n, int) or n < 2:
        raise ValueError(f"batch size n must be an integer >= 2 or None (population), got {n!r}")
    return lambda s: n * epps_pulley_population(s) + epps_pulley_finite_bias(s)


_GL_X, _GL_W = np.polynomial.legendre.leggauss(200)
_THETA = (_GL_X + 1) * np.pi / 2  # Gauss-Legendre nodes on [0, π)
_THETA_W = _GL_W / 2  # weights summing to 1: the uniform average over directions
_DIRS = np.stack([np.cos(_THETA), np.sin(_THETA)], axis=1)  # (200, 2) unit directions


def sliced_penalty(cov: np.ndarray, n: int | None = None) -> float:
    """``Φ(C) = E_a pen(aᵀ C a)`` over directions a uniform on the circle, for 2-D ``z ~ N(0, C)``.

    ``pen`` is g (``n=None``) or ``n g + h``; the average over the half circle uses 200-point
    Gauss-Legendre quadrature (directions a and -a give the same projection variance).
    """
    cov = np.asarray(cov, dtype=np.float64)
    if cov.shape != (2, 2):
        raise ValueError(f"sliced_penalty is for D = 2: cov must be (2, 2), got {cov.shape}")
    var = np.einsum("ai,ij,aj->a", _DIRS, cov, _DIRS)
    return float(_THETA_W @ _penalty(n)(var))


def finite_batch_scale(n: int) -> float:
    """``q_N = argmin_s [N g(s) + h(s)]``: the variance SIGReg asks for at batch size N.

    Expanding around s = 1 (``g'(1) = 0``) gives ``q_N ≈ 1 - 2/N``; this is the scalar q in
    ``K → q I``.
    """
    from scipy.optimize import minimize_scalar

    res = minimize_scalar(
        _penalty(n), bounds=(0.5, 1.5), method="bounded", options={"xatol": 1e-10}
    )
    return float(res.x)


def sigreg_check_table(
    scales: list[float],
    n_batch: int,
    reps: int,
    seed: int,
    num_projections: int = 16,
    dim: int = 2,
) -> pd.DataFrame:
    """SIGReg's closed forms beside a Monte-Carlo average of the library's ``sigreg``.

    For each variance ``s`` the table gives the population statistic ``g(s)``
    (:func:`epps_pulley_population`), the continuum expectation ``N g(s) + h(s)`` of a batch of
    N (:func:`epps_pulley_finite_bias`), the exact expectation of the implemented 17-knot
    quadrature (:func:`expected_sigreg`) and ``sigreg(z)`` averaged over ``reps`` batches
    ``z ~ N(0, s I_dim)`` with ``num_projections`` fresh directions. Why: for an isotropic z
    every projection has variance s, so the Monte-Carlo column must agree with the closed form
    up to sampling error -- the check that the theory's Φ is the statistic the code trains with.
    One torch generator seeded with ``seed`` draws the batches and directions in turn.
    """
    gen = torch.Generator().manual_seed(seed)
    rows = []
    for s in scales:
        z = torch.randn(reps, n_batch, dim, generator=gen, dtype=torch.float64) * np.sqrt(s)
        mc = sigreg(z, num_projections=num_projections, generator=gen).item()
        rows.append(
            {
                "s": s,
                "g(s)": float(epps_pulley_population(s)),
                "N g + h": float(n_batch * epps_pulley_population(s) + epps_pulley_finite_bias(s)),
                "closed form (17 knots)": float(expected_sigreg(s, n_batch)),
                "Monte Carlo sigreg": mc,
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------
# Lemma 1 and Proposition 1
# --------------------------------------------------------------------------------------


def isotropic_encoder(sigma: np.ndarray, s: float, u: np.ndarray | None = None) -> np.ndarray:
    """Lemma 1: every A with ``A Σ Aᵀ = s I`` is ``A = √s U Σ^{-1/2}`` (U orthogonal), so
    ``AᵀA = s Σ^{-1}`` and ``||A(x - x_g)||² = s (x - x_g)ᵀ Σ^{-1} (x - x_g)``."""
    sigma = _check_spd(sigma)
    u = np.eye(len(sigma)) if u is None else np.asarray(u, dtype=np.float64)
    if u.shape != sigma.shape or not np.allclose(u @ u.T, np.eye(len(sigma)), atol=1e-10):
        raise ValueError(f"u must be an orthogonal {sigma.shape} matrix")
    return np.sqrt(s) * u @ spd_power(sigma, -0.5)


def lemma1_check(rng: np.random.Generator, dim: int = 5, s: float = 0.7) -> dict[str, float]:
    """Lemma 1 on a random instance: ``A = √s U Σ^{-1/2}`` gives ``A Σ Aᵀ = s I`` and
    ``||A(x - x_g)||² = s (x - x_g)ᵀ Σ⁻¹ (x - x_g)``.

    Draws, in this order from ``rng``: ``G`` (dim x dim) with ``Σ = G Gᵀ + 0.1 I``, an orthogonal
    ``U`` (QR of a Gaussian matrix), then ``x`` and ``x_g``. Returns ``max |A Σ Aᵀ - s I|``,
    the latent cost and the inverse-covariance cost, computed independently (``solve`` rather
    than the encoder). Why: it shows that an isotropic embedding plans in ``s Σ⁻¹`` whatever U.
    """
    g = rng.standard_normal((dim, dim))
    sigma = g @ g.T + 0.1 * np.eye(dim)
    u, _ = np.linalg.qr(rng.standard_normal((dim, dim)))
    a = isotropic_encoder(sigma, s, u)
    x, xg = rng.standard_normal(dim), rng.standard_normal(dim)
    return {
        "max_deviation": float(np.abs(a @ sigma @ a.T - s * np.eye(dim)).max()),
        "latent_cost": float(np.sum((a @ (x - xg)) ** 2)),
        "metric_cost": float(s * (x - xg) @ np.linalg.solve(sigma, x - xg)),
    }


def whitened_noise(sigma: np.ndarray, sigma_w: np.ndarray) -> np.ndarray:
    """``R = Σ^{-1/2} Σ_w Σ^{-1/2}``; isotropic physical noise (Σ_w = I) gives ``R = Σ^{-1}``."""
    sh = spd_power(sigma, -0.5)
    return sh @ _check_spd(sigma_w, "sigma_w") @ sh


def linear_objective(
    a: np.ndarray, sigma: np.ndarray, sigma_w: np.ndarray, eta: float, lam: float, n=None
) -> float:
    """``F_η(A) = (η/2) tr(A Σ_w Aᵀ) + λ Φ(A Σ Aᵀ)`` for a 2x2 encoder A (prediction optimised
    out: P = I, G = AB). The direct form, with no eigenbasis assumed."""
    a = np.asarray(a, dtype=np.float64).reshape(2, 2)
    return 0.5 * eta * float(np.trace(a @ sigma_w @ a.T)) + lam * sliced_penalty(a @ sigma @ a.T, n)


def soft_minimizer(
    sigma: np.ndarray,
    sigma_w: np.ndarray,
    eta: float,
    lam: float,
    n: int | None = None,
) -> dict[str, np.ndarray | float]:
    """The minimiser of ``F_η`` in the linear-Gaussian model (D = 2).

    F depends on A only through K, and for a fixed spectrum ``tr(K R)`` is smallest when K
    shares R's eigenvectors (von Neumann's trace inequality). So K = V diag(k) Vᵀ with
    ``R = V diag(r) Vᵀ`` and the problem is two-dimensional in ``k ≥ 0``: a grid search for the
    basin, then L-BFGS-B. Returns K, the metric ``M = Σ^{-1/2} K Σ^{-1/2}``, one encoder
    ``A = K^{1/2} Σ^{-1/2}``, the prediction loss ``(η/2) tr(K R)`` and the objective.
    """
    from scipy.optimize import minimize

    sigma, sigma_w = _check_spd(sigma), _check_spd(sigma_w, "sigma_w")
    if sigma.shape != (2, 2) or sigma_w.shape != (2, 2):
        raise ValueError("soft_minimizer is for D = 2: sigma and sigma_w must be 2x2")
    if eta < 0 or lam <= 0:
        raise ValueError(f"need eta >= 0 and lam > 0, got eta={eta}, lam={lam}")
    r, v = np.linalg.eigh(whitened_noise(sigma, sigma_w))
    pen = _penalty(n)

    def objective(k: np.ndarray) -> float:
        var = (_DIRS @ v) ** 2 @ k  # a^T V diag(k) V^T a for every direction
        return 0.5 * eta * float(k @ r) + lam * float(_THETA_W @ pen(var))

    grid = np.linspace(0.0, 2.5, 51)
    start = min(((k1, k2) for k1 in grid for k2 in grid), key=lambda k: objective(np.array(k)))
    res = minimize(objective, np.array(start), method="L-BFGS-B", bounds=[(0, None)] * 2)
    k = res.x
    kmat = (v * k) @ v.T
    sh = spd_power(sigma, -0.5)
    return {
        "k": k,
        "K": kmat,
        "M": sh @ kmat @ sh,
        "A": (v * np.sqrt(k)) @ v.T @ sh,
        "pred_loss": 0.5 * eta * float(k @ r),
        "objective": float(res.fun),
    }


def direct_search_check(
    sigma: np.ndarray,
    sigma_w: np.ndarray,
    eta: float,
    lam: float,
    rng: np.random.Generator,
    starts: int = 6,
) -> dict[str, float]:
    """Proposition 1's reduction against a direct search over all 2x2 encoders.

    :func:`soft_minimizer` assumes (von Neumann) that the minimiser of
    ``F_η(A) = (η/2) tr(A Σ_w Aᵀ) + λ Φ(A Σ Aᵀ)`` shares R's eigenvectors. Here Nelder-Mead
    minimises :func:`linear_objective` over the four entries of A, with no eigenbasis assumed,
    from ``starts`` random starts ``0.7 ξ`` (ξ drawn from ``rng``, one start after the other).
    Returns both objective values and ``max |M_reduced - AᵀA|`` of the best start: equal
    values confirm the reduction.
    """
    from scipy.optimize import minimize

    sol = soft_minimizer(sigma, sigma_w, eta, lam)
    runs = [
        minimize(
            linear_objective,
            rng.standard_normal(4) * 0.7,
            args=(sigma, sigma_w, eta, lam),
            method="Nelder-Mead",
            options={"xatol": 1e-8, "fatol": 1e-12, "maxiter": 8000},
        )
        for _ in range(starts)
    ]
    best = min(runs, key=lambda r: r.fun)
    a = best.x.reshape(2, 2)
    return {
        "reduced_objective": float(sol["objective"]),
        "direct_objective": float(best.fun),
        "metric_gap": float(np.abs(sol["M"] - a.T @ a).max()),
    }


# --------------------------------------------------------------------------------------
# Theorem 1: planning regret with exact prediction
# --------------------------------------------------------------------------------------


def box_argmin(metric: np.ndarray, goal: np.ndarray, half_width: float) -> np.ndarray:
    """Exact ``argmin_{x ∈ [-w, w]²} (x - g)ᵀ M (x - g)`` for M ≻ 0 (D = 2).

    A strictly convex quadratic over a box: the goal itself if it is inside, else the best of
    the four edge minimisers (on an edge the problem is one-dimensional; clipping to the edge
    covers the vertices).
    """
    metric, goal = _check_spd(metric, "metric"), np.asarray(goal, dtype=np.float64)
    if metric.shape != (2, 2) or goal.shape != (2,):
        raise ValueError("box_argmin is for D = 2: metric (2, 2) and goal (2,)")
    w = float(half_width)
    if np.all(np.abs(goal) <= w):
        return goal.copy()
    best, best_x = np.inf, goal
    for fixed in (0, 1):
        free = 1 - fixed
        for c in (-w, w):
            x = np.empty(2)
            x[fixed] = c
            x[free] = np.clip(
                goal[free] - metric[fixed, free] * (c - goal[fixed]) / metric[free, free], -w, w
            )
            f = (x - goal) @ metric @ (x - goal)
            if f < best:
                best, best_x = f, x
    return best_x


def grid_box_argmin(
    metric: np.ndarray, goal: np.ndarray, half_width: float, points: int = 1201
) -> np.ndarray:
    """Brute-force ``argmin_{x ∈ [-w, w]²} (x - g)ᵀ M (x - g)`` over a ``points x points`` grid.

    An independent check of :func:`box_argmin` (no case analysis of faces and edges): exact up
    to the grid spacing ``2w / (points - 1)``.
    """
    axis = np.linspace(-half_width, half_width, points)
    pts = np.stack(np.meshgrid(axis, axis), -1).reshape(-1, 2)
    d = pts - np.asarray(goal, dtype=np.float64)
    return pts[np.argmin(np.einsum("ni,ij,nj->n", d, np.asarray(metric), d))]


def planning_regret(
    metric: np.ndarray, goal: np.ndarray, half_width: float
) -> dict[str, float | np.ndarray]:
    """Regret of planning with the latent metric M over the reachable box ``[-w, w]²``.

    The task cost is ``c(x) = ||x - x_g||²``; the latent planner picks ``x̂ = argmin_box
    (x - x_g)ᵀ M (x - x_g)`` (exact prediction), the task-optimal outcome ``x*`` is the
    Euclidean projection (a clip). Regret = ``c(x̂) - c(x*) ≥ 0``.
    """
    goal = np.asarray(goal, dtype=np.float64)
    x_hat = box_argmin(metric, goal, half_width)
    x_star = np.clip(goal, -half_width, half_width)
    c_hat, c_star = float(((x_hat - goal) ** 2).sum()), float(((x_star - goal) ** 2).sum())
    return {"regret": c_hat - c_star, "c_star": c_star, "x_hat": x_hat, "x_star": x_star}


def normalized_regret(sigma: np.ndarray, n: np.ndarray) -> float:
    """Normalized face regret of the Σ⁻¹ metric: ``ρ = nᵀΣ²n / (nᵀΣn)² - 1``.

    Theorem 1 construction (reconstruction): a reachable polytope with a face of outward unit
    normal n and a goal at distance d beyond it. The Euclidean planner stops on the face at
    cost d²; the Σ⁻¹ planner solves ``Σ⁻¹(x - x_g) ∥ n`` and stops at ``x_g - d Σn / nᵀΣn``, at
    cost ``d² nᵀΣ²n/(nᵀΣn)²``. So ``Δ_H = d² ρ`` and ``ρ = Var_p(s)/E_p(s)²`` with
    ``p_i = (nᵀv_i)²`` over Σ's eigenpairs: zero iff n is an eigenvector of Σ (Cauchy-Schwarz).
    For any other metric M the same holds with Σ replaced by ``M⁻¹``.
    """
    sigma = _check_spd(sigma)
    n = np.asarray(n, dtype=np.float64)
    if n.shape != (len(sigma),) or not np.isclose(np.linalg.norm(n), 1.0):
        raise ValueError(f"n must be a unit vector of length {len(sigma)}, got {n.tolist()}")
    sn = sigma @ n
    return float(sn @ sn / (n @ sn) ** 2 - 1.0)


def face_offset_limit(sigma: np.ndarray, axis: int, half_width: float) -> float:
    """Largest goal offset d beyond the face ``x_axis = w`` of the box ``[-w, w]^D`` for which
    the Σ⁻¹ projection stays on that face: ``d_max = w Σ_ii / max_{j≠i} |Σ_ij|``. Within it the
    regret is exactly ``d² ρ``."""
    sigma = _check_spd(sigma)
    off = np.abs(np.delete(sigma[axis], axis)).max()
    return float(np.inf if off == 0 else half_width * sigma[axis, axis] / off)


def face_regret_check(
    sigma: np.ndarray, half_width: float, offset: float, grid_points: int = 1201
) -> dict[str, float | np.ndarray]:
    """Theorem 1 three ways, for a goal ``x_g = (w + d, 0)`` beyond the face ``x_1 = w``.

    The Σ⁻¹ planner's regret is ``Δ_H = d² ρ`` with ``ρ = nᵀΣ²n / (nᵀΣn)² - 1``, n = e₁
    (:func:`normalized_regret`, valid while ``d ≤ d_max``, :func:`face_offset_limit`). It is
    compared with the exact box minimiser (:func:`planning_regret`) and a grid search
    (:func:`grid_box_argmin`): three independent routes to one number. Returns the goal,
    ``d_max``, ρ, the outcomes ``x*``, ``x̂`` (exact) and ``x̂`` (grid), ``c(x*)`` and the
    three regrets.
    """
    goal = np.array([half_width + offset, 0.0])
    inv = np.linalg.inv(_check_spd(sigma))
    exact = planning_regret(inv, goal, half_width)
    x_grid = grid_box_argmin(inv, goal, half_width, grid_points)
    rho = normalized_regret(sigma, np.array([1.0, 0.0]))
    return {
        "goal": goal,
        "d_max": face_offset_limit(sigma, 0, half_width),
        "rho": rho,
        "x_star": exact["x_star"],
        "x_hat": exact["x_hat"],
        "x_grid": x_grid,
        "c_star": exact["c_star"],
        "regret_formula": offset**2 * rho,
        "regret_exact": exact["regret"],
        "regret_grid": float(np.sum((x_grid - goal) ** 2) - exact["c_star"]),
    }


def regret_vs_angle(
    eigenvalues: list[float], angles: list[float], half_width: float, offset: float
) -> pd.DataFrame:
    """The normalized face regret ρ of the Σ⁻¹ planner as Σ's major axis turns.

    For each angle θ, ``Σ = Rot(θ) diag(s) Rot(θ)ᵀ``; the formula ``ρ = nᵀΣ²n/(nᵀΣn)² - 1``
    (n = e₁; in 2-D ``ρ = Σ₁₂²/Σ₁₁²``) is set beside ``Δ_H / c(x*)`` of the exact box
    minimiser for a goal ``d = min(offset, 0.99 d_max)`` beyond the face, so that the goal's
    projection stays on the face where the formula holds. Why: ρ grows with the angle between
    the face normal and Σ's axes, and vanishes along them.
    """
    n1 = np.array([1.0, 0.0])
    rows = []
    for ang in angles:
        sig = covariance_2d(eigenvalues, ang)
        d_ok = min(offset, 0.99 * face_offset_limit(sig, 0, half_width))
        reg = planning_regret(np.linalg.inv(sig), np.array([half_width + d_ok, 0.0]), half_width)
        rows.append(
            {
                "angle": ang,
                "rho formula": normalized_regret(sig, n1),
                "rho exact QP": reg["regret"] / reg["c_star"],
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------
# ΛReg in the linear model: achievable metrics, selection, κ sweep
# --------------------------------------------------------------------------------------


def lambdareg_metric(sigma: np.ndarray, target: np.ndarray) -> np.ndarray:
    """``M = Σ^{-1/2} L Σ^{-1/2}``: the metric of an encoder with ``A Σ Aᵀ = Λ``.

    Zero ΛReg penalty means ``Λ^{-1/2} A x ~ N(0, I)``, i.e. ``A = Λ^{1/2} U Σ^{-1/2}``; then
    ``K = UᵀΛU =: L`` (any symmetric L with Λ's spectrum) and ``M = AᵀA = Σ^{-1/2} L Σ^{-1/2}``.
    """
    sh = spd_power(sigma, -0.5)
    return sh @ _check_spd(target, "target") @ sh


def select_target_spectrum(r: np.ndarray, kappa: float) -> np.ndarray:
    """The variances ΛReg's training selects: ``argmin_v Σ_i v_i r_i`` subject to ``Σ v = D``,
    ``m ≤ v_i ≤ κ m`` (a linear program in (v, m)).

    Every zero-penalty encoder has ``K = L`` with spectrum v, so only the prediction loss
    ``(η/2) tr(L R)`` tells them apart; by von Neumann L takes R's eigenvectors, and the LP's
    vertices are two-level: the j smallest ``r_i`` get ``κ m``, the rest ``m``, with
    ``m = D / (D + j(κ - 1))``. Returns v aligned with ``r`` (same order). With all ``r_i``
    equal the minimiser is not unique and the isotropic ``v = 1`` is returned.
    """
    r = np.asarray(r, dtype=np.float64)
    if r.ndim != 1 or not np.all(r > 0):
        raise ValueError(f"r must be a vector of positive eigenvalues, got {r!r}")
    if not kappa >= 1:
        raise ValueError(f"kappa must be >= 1, got {kappa!r}")
    d = len(r)
    order = np.argsort(r)
    best_v, best = np.ones(d), float(r.sum())
    for j in range(1, d):
        m = d / (d + j * (kappa - 1))
        v = np.full(d, m)
        v[order[:j]] = kappa * m
        if float(v @ r) < best - 1e-12:
            best_v, best = v, float(v @ r)
    return best_v


def selected_target(sigma: np.ndarray, sigma_w: np.ndarray, kappa: float) -> np.ndarray:
    """The selected target ``L* = V diag(v*) Vᵀ``, where ``R = V diag(r) Vᵀ`` and v* is
    :func:`select_target_spectrum` of r."""
    r, v = np.linalg.eigh(whitened_noise(sigma, sigma_w))
    return (v * select_target_spectrum(r, kappa)) @ v.T


def kappa_regret_45(kappa: float | np.ndarray, cond: float) -> float | np.ndarray:
    """Closed form of the κ sweep at 45° (D = 2, R = Σ⁻¹, face normal e₁):
    ``ρ(κ) = ((κ - c)/(κ + c))²`` with ``c = cond Σ`` -- zero at ``κ = c``, symmetric in log κ."""
    kappa = np.asarray(kappa, dtype=np.float64)
    return ((kappa - cond) / (kappa + cond)) ** 2


def kappa_sweep(
    sigma: np.ndarray, sigma_w: np.ndarray, kappas: list[float], n: np.ndarray
) -> pd.DataFrame:
    """For each κ: the selected target variances, the metric ``Σ^{-1/2} L* Σ^{-1/2}`` and its
    normalized face regret ``ρ = normalized_regret(M⁻¹, n)`` (κ = 1 is LeWM's Σ⁻¹)."""
    rows = []
    for kappa in kappas:
        target = selected_target(sigma, sigma_w, float(kappa))
        metric = lambdareg_metric(sigma, target)
        v = np.sort(np.linalg.eigvalsh(target))[::-1]
        rows.append(
            {
                "kappa": float(kappa),
                "v_max": v[0],
                "v_min": v[-1],
                "pred_term_tr_LR": float(np.trace(target @ whitened_noise(sigma, sigma_w))),
                "normalized_regret": normalized_regret(np.linalg.inv(metric), n),
            }
        )
    return pd.DataFrame(rows)


def target_spectrum_lp(r: np.ndarray, kappa: float) -> float:
    """``min_v r·v`` subject to ``Σ v = D`` and ``m ≤ v_i ≤ κ m``, solved by ``scipy.linprog``
    over ``(v, m)``.

    The general-purpose LP solver is an independent check of :func:`select_target_spectrum`'s
    two-level vertex formula: the two minimum values must agree.
    """
    from scipy.optimize import linprog

    r = np.asarray(r, dtype=np.float64)
    d = len(r)
    a_ub = np.vstack([np.c_[-np.eye(d), np.ones(d)], np.c_[np.eye(d), -kappa * np.ones(d)]])
    lp = linprog(
        np.append(r, 0), A_ub=a_ub, b_ub=np.zeros(2 * d), A_eq=[np.append(np.ones(d), 0)], b_eq=[d]
    )
    return float(lp.fun)


def kappa_sweep_table(
    sigma: np.ndarray, sigma_w: np.ndarray, kappas: list[float], n: np.ndarray, cond: float
) -> pd.DataFrame:
    """:func:`kappa_sweep` with its two checks as extra columns.

    ``tr(L*R)`` from the two-level spectrum (:func:`select_target_spectrum`) beside the
    linear program's optimum (:func:`target_spectrum_lp`), and the 45° closed form
    ``ρ(κ) = ((κ - c)/(κ + c))²`` with ``c = cond`` (:func:`kappa_regret_45`; it applies to the
    45° geometry only). One row per κ.
    """
    r_eig = np.linalg.eigvalsh(whitened_noise(sigma, sigma_w))
    lp_rows = [
        {
            "kappa": kappa,
            "tr(L*R) two-level": select_target_spectrum(r_eig, kappa) @ r_eig,
            "tr(L*R) linprog": target_spectrum_lp(r_eig, kappa),
        }
        for kappa in kappas
    ]
    sweep = kappa_sweep(sigma, sigma_w, kappas, n).merge(pd.DataFrame(lp_rows), on="kappa")
    sweep["rho formula ((κ-c)/(κ+c))²"] = kappa_regret_45(sweep.kappa, cond)
    return sweep


def regret_vs_noise(
    sigma: np.ndarray,
    sigma_w: np.ndarray,
    etas: list[float],
    lam: float,
    goal: np.ndarray,
    half_width: float,
    n: int | None = None,
) -> pd.DataFrame:
    """Regret of the soft minimiser's metric ``M_η`` as the process noise η shrinks.

    For each η: the whitened spectrum k of ``K_η``, the prediction loss ``(η/2) tr(K_η R)``,
    the distance ``max |M_η/q - Σ⁻¹|`` to the inverse-covariance metric (q = the limit scale,
    1 for the population statistic, ``q_N`` for a batch of n), and the planning regret of
    ``M_η`` for one goal. Proposition 1 predicts ``K_η → qI``; with it the regret tends to the
    Σ⁻¹ regret ``Δ_H``.
    """
    q = 1.0 if n is None else finite_batch_scale(n)
    inv = np.linalg.inv(_check_spd(sigma))
    rows = []
    for eta in etas:
        sol = soft_minimizer(sigma, sigma_w, float(eta), lam, n)
        k = np.sort(sol["k"])[::-1]
        reg = planning_regret(sol["M"], goal, half_width) if k.min() > 1e-6 else None
        rows.append(
            {
                "eta": float(eta),
                "k_max": k[0],
                "k_min": k[-1],
                "pred_loss": sol["pred_loss"],
                "metric_gap": float(np.abs(sol["M"] / q - inv).max()),
                "regret": np.nan if reg is None else reg["regret"],
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------
# Figure-4 analogue: does the latent cost rank states like physical distance?
# --------------------------------------------------------------------------------------


def cost_distance_agreement(
    metric: np.ndarray, half_width: float = 1.0, grid: int = 41, quantile: float = 0.1
) -> dict[str, float]:
    """Spearman ρ between ``(x - g)ᵀ M (x - g)`` and ``||x - g||`` over a grid on the window
    ``[-w, w]²`` around the goal g = 0, and the IoU of the lowest-``quantile`` cost set with the
    disc holding the same fraction of grid points (the paper's "dashed disc"). Both are 1 for a
    Euclidean metric; a cost ranking states like an ellipse instead scores lower."""
    from scipy.stats import spearmanr

    metric = _check_spd(metric, "metric")
    axis = np.linspace(-half_width, half_width, grid)
    pts = np.stack(np.meshgrid(axis, axis), -1).reshape(-1, 2)
    cost = np.einsum("ni,ij,nj->n", pts, metric, pts)
    dist = np.linalg.norm(pts, axis=1)
    low = cost <= np.quantile(cost, quantile)
    disc = dist <= np.quantile(dist, quantile)
    return {
        "spearman": float(spearmanr(cost, dist).statistic),
        "iou": float((low & disc).sum() / (low | disc).sum()),
    }


def cost_distance_table(metrics: dict[str, np.ndarray], **kw) -> pd.DataFrame:
    """:func:`cost_distance_agreement` for several metrics, one row per named model
    (columns ``model``, ``spearman``, ``iou``); ``kw`` is passed on (window, grid, quantile)."""
    return pd.DataFrame(
        [{"model": k, **cost_distance_agreement(m, **kw)} for k, m in metrics.items()]
    )


def collapse_threshold(
    sigma: np.ndarray, sigma_w: np.ndarray, lam: float, n: int | None = None, iters: int = 30
) -> float:
    """Smallest noise η at which the soft minimiser collapses a direction (some ``k = 0``).

    g is bounded, so shrinking the noisiest whitened direction to zero costs only
    ``λ (Φ(collapsed) - Φ(qI))`` while saving ``(η/2) r_max q``: for large enough η/λ the
    global minimiser is singular. Bisection on η (the minimiser is invertible below it,
    which is where Proposition 1 applies).
    """
    lo, hi = 0.0, 1.0
    while soft_minimizer(sigma, sigma_w, hi, lam, n)["k"].min() > 1e-8:
        lo, hi = hi, 2 * hi
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if soft_minimizer(sigma, sigma_w, mid, lam, n)["k"].min() > 1e-8:
            lo = mid
        else:
            hi = mid
    return hi


def quadratic_form_grid(
    metric: np.ndarray, center: tuple[float, float], half_width: float, n: int = 300
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X, Y, C)`` with ``C = (p - c)ᵀ M (p - c)`` on an n x n grid of half-width ``half_width``
    around ``center``: the level sets of a quadratic planning cost, for ``plt.contour``."""
    axis = np.linspace(-half_width, half_width, n)
    x, y = np.meshgrid(axis + center[0], axis + center[1])
    p = np.stack([x - center[0], y - center[1]], -1)
    return x, y, np.einsum("...i,ij,...j->...", p, np.asarray(metric), p)
