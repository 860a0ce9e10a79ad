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

Two-Room only for now. The grid (:func:`position_grid`) is model-independent: the caller
caches it and encodes ``grid.frames`` with each model
(:func:`jepa_geometry.wm.model.encode_frames`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import spearmanr
from tqdm import tqdm

LANDSCAPE_TASKS: tuple[str, ...] = ("tworoom",)


@dataclass(frozen=True)
class Grid:
    """An n × n grid of agent positions; only the cells the env can hold are kept.

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


def _tworoom_holds(task: Any, xy: np.ndarray) -> bool:
    """Whether Two-Room can hold the agent at ``xy``: one env step with a zero action leaves it
    there. ``set_state`` itself accepts any position, but every step runs the env's collision
    code (``TwoRoomEnv._apply_collisions``), which moves a position it cannot hold: out of the
    border (closer than BORDER_SIZE + agent radius to the frame edge) or into the central wall's
    band (closer than half its thickness + the agent radius to its centre line) outside the door
    (door centre ± (half-extent + 1.75 px margin) along the wall)."""
    task.set_state(xy)
    task.step(np.zeros(task.action_dim, dtype=np.float32))
    return bool(np.allclose(task.get_state(), xy, atol=1e-3))


def position_grid(task: Any, n: int = 32, progress: bool = True) -> Grid:
    """Agent positions on an n × n grid spanning the arena interior, rendered.

    Two-Room: the interior is [BORDER_SIZE + r, 224 − BORDER_SIZE − r]² (r the agent radius:
    the border clamp of the env's collision code); cells inside the central wall's band are
    dropped unless they lie in the door (rule: :func:`_tworoom_holds`).
    """
    if task.name not in LANDSCAPE_TASKS:
        raise ValueError(
            f"no cost landscape for task {task.name!r}; supported: {', '.join(LANDSCAPE_TASKS)}"
        )
    if n < 2:
        raise ValueError(f"grid size n must be >= 2, got {n}")
    env = task.env
    radius = float(env.variation_space["agent"]["radius"].value.item())
    lo, hi = env.BORDER_SIZE + radius, env.IMG_SIZE - env.BORDER_SIZE - radius
    xs = ys = np.linspace(lo, hi, n)
    task.reset(seed=0)
    mask = np.zeros((n, n), dtype=bool)
    positions, frames = [], []
    for iy, y in enumerate(tqdm(ys, desc=f"{task.name} position grid", disable=not progress)):
        for ix, x in enumerate(xs):
            xy = np.array([x, y])
            if not _tworoom_holds(task, xy):
                continue
            mask[iy, ix] = True
            task.set_state(xy)
            positions.append(xy)
            frames.append(task.render())
    return Grid(
        task=task.name,
        xs=xs,
        ys=ys,
        mask=mask,
        positions=np.stack(positions),
        frames=np.stack(frames),
    )


def cost_landscape(
    z_grid: np.ndarray, positions: np.ndarray, goal_index: int, quantile: float = 0.1
) -> dict[str, Any]:
    """The planning cost over the grid around the goal cell ``goal_index``.

    Returns ``goal_index``, ``goal_position`` (2,), ``cost`` (M,) = ‖z_i − z_goal‖²,
    ``distance`` (M,) = ‖x_i − x_goal‖, ``low_set`` (M,) bool = cost ≤ its ``quantile``
    quantile (``cost_threshold``), ``disc`` (M,) bool = distance ≤ its ``quantile`` quantile
    (``disc_radius``), both up to rounding so that cells tied by symmetry stay together;
    ``iou`` = |low ∩ disc| / |low ∪ disc| and ``spearman`` =
    ρ(cost, distance). Quantiles are numpy's default (linear interpolation).
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
    distance = np.linalg.norm(x - x[goal_index], axis=1)
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
    quantile: float = 0.1,
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
        r = cost_landscape(z_grid, positions, int(g), quantile)
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
    "LANDSCAPE_TASKS",
    "Grid",
    "cost_landscape",
    "landscape_distribution",
    "position_grid",
]
