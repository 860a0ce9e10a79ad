"""Geometry diagnostics of embeddings: what is decodable versus what the planner's metric sees."""

from __future__ import annotations

import numpy as np


def ridge_probe_r2(
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_test: np.ndarray,
    y_test: np.ndarray,
    alpha: float = 1e-3,
) -> float:
    """Held-out R^2 of a ridge regression ``y ~ x`` (features standardized on the train split).

    ``w = (X^T X + alpha * n * I)^{-1} X^T y`` on centred, unit-variance features. R^2 is
    ``1 - SS_res / SS_tot`` pooled over all output dimensions, with the test mean as baseline.
    A high R^2 means the state is *decodable*; it says nothing about its metric leverage.
    """
    x_train, x_test = np.asarray(x_train, float), np.asarray(x_test, float)
    y_train, y_test = np.asarray(y_train, float), np.asarray(y_test, float)
    if x_train.ndim != 2 or x_test.ndim != 2 or x_train.shape[1] != x_test.shape[1]:
        raise ValueError(f"x_train {x_train.shape} and x_test {x_test.shape} must be (N, D) alike")
    if len(x_train) != len(y_train) or len(x_test) != len(y_test):
        raise ValueError("x and y must have the same number of rows")
    mu, sd = x_train.mean(0), x_train.std(0) + 1e-12
    xtr, xte = (x_train - mu) / sd, (x_test - mu) / sd
    ymu = y_train.mean(0)
    n, d = xtr.shape
    w = np.linalg.solve(xtr.T @ xtr + alpha * n * np.eye(d), xtr.T @ (y_train - ymu))
    pred = xte @ w + ymu
    ss_res = ((y_test - pred) ** 2).sum()
    ss_tot = ((y_test - y_test.mean(0)) ** 2).sum()
    return float(1.0 - ss_res / ss_tot)


def pca_probe_table(
    z_train: np.ndarray,
    q_train: np.ndarray,
    z_test: np.ndarray,
    q_test: np.ndarray,
    ks: tuple[int, ...] = (2, 4, 8),
) -> list[dict[str, float]]:
    """Variance share of the top-k principal components and the state they carry.

    PCA is fitted on ``z_train``. For each k: the top-k PCs' share of the embedding variance
    (their metric leverage, see ``theory.metric_leverage``) and the held-out ridge R^2 of q from
    those k coordinates; a last row ``k = D`` probes the full embedding. SCALE's claim is that
    LeWM's state is decodable from the full z (high R^2 at k = D) but not from its leading PCs.
    """
    from .theory import pca

    lam, u = pca(z_train)
    mu = z_train.mean(0)
    p_tr, p_te = (z_train - mu) @ u, (z_test - mu) @ u
    dim = z_train.shape[1]
    rows = []
    for k in (*[k for k in ks if k < dim], dim):
        rows.append(
            {
                "k": int(k),
                "variance_share": float(lam[:k].sum() / lam.sum()),
                "probe_r2": ridge_probe_r2(p_tr[:, :k], q_train, p_te[:, :k], q_test),
            }
        )
    return rows
