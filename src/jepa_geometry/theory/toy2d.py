"""The prediction-planning separation with a nonlinear encoder (AnisoWM Figure 1), in 2-D.

Reconstruction (see the book's *Reconstructions* page, section rec-toy2d,
``book/reconstructions.md``): the paper gives only the caption
of its Figure 1 ("MLP encoder, action-conditioned predictor, process noise decreased 30x,
normalized planning regret near 0.16 over ten seeds, 0.1607 inverse-covariance reference");
the system, Σ, task set and networks below are this project's choices.

System (one step, H = 1, fully actuated):

    x ~ N(0, Σ),   u ~ U([-ū, ū]²),   x' = x + u + σ_w ξ,   ξ ~ N(0, I₂)
    o = x + β tanh(W x)                      (a fixed invertible warp: the encoder must be
                                               nonlinear to be linear in x)

World model, trained exactly like LeWM but in 2-D:

    z = f(o)             MLP 2 -> h -> h -> 2 (GELU)
    ẑ' = z + g([z, u])   MLP 4 -> h -> h -> 2 (GELU), action-conditioned
    loss = mean((ẑ' - f(o'))²) + λ_sig · SIGReg(z)          (or ΛReg(z) with κ = cond Σ)

SIGReg and ΛReg are :func:`jepa_geometry.wm.losses.sigreg` and
:class:`jepa_geometry.wm.losses.LambdaReg`, on current-state embeddings (whose marginal is
N(0, Σ), the theory's assumption). Planning picks ``u`` minimising ``||ẑ'(x₀, u) - f(o_g)||²``
over the box by a coarse-to-fine grid search; its physical regret is compared with the task's
Euclidean optimum and with the exact Σ⁻¹ planner
(:func:`jepa_geometry.theory.linear_gaussian.box_argmin`).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import nn

from jepa_geometry.artifacts import Artifact, get_or_build
from jepa_geometry.jobs import job_threads, run_parallel
from jepa_geometry.stats import bootstrap_interval
from jepa_geometry.theory.linear_gaussian import (
    box_argmin,
    covariance_2d,
    planning_regret,
    selected_target,
    whitened_noise,
)
from jepa_geometry.wm.arms import LEWM_SIGREG_WEIGHT
from jepa_geometry.wm.losses import LambdaReg, sigreg

REGULARIZERS: tuple[str, ...] = ("sigreg", "lambdareg")
# The planning task set (see make_tasks).
DEFAULT_TASKS = {"starts": 8, "angles": 24, "radius": 1.5, "seed": 0}
# Settings of evaluate_toy and grid_search_plan, part of every run's artifact key.
EVAL_SETTINGS = {"n_heldout": 4096, "noise_draws": 32, "grid_points": 41, "grid_levels": 3}
# The fixed warp matrix W (||0.3 W||_2 < 1, so o = x + 0.3 tanh(Wx) is invertible).
WARP_MATRIX = np.array([[0.8, -0.6], [0.5, 0.9]])


@dataclass(frozen=True)
class ToyConfig:
    """Everything one run of the 2-D toy depends on (it is the run's artifact key)."""

    sigma_eigenvalues: tuple[float, float] = (4.0, 1.0)
    sigma_angle: float = 30.0  # degrees between Σ's major axis and the x-axis
    half_width: float = 1.0  # ū: the reachable set from x₀ is x₀ + [-ū, ū]²
    warp: float = 0.3  # β of the observation warp (0: o = x)
    noise: float = 0.1  # σ_w, the process-noise standard deviation
    regularizer: str = "sigreg"  # "sigreg" (LeWM) or "lambdareg" (AnisoWM)
    kappa: float = 4.0  # ΛReg's condition bound (used only by "lambdareg")
    hidden: int = 64
    steps: int = 1500
    batch_size: int = 256
    lr: float = 3e-3
    sigreg_weight: float = LEWM_SIGREG_WEIGHT  # λ_sig (LeWM's value)
    projections: int = 16  # SIGReg directions per step, fresh each step (D = 2 needs few)
    alpha_lr: float = 1.0  # ΛReg's α learning rate as a multiple of lr (1: the published form)

    def __post_init__(self) -> None:
        if self.regularizer not in REGULARIZERS:
            raise ValueError(
                f"unknown regularizer {self.regularizer!r}; valid: {', '.join(REGULARIZERS)}"
            )
        if self.noise < 0 or self.half_width <= 0 or self.steps < 1 or self.hidden < 1:
            raise ValueError(f"invalid toy settings: {self}")
        if not self.alpha_lr > 0:
            raise ValueError(f"alpha_lr must be > 0, got {self.alpha_lr}")
        if not self.kappa >= 1:
            raise ValueError(f"kappa must be >= 1, got {self.kappa}")
        if abs(self.warp) * np.linalg.norm(WARP_MATRIX, 2) >= 1:
            raise ValueError(f"|warp| must be < {1 / np.linalg.norm(WARP_MATRIX, 2):.3f}")

    @property
    def sigma(self) -> np.ndarray:
        return covariance_2d(self.sigma_eigenvalues, self.sigma_angle)

    def spec(self) -> dict:
        return dataclasses.asdict(self)


# --------------------------------------------------------------------------------------
# System and model
# --------------------------------------------------------------------------------------


def observe(x: torch.Tensor, warp: float) -> torch.Tensor:
    """``o = x + β tanh(W x)``."""
    w = torch.as_tensor(WARP_MATRIX, dtype=x.dtype)
    return x + warp * torch.tanh(x @ w.T)


def sample_transitions(
    cfg: ToyConfig, n: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``n`` transitions ``(x, u, x')`` of the system at noise ``cfg.noise``."""
    chol = torch.as_tensor(np.linalg.cholesky(cfg.sigma), dtype=torch.float32)
    x = torch.randn(n, 2, generator=generator) @ chol.T
    u = (torch.rand(n, 2, generator=generator) * 2 - 1) * cfg.half_width
    x1 = x + u + cfg.noise * torch.randn(n, 2, generator=generator)
    return x, u, x1


def _mlp(d_in: int, hidden: int, d_out: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(d_in, hidden),
        nn.GELU(),
        nn.Linear(hidden, hidden),
        nn.GELU(),
        nn.Linear(hidden, d_out),
    )


class ToyWorldModel(nn.Module):
    """Encoder ``z = f(o)`` and residual action-conditioned predictor ``ẑ' = z + g([z, u])``."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.encoder = _mlp(2, hidden, 2)
        self.predictor = _mlp(4, hidden, 2)

    def encode(self, o: torch.Tensor) -> torch.Tensor:
        return self.encoder(o)

    def predict(self, z: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
        return z + self.predictor(torch.cat([z, u], dim=-1))


def train_toy(cfg: ToyConfig, seed: int) -> tuple[ToyWorldModel, LambdaReg | None, list[dict]]:
    """Train one world model with Adam and a cosine learning-rate decay; fresh data each step.

    Returns the model, the learned ΛReg target (or None) and a short loss log.
    """
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = ToyWorldModel(cfg.hidden)
    lreg = LambdaReg(2, cfg.kappa) if cfg.regularizer == "lambdareg" else None
    groups = [{"params": list(model.parameters())}]
    if lreg is not None:
        groups.append({"params": list(lreg.parameters()), "lr": cfg.lr * cfg.alpha_lr})
    opt = torch.optim.Adam(groups, lr=cfg.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, cfg.steps)
    log = []
    for step in range(cfg.steps):
        x, u, x1 = sample_transitions(cfg, cfg.batch_size, gen)
        z = model.encode(observe(x, cfg.warp))
        z1 = model.encode(observe(x1, cfg.warp))
        pred = ((model.predict(z, u) - z1) ** 2).mean()
        if lreg is None:
            reg = sigreg(z, cfg.projections, generator=gen)
        else:
            reg = lreg(z, cfg.projections, generator=gen)
        loss = pred + cfg.sigreg_weight * reg
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if step % max(cfg.steps // 10, 1) == 0 or step == cfg.steps - 1:
            log.append({"step": step, "pred": pred.item(), "reg": reg.item()})
    return model, lreg, log


# --------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------


def make_tasks(
    sigma: np.ndarray, starts: int, angles: int, radius: float, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """The planning task set: ``starts`` start states ``x₀ ~ N(0, Σ/4)`` (inside the data) and,
    around each, ``angles`` goals evenly spaced on a circle of ``radius`` (outside the box when
    radius > ū). Returns ``(x0, goal)`` of shape (starts * angles, 2)."""
    rng = np.random.default_rng(seed)
    x0 = rng.multivariate_normal(np.zeros(2), sigma / 4, size=starts)
    phi = 2 * np.pi * np.arange(angles) / angles
    ring = radius * np.stack([np.cos(phi), np.sin(phi)], 1)
    return np.repeat(x0, angles, 0), (x0[:, None, :] + ring[None]).reshape(-1, 2)


def reference_regret(
    sigma: np.ndarray, x0: np.ndarray, goal: np.ndarray, half_width: float
) -> dict[str, float]:
    """Normalized regret ``Σ_tasks [c(x̂) - c(x*)] / Σ_tasks c(x*)`` of the exact Σ⁻¹ planner
    (and of any metric: pass ``inv(M)`` as sigma) on a task set."""
    inv = np.linalg.inv(sigma)
    regs = [planning_regret(inv, g - s, half_width) for s, g in zip(x0, goal, strict=True)]
    total = sum(r["regret"] for r in regs)
    c_star = sum(r["c_star"] for r in regs)
    return {"normalized_regret": total / c_star, "mean_regret": total / len(regs)}


@torch.no_grad()
def grid_search_plan(
    cost: Callable[[torch.Tensor], torch.Tensor],
    tasks: int,
    half_width: float,
    points: int = 41,
    levels: int = 3,
) -> torch.Tensor:
    """Coarse-to-fine grid search of ``cost(u) -> (tasks, C)`` over ``u ∈ [-ū, ū]²``.

    Level 0 is a ``points x points`` grid over the box; each further level searches a grid of
    the same size over ±2 cells of the previous level around its best point (clipped to the
    box), so the resolution shrinks by ``(points - 1) / 4`` per level.
    Returns the best action per task, shape (tasks, 2).
    """
    lin = torch.linspace(-1.0, 1.0, points)
    offsets = torch.stack(torch.meshgrid(lin, lin, indexing="ij"), -1).reshape(-1, 2)
    center = torch.zeros(tasks, 2)
    span = half_width
    for _ in range(levels):
        cand = (center[:, None, :] + span * offsets[None]).clamp(-half_width, half_width)
        best = cost(cand).argmin(dim=1)
        center = cand[torch.arange(tasks), best]
        span = 2 * span / (points - 1) * 2
    return center


def _normalized_cov_trace(z: torch.Tensor) -> float:
    zc = z - z.mean(0)
    return float((zc**2).sum(1).mean())


@torch.no_grad()
def evaluate_toy(
    model: ToyWorldModel,
    cfg: ToyConfig,
    x0: np.ndarray,
    goal: np.ndarray,
    seed: int,
    n_heldout: int = EVAL_SETTINGS["n_heldout"],
    noise_draws: int = EVAL_SETTINGS["noise_draws"],
) -> dict[str, float]:
    """Prediction error, planning regret and learned geometry of one trained model.

    * ``heldout_error``: ``E||ẑ' - f(o')||² / tr Cov f(o)`` on fresh transitions at the run's
      noise (includes the irreducible noise).
    * ``cond_mean_error``: ``E||ẑ' - E[f(o') | x, u]||² / tr Cov f(o)``, the conditional mean
      estimated from ``noise_draws`` draws of ξ with the finite-draw bias ``tr Var / draws``
      subtracted -- the part of the error the predictor could still remove.
    * ``normalized_regret``: ``Σ [c(x₀ + û) - c(x*)] / Σ c(x*)`` over the task set, û from
      :func:`grid_search_plan` on the learned latent cost.
    * ``metric_gap``: ``||M̂/tr M̂ - Σ⁻¹/tr Σ⁻¹||_F / ||Σ⁻¹/tr Σ⁻¹||_F`` with ``M̂ = E[JᵀJ]`` the
      mean pull-back metric of the encoder (J = ∂f(o(x))/∂x) over the tasks' reachable boxes.
    * ``metric_regret``: the exact-planner regret of M̂ itself on the task set (geometry alone,
      without the predictor's or grid's error).
    """
    gen = torch.Generator().manual_seed(seed + 7919)
    x, u, x1 = sample_transitions(cfg, n_heldout, gen)
    z = model.encode(observe(x, cfg.warp))
    scale = _normalized_cov_trace(z)
    pred = model.predict(z, u)
    heldout = float(((pred - model.encode(observe(x1, cfg.warp))) ** 2).sum(1).mean()) / scale
    mean_next = x + u
    draws = torch.stack(
        [
            model.encode(
                observe(mean_next + cfg.noise * torch.randn(n_heldout, 2, generator=gen), cfg.warp)
            )
            for _ in range(noise_draws)
        ]
    )  # (draws, n, 2)
    cond_mean = draws.mean(0)
    bias = draws.var(0).sum(1) / noise_draws
    cond_err = float((((pred - cond_mean) ** 2).sum(1) - bias).mean()) / scale

    x0_t = torch.as_tensor(x0, dtype=torch.float32)
    goal_t = torch.as_tensor(goal, dtype=torch.float32)
    z0 = model.encode(observe(x0_t, cfg.warp))
    zg = model.encode(observe(goal_t, cfg.warp))

    def latent_cost(cand: torch.Tensor) -> torch.Tensor:  # (T, C, 2) -> (T, C)
        t, c = cand.shape[:2]
        zz = z0[:, None, :].expand(t, c, 2)
        return ((model.predict(zz, cand) - zg[:, None, :]) ** 2).sum(-1)

    u_hat = grid_search_plan(
        latent_cost,
        len(x0),
        cfg.half_width,
        EVAL_SETTINGS["grid_points"],
        EVAL_SETTINGS["grid_levels"],
    ).numpy()
    reached = x0 + u_hat
    x_star = x0 + np.clip(goal - x0, -cfg.half_width, cfg.half_width)
    c_hat = ((reached - goal) ** 2).sum(1)
    c_star = ((x_star - goal) ** 2).sum(1)
    metric = pullback_metric(model, cfg, x0)
    inv_sigma = np.linalg.inv(cfg.sigma)
    m_n, s_n = metric / np.trace(metric), inv_sigma / np.trace(inv_sigma)
    return {
        "heldout_error": heldout,
        "cond_mean_error": cond_err,
        "normalized_regret": float((c_hat - c_star).sum() / c_star.sum()),
        "metric_gap": float(np.linalg.norm(m_n - s_n) / np.linalg.norm(s_n)),
        "metric_regret": reference_regret(np.linalg.inv(metric), x0, goal, cfg.half_width)[
            "normalized_regret"
        ],
        "latent_var": scale,
    }


def pullback_metric(model: ToyWorldModel, cfg: ToyConfig, x0: np.ndarray, per_box: int = 64):
    """``M̂ = E[J(x)ᵀ J(x)]``, J the Jacobian of ``x -> f(o(x))``, over uniform points of the
    reachable boxes ``x₀ + [-ū, ū]²`` (a fixed quasi-grid, so M̂ is deterministic)."""
    side = int(math.sqrt(per_box))
    lin = torch.linspace(-cfg.half_width, cfg.half_width, side)
    offs = torch.stack(torch.meshgrid(lin, lin, indexing="ij"), -1).reshape(-1, 2)
    pts = (torch.as_tensor(np.unique(x0, axis=0), dtype=torch.float32)[:, None] + offs).reshape(
        -1, 2
    )
    with torch.enable_grad():
        jac = torch.func.vmap(torch.func.jacrev(lambda p: model.encode(observe(p, cfg.warp))))(pts)
    return torch.einsum("nij,nik->jk", jac, jac).numpy().astype(np.float64) / len(pts)


# --------------------------------------------------------------------------------------
# The sweep, cached run by run
# --------------------------------------------------------------------------------------


def toy_config(profile, sigma_eigenvalues=(4.0, 1.0), sigma_angle: float = 30.0, **kw) -> ToyConfig:
    """The base :class:`ToyConfig` of a profile (its ``theory.toy_steps``) for a given Σ."""
    return ToyConfig(
        sigma_eigenvalues=tuple(float(s) for s in sigma_eigenvalues),
        sigma_angle=float(sigma_angle),
        steps=profile.theory.toy_steps,
        **kw,
    )


def run_artifact(cfg: ToyConfig, seed: int, tasks: dict) -> Artifact:
    return Artifact(
        "results", "aniso_toy_run", {"config": cfg.spec(), "seed": seed, "tasks": tasks}
    )


def run_toy(cfg: ToyConfig, seed: int, tasks: dict) -> tuple[dict, Path]:
    """Train and evaluate one (config, seed), cached: returns its result row and artifact path
    (holding ``row.json`` and the trained ``model.pt``)."""
    art = run_artifact(cfg, seed, tasks)

    def build(tmp: Path) -> dict:
        import time

        t0 = time.perf_counter()
        model, lreg, log = train_toy(cfg, seed)
        train_s = time.perf_counter() - t0
        x0, goal = make_tasks(cfg.sigma, **tasks)
        row = {
            "regularizer": cfg.regularizer,
            "noise": cfg.noise,
            "seed": seed,
            **evaluate_toy(model, cfg, x0, goal, seed),
        }
        if lreg is not None:
            v = lreg.variances.detach().numpy()
            row["target_cond"] = float(v.max() / v.min())
        (tmp / "row.json").write_text(json.dumps(row))
        torch.save(model.state_dict(), tmp / "model.pt")
        return {"log": log, "train_seconds": train_s}  # wall time: manifest, not payload

    path = get_or_build(art, build)
    row = json.loads((path / "row.json").read_text())
    return {**row, "train_seconds": art.manifest()["train_seconds"]}, path


def load_model(path: Path, cfg: ToyConfig) -> ToyWorldModel:
    model = ToyWorldModel(cfg.hidden)
    model.load_state_dict(torch.load(path / "model.pt", weights_only=True))
    return model.eval()


def _run_row(cfg: ToyConfig, seed: int, tasks: dict) -> dict:
    with job_threads():  # one run per core; the same numbers whatever the pool size
        return run_toy(cfg, seed, tasks)[0]


def toy_sweep(
    base: ToyConfig,
    noise_levels: list[float],
    seeds: list[int],
    regularizers: list[str],
    tasks: dict,
    workers: int = 1,
    progress: bool = True,
) -> pd.DataFrame:
    """One row per (regularizer, noise, seed): the tidy results table of Figure 1(b).

    Runs are independent and cached one by one; with ``workers > 1`` they are spread over
    that many processes (:func:`jepa_geometry.jobs.run_parallel`; each run on one thread,
    so its numbers do not depend on the pool size).
    """
    bad = [r for r in regularizers if r not in REGULARIZERS]
    if bad:
        raise ValueError(f"unknown regularizer(s) {bad}; valid: {', '.join(REGULARIZERS)}")
    grid = [
        (dataclasses.replace(base, regularizer=r, noise=float(s)), int(seed), tasks)
        for r in regularizers
        for s in noise_levels
        for seed in seeds
    ]
    return pd.DataFrame(run_parallel(_run_row, grid, max(workers, 1), "2-D toy runs", progress))


def toy_summary(results: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Per (regularizer, noise): the mean over seeds of each column and its 95 % percentile
    bootstrap interval over seeds (:func:`jepa_geometry.stats.bootstrap_interval`)."""

    out = []
    for (reg, noise), grp in results.groupby(["regularizer", "noise"], sort=False):
        row = {"regularizer": reg, "noise": noise, "seeds": len(grp)}
        for col in columns:
            row[col] = float(grp[col].mean())
            row[f"{col}_lo"], row[f"{col}_hi"] = bootstrap_interval(grp[col].to_numpy())
        out.append(row)
    return pd.DataFrame(out)


