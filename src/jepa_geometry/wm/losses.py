"""The loss terms of LeWM, SCALE, Aux and AnisoWM (how an arm combines them: :mod:`.arms`).

Every arm trains the same world model with the teacher-forced prediction loss
``L_pred = ||g(z_{t-2:t}, a_{t-2:t}) - z_{t+1}||^2`` plus some of these terms:

============  =====================================================================
``lewm``      ``+ lambda_sig * sigreg(z)``                         (LeWM)
``scale``     ``+ lambda_sig * sigreg(z) + lambda * scale_loss``   (SCALE)
``aux``       ``+ lambda_sig * sigreg(z) + w * aux_loss``          (SCALE's Aux baseline)
``anisowm``   ``+ lambda_sig * LambdaReg(z)``  (replaces sigreg)   (AnisoWM)
============  =====================================================================

and any sum of them, e.g. ``scale+anisowm`` (which neither paper tried).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import pandas as pd
import torch
from torch import nn

from jepa_geometry.wm.arms import LAMBDAREG_BOUNDS

# --------------------------------------------------------------------------------------
# SIGReg (LeWM / LeJEPA)
# --------------------------------------------------------------------------------------


def epps_pulley_weights(knots: int = 17, t_max: float = 3.0) -> tuple[torch.Tensor, torch.Tensor]:
    """Knots ``t_k = t_max k / (knots - 1)`` and weights ``w_k = Δ c_k exp(-t_k^2 / 2)``.

    ``c_k`` is the trapezoid rule on ``[0, t_max]`` doubled (the integrand is even, so this
    integrates over ``[-t_max, t_max]``): 1 at both ends, 2 inside; ``Δ = t_max / (knots - 1)``.
    """
    if knots < 2:
        raise ValueError(f"knots must be >= 2, got {knots}")
    t = torch.linspace(0.0, t_max, knots, dtype=torch.float64)
    delta = t_max / (knots - 1)
    c = torch.full((knots,), 2.0, dtype=torch.float64)
    c[0] = c[-1] = 1.0
    return t, delta * c * torch.exp(-(t**2) / 2)


def sigreg_gaussian_floor(knots: int = 17) -> float:
    """The expected SIGReg statistic of exactly Gaussian embeddings, ``z ~ N(0, I)``.

    For N i.i.d. standard normal projections, ``E|φ_N(t) - φ(t)|² = (1 - e^{-t²}) / N``, so
    ``E[SIGReg] = Σ_k w_k (1 - e^{-t_k²})`` for any N, D and number of directions: the value a
    perfectly isotropic Gaussian encoder would log, below which no training run can go on
    average. A logged SIGReg far above it says the embedding is measurably non-Gaussian.
    """
    t, w = epps_pulley_weights(knots)
    return float((w * (1 - torch.exp(-(t**2)))).sum())


def random_directions(
    dim: int, num_projections: int, generator: torch.Generator | None = None, device=None
) -> torch.Tensor:
    """``num_projections`` unit vectors uniform on the sphere ``S^{dim-1}``, as columns (D, M)."""
    a = torch.randn(dim, num_projections, generator=generator, device=device)
    return a / a.norm(dim=0, keepdim=True)


def sigreg(
    z: torch.Tensor,
    num_projections: int = 1024,
    knots: int = 17,
    generator: torch.Generator | None = None,
    directions: torch.Tensor | None = None,
) -> torch.Tensor:
    """SIGReg: the sliced Epps-Pulley statistic of ``z`` against ``N(0, I)`` (LeWM, LeJEPA).

    For z of shape (N, D), or (T, N, D) with the statistic taken per time step:

        y_{n,m} = a_m^T z_n,  a_m uniform on S^{D-1}, drawn fresh at each call
        EP_m    = N sum_k w_k [ (mean_n cos(t_k y_nm) - e^{-t_k^2/2})^2 + (mean_n sin(t_k y_nm))^2 ]
        SIGReg  = mean over directions m (and time steps) of EP_m

    a 17-knot quadrature of ``N ∫ |φ_N(t) - φ(t)|^2 e^{-t^2/2} dt`` with φ_N the empirical
    characteristic function of the projections and φ the standard normal's. There is no
    centering or scaling, so mean, variance and shape are all penalised; a collapsed batch
    scores high. Pass ``generator`` for reproducible directions, or ``directions`` (D, M) to
    reuse fixed ones (tests, independent re-implementations).
    """
    if z.ndim not in (2, 3):
        raise ValueError(f"sigreg expects z of shape (N, D) or (T, N, D), got {tuple(z.shape)}")
    n, dim = z.shape[-2], z.shape[-1]
    if n < 2:
        raise ValueError(f"sigreg needs at least 2 samples per step, got N={n}")
    if directions is None:
        directions = random_directions(dim, num_projections, generator).to(z.device)
    elif directions.shape[0] != dim:
        raise ValueError(f"directions must have shape ({dim}, M), got {tuple(directions.shape)}")
    t, w = epps_pulley_weights(knots)
    t, w = t.to(z), w.to(z)
    proj = z @ directions.to(z)  # (..., N, M)
    ty = proj.unsqueeze(-1) * t  # (..., N, M, K)
    cos_mean = torch.cos(ty).mean(dim=-3)  # (..., M, K)
    sin_mean = torch.sin(ty).mean(dim=-3)
    err = (cos_mean - torch.exp(-(t**2) / 2)) ** 2 + sin_mean**2
    return n * (err * w).sum(-1).mean()


# --------------------------------------------------------------------------------------
# ΛReg (AnisoWM)
# --------------------------------------------------------------------------------------


class LambdaReg(nn.Module):
    """AnisoWM's learnable diagonal target ``Λ = diag(v)`` for SIGReg.

        v = D * softmax(b(α)),   α initialised at 0 (Λ = I),   b keeps α in [-½ log κ, ½ log κ]

    so ``tr Λ = D`` always and ``cond Λ = v_max / v_min = e^{b_max - b_min} ≤ κ``. The penalty
    is ``sigreg(z / sqrt(v))``: z is whitened by the target before the isotropic test, so
    SIGReg is minimised by ``z ~ N(0, Λ)``. ``α`` appears in no other term, so Λ is learned
    from this penalty alone; with ``κ = 1`` the bound pins ``v = 1`` and the penalty is
    exactly ``sigreg(z)``.

    ``bound`` says how the box is enforced (the paper's exact form is not public):

    * ``clamp`` (default; our reconstruction of the published description, which bounds α to
      the box without saying how): ``b(α) = clip(α, ±½ log κ)``. Outside
      the box α gets no gradient while Adam's momentum keeps pushing it, so coordinates can
      ratchet to the bound and stay there.
    * ``tanh``: ``b(α) = ½ log κ · tanh(α / (½ log κ))``, a smooth bound whose gradient never
      vanishes (ours).
    * ``project``: ``b(α) = α``, and after every optimizer step α is re-centred (softmax is
      shift-invariant, so v does not change) and clipped into the box (:meth:`project_`),
      so α never leaves it and no momentum accumulates outside (ours).
    """

    def __init__(self, dim: int, kappa: float, bound: str = "clamp") -> None:
        super().__init__()
        if dim < 1:
            raise ValueError(f"dim must be >= 1, got {dim}")
        if not (isinstance(kappa, int | float) and math.isfinite(kappa) and kappa >= 1):
            raise ValueError(f"kappa must be a finite number >= 1 (1 = isotropic), got {kappa!r}")
        if bound not in LAMBDAREG_BOUNDS:
            raise ValueError(f"bound must be one of {', '.join(LAMBDAREG_BOUNDS)}, got {bound!r}")
        self.dim, self.kappa, self.bound = dim, float(kappa), bound
        self.alpha = nn.Parameter(torch.zeros(dim))

    @property
    def half_width(self) -> float:
        return 0.5 * math.log(self.kappa)

    @property
    def variances(self) -> torch.Tensor:
        """The target variances v (differentiable in α)."""
        half = self.half_width
        if self.bound == "tanh":
            b = half * torch.tanh(self.alpha / half) if half > 0 else self.alpha * 0
        else:  # clamp; for "project" the identity once project_() has run (and it guards κ = 1)
            b = self.alpha.clamp(-half, half)
        return self.dim * torch.softmax(b, dim=0)

    @torch.no_grad()
    def project_(self) -> None:
        """For ``bound="project"``: re-centre α and clip it into the box (call after each
        optimizer step); a no-op for the other bounds."""
        if self.bound == "project":
            self.alpha.sub_(self.alpha.mean()).clamp_(-self.half_width, self.half_width)

    def forward(
        self,
        z: torch.Tensor,
        num_projections: int = 1024,
        knots: int = 17,
        generator: torch.Generator | None = None,
        directions: torch.Tensor | None = None,
    ) -> torch.Tensor:
        if z.shape[-1] != self.dim:
            raise ValueError(f"LambdaReg({self.dim}) got z with last dimension {z.shape[-1]}")
        return sigreg(z / self.variances.sqrt(), num_projections, knots, generator, directions)


# --------------------------------------------------------------------------------------
# Small numerical checks of SIGReg and ΛReg (the book's chapter on the objectives)
# --------------------------------------------------------------------------------------


def sigreg_vs_variance(
    variances: Sequence[float],
    n: int,
    dim: int,
    generator: torch.Generator,
    reps: int = 200,
    num_projections: int = 64,
    closed_form: Callable[[float, int], float] | None = None,
) -> pd.DataFrame:
    """SIGReg of isotropic Gaussian batches ``z ~ N(0, s I_dim)`` of ``n`` samples, per variance.

    For each ``s`` (in order) draws ``reps`` batches, ``(reps, n, dim)`` from ``generator``,
    then ``num_projections`` directions shared by the batches, and reports the mean statistic
    over batches. Every projection of such a batch is ``N(0, s)``, so the mean estimates

        E[SIGReg] = Σ_k w_k [ n (e^{-s t_k²/2} - e^{-t_k²/2})² + 1 - e^{-s t_k²} ],

    which ``closed_form(s, n)`` (e.g. ``theory.linear_gaussian.expected_sigreg``; passed in
    because the theory layer sits above this one) adds as a column. The check: the estimator
    the trainer runs has the expectation the theory chapters reason with, smallest just below
    ``s = 1`` (the finite-batch term pulls the minimum down).
    """
    rows = []
    for s in variances:
        z = torch.randn(reps, n, dim, generator=generator) * math.sqrt(s)
        row = {
            "variance s": s,
            f"SIGReg (mean of {reps} batches)": sigreg(
                z, num_projections, generator=generator
            ).item(),
        }
        if closed_form is not None:
            row["closed form"] = float(closed_form(s, n))
        rows.append(row)
    return pd.DataFrame(rows)


def collapsed_sigreg(
    n: int, dim: int, generator: torch.Generator, jitter: float = 0.01, num_projections: int = 64
) -> float:
    """SIGReg of a collapsed batch: ``n`` latents ``z = jitter · ε``, ``ε ~ N(0, I_dim)``.

    As ``jitter -> 0`` every projection is 0, the empirical characteristic function is 1, and

        SIGReg -> n Σ_k w_k (1 - e^{-t_k²/2})²    (= E[SIGReg] at s = 0),

    which grows with the batch size: the penalty that keeps the jointly trained encoder from
    collapsing without an EMA target or stop-gradient.
    """
    z = torch.zeros(n, dim) + jitter * torch.randn(n, dim, generator=generator)
    return sigreg(z, num_projections, generator=generator).item()


def lambda_reg_check(
    dim: int, kappa: float, generator: torch.Generator, n: int = 128, num_projections: int = 256
) -> dict[str, float]:
    """ΛReg's constraints and its two identities, on an arbitrary (partly clipped) α.

    Draws from ``generator``, in this order, ``α ~ N(0, I_dim)``, a batch ``z ~ N(0, I_dim)``
    of ``n`` and ``num_projections`` unit directions ``A``, and returns

    * ``trace = tr Λ = Σ v`` (= dim, since ``v = dim · softmax(...)``) and ``cond = v_max /
      v_min`` (≤ κ, since the clip bounds ``α_max - α_min`` by ``log κ``);
    * ``lambda_reg`` = ΛReg_κ(z) and ``sigreg_whitened`` = SIGReg(z / √v), both on ``A``:
      equal, ΛReg being SIGReg of the whitened z;
    * ``kappa1_lambda_reg`` = ΛReg_1(z) and ``kappa1_sigreg`` = SIGReg(z), each with the
      directions of a generator seeded 1: equal, since κ = 1 pins v = 1.
    """
    lreg = LambdaReg(dim, kappa)
    lreg.alpha.data = torch.randn(dim, generator=generator)
    with torch.no_grad():
        v = lreg.variances
        z = torch.randn(n, dim, generator=generator)
        dirs = random_directions(dim, num_projections, generator)
        iso = LambdaReg(dim, 1.0)
        return {
            "trace": v.sum().item(),
            "cond": (v.max() / v.min()).item(),
            "lambda_reg": lreg(z, directions=dirs).item(),
            "sigreg_whitened": sigreg(z / v.sqrt(), directions=dirs).item(),
            "kappa1_lambda_reg": iso(
                z, num_projections, generator=torch.Generator().manual_seed(1)
            ).item(),
            "kappa1_sigreg": sigreg(
                z, num_projections, generator=torch.Generator().manual_seed(1)
            ).item(),
        }


# --------------------------------------------------------------------------------------
# SCALE
# --------------------------------------------------------------------------------------


def scale_loss(
    z_i: torch.Tensor, z_j: torch.Tensor, q_i: torch.Tensor, q_j: torch.Tensor, eps: float = 1e-6
) -> torch.Tensor:
    """SCALE's calibration loss: ``1 - Pearson(||z_i - z_j||^2, ||q_i - q_j||^2)`` over K pairs.

    ``x_k = ||z_i - z_j||^2`` and ``y_k = ||q_i - q_j||^2`` (squared, so the gradient stays
    finite at 0), each standardised with its own mean and unbiased std, neither detached, so
    the loss is invariant to any rescaling of z or q and is 0 exactly when latent distances
    are an increasing affine function of state distances. A degenerate batch (std < 1e-6 on
    either side) returns a zero that is still connected to the graph. The authors' code
    averages ``x̃ ỹ`` over K with unbiased stds, a factor (K-1)/K off Pearson's r; this uses r.
    """
    if z_i.shape != z_j.shape or z_i.ndim != 2:
        raise ValueError(
            f"z_i and z_j must both be (K, D), got {tuple(z_i.shape)}, {tuple(z_j.shape)}"
        )
    if q_i.shape != q_j.shape or q_i.ndim != 2 or q_i.shape[0] != z_i.shape[0]:
        raise ValueError(
            f"q_i and q_j must both be (K, q_dim) with K = {z_i.shape[0]}, "
            f"got {tuple(q_i.shape)}, {tuple(q_j.shape)}"
        )
    x = ((z_i - z_j) ** 2).sum(-1)
    y = ((q_i - q_j) ** 2).sum(-1).to(x)
    if x.numel() < 2 or x.std() < eps or y.std() < eps:
        return (z_i.sum() + z_j.sum()) * 0.0
    xt = (x - x.mean()) / (x.std() + eps)
    yt = (y - y.mean()) / (y.std() + eps)
    return 1.0 - (xt * yt).sum() / (x.numel() - 1)


def sample_pairs(
    episode: torch.Tensor,
    frames: int,
    num_pairs: int,
    generator: torch.Generator | None = None,
    within_frac: float = 0.5,
    rounds: int = 10,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Draw SCALE's K pairs of frames from a batch of B clips of ``frames`` frames each.

    Indices refer to the flattened (B * frames) rows, row ``b * frames + t``.
    ``int(K * within_frac)`` pairs lie *within a clip*: a clip uniformly, then an ordered
    frame pair t < t' uniformly. The rest lie *across episodes*: uniform row pairs, rejecting
    those whose clips share an episode id, for up to ``rounds`` rounds of 2x the deficit.
    With too little episode diversity the cross set can come up short (as in the authors' code).
    Returns ``(i, j)`` as int64 tensors of equal length.
    """
    if episode.ndim != 1:
        raise ValueError(
            f"episode must be a (B,) tensor of episode ids, got {tuple(episode.shape)}"
        )
    if frames < 2:
        raise ValueError(f"need at least 2 frames per clip, got {frames}")
    b = episode.shape[0]
    n_within = int(num_pairs * within_frac)
    tri = torch.triu_indices(frames, frames, offset=1)  # (2, C(T, 2)) with t < t'
    clip = torch.randint(0, b, (n_within,), generator=generator)
    pick = torch.randint(0, tri.shape[1], (n_within,), generator=generator)
    i_parts, j_parts = [clip * frames + tri[0, pick]], [clip * frames + tri[1, pick]]
    ep_row = episode.repeat_interleave(frames)
    deficit = num_pairs - n_within
    for _ in range(rounds):
        if deficit <= 0:
            break
        i = torch.randint(0, b * frames, (2 * deficit,), generator=generator)
        j = torch.randint(0, b * frames, (2 * deficit,), generator=generator)
        keep = ep_row[i] != ep_row[j]
        i, j = i[keep][:deficit], j[keep][:deficit]
        i_parts.append(i)
        j_parts.append(j)
        deficit -= i.numel()
    return torch.cat(i_parts), torch.cat(j_parts)


def scale_loss_cases(
    dim: int, generator: torch.Generator, k: int = 256, q_dim: int = 2, noise: float = 0.3
) -> pd.Series:
    """SCALE's ``1 - ρ`` on ``k`` pairs for four latent maps of the same states.

    Draws, in this order, ``q_i, q_j ~ N(0, I_q_dim)``, a ``(dim, q_dim)`` Gaussian matrix whose
    QR factor gives ``A`` with orthonormal rows (``z = q A`` is an isometry), the two noise
    batches ``noise · N(0, I_dim)`` and two unrelated batches ``N(0, I_dim)``. Expected values:
    0 for ``z = q A`` (``||z_i - z_j||² = ||q_i - q_j||²``) and for ``z = 10 q A + 3`` (an
    increasing affine map of the distances: ρ is blind to scale and shift), between 0 and 1 with
    noise, and about 1 (ρ ≈ 0) for latents unrelated to q. The rows show what the loss asks for:
    distances ordered like the state's, not equal to them.
    """
    q_i, q_j = (
        torch.randn(k, q_dim, generator=generator),
        torch.randn(k, q_dim, generator=generator),
    )
    a = torch.linalg.qr(torch.randn(dim, q_dim, generator=generator)).Q.T
    e_i = noise * torch.randn(k, dim, generator=generator)
    e_j = noise * torch.randn(k, dim, generator=generator)
    u_i, u_j = torch.randn(k, dim, generator=generator), torch.randn(k, dim, generator=generator)
    cases = {
        "z = q A (distances equal)": (q_i @ a, q_j @ a),
        "z = 10 q A + 3 (rescaled, shifted)": (10 * q_i @ a + 3, 10 * q_j @ a + 3),
        "z = q A + noise": (q_i @ a + e_i, q_j @ a + e_j),
        "z unrelated to q": (u_i, u_j),
    }
    return pd.Series(
        {name: scale_loss(z_i, z_j, q_i, q_j).item() for name, (z_i, z_j) in cases.items()},
        name="1 - ρ",
    )


# --------------------------------------------------------------------------------------
# Aux baseline (SCALE)
# --------------------------------------------------------------------------------------


class AuxHead(nn.Module):
    """Training-only head regressing standardised q from z: Linear(D, 256) -> ReLU -> Linear.

    Its loss ``mean((q_hat - q)^2)`` makes q *decodable* from z without asking q to shape
    the latent metric. The head is discarded after training.
    """

    def __init__(self, dim: int, q_dim: int, hidden: int = 256) -> None:
        super().__init__()
        self.q_dim = q_dim
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, q_dim))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.net(z)

    def loss(self, z: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
        if q.shape[-1] != self.q_dim or q.shape[:-1] != z.shape[:-1]:
            raise ValueError(
                f"q must have shape {(*z.shape[:-1], self.q_dim)} to match z, got {tuple(q.shape)}"
            )
        return ((self(z) - q) ** 2).mean()
