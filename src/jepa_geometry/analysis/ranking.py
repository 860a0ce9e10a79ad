"""Do imagined costs rank candidate plans like reality? (SCALE's τ, AnisoWM's ordering table)

A planner only needs its cost to *order* candidate action sequences correctly. For one
start/goal pair and K candidates U_k of H blocks, three costs are compared:

* c_phys(U_k) = ``Task.goal_distance`` between the state U_k actually reaches and the goal
  (the simulator's verdict);
* c_enc(U_k) = ‖f(o_H^k) − f(o_g)‖² / scale, the latent cost of the frame U_k actually reaches
  (what a perfect predictor would give the planner: the encoder's geometry alone);
* c_imag(U_k) = ‖ẑ_H(U_k) − f(o_g)‖² / scale, the planner's own cost, ẑ_H the predictor's
  autoregressive rollout from the start frame (history 1, as our planning protocol).

``scale`` is SCALE's normaliser, the mean squared distance between two random true terminal
embeddings, so that costs and the rollout error are comparable across models.

SCALE's rank channels (Kendall τ_b per start): τ_pred = τ(c_imag, c_enc) (does the predictor
keep the encoder's order?), τ_geom = τ(c_enc, c_phys) (does the latent geometry order outcomes
like the task?), τ_total = τ(c_imag, c_phys); rollout error = mean_k ‖ẑ_H − z_true‖² / scale.
AnisoWM's cost-ordering agreement = the fraction of candidate pairs (k, l) with
sign(J_k − J_l) = sign(c_k − c_l), pairs tied in either dropped; it equals (1 + τ_b) / 2 without
ties (chance 0.5). It is reported for J_enc (agree_enc) and J_pred (agree_pred) against c_phys.

The simulator part (:func:`simulate_candidates`) does not depend on the model, so it is run
once per task and candidate source and reused for every model (:func:`ranking_metrics`).

Reconstruction notes (AnisoWM's code is not available; the book's *Reconstructions* page,
section rec-cost-ordering (``book/reconstructions.md``), explains these choices):

* ``source="gaussian"`` follows SCALE: z-scored N(0, 1) blocks of shape (H, frameskip·A) from
  ``default_rng(seed)`` (SCALE's ``CAND_SEED`` = 7), mapped to raw actions by the dataset's
  action statistics and clipped to the task's action bounds. The same K sequences are used
  for every start (SCALE shares them across arms; sharing across starts too is our choice).
* ``source="dataset"`` follows AnisoWM's "K recorded action sequences from the dataset": K
  random windows of horizon·frameskip consecutive recorded raw actions from the training
  episodes, drawn afresh for every start. AnisoWM's K and its sampling are unknown; and where
  AnisoWM pairs each sequence with the observation it reached *in the dataset*, we replay the
  window from the episode-set start state in the simulator, so that all K candidates share
  the start.
* The blocks given to the model are the z-score of the raw actions actually executed (after
  clipping), so the model imagines exactly what the simulator ran.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch
from scipy.stats import kendalltau

from jepa_geometry.envs import Task
from jepa_geometry.envs.episodes import EpisodeData
from jepa_geometry.jobs import progress_bar
from jepa_geometry.wm.model import encode_frames

SOURCES: tuple[str, ...] = ("gaussian", "dataset")
METRICS: tuple[str, ...] = (
    "tau_pred",
    "tau_geom",
    "tau_total",
    "rollout_error",
    "agree_enc",
    "agree_pred",
)

# A start whose physical costs spread less than this (relative) has no order to agree with
# (e.g. the agent pinned in a corner by every candidate). SCALE's exact rule is unknown.
DEGENERATE_SPREAD = 1e-9


@dataclass(frozen=True)
class Outcomes:
    """K candidate action sequences per start, executed in the simulator (model-independent).

    Shapes: n starts, K candidates, H blocks of ``frameskip`` steps, A action dims, S state dims.
    """

    task: str
    source: str
    seed: int
    frameskip: int
    horizon: int
    start_index: np.ndarray  # (n,) row of the episode set
    start_states: np.ndarray  # (n, S)
    goal_states: np.ndarray  # (n, S)
    start_frames: np.ndarray  # (n, H_img, W_img, 3) uint8, rendered at the start state
    goal_frames: np.ndarray  # (n, H_img, W_img, 3) uint8, the episode set's goal frames
    blocks: np.ndarray  # (n, K, H, frameskip·A) float32 z-scored blocks given to the model
    raw_actions: np.ndarray  # (n, K, H·frameskip, A) float32 raw actions executed
    terminal_states: np.ndarray  # (n, K, S)
    terminal_frames: np.ndarray  # (n, K, H_img, W_img, 3) uint8
    c_phys: np.ndarray  # (n, K) Task.goal_distance(terminal state, goal state)

    @property
    def n_starts(self) -> int:
        return len(self.start_index)

    @property
    def n_candidates(self) -> int:
        return self.c_phys.shape[1]


def _gaussian_candidates(
    data: EpisodeData, k: int, horizon: int, frameskip: int, action_dim: int, seed: int
) -> np.ndarray:
    """SCALE: z-scored N(0, 1) blocks (K, H, frameskip·A) -> raw actions (K, H·frameskip, A)."""
    z = np.random.default_rng(seed).standard_normal((k, horizon, frameskip * action_dim))
    raw = data.unzscore_action(z.astype(np.float32))
    return raw.reshape(k, horizon * frameskip, action_dim)  # blocks are time-major


def _window_starts(data: EpisodeData, length: int) -> np.ndarray:
    """Training rows r whose actions r .. r+length-1 are recorded (same episode, not NaN)."""
    episode = np.asarray(data.episode)
    train = np.isin(episode, np.asarray(data.train_episodes))
    finite = np.isfinite(np.asarray(data.action)).all(axis=1) & train
    # ok[r] = all(finite[r : r + length]) and one episode throughout
    run = np.concatenate([[0], np.cumsum(finite)])
    rows = np.arange(len(episode) - length + 1)
    full = run[rows + length] - run[rows] == length
    same = episode[rows] == episode[rows + length - 1]
    return rows[full & same]


def _dataset_candidates(
    data: EpisodeData, rng: np.random.Generator, k: int, length: int, starts: np.ndarray
) -> np.ndarray:
    """AnisoWM (reconstruction): K random recorded windows of ``length`` raw actions."""
    pick = rng.choice(starts, size=k, replace=len(starts) < k)
    return np.stack([np.asarray(data.action[r : r + length]) for r in pick])


def _check_candidate_request(
    source: str, n_starts: int, n_candidates: int, frameskip: int, horizon: int, n_episodes: int
) -> None:
    """Stop on a request :func:`simulate_candidates` cannot honour: an unknown source, a size
    below 1, fewer than the 2 candidates an order needs, or more starts than episodes."""
    if source not in SOURCES:
        raise ValueError(f"unknown candidate source {source!r}; valid: {', '.join(SOURCES)}")
    for name, v in (
        ("n_starts", n_starts),
        ("n_candidates", n_candidates),
        ("frameskip", frameskip),
        ("horizon", horizon),
    ):
        if v < 1:
            raise ValueError(f"{name} must be >= 1, got {v}")
    if n_candidates < 2:
        raise ValueError(f"ranking needs at least 2 candidates, got {n_candidates}")
    if n_starts > n_episodes:
        raise ValueError(f"n_starts={n_starts} but the episode set has {n_episodes} episodes")


def _candidate_draws(
    data: EpisodeData, source: str, k: int, horizon: int, frameskip: int, action_dim: int, seed: int
) -> Callable[[], np.ndarray]:
    """The raw candidates (K, H·frameskip, A) of the next start, one call per start in order:
    SCALE's K shared Gaussian sequences every time, or K recorded windows drawn afresh from
    ``default_rng(seed)`` (AnisoWM's dataset source)."""
    steps = horizon * frameskip
    rng = np.random.default_rng(seed)
    if source == "gaussian":
        shared = _gaussian_candidates(data, k, horizon, frameskip, action_dim, seed)
        return lambda: shared
    windows = _window_starts(data, steps)
    if len(windows) == 0:
        raise ValueError(
            f"no training episode of {data.task} has {steps} recorded consecutive actions"
        )
    return lambda: _dataset_candidates(data, rng, k, steps, windows)


def _execute_from(
    task: Task, start: np.ndarray, raw: np.ndarray, goal: np.ndarray, bar: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each candidate of ``raw`` executed from the restored ``start`` state: the terminal
    states (K, S), frames (K, H_img, W_img, 3) and c_phys = ``goal_distance`` to ``goal`` (K,)."""
    states, frames, costs = [], [], []
    for acts in raw:
        task.set_state(start)
        for a in acts:
            task.step(a)
        s = task.get_state()
        states.append(s)
        frames.append(task.render())
        costs.append(task.goal_distance(s, goal))
        bar.update(1)
    return np.stack(states), np.stack(frames), np.asarray(costs, dtype=np.float64)


def simulate_candidates(
    task: Task,
    data: EpisodeData,
    episodes: Any,
    n_starts: int = 20,
    n_candidates: int = 64,
    source: str = "gaussian",
    seed: int = 7,
    frameskip: int = 5,
    horizon: int = 5,
    progress: bool = True,
) -> Outcomes:
    """Execute ``n_candidates`` action sequences from each of the first ``n_starts`` starts.

    ``task`` is a :class:`~jepa_geometry.envs.Task` at the model's image size, ``data`` the task's
    :class:`~jepa_geometry.envs.episodes.EpisodeData` (action statistics; recorded actions for
    ``source="dataset"``), ``episodes`` an :class:`~jepa_geometry.planning.protocol.EpisodeSet`.
    Each candidate runs ``horizon·frameskip`` env steps from the restored start state; the terminal
    frame, state and c_phys are recorded. Deterministic in ``seed``.
    """
    _check_candidate_request(source, n_starts, n_candidates, frameskip, horizon, len(episodes))
    a_dim = task.action_dim
    low, high = np.asarray(task.action_low), np.asarray(task.action_high)
    draw = _candidate_draws(data, source, n_candidates, horizon, frameskip, a_dim, seed)
    task.reset(seed=seed)
    set_goal = getattr(task, "set_goal_state", None)  # env-side target, if any
    idx = np.arange(n_starts)
    start_frames, raw_all, term_states, term_frames, c_phys = [], [], [], [], []
    bar = progress_bar(
        total=n_starts * n_candidates, desc=f"{task.name} {source} candidates", progress=progress
    )
    try:
        for i in idx:
            start, goal = episodes.start_states[i], episodes.goal_states[i]
            raw = np.clip(draw(), low, high).astype(np.float32)
            task.set_state(start)
            if set_goal is not None:
                set_goal(goal)
            start_frames.append(task.render())
            states, frames, costs = _execute_from(task, start, raw, goal, bar)
            raw_all.append(raw)
            term_states.append(states)
            term_frames.append(frames)
            c_phys.append(costs)
    finally:
        bar.close()
    raw_arr = np.stack(raw_all)
    goal_frames = np.asarray(episodes.goal_pixels[:n_starts])
    if goal_frames.shape[1:] != start_frames[0].shape:
        raise ValueError(
            f"task renders {start_frames[0].shape} frames but the episode set's goal frames are "
            f"{goal_frames.shape[1:]}: build the task at the dataset's image size"
        )
    blocks = data.zscore_action(raw_arr.reshape(n_starts, n_candidates, horizon, frameskip * a_dim))
    return Outcomes(
        task=task.name,
        source=source,
        seed=seed,
        frameskip=frameskip,
        horizon=horizon,
        start_index=idx,
        start_states=np.asarray(episodes.start_states[:n_starts]),
        goal_states=np.asarray(episodes.goal_states[:n_starts]),
        start_frames=np.stack(start_frames),
        goal_frames=goal_frames,
        blocks=blocks.astype(np.float32),
        raw_actions=raw_arr,
        terminal_states=np.stack(term_states),
        terminal_frames=np.stack(term_frames),
        c_phys=np.stack(c_phys),
    )


def ordering_agreement(j: np.ndarray, c: np.ndarray) -> float:
    """AnisoWM's cost-ordering agreement: the fraction of pairs k < l with
    sign(J_k − J_l) = sign(c_k − c_l), pairs tied in J or in c dropped (NaN if none is left).
    Without ties it equals (1 + Kendall τ_b) / 2: concordant / (concordant + discordant)."""
    j, c = np.asarray(j, dtype=np.float64), np.asarray(c, dtype=np.float64)
    if j.shape != c.shape or j.ndim != 1:
        raise ValueError(f"j and c must be 1-d of equal length, got {j.shape} and {c.shape}")
    a, b = np.triu_indices(len(j), 1)
    sj, sc = np.sign(j[a] - j[b]), np.sign(c[a] - c[b])
    keep = (sj != 0) & (sc != 0)
    return float(np.mean(sj[keep] == sc[keep])) if keep.any() else float("nan")


def _kendall(a: np.ndarray, b: np.ndarray) -> float:
    """Kendall τ_b (scipy); NaN when either side is constant."""
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return float(kendalltau(a, b).statistic)


def mean_pair_sq_distance(z: np.ndarray) -> float:
    """Mean ‖z_i − z_j‖² over all ordered pairs i ≠ j, = 2N/(N−1) · mean ‖z_i − z̄‖²: the exact
    expectation of SCALE's random-pair estimate, with no sampling noise."""
    z = np.asarray(z, dtype=np.float64).reshape(-1, np.shape(z)[-1])
    n = len(z)
    if n < 2:
        raise ValueError("need at least 2 embeddings for the pair scale")
    return float(2.0 * n / (n - 1) * ((z - z.mean(0)) ** 2).sum(1).mean())


@torch.no_grad()
def ranking_metrics(model: Any, outcomes: Outcomes, progress: bool = False) -> pd.DataFrame:
    """One row per start: SCALE's rank channels, rollout error and AnisoWM's agreement.

    Columns: ``start`` (row of the episode set), ``tau_pred``, ``tau_geom``, ``tau_total``,
    ``rollout_error``, ``agree_enc``, ``agree_pred``, ``c_phys_mean``, ``c_enc_mean``,
    ``c_imag_mean`` and ``scale`` (one value per model). Starts whose physical costs are all
    equal (spread <= :data:`DEGENERATE_SPREAD`, relative) are dropped (no order to agree
    with); their rows are in ``df.attrs["dropped"]`` and a warning says how many.
    """
    blocks = torch.as_tensor(outcomes.blocks)
    n, k, _, width = blocks.shape
    if width != model.action_block_dim:
        raise ValueError(
            f"candidate blocks have width {width} but the model expects {model.action_block_dim} "
            "(frameskip x action dim): simulate with the model's frameskip"
        )
    was_training = model.training
    model.eval()
    try:
        z_start = encode_frames(model, outcomes.start_frames).float()
        z_goal = encode_frames(model, outcomes.goal_frames).float().numpy()
        frames = outcomes.terminal_frames.reshape(n * k, *outcomes.terminal_frames.shape[2:])
        z_true = encode_frames(model, frames).float().numpy().reshape(n, k, -1)
        z_hat = np.stack(
            [
                model.rollout(z_start[i].expand(k, 1, -1), blocks[i])[:, -1].float().numpy()
                for i in progress_bar(range(n), desc="imagined rollouts", progress=progress)
            ]
        )
    finally:
        model.train(was_training)
    scale = mean_pair_sq_distance(z_true)
    c_imag = ((z_hat - z_goal[:, None]) ** 2).sum(-1) / scale
    c_enc = ((z_true - z_goal[:, None]) ** 2).sum(-1) / scale
    err = ((z_hat - z_true) ** 2).sum(-1) / scale
    rows, dropped = [], []
    for i in range(n):
        cp = outcomes.c_phys[i]
        if np.ptp(cp) <= DEGENERATE_SPREAD * (1.0 + np.abs(cp).max()):
            dropped.append(int(outcomes.start_index[i]))
            continue
        rows.append(
            {
                "start": int(outcomes.start_index[i]),
                "tau_pred": _kendall(c_imag[i], c_enc[i]),
                "tau_geom": _kendall(c_enc[i], cp),
                "tau_total": _kendall(c_imag[i], cp),
                "rollout_error": float(err[i].mean()),
                "agree_enc": ordering_agreement(c_enc[i], cp),
                "agree_pred": ordering_agreement(c_imag[i], cp),
                "c_phys_mean": float(cp.mean()),
                "c_enc_mean": float(c_enc[i].mean()),
                "c_imag_mean": float(c_imag[i].mean()),
                "scale": scale,
            }
        )
    if dropped:
        warnings.warn(
            f"{outcomes.task}: dropped {len(dropped)} of {n} starts whose physical costs are all "
            f"equal (starts {dropped})",
            stacklevel=2,
        )
    columns = ["start", *METRICS, "c_phys_mean", "c_enc_mean", "c_imag_mean", "scale"]
    df = pd.DataFrame(rows, columns=columns)
    df.attrs["dropped"] = dropped
    return df


__all__ = [
    "METRICS",
    "SOURCES",
    "Outcomes",
    "mean_pair_sq_distance",
    "ordering_agreement",
    "ranking_metrics",
    "simulate_candidates",
]