def folded_runs(results: pd.DataFrame, factor: float = 10.0) -> pd.DataFrame:
    """The runs whose conditional-mean prediction error exceeds ``factor`` times the median of
    their (regularizer, noise) cell.

    Why: an encoder that folds the plane (not injective) still satisfies SIGReg on the marginal
    but predicts the conditional mean badly, so ``cond_mean_error`` -- a training-side quantity,
    not the regret -- singles it out. A diagnostic only: the headline numbers keep every seed.
    """
    cell_median = results.groupby(["regularizer", "noise"]).cond_mean_error.transform("median")
    return results[results.cond_mean_error > factor * cell_median]


def cell_means(results: pd.DataFrame, column: str) -> pd.Series:
    """The mean over seeds of ``column`` per (regularizer, noise), in the table's order."""
    return results.groupby(["regularizer", "noise"], sort=False)[column].mean()


def noise_endpoints(
    summary: pd.DataFrame, results: pd.DataFrame, regularizer: str, lo: float, hi: float
) -> dict | None:
    """One regularizer's numbers at the largest (``hi``) and smallest (``lo``) noise level.

    ``error_ratio = heldout_error(hi) / heldout_error(lo)`` (how much prediction improves as
    the noise shrinks; Proposition 1 expects roughly ``(hi / lo)²``), the mean normalized
    regret at both ends, and the mean learned ΛReg condition number ``target_cond`` per noise
    level (NaN for SIGReg). None when the regularizer was not run.
    """
    cells = summary[summary.regularizer == regularizer].set_index("noise")
    if len(cells) == 0:
        return None
    runs = results[results.regularizer == regularizer]
    return {
        "error_ratio": cells.heldout_error[hi] / cells.heldout_error[lo],
        "regret_hi": cells.normalized_regret[hi],
        "regret_lo": cells.normalized_regret[lo],
        "target_cond": runs.groupby("noise")["target_cond"].mean()
        if "target_cond" in runs
        else None,
    }


