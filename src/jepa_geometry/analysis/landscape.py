"""The shape of the planner's cost around a goal (AnisoWM Figure 4).

Render the agent on a grid of positions, encode every frame, and look at the planning cost
cost_i = ‖z_i − z_goal‖² as a function of position. Two numbers summarise how well its shape
matches the task's geometry:

* **iou** between the *low set* {i : cost_i ≤ its q-quantile} (AnisoWM's sub-level set, q = 10 %)
  and the *disc* {i : ‖x_i − x_goal‖ ≤ its q-quantile}, the disc around the goal holding the same
  fraction of grid points. A cost that is a monotone function of physical distance gives
  iou = 1; an anisotropic (elliptic) or fragmented cost gives less.
* **spearman** ρ between the latent cost and the physical distance over the whole grid.

AnisoWM shows hand-picked goals ("the clearest of several hundred"); the book reports the
distribution over random goals (:func:`landscape_distribution`) as well.

What the positions span and which physical distance the cost is compared with are facts of
each task (``Task.landscape_spans``, ``landscape_distance``, ``landscape_period`` where an axis
wraps, and the methods ``landscape_axes``, ``landscape_coords``, ``landscape_state``:
:mod:`jepa_geometry.envs`). Every mesh keeps only the cells the simulator can hold
(:func:`_holds`). The positions (:func:`landscape_positions`) are model-independent: the caller
caches them and encodes their ``frames`` with each model
(:func:`jepa_geometry.wm.model.encode_frames`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from jepa_geometry.envs import Task
from jepa_geometry.jobs import progress_bar


@dataclass(frozen=True)
class LandscapePositions:
    """An n × n mesh of positions; only the cells the env can hold are kept.

    ``positions[m]`` is the cell ``np.flatnonzero(mask)[m]`` of the row-major (y, x) grid.
    """

    task: str
    xs: np.ndarray  # (n,) x coordinates of the columns, state units
    ys: np.ndarray  # (n,) y coordinates of the rows
    mask: np.ndarray  # (n, n) bool, [row (y), column (x)]: the env can hold this position
    positions: np.ndarray  # (M, 2) float64 agent xy of the valid cells
    frames: np.ndarray  # (M, H, W, 3) uint8

    @property
    def shape(self) -> tuple[int, int]:
        return self.mask.shape

    def to_image(self, values: np.ndarray) -> np.ndarray:
        """Per-cell values (M,) -> (n, n) float image, NaN on invalid cells."""
        values = np.asarray(values, dtype=np.float64)
        if values.shape != (len(self.positions),):
            raise ValueError(f"values must have shape ({len(self.positions)},), got {values.shape}")
        img = np.full(self.mask.shape, np.nan)
        img[self.mask] = values
        return img


def _holds(task: Task, state: np.ndarray) -> bool:
    """Whether the simulator can hold ``task`` at ``state``: one env step with a zero action
    leaves its position there (within 1e-3). Setting a state accepts anything, but a step runs
    the contact or collision code, which moves a position the task cannot hold: Two-Room's
    border and central wall outside the door (``TwoRoomEnv._apply_collisions``), PointMaze's
    walls, Reacher's elbow beyond its joint range, a Push-T block on the pusher or a wall, a
    Cube cube inside the arm."""
    task.set_state(state)
    task.step(np.zeros(task.action_dim, dtype=np.float32))
    coords = task.landscape_coords
    return bool(np.allclose(coords(task.get_state()), coords(state), atol=1e-3))


def landscape_positions(task: Task, n: int = 32, progress: bool = True) -> LandscapePositions:
    """The task rendered at the n × n positions of ``task.landscape_axes(n)``, at the states
    of ``task.landscape_state``, dropping the cells it cannot hold (:func:`_holds`): Two-Room's
    central wall outside the door, PointMaze's walls, a Push-T block against a wall.
    """
    if n < 2:
        raise ValueError(f"grid size n must be >= 2, got {n}")
    xs, ys = task.landscape_axes(n)
    task.reset(seed=0)
    template = task.get_state()
    mask = np.zeros((n, n), dtype=bool)
    positions, frames = [], []
    for iy, y in enumerate(progress_bar(ys, desc=f"{task.name} position grid", progress=progress)):
        for ix, x in enumerate(xs):
            state = task.landscape_state(x, y, template)
            if not _holds(task, state):
                continue
            mask[iy, ix] = True
            task.set_state(state)
            positions.append(np.array([x, y]))
            frames.append(task.render())
    return LandscapePositions(
        task=task.name,
        xs=xs,
        ys=ys,
        mask=mask,
        positions=np.stack(positions),
        frames=np.stack(frames),
    )


LOW_SET_QUANTILE = 0.1
"""AnisoWM's sub-level set: the 10 % lowest-cost cells, against the disc holding as many."""


