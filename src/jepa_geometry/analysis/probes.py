"""Probes of an embedding: what is *decodable* versus what the planner's metric *sees*.

One home for the linear algebra every chapter and measurement uses:

* :func:`pca`: principal variances and directions (thin SVD of the centred rows, so D > N works);
* :func:`ridge_weights`: the one ridge solve, ``w = (XᵀX + a I)⁻¹ Xᵀ y`` on centred data;
  :func:`ridge_probe_r2` (standardised features, pooled R²; the theory chapters and
  :func:`latent_probe_r2`) and :func:`ridge_r2_per_dim` (SCALE's unstandardised probe,
  R² per q dimension) are its two read-outs;
* SCALE's geometry probe (:func:`geometry_probe`), spectrum, distance-ratio dispersion, and
  ΛReg's logged target spectra (AnisoWM Figure 5).

Where we fill in or depart from the papers' protocols, the book's *Reconstructions* page
(``book/reconstructions.md``) explains why; "book: rec-..." below names its sections.
"""

from __future__ import annotations

import numpy as np
import torch

from jepa_geometry.envs.episodes import EpisodeData
from jepa_geometry.wm.arms import LAMBDAREG_ARMS
from jepa_geometry.wm.model import WorldModel, encode_frames


def pca(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Principal variances (descending) and directions (columns) of the rows of ``z`` (N, D).

    ``Zc = Z - mean = U S Vᵀ`` (thin SVD); the variances are ``s_j² / (N - 1)``, the eigenvalues
    of the sample covariance ``Zc ᵀ Zc / (N - 1)``, and the directions are V's columns. SVD
    rather than an eigendecomposition of the covariance: it is as accurate for small
    eigenvalues and returns ``min(N, D)`` components when D > N. Directions are defined up to
    sign, which no measure here depends on.
    """
    z = np.asarray(z, dtype=np.float64)
    if z.ndim != 2 or z.shape[0] < 2:
        raise ValueError(f"z must have shape (N >= 2, D), got {z.shape}")
    _, s, vt = np.linalg.svd(z - z.mean(axis=0), full_matrices=False)
    return s**2 / (len(z) - 1), vt.T


def ridge_weights(xc: np.ndarray, yc: np.ndarray, alpha: float) -> np.ndarray:
    """Ridge solution ``w = (Xcᵀ Xc + alpha I)⁻¹ Xcᵀ yc`` for centred ``xc`` (N, D) and ``yc``.

    Least squares on the regularised normal equations (stable when ``alpha = 0`` and Xc is
    rank-deficient). Every ridge probe of the library goes through here. When the embedding
    is wider than the frames (D > N: DINO-WM's patch tokens, 98,304 numbers a frame at the
    paper's size) it solves the dual, ``w = Xcᵀ (Xc Xcᵀ + alpha I)⁻¹ yc``, the same vector by
    the push-through identity (and the minimum-norm solution when ``alpha = 0``), with an
    N x N system instead of a D x D one that would not fit in memory.
    """
    n, d = xc.shape
    if d > n:
        gram = xc @ xc.T + alpha * np.eye(n)
        return xc.T @ np.linalg.lstsq(gram, yc, rcond=None)[0]
    gram = xc.T @ xc + alpha * np.eye(d)
    return np.linalg.lstsq(gram, xc.T @ yc, rcond=None)[0]


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
    w = ridge_weights(xtr, y_train - ymu, alpha * len(xtr))
    pred = xte @ w + ymu
    ss_res = ((y_test - pred) ** 2).sum()
    ss_tot = ((y_test - y_test.mean(0)) ** 2).sum()
    return float(1.0 - ss_res / ss_tot)


def latent_probe_r2(
    model: WorldModel, dataset: EpisodeData, max_frames: int = 6000, seed: int = 0
) -> float:
    """Held-out R² of a linear (ridge) probe from z to standardized q: is the state decodable?

    Fit on up to ``max_frames`` random training-episode frames, scored on up to as many
    held-out-episode frames (:func:`ridge_probe_r2`, pooled over q's coordinates).
    """
    rng = np.random.default_rng(seed)

    def rows(split: str) -> np.ndarray:
        r = np.flatnonzero(np.isin(dataset.episode, dataset.episodes(split)))
        return np.sort(rng.choice(r, max_frames, replace=False)) if len(r) > max_frames else r

    tr, te = rows("train"), rows("heldout")
    q = dataset.standardize_q(dataset.q)
    z_tr = encode_frames(model, dataset.pixels[tr]).numpy()
    z_te = encode_frames(model, dataset.pixels[te]).numpy()
    return ridge_probe_r2(z_tr, q[tr], z_te, q[te])


# --- SCALE's geometry probes (book: rec-probes) and AnisoWM's Figure-5 spectra ------------------


def _as_frames(name: str, x: np.ndarray) -> np.ndarray:
    """``x`` as a finite float64 (N, D) array; a 1-D array is one column."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 1:
        raise ValueError(f"{name} must have shape (N >= 2, D >= 1), got {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"{name} has {int((~np.isfinite(x)).sum())} non-finite entries")
    return x


def _standardize_per_dim(name: str, q: np.ndarray) -> np.ndarray:
    """``(q - mean) / std`` per column over the given frames; a constant column is an error."""
    sd = q.std(axis=0)
    flat = np.flatnonzero(sd <= 1e-12 * (1.0 + np.abs(q).max(axis=0)))
    if flat.size:
        raise ValueError(f"{name} dimension(s) {flat.tolist()} are constant on these frames")
    return (q - q.mean(axis=0)) / sd


def pca_spectrum(z: np.ndarray) -> np.ndarray:
    """Normalised PCA spectrum of an embedding: ``lam_j / sum(lam)``, descending, sums to 1.

    ``lam`` are the eigenvalues of the centred covariance ``C = Zc^T Zc / (N - 1)`` with
    ``Zc = Z - mean``. They are computed as ``s_j^2 / (N - 1)`` from the singular values of
    ``Zc``, which works for D > N too. SCALE's scripts eigendecompose the double-centred Gram
    matrix ``J Z Z^T J`` instead (J = I - 11^T/N): ``Zc Zc^T`` and ``Zc^T Zc`` share their
    non-zero eigenvalues, so the normalised spectrum is the same. The share of the top k entries
    is the top-k PCs' share of the mean squared pairwise distance, i.e. their metric leverage.
    Returns ``min(N, D)`` values; those past the rank are (numerically) zero.
    """
    lam, _ = pca(_as_frames("z", z))
    if lam.sum() <= 0:
        raise ValueError("z has zero variance: every row is the same point")
    return lam / lam.sum()


def _r2_per_dim(y_eval: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """``1 - SS_res / SS_tot`` per column, with the evaluation mean as baseline."""
    ss_res = ((y_eval - pred) ** 2).sum(axis=0)
    ss_tot = ((y_eval - y_eval.mean(axis=0)) ** 2).sum(axis=0)
    if (ss_tot <= 0).any():
        raise ValueError(f"y_eval dimension(s) {np.flatnonzero(ss_tot <= 0).tolist()} are constant")
    return 1.0 - ss_res / ss_tot


def ridge_r2_per_dim(
    x_fit: np.ndarray,
    y_fit: np.ndarray,
    x_eval: np.ndarray,
    y_eval: np.ndarray,
    alpha: float = 1e-2,
) -> np.ndarray:
    """Held-out R^2 of ridge ``y ~ x`` for each output dimension (SCALE's ridge probe).

    ``w = (Xc^T Xc + alpha I)^{-1} Xc^T yc`` on fit-centred, *unstandardised* features with an
    intercept, i.e. scikit-learn's ``Ridge(alpha)``. Unlike ``ridge_probe_r2`` the features
    are not rescaled, so the probe is rotation-invariant: ridge on all PC scores equals ridge
    on the full embedding. Per output dimension ``R^2_j = 1 - SS_res,j / SS_tot,j`` with
    the evaluation mean as baseline; SCALE reports their average.
    """
    x_fit, x_eval = _as_frames("x_fit", x_fit), _as_frames("x_eval", x_eval)
    y_fit, y_eval = _as_frames("y_fit", y_fit), _as_frames("y_eval", y_eval)
    if x_fit.shape[1] != x_eval.shape[1] or y_fit.shape[1] != y_eval.shape[1]:
        raise ValueError(
            f"fit and eval widths differ: x {x_fit.shape} vs {x_eval.shape}, "
            f"y {y_fit.shape} vs {y_eval.shape}"
        )
    if len(x_fit) != len(y_fit) or len(x_eval) != len(y_eval):
        raise ValueError(
            f"row counts differ: x_fit {len(x_fit)} vs y_fit {len(y_fit)}, "
            f"x_eval {len(x_eval)} vs y_eval {len(y_eval)}"
        )
    if not alpha >= 0:
        raise ValueError(f"alpha must be >= 0, got {alpha}")
    xm, ym = x_fit.mean(axis=0), y_fit.mean(axis=0)
    w = ridge_weights(x_fit - xm, y_fit - ym, alpha)
    return _r2_per_dim(y_eval, (x_eval - xm) @ w + ym)


MLP_HIDDEN = 256
MLP_LR = 1e-3
MLP_BATCH = 128
MLP_EPOCHS = 150


def mlp_r2_per_dim(
    x_fit: np.ndarray,
    y_fit: np.ndarray,
    x_eval: np.ndarray,
    y_eval: np.ndarray,
    seed: int,
) -> np.ndarray:
    """Held-out R^2 per output dimension of a small MLP ``y ~ x`` (SCALE's nonlinear probe).

    ``Linear(D, 256) -> ReLU -> Linear(256, Q)`` trained on the MSE with Adam (lr 1e-3), batch
    128 for 150 epochs, float64 on CPU; initialisation (PyTorch's default uniform bounds
    ``1/sqrt(fan_in)``) and batch order come from a ``torch.Generator`` seeded with ``seed``, so
    the same inputs and seed give the same numbers. Inputs are used as given (the caller scales
    them); R^2 is as in ``ridge_r2_per_dim``.

    Deviation from SCALE: its probe runs 30 epochs at batch 1024 on 750 fit frames, i.e. 30
    Adam steps, which leaves a 2-layer net far from converged (their MLP R^2 is below the
    linear one on every task). We run ~900 steps, enough for the training loss to flatten on
    problems of this size, with no early stopping (that would tune on the evaluation half).
    See the book's *Reconstructions* page, section rec-probes (``book/reconstructions.md``).
    """
    x_fit, x_eval = _as_frames("x_fit", x_fit), _as_frames("x_eval", x_eval)
    y_fit, y_eval = _as_frames("y_fit", y_fit), _as_frames("y_eval", y_eval)
    if len(x_fit) != len(y_fit) or x_fit.shape[1] != x_eval.shape[1]:
        raise ValueError(
            f"x_fit {x_fit.shape}, y_fit {y_fit.shape}, x_eval {x_eval.shape} disagree"
        )
    gen = torch.Generator().manual_seed(int(seed))
    d_in, d_out = x_fit.shape[1], y_fit.shape[1]

    def uniform(shape: tuple[int, ...], fan_in: int) -> torch.Tensor:
        bound = fan_in**-0.5
        return (
            (torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1) * bound
        ).requires_grad_()

    params = [
        uniform((d_in, MLP_HIDDEN), d_in),
        uniform((MLP_HIDDEN,), d_in),
        uniform((MLP_HIDDEN, d_out), MLP_HIDDEN),
        uniform((d_out,), MLP_HIDDEN),
    ]

    def net(x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x @ params[0] + params[1]) @ params[2] + params[3]

    xt, yt = torch.from_numpy(x_fit), torch.from_numpy(y_fit)
    opt = torch.optim.Adam(params, lr=MLP_LR)
    for _ in range(MLP_EPOCHS):
        for idx in torch.randperm(len(xt), generator=gen).split(MLP_BATCH):
            loss = ((net(xt[idx]) - yt[idx]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    with torch.no_grad():
        pred = net(torch.from_numpy(x_eval)).numpy()
    return _r2_per_dim(y_eval, pred)


def geometry_probe(
    z: np.ndarray,
    q: np.ndarray,
    seed: int,
    ks: tuple[int, ...] = (2, 4, 8),
    ridge_alpha: float = 1e-2,
    mlp: bool = True,
) -> dict[str, float]:
    """Where the task state q sits in an embedding: SCALE's probe protocol (book: rec-probes).

    q is standardised per dimension on the given frames. One shuffle (``seed``) splits the frames:
    the first half (``n_fit = N // 2``) fits, the rest (``n_eval``) evaluates. PCA is fitted on
    the fit half (``Zc = U S V^T``, scores ``P = (Z - mean_fit) V``). Returned keys:

    * ``var_top{k}``: ``sum_{j<k} lam_j / sum_j lam_j`` on the fit half, the top-k PCs' share of
      the variance, which is their share of ``E||z_a - z_b||^2``, the planner's cost;
    * ``r2_top{k}``: held-out ridge R^2 (``ridge_alpha``, mean over q dims) from the top-k scores;
    * ``r2_full_ridge``: the same ridge on all scores, which equals ridge on z (rotation-invariant);
    * ``r2_full_mlp`` (only if ``mlp``): ``mlp_r2_per_dim`` on all scores divided by one global
      scalar, their RMS on the fit half (SCALE: not per-dimension, which would amplify the tail);
    * ``n_fit``, ``n_eval``: frame counts.

    Low ``r2_top{k}`` with high ``r2_full_*`` is SCALE's diagnosis of LeWM: q is decodable but
    sits in low-variance directions, where it barely moves the latent distance the planner uses.
    """
    z, q = _as_frames("z", z), _as_frames("q", q)
    if len(z) != len(q):
        raise ValueError(f"z has {len(z)} frames but q has {len(q)}; they must be the same frames")
    if len(z) < 8:
        raise ValueError(f"need at least 8 frames to split into fit and eval halves, got {len(z)}")
    n_fit = len(z) // 2
    n_pcs = min(z.shape[1], n_fit)
    bad = [k for k in ks if not (isinstance(k, (int, np.integer)) and 1 <= k < n_pcs)]
    if bad or not ks:
        raise ValueError(
            f"ks={tuple(ks)}: each k must be an integer with 1 <= k < {n_pcs} "
            f"(min of embedding dim {z.shape[1]} and n_fit {n_fit}); bad: {bad}"
        )
    q = _standardize_per_dim("q", q)
    perm = np.random.default_rng(seed).permutation(len(z))
    fit, ev = perm[:n_fit], perm[n_fit:]
    lam, v = pca(z[fit])
    mu = z[fit].mean(axis=0)
    p_fit, p_ev = (z[fit] - mu) @ v, (z[ev] - mu) @ v
    if lam.sum() <= 0:
        raise ValueError("z has zero variance on the fit half")
    out: dict[str, float] = {}
    for k in ks:
        out[f"var_top{k}"] = float(lam[:k].sum() / lam.sum())
        r2 = ridge_r2_per_dim(p_fit[:, :k], q[fit], p_ev[:, :k], q[ev], ridge_alpha)
        out[f"r2_top{k}"] = float(r2.mean())
    out["r2_full_ridge"] = float(ridge_r2_per_dim(p_fit, q[fit], p_ev, q[ev], ridge_alpha).mean())
    if mlp:
        scale = np.sqrt((p_fit**2).mean())
        out["r2_full_mlp"] = float(
            mlp_r2_per_dim(p_fit / scale, q[fit], p_ev / scale, q[ev], seed).mean()
        )
    out["n_fit"], out["n_eval"] = n_fit, len(ev)
    return out


def coordinate_r2(z: np.ndarray, q: np.ndarray, seed: int, ridge_alpha: float = 1e-2) -> np.ndarray:
    """Held-out ridge R² of each coordinate of q from the full embedding, with the split of
    :func:`geometry_probe` (same ``seed``: the same fit and evaluation halves), so its mean is
    that function's ``r2_full_ridge``. Which coordinates an embedding carries (Push-T's block
    angle, say) is what the mean hides."""
    z, q = _as_frames("z", z), _as_frames("q", q)
    if len(z) != len(q) or len(z) < 8:
        raise ValueError(f"need the same >= 8 frames in z and q, got {len(z)} and {len(q)}")
    q = _standardize_per_dim("q", q)
    perm = np.random.default_rng(seed).permutation(len(z))
    fit, ev = perm[: len(z) // 2], perm[len(z) // 2 :]
    return ridge_r2_per_dim(z[fit], q[fit], z[ev], q[ev], ridge_alpha)


def distance_ratio_dispersion(
    z: np.ndarray,
    q: np.ndarray,
    n_pairs: int = 20_000,
    seed: int = 0,
    eps: float = 1e-8,
) -> dict[str, float]:
    """Spread of ``r = ||z_a - z_b|| / ||q_a - q_b||`` over random frame pairs (SCALE's dispersion).

    q is standardised per dimension on the given frames first (idempotent for already
    standardised q). Pairs ``a != b`` are drawn uniformly with ``seed``; pairs with
    ``||Δq|| < eps`` (same state, ratio undefined) are dropped and counted. For an isometry up to
    scale, ``z = c q R`` with R orthogonal, every ratio is c, so ``p90_over_p10 = 1``; for a
    linear map ``z = q A`` the ratios lie in ``[sigma_min(A), sigma_max(A)]``. The median depends
    on the embedding's scale and is not comparable across models; p90/p10 is scale-free.

    Returns ``median``, ``p10``, ``p90``, ``p90_over_p10``, ``n_pairs`` (kept), ``n_dropped``.
    """
    z, q = _as_frames("z", z), _as_frames("q", q)
    if len(z) != len(q):
        raise ValueError(f"z has {len(z)} frames but q has {len(q)}; they must be the same frames")
    if not (isinstance(n_pairs, (int, np.integer)) and n_pairs >= 1):
        raise ValueError(f"n_pairs must be a positive integer, got {n_pairs!r}")
    q = _standardize_per_dim("q", q)
    rng = np.random.default_rng(seed)
    a = rng.integers(0, len(z), size=n_pairs)
    b = (a + rng.integers(1, len(z), size=n_pairs)) % len(z)  # b != a
    dq = np.linalg.norm(q[a] - q[b], axis=1)
    keep = dq >= eps
    if not keep.any():
        raise ValueError(f"all {n_pairs} pairs have ||Δq|| < eps={eps}: q does not vary")
    ratio = np.linalg.norm(z[a] - z[b], axis=1)[keep] / dq[keep]
    p10, med, p90 = np.percentile(ratio, [10, 50, 90])
    return {
        "median": float(med),
        "p10": float(p10),
        "p90": float(p90),
        "p90_over_p10": float(p90 / p10) if p10 > 0 else float("inf"),
        "n_pairs": int(keep.sum()),
        "n_dropped": int((~keep).sum()),
    }


def lambda_spectrum(log: list[dict]) -> dict[str, np.ndarray | int | float]:
    """ΛReg's target variances over training, for AnisoWM's Figure 5 (book: rec-lambdareg).

    ``log`` is ``training.train``'s log: rows with ``"step"`` and, for arms with ΛReg,
    ``"lambda_v"`` = ``v = D softmax(clip(alpha, ±log(kappa)/2))``. Since ``tr Λ = sum v = D``
    the mean target variance is 1, so ``above_mean = #{i : v_i > 1}`` at the last row counts
    the coordinates given more than the isotropic share (with a 1e-6 margin so that float32
    noise around v = 1, e.g. at initialisation, counts as 0); ``cond = v_max / v_min <= kappa``.
    Returns ``steps`` (T,), ``v`` (T, D), ``final_sorted`` (D,) descending, ``above_mean``,
    ``cond``.
    """
    if not isinstance(log, list) or not log:
        raise ValueError(f"log must be a non-empty list of training-log rows, got {type(log)}")
    missing = [i for i, row in enumerate(log) if "lambda_v" not in row]
    if len(missing) == len(log):
        raise ValueError(
            "log has no 'lambda_v': this arm has no ΛReg; only "
            f"{', '.join(LAMBDAREG_ARMS)} (any arm with an anisowm component) log it"
        )
    if missing:
        raise ValueError(f"log rows {missing[:5]} lack 'lambda_v' while others have it")
    steps = np.array([row["step"] for row in log], dtype=np.int64)
    try:
        v = np.array([row["lambda_v"] for row in log], dtype=np.float64)
    except ValueError as err:
        raise ValueError("'lambda_v' rows have different lengths across the log") from err
    if v.ndim != 2 or not np.isfinite(v).all() or (v <= 0).any():
        raise ValueError(f"'lambda_v' must be positive finite (T, D) values, got shape {v.shape}")
    final = v[-1]
    return {
        "steps": steps,
        "v": v,
        "final_sorted": np.sort(final)[::-1],
        "above_mean": int((final > 1.0 + 1e-6).sum()),
        "cond": float(final.max() / final.min()),
    }