LAMBDA_BUDGETS: dict[str, dict[str, float]] = {
    "ΛReg, as trained above": {},
    "ΛReg, α lr x30": {"alpha_lr": 30.0},
    "ΛReg, 4x steps": {"steps_factor": 4.0},
}
"""ΛReg's training-budget arms of chapter 3: is the 2-D toy's ΛReg result a
training-budget result? Each changes one thing against the sweep's ΛReg runs."""


def lambda_budget_runs(
    base: ToyConfig,
    noise: float,
    seeds: list[int],
    tasks: dict,
    workers: int = 1,
    progress: bool = True,
) -> pd.DataFrame:
    """ΛReg at one noise level under each of :data:`LAMBDA_BUDGETS`: one row per (arm, seed)
    with ``arm``, ``target_cond`` (cond Λ, bounded by κ), ``normalized_regret`` and the
    held-out error (the first arm is the sweep's own ΛReg run, read from the cache)."""
    runs = []
    for name, change in LAMBDA_BUDGETS.items():
        cfg = dataclasses.replace(
            base,
            regularizer="lambdareg",
            noise=float(noise),
            alpha_lr=change.get("alpha_lr", 1.0),
            steps=int(base.steps * change.get("steps_factor", 1.0)),
        )
        runs += [(name, cfg, int(seed)) for seed in seeds]
    rows = run_parallel(
        _run_row,
        [(c, s, tasks) for _, c, s in runs],
        max(workers, 1),
        "2-D toy ΛReg budgets",
        progress,
    )
    out = pd.DataFrame(rows)
    out.insert(0, "arm", [name for name, _, _ in runs])
    return out