def cost_landscape(
    z_grid: np.ndarray,
    positions: np.ndarray,
    goal_index: int,
    quantile: float = LOW_SET_QUANTILE,
    period: tuple[float | None, float | None] | None = None,
) -> dict[str, Any]:
    """The planning cost over the grid around the goal cell ``goal_index``.

    Returns ``goal_index``, ``goal_position`` (2,), ``cost`` (M,) = ‖z_i − z_goal‖²,
    ``distance`` (M,) = ‖x_i − x_goal‖, ``low_set`` (M,) bool = cost ≤ its ``quantile``
    quantile (``cost_threshold``), ``disc`` (M,) bool = distance ≤ its ``quantile`` quantile
    (``disc_radius``), both up to rounding so that cells tied by symmetry stay together;
    ``iou`` = |low ∩ disc| / |low ∪ disc| and ``spearman`` =
    ρ(cost, distance). Quantiles are numpy's default (linear interpolation). ``period`` gives
    each axis's period (None: not periodic): a periodic axis's difference is wrapped into
    [−p/2, p/2) before the distance is taken.
    """
    z = np.asarray(z_grid, dtype=np.float64)
    x = np.asarray(positions, dtype=np.float64)
    if z.ndim != 2 or x.ndim != 2 or len(z) != len(x):
        raise ValueError(
            f"z_grid (M, D) and positions (M, 2) must have the same M, got {z.shape} and {x.shape}"
        )
    if not 0 <= goal_index < len(z):
        raise ValueError(f"goal_index {goal_index} outside the grid's {len(z)} cells")
    if not 0 < quantile < 1:
        raise ValueError(f"quantile must be in (0, 1), got {quantile}")
    cost = ((z - z[goal_index]) ** 2).sum(1)
    delta = x - x[goal_index]
    for axis, p in enumerate(period or ()):
        if p is not None:
            delta[:, axis] = (delta[:, axis] + p / 2) % p - p / 2
    distance = np.linalg.norm(delta, axis=1)
    cost_threshold = float(np.quantile(cost, quantile))
    disc_radius = float(np.quantile(distance, quantile))
    low, disc = _at_most(cost, cost_threshold), _at_most(distance, disc_radius)
    return {
        "goal_index": int(goal_index),
        "goal_position": x[goal_index].copy(),
        "cost": cost,
        "distance": distance,
        "low_set": low,
        "disc": disc,
        "cost_threshold": cost_threshold,
        "disc_radius": disc_radius,
        "iou": float((low & disc).sum() / (low | disc).sum()),
        "spearman": float(spearmanr(cost, distance).statistic),
    }


def _at_most(v: np.ndarray, threshold: float) -> np.ndarray:
    """v <= threshold up to rounding (relative 1e-9): on a regular grid many cells are tied by
    symmetry, and they must fall on the same side of the threshold."""
    return v <= threshold + 1e-9 * max(abs(threshold), 1e-12)


def landscape_distribution(
    z_grid: np.ndarray,
    positions: np.ndarray,
    n_goals: int = 200,
    seed: int = 0,
    quantile: float = LOW_SET_QUANTILE,
    period: tuple[float | None, float | None] | None = None,
) -> pd.DataFrame:
    """iou and spearman for ``n_goals`` goal cells drawn without replacement
    (``default_rng(seed)``; all cells if the grid has fewer). Columns: ``goal_index``,
    ``goal_x``, ``goal_y``, ``iou``, ``spearman``."""
    m = len(positions)
    if n_goals < 1:
        raise ValueError(f"n_goals must be >= 1, got {n_goals}")
    goals = np.sort(np.random.default_rng(seed).choice(m, size=min(n_goals, m), replace=False))
    rows = []
    for g in goals:
        r = cost_landscape(z_grid, positions, int(g), quantile, period)
        gx, gy = r["goal_position"]
        rows.append(
            {
                "goal_index": int(g),
                "goal_x": gx,
                "goal_y": gy,
                "iou": r["iou"],
                "spearman": r["spearman"],
            }
        )
    return pd.DataFrame(rows)


__all__ = [
    "LandscapePositions",
    "cost_landscape",
    "landscape_distribution",
    "landscape_positions",
]
