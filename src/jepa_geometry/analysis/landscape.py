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

Tasks (:data:`GRID_WORDS`): Two-Room (agent positions), Reacher (the two joint angles; the
shoulder's distance wraps around the circle, :data:`PERIODS`), PointMaze (point positions;
the straight-line distance, not the path length around walls), Push-T (block positions, other
factors fixed, as AnisoWM's window) and Cube (cube positions on the table). Every grid keeps
only the cells the simulator can hold (:func:`_holds`). The grid (:func:`position_grid`) is
model-independent: the caller caches it and encodes ``grid.frames`` with each model
(:func:`jepa_geometry.wm.model.encode_frames`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from jepa_geometry.envs import Task
from jepa_geometry.envs.reacher import ELBOW_LIMIT
from jepa_geometry.jobs import progress_bar

GRID_WORDS: dict[str, tuple[str, str]] = {
    # task: (what the grid spans, the physical distance the cost is compared with)
    "tworoom": ("agent positions in the arena", "the Euclidean distance in pixels"),
    "reacher": (
        "joint angles (shoulder × elbow, the elbow within its range)",
        "the distance between joint-angle pairs in radians, the shoulder's difference wrapped "
        "around the circle",
    ),
    "pointmaze": (
        "point positions in the maze",
        "the straight-line distance in maze units (not the path length around walls)",
    ),
    "pusht": (
        "block positions (its angle fixed at the goal's π/4, the pusher parked in a corner)",
        "the distance between block positions in physics units (512-unit frame)",
    ),
    "cube": (
        "cube positions on the table (its yaw and the arm fixed as at a reset)",
        "the distance between cube positions in metres",
    ),
}
LANDSCAPE_TASKS: tuple[str, ...] = tuple(GRID_WORDS)
PERIODS: dict[str, tuple[float | None, float | None]] = {"reacher": (2 * np.pi, None)}
"""Per task, the period of each grid axis (None: not periodic); the shoulder angle wraps."""


def grid_period(task: str) -> tuple[float | None, float | None] | None:
    """The axis periods of ``task``'s grid (:data:`PERIODS`), None where no axis wraps."""
    return PERIODS.get(task)


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


PUSHT_PARK = (40.0, 40.0)  # the pusher's position while the block moves over the grid
PUSHT_ANGLE = np.pi / 4  # the block's angle: that of the env's goal T
PUSHT_WINDOW = (120.0, 390.0)  # block xy: the range of the expert's goal positions


def _coords(task: Task, state: np.ndarray) -> np.ndarray:
    """The two coordinates a grid spans, read from a simulator state."""
    state = np.asarray(state)
    if task.name == "pusht":
        return state[2:4]  # the block
    if task.name == "cube":
        return task._cube_pos(task._qpos(state))[:2]
    return state[:2]  # the agent, the point, Reacher's two joint angles


def _holds(task: Task, state: np.ndarray) -> bool:
    """Whether the simulator can hold ``task`` at ``state``: one env step with a zero action
    leaves its position there (within 1e-3). Setting a state accepts anything, but a step runs
    the contact or collision code, which moves a position the task cannot hold: Two-Room's
    border and central wall outside the door (``TwoRoomEnv._apply_collisions``), PointMaze's
    walls, Reacher's elbow beyond its joint range, a Push-T block on the pusher or a wall, a
    Cube cube inside the arm."""
    task.set_state(state)
    task.step(np.zeros(task.action_dim, dtype=np.float32))
    return bool(np.allclose(_coords(task, task.get_state()), _coords(task, state), atol=1e-3))


def _axes(task: Task, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The grid's x and y coordinates for ``task`` (:data:`GRID_WORDS`)."""
    if task.name == "tworoom":  # the border clamp of the env's collision code
        env = task.env
        radius = float(env.variation_space["agent"]["radius"].value.item())
        lo, hi = env.BORDER_SIZE + radius, env.IMG_SIZE - env.BORDER_SIZE - radius
        return np.linspace(lo, hi, n), np.linspace(lo, hi, n)
    if task.name == "reacher":  # shoulder over the circle (no duplicate of -pi), elbow range
        return np.linspace(-np.pi, np.pi, n, endpoint=False), np.linspace(
            -ELBOW_LIMIT, ELBOW_LIMIT, n
        )
    if task.name == "pusht":
        return np.linspace(*PUSHT_WINDOW, n), np.linspace(*PUSHT_WINDOW, n)
    if task.name == "cube":  # the range the env draws cube start positions from
        space = task.env.variation_space["cube"]["start_position"]
        lo, hi = (np.asarray(b, dtype=np.float64).reshape(-1) for b in (space.low, space.high))
        return np.linspace(lo[0], hi[0], n), np.linspace(lo[1], hi[1], n)
    # pointmaze: the box around the free cells' centres, half a cell (2 units) beyond them
    env = task.env
    centres = np.array([env.ij_to_xy(tuple(ij)) for ij in np.argwhere(env.maze_map == 0)])
    lo, hi = centres.min(0) - 2.0, centres.max(0) + 2.0
    return np.linspace(lo[0], hi[0], n), np.linspace(lo[1], hi[1], n)


def _state(task: Task, x: float, y: float, template: np.ndarray) -> np.ndarray:
    """The simulator state of grid point (x, y): Two-Room's xy; Reacher and PointMaze at
    rest; Push-T's block at (x, y) (:data:`PUSHT_ANGLE`, pusher at :data:`PUSHT_PARK`);
    Cube's ``template`` (the state after a seeded reset) with the cube moved to (x, y)."""
    if task.name == "tworoom":
        return np.array([x, y])
    if task.name == "pusht":
        return np.array([*PUSHT_PARK, x, y, PUSHT_ANGLE, 0.0, 0.0])
    if task.name == "cube":
        state = np.array(template, dtype=np.float64)
        adr = 1 + task.model.jnt_qposadr[task.model.joint("object_joint_0").id]  # after time
        state[adr : adr + 2] = (x, y)
        return state
    return np.array([x, y, 0.0, 0.0])


def position_grid(task: Task, n: int = 32, progress: bool = True) -> Grid:
    """The task rendered on an n × n grid (:data:`GRID_WORDS`), cells it cannot hold dropped.

    Two-Room: the interior is [BORDER_SIZE + r, 224 − BORDER_SIZE − r]² (r the agent radius:
    the border clamp of the env's collision code); cells inside the central wall's band are
    dropped unless they lie in the door. Reacher: shoulder in [−π, π), elbow within its range.
    PointMaze: the box around the free cells; cells in or against a wall are dropped.
    Push-T: block positions in :data:`PUSHT_WINDOW`²; Cube: the cube's start-position range.
    """
    if task.name not in LANDSCAPE_TASKS:
        raise ValueError(
            f"no cost landscape for task {task.name!r}; supported: {', '.join(LANDSCAPE_TASKS)}"
        )
    if n < 2:
        raise ValueError(f"grid size n must be >= 2, got {n}")
    xs, ys = _axes(task, n)
    task.reset(seed=0)
    template = task.get_state()
    mask = np.zeros((n, n), dtype=bool)
    positions, frames = [], []
    for iy, y in enumerate(progress_bar(ys, desc=f"{task.name} position grid", progress=progress)):
        for ix, x in enumerate(xs):
            state = _state(task, x, y, template)
            if not _holds(task, state):
                continue
            mask[iy, ix] = True
            task.set_state(state)
            positions.append(np.array([x, y]))
            frames.append(task.render())
    return Grid(
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
    "GRID_WORDS",
    "LANDSCAPE_TASKS",
    "PERIODS",
    "Grid",
    "cost_landscape",
    "grid_period",
    "landscape_distribution",
    "position_grid",
]
