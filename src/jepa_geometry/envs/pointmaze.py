"""PointMaze (``swm/OGBMaze-v0``, OGBench ``pointmaze-medium``): a point mass in a maze.

Why this PointMaze. SCALE evaluates on DINO-WM's D4RL U-maze, which stable-worldmodel does
not ship. Of its two point mazes, ``swm/OGBMaze-v0`` (point, ``medium``) is the closer one:
a MuJoCo point mass with wall contacts, a fixed top-down camera over the whole maze, and
OGBench's own BFS oracle for a navigation behaviour policy. ``swm/SimplePointMaze-v0`` is a
kinematic point drawn by matplotlib (slow) among random rectangles resampled per episode.

State: [x, y, vx, vy] (qpos, qvel). q = [x, y] (2): velocity is excluded (success is
position-only). Success: ``||xy - goal xy|| <= 1.0`` (OGBench's tolerance for the point
agent, a quarter of a 4-unit maze cell; DINO-WM's 0.5 is half of its 1-unit cells).
"""

from __future__ import annotations

import numpy as np

from .base import FastMujocoRenderer, Task, make_env

GOAL_TOL = 1.0  # maze units (OGBench point tolerance)
ORACLE_NOISE = 0.3  # std of Gaussian noise on the unit oracle direction


class PointMazeTask(Task):
    name = "pointmaze"
    title = "PointMaze"
    env_id = "swm/OGBMaze-v0"
    action_dim = 2
    q_names = ("x", "y")
    state_names = ("x", "y", "vx", "vy")
    success_rule = "||xy - goal xy|| <= 1.0 (OGBench point tolerance; cells are 4 units)"
    behaviour_policy = (
        "noisy OGBench BFS oracle: unit direction to the next cell on the shortest path "
        f"(straight to the goal inside its cell) plus Gaussian noise std {ORACLE_NOISE}; "
        "start and goal are uniform over free cells (+-1 unit), a new goal on arrival"
    )

    scale_weight = 0.1
    aux_weight = 0.1
    mppi_t_star = 256.0
    hard_threshold = 4.0
    hard_rule = "point moves > 4 units, one maze cell (success: 1 unit)"
    landscape_spans = "point positions in the maze"
    landscape_distance = (
        "the straight-line distance in maze units (not the path length around walls)"
    )
    episodes = {"laptop": (150, 50)}
    collect_frames_per_s = {"smoke": 200.0, "laptop": 371.0, "paper": 490.0}
    ceiling_rollout_ms = 4.5

    def __init__(self, image_size: int, seed: int = 0) -> None:
        super().__init__(image_size, seed)
        wrapper = make_env(self.env_id, loco_env_type="point", maze_type="medium")
        self.env = getattr(wrapper, "env", wrapper).unwrapped  # OGBench's MazeEnv
        self._free = np.argwhere(self.env.maze_map == 0)
        self._renderer: FastMujocoRenderer | None = None
        self._goal_rng = np.random.default_rng(seed)
        self._goal = np.zeros(2)
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        # OGBench samples from the global numpy RNG
        np.random.seed(0 if seed is None else seed % 2**32)  # noqa: NPY002
        self.env.reset(seed=seed)
        # OGBench draws the goal marker in state mode; the frames must not show the
        # behaviour policy's goal, so hide it.
        self.env.model.geom("target").rgba[3] = 0.0
        self._goal_rng = np.random.default_rng(seed)
        self.env.set_xy(self._random_xy())
        self._goal = self._random_xy()

    def _random_xy(self) -> np.ndarray:
        ij = self._free[self._goal_rng.integers(len(self._free))]
        xy = np.asarray(self.env.ij_to_xy(tuple(ij)), dtype=np.float64)
        return xy + self._goal_rng.uniform(-1.0, 1.0, size=2)

    def get_state(self) -> np.ndarray:
        return self._qpos_qvel(self.env.data)

    def set_state(self, state: np.ndarray) -> None:
        self._set_qpos_qvel(state, 2, 2)

    def step(self, action: np.ndarray) -> None:
        self.env.step(np.clip(self._check_action(action), -1.0, 1.0))

    def render(self) -> np.ndarray:
        if self._renderer is None or self._renderer.model is not self.env.model:
            if self._renderer is not None:
                self._renderer.close()
            self._renderer = FastMujocoRenderer(
                self.env.model, self.image_size, self.env.custom_camera
            )
        return self._renderer.render(self.env.data)

    def q(self, state: np.ndarray) -> np.ndarray:
        return np.asarray(state, dtype=np.float32)[:2].copy()

    def is_success(self, state: np.ndarray, goal_state: np.ndarray) -> bool:
        return self.goal_distance(state, goal_state) <= GOAL_TOL

    def goal_distance(self, state: np.ndarray, goal_state: np.ndarray) -> float:
        return float(np.linalg.norm(np.asarray(state)[:2] - np.asarray(goal_state)[:2]))

    def landscape_axes(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The box around the free cells' centres, half a cell (2 units) beyond them."""
        env = self.env
        centres = np.array([env.ij_to_xy(tuple(ij)) for ij in np.argwhere(env.maze_map == 0)])
        lo, hi = centres.min(0) - 2.0, centres.max(0) + 2.0
        return np.linspace(lo[0], hi[0], n), np.linspace(lo[1], hi[1], n)

    def behaviour_action(self, rng: np.random.Generator) -> np.ndarray:
        xy = self.env.data.qpos[:2].copy()
        if self.behaviour_success():
            self._goal = self._random_xy()
        if self.env.xy_to_ij(xy) == self.env.xy_to_ij(self._goal):
            waypoint = self._goal
        else:
            waypoint, _ = self.env.get_oracle_subgoal(xy, self._goal)
        direction = waypoint - xy
        direction = direction / max(np.linalg.norm(direction), 1e-9)
        noisy = direction + rng.normal(0.0, ORACLE_NOISE, size=2)
        return np.clip(noisy, -1.0, 1.0).astype(np.float32)

    def behaviour_success(self) -> bool:
        return self.is_success(self.get_state(), self._goal)

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
