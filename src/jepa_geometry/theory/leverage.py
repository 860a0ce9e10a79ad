"""Closed forms of the two papers, and the synthetic experiments that check them.

Metric leverage (SCALE)
-----------------------
The planner scores a candidate by the squared Euclidean cost ``c = ||z_a - z_b||^2``. Write the
embedding covariance as ``C = sum_j lambda_j u_j u_j^T`` (PCA). For two independent draws
``z_a, z_b`` of the embedding distribution, the cost splits over principal directions,

    c = sum_j (u_j^T (z_a - z_b))^2,
    E[(u_j^T (z_a - z_b))^2] = Var(u_j^T z_a) + Var(u_j^T z_b) = 2 lambda_j,

so direction j's expected share of the planning cost -- its *metric leverage* -- is
``lambda_j / sum_k lambda_k``, whatever it encodes. Information stored along a low-variance
direction can be perfectly decodable by a linear probe and still barely move the cost.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from jepa_geometry.analysis.probes import pca, ridge_probe_r2


def metric_leverage(z: np.ndarray, n_pairs: int, rng: np.random.Generator) -> pd.DataFrame:
    """Per principal direction: variance, predicted cost contribution 2*lambda_j, and measured one.

    The measured contribution is the mean of ``(u_j^T (z_a - z_b))^2`` over ``n_pairs`` random
    pairs of distinct rows -- an independent Monte-Carlo check of the closed form.
    Returns a tidy table with one row per direction and the leverage share ``lambda_j / tr C``.
    """
    z = np.asarray(z, dtype=np.float64)
    lam, u = pca(z)
    a = rng.integers(0, len(z), size=n_pairs)
    b = (a + rng.integers(1, len(z), size=n_pairs)) % len(z)  # b != a
    proj = (z[a] - z[b]) @ u  # (n_pairs, D)
    measured = (proj**2).mean(axis=0)
    return pd.DataFrame(
        {
            "pc": np.arange(1, len(lam) + 1),
            "variance": lam,
            "predicted_contribution": 2.0 * lam,
            "measured_contribution": measured,
            "leverage_share": lam / lam.sum(),
        }
    )


def synthetic_embedding(
    n: int,
    dim: int,
    state_scale: float,
    rng: np.random.Generator,
    state_dim: int = 2,
    nuisance_decay: float = 0.85,
) -> tuple[np.ndarray, np.ndarray]:
    """A linear embedding ``z = R [nuisance; state_scale * q]`` with a known geometry.

    ``q ~ U[-1, 1]^state_dim`` is the task state (e.g. an agent's position). The other
    ``dim - state_dim`` coordinates are task-irrelevant nuisance with standard deviations
    ``nuisance_decay^k`` (k = 0, 1, ...), like lighting or background in pixels. ``R`` is a
    random rotation, so no coordinate is special. The state is exactly linearly decodable
    for any ``state_scale > 0``; ``state_scale`` alone sets how much leverage it has.
    Returns ``(z, q)`` with shapes (n, dim) and (n, state_dim).
    """
    if not 0 < state_dim < dim:
        raise ValueError(f"need 0 < state_dim < dim, got state_dim={state_dim}, dim={dim}")
    q = rng.uniform(-1.0, 1.0, size=(n, state_dim))
    stds = nuisance_decay ** np.arange(dim - state_dim)
    nuisance = rng.standard_normal((n, dim - state_dim)) * stds
    raw = np.concatenate([nuisance, state_scale * q], axis=1)
    rot, _ = np.linalg.qr(rng.standard_normal((dim, dim)))
    return raw @ rot.T, q


def state_leverage_share(z: np.ndarray, q: np.ndarray) -> float:
    """Fraction of the expected planning cost that the state accounts for.

    Regress z linearly on q (least squares, with intercept) and take the variance of the fitted
    values over the total: ``tr Cov(z_hat) / tr Cov(z)``. Since the expected cost of a random
    pair is ``2 tr C``, this is the share of the cost that moves with q. For
    :func:`synthetic_embedding` it equals ``state_var / total_var`` up to O(D/N) sampling bias.
    """
    zc = z - z.mean(0)
    qc = q - q.mean(0)
    w, *_ = np.linalg.lstsq(qc, zc, rcond=None)
    return float(((qc @ w) ** 2).sum() / (zc**2).sum())


def leverage_sweep(
    state_scales: list[float] | tuple[float, ...],
    n: int,
    dim: int,
    rng: np.random.Generator,
    n_pairs: int = 20000,
) -> pd.DataFrame:
    """Decodability versus leverage as the state's scale in a synthetic embedding shrinks.

    For each ``state_scale`` (see :func:`synthetic_embedding`) this reports the state's share of
    the expected planning cost, the held-out linear-probe R^2 of q from z (half the rows train,
    half test), and the Spearman correlation between the planning cost ``||z_a - z_b||^2`` and
    the state distance ``||q_a - q_b||^2`` over random pairs -- does the cost listen to the state?
    """
    from scipy.stats import spearmanr

    rows = []
    for s in state_scales:
        z, q = synthetic_embedding(n, dim, float(s), rng)
        half = n // 2
        r2 = ridge_probe_r2(z[:half], q[:half], z[half:], q[half:], alpha=1e-9)
        a = rng.integers(0, n, size=n_pairs)
        b = (a + rng.integers(1, n, size=n_pairs)) % n
        rho = spearmanr(((z[a] - z[b]) ** 2).sum(1), ((q[a] - q[b]) ** 2).sum(1)).statistic
        rows.append(
            {
                "state_scale": float(s),
                "state_leverage_share": state_leverage_share(z, q),
                "probe_r2": r2,
                "cost_state_spearman": float(rho),
            }
        )
    return pd.DataFrame(rows)
