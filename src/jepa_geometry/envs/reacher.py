"""Reacher (``swm/ReacherDMControl-v0``, task ``qpos_match``): a two-link planar arm.

State: [shoulder, elbow, shoulder velocity, elbow velocity] (dm_control qpos, qvel).
q = [cos q0, sin q0, cos q1, sin q1] (4): the shoulder is unbounded, so only its cos/sin
are meaningful. The half-q variant keeps the shoulder only. Success (swm ``qpos_match``):
``|qpos_i - goal_qpos_i| < 0.05 rad`` for both joints (raw difference, as the env does).
Frames come from :class:`~jepa_geometry.envs.base.FastMujocoRenderer` (camera 0).
"""

from __future__ import annotations

import numpy as np

from .base import FastMujocoRenderer, Task, make_env

QPOS_TOL = 0.05  # rad, per joint
ELBOW_LIMIT = np.deg2rad(160.0)  # dm_control reacher's elbow joint range


class ReacherTask(Task):
    name = "reacher"
    title = "Reacher"
    env_id = "swm/ReacherDMControl-v0"
    action_dim = 2
    q_names = ("cos_q0", "sin_q0", "cos_q1", "sin_q1")
    half_q = (0, 1)
    state_names = ("q0", "q1", "dq0", "dq1")
    success_rule = "|qpos_i - goal qpos_i| < 0.05 rad for both joints"
    behaviour_policy = (
        "uniform random torques in [-1, 1]^2 (LeWM's dataset); its success rate is measured "
        "against one random goal configuration per episode"
    )

    scale_weight = 0.15
    aux_weight = 0.4
    mppi_t_star = 32.0
    hard_threshold = 0.5
    hard_rule = "a joint moves > 0.5 rad (10x the 0.05 rad tolerance)"
    landscape_spans = "joint angles (shoulder × elbow, the elbow within its range)"
    landscape_distance = (
        "the distance between joint-angle pairs in radians, the shoulder's difference wrapped "
        "around the circle"
    )
    landscape_period = (2 * np.pi, None)  # the shoulder wraps around the circle
    episodes = {"laptop": (300, 100)}
    collect_frames_per_s = {"smoke": 200.0, "laptop": 1003.0, "paper": 490.0}
    ceiling_rollout_ms = 9.1

    def __init__(self, image_size: int, seed: int = 0) -> None:
        super().__init__(image_size, seed)
        self.env = make_env(self.env_id, task="qpos_match", seed=seed)
        self._renderer: FastMujocoRenderer | None = None
        self._goal = np.zeros(2)
        self.reset(seed)

    @property
    def physics(self):
        return self.env.env.physics

    def reset(self, seed: int | None = None) -> None:
        self.env.reset(seed=seed)
        # dm_control ends an episode after 20 s (500 of our steps) and then silently
        # resets on the next step; our episodes are cut by the collector instead.
        self.env.env._step_limit = float("inf")
        g = np.random.default_rng(seed)
        self._goal = np.array([g.uniform(-np.pi, np.pi), g.uniform(-ELBOW_LIMIT, ELBOW_LIMIT)])

    def get_state(self) -> np.ndarray:
        return self._qpos_qvel(self.physics.data)

    def set_state(self, state: np.ndarray) -> None:
        self._set_qpos_qvel(state, 2, 2)

    def step(self, action: np.ndarray) -> None:
        self.env.step(self._check_action(action))

    def render(self) -> np.ndarray:
        model = self.physics.model.ptr
        if self._renderer is None or self._renderer.model is not model:
            if self._renderer is not None:
                self._renderer.close()
            self._renderer = FastMujocoRenderer(model, self.image_size, camera=0)
        return self._renderer.render(self.physics.data.ptr)

    def q(self, state: np.ndarray) -> np.ndarray:
        s = np.asarray(state, dtype=np.float64)
        return np.array([np.cos(s[0]), np.sin(s[0]), np.cos(s[1]), np.sin(s[1])], np.float32)

    def is_success(self, state: np.ndarray, goal_state: np.ndarray) -> bool:
        return self.goal_distance(state, goal_state) < QPOS_TOL

    def goal_distance(self, state: np.ndarray, goal_state: np.ndarray) -> float:
        """Max-abs joint error in rad (the quantity the success test thresholds)."""
        return float(np.max(np.abs(np.asarray(state)[:2] - np.asarray(goal_state)[:2])))

    def landscape_axes(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The shoulder over the circle (no duplicate of −π), the elbow over its range."""
        return np.linspace(-np.pi, np.pi, n, endpoint=False), np.linspace(
            -ELBOW_LIMIT, ELBOW_LIMIT, n
        )

    def behaviour_action(self, rng: np.random.Generator) -> np.ndarray:
        return rng.uniform(-1.0, 1.0, size=2).astype(np.float32)

    def behaviour_success(self) -> bool:
        return self.is_success(self.get_state(), self._goal)

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