def lambda_budget_table(runs: pd.DataFrame, reference: float) -> pd.DataFrame:
    """Per arm of :func:`lambda_budget_runs`: the mean over seeds of cond Λ and of the
    normalized regret, each with its 95 % bootstrap interval over seeds, and the regret
    relative to the Σ⁻¹ planner's ``reference`` (1: no better than the isotropic geometry's
    limit; 0: the task cost)."""
    rows = []
    for arm, g in runs.groupby("arm", sort=False):
        row: dict[str, Any] = {"arm": arm, "seeds": len(g)}
        for col in ("target_cond", "normalized_regret"):
            row[col] = float(g[col].mean())
            row[f"{col}_lo"], row[f"{col}_hi"] = bootstrap_interval(g[col].to_numpy())
        row["regret / Σ⁻¹ reference"] = row["normalized_regret"] / reference
        rows.append(row)
    return pd.DataFrame(rows)


def selection_force_table(base: ToyConfig, noise_levels: list[float]) -> pd.DataFrame:
    """How strongly the prediction loss prefers ΛReg's selected target over the isotropic one.

    In the linear-Gaussian model the members of ΛReg's zero-penalty set differ only in
    ``(η/2) tr(L R)`` with ``R`` the whitened noise (:func:`whitened_noise`), so the preference
    for the selected target ``L*`` over ``L = I`` is ``(η/2)(tr R - tr L* R)`` with
    ``η = σ_w²``. It is reported in the toy's loss units and relative to the regulariser's
    effective weight ``λ_eff = sigreg_weight · batch_size`` (SIGReg's statistic grows with
    the batch). One row per noise level.
    """
    eye = np.eye(2)
    r_mat = whitened_noise(base.sigma, eye)
    target = selected_target(base.sigma, eye, base.kappa)
    rows = []
    for s_w in noise_levels:
        eta = float(s_w) ** 2
        iso = 0.5 * eta * float(np.trace(r_mat))
        aligned = 0.5 * eta * float(np.trace(target @ r_mat))
        rows.append(
            {
                "noise": float(s_w),
                "eta": eta,
                "pred loss, isotropic": iso,
                "pred loss, selected target": aligned,
                "gap / λ_eff": (iso - aligned) / (base.sigreg_weight * base.batch_size),
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------
# Panel (a): one trained model's cost landscape and planner choice
# --------------------------------------------------------------------------------------


@torch.no_grad()
def cost_landscape(
    model: ToyWorldModel, cfg: ToyConfig, goal: np.ndarray, lim: float = 2.2, n_grid: int = 161
) -> dict[str, np.ndarray]:
    """Three costs of reaching the goal ``g`` on an ``n_grid²`` window ``g + [-lim, lim]²``.

    ``latent = ||f(o_x) - f(o_g)||²`` (the learned encoder's cost), ``inverse_covariance =
    (x - g)ᵀ Σ⁻¹ (x - g)`` (what Lemma 1 predicts an isotropic embedding measures) and
    ``task = ||x - g||²``. Returns the grids ``X``, ``Y`` and the three fields, for contour
    plots that compare their shapes (Figure 1(a)).
    """
    axg = np.linspace(-lim, lim, n_grid)
    xx, yy = np.meshgrid(axg + goal[0], axg + goal[1])
    pts = torch.as_tensor(np.stack([xx, yy], -1).reshape(-1, 2), dtype=torch.float32)
    zg = model.encode(observe(torch.as_tensor(goal[None], dtype=torch.float32), cfg.warp))
    z = model.encode(observe(pts, cfg.warp))
    dx = np.stack([xx - goal[0], yy - goal[1]], -1)
    return {
        "X": xx,
        "Y": yy,
        "latent": ((z - zg) ** 2).sum(1).numpy().reshape(xx.shape),
        "inverse_covariance": np.einsum("...i,ij,...j->...", dx, np.linalg.inv(cfg.sigma), dx),
        "task": (dx**2).sum(-1),
    }


@torch.no_grad()
def planner_choices(
    model: ToyWorldModel, cfg: ToyConfig, start: np.ndarray, goal: np.ndarray
) -> dict[str, np.ndarray]:
    """Where three planners take one task ``(x₀, x_g)`` within the box ``x₀ + [-ū, ū]²``.

    ``learned``: ``x₀ + û``, ``û = argmin_u ||ẑ'(f(o₀), u) - f(o_g)||²`` by
    :func:`grid_search_plan` (the evaluation's planner); ``inverse_covariance``: the exact Σ⁻¹
    planner (:func:`~jepa_geometry.theory.linear_gaussian.box_argmin`); ``task``: the task
    optimum ``x* = x₀ + clip(x_g - x₀)``. Why: the learned choice should sit near the Σ⁻¹ one,
    not near x*.
    """
    x0_t = torch.as_tensor(start[None], dtype=torch.float32)
    zg = model.encode(observe(torch.as_tensor(goal[None], dtype=torch.float32), cfg.warp))

    def latent_cost(cand: torch.Tensor) -> torch.Tensor:  # (1, C, 2) -> (1, C)
        z0 = model.encode(observe(x0_t, cfg.warp))[:, None, :].expand(1, cand.shape[1], 2)
        return ((model.predict(z0, cand) - zg[:, None, :]) ** 2).sum(-1)

    u_hat = grid_search_plan(latent_cost, 1, cfg.half_width).numpy()[0]
    w = cfg.half_width
    return {
        "learned": start + u_hat,
        "inverse_covariance": start + box_argmin(np.linalg.inv(cfg.sigma), goal - start, w),
        "task": start + np.clip(goal - start, -w, w),
    }
